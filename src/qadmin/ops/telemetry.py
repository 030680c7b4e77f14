"""Figures for watching queues over time: one snapshot per queue, rates between snapshots.

``tail`` prints them live and ``collect`` appends them to a Parquet history. A snapshot runs
the diagnostics registry's parts that feed a telemetry field (collect adds the costlier ones,
such as the index bloat estimate), without the sleep inspect takes for rates: a rate comes
from the previous snapshot. Every rate names the counter it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from qadmin import secrets
from qadmin.diagnostics import registry, run
from qadmin.diagnostics.entries import rates
from qadmin.diagnostics.model import InspectReport, Options
from qadmin.engines.base import Engine
from qadmin.kinds import QueueSpec
from qadmin.profiles.resolve import Resolved, from_spec

# Bump when a field is added, renamed or changes meaning; collect writes it into every row.
# 2: snapshot_age_s, ring_stall_s, ring_orphan_age_s, watermark_stranded,
#    backlog_growth_per_s (and invalid_indexes on PostgreSQL) from the diagnostics registry.
# 3: depth_quality, oldest_quality, claimed_quality, dead_quality (exact, floor or
#    estimate); a claim queue's depth is its waiting messages (claimed ones are `claimed`).
# 4: paused_for_s (qadmin pause).
# 5: dropping (a drop stopped half-way: the objects_missing finding).
SCHEMA_VERSION = 5

# (field, unit, meaning, Parquet type) of the fields every snapshot has, before the
# registry's own.
BASE_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("schema_version", "", "version of this list of fields", "int32"),
    ("time", "UTC", "when the snapshot was taken", "timestamp"),
    ("connection", "", "named connection (or 'default')", "string"),
    ("server", "", "engine and host:port/database, no credentials", "string"),
    ("engine", "", "sqlite, postgresql, mariadb, mysql or mssql", "string"),
    ("queue", "", "queue name", "string"),
    ("kind", "", "queue kind", "string"),
)

# (field, unit, meaning): the telemetry schema, documented in docs/diagnostics.md from this list.
FIELDS: tuple[tuple[str, str, str], ...] = (
    *((name, unit, meaning) for name, unit, meaning, _ in BASE_FIELDS),
    *((f.name, f.unit, f.help) for f in registry.fields()),
)
ARROW_TYPES: dict[str, str] = {
    **{name: arrow for name, _, _, arrow in BASE_FIELDS},
    **{f.name: f.arrow for f in registry.fields()},
}
RATE_KEYS = ("interval_s", "enqueue_per_s", "dequeue_per_s", "enqueue_source", "dequeue_source")


@dataclass
class Snapshot:
    target: Resolved  # a qadmin queue or a profiled table
    report: InspectReport
    time: datetime
    engine: str

    @property
    def sample(self) -> rates.Sample | None:
        part = self.report.part(rates.ENTRY)
        return None if part is None else part.latest

    @property
    def blocked(self) -> str | None:
        """The parts a lock kept from being read, and who held it; None when all were read."""
        notes = [b.note for b in self.report.blocked.values()]
        return "; ".join(notes) if notes else None

    def figures(self, collecting: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "time": self.time,
            "engine": self.engine,
            "queue": self.target.profile.shown,
            "kind": _kind(self.target),
        }
        for one in registry.fields():
            if collecting or not one.collect_only:
                out[one.name] = one.value(self.report)
        return out


def _kind(target: Resolved) -> str:
    """A qadmin queue's kind; a profiled table's library, else "table"."""
    if target.spec is not None:
        return target.spec.kind.value
    return target.profile.library or "table"


def snapshot(
    engine: Engine, target: Resolved | QueueSpec, stale_after_s: int, collecting: bool = False
) -> Snapshot:
    """The figures of one queue now; ``collecting`` adds the collect-only parts. A part
    blocked by a lock leaves its figures null and the rest are still read (during a lock
    pile-up the lock figures are the ones that matter); ``Snapshot.blocked`` says which."""
    if isinstance(target, QueueSpec):
        target = Resolved(from_spec(target, engine.schema), target)
    report = run.snapshot(engine, target, Options(stale_after_s=stale_after_s), collecting)
    return Snapshot(target, report, datetime.now(UTC), engine.label)  # mariadb, not mysql


def tail_row(previous: Snapshot | None, current: Snapshot) -> dict[str, Any]:
    """One line of ``tail``: the snapshot's figures plus rates since the previous one."""
    before, after = previous.sample if previous else None, current.sample
    if before is not None and after is not None:
        current.report.parts[rates.ENTRY.name] = rates.between(before, after, current.target.spec)
    row = {k: v for k, v in current.figures().items() if k != "schema_version"}
    row["time"] = current.time.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    row["error"] = current.blocked and secrets.scrub(current.blocked)
    part = current.report.part(rates.ENTRY)
    for key in RATE_KEYS:
        row[key] = getattr(part, key) if part is not None else None
    return row


def error_row(target: Resolved, error: str) -> dict[str, Any]:
    """A ``tail`` row for a sample that failed (a lock held past the lock timeout, a lost
    connection): the time, the queue and the error; every figure is null."""
    return {
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "queue": target.profile.shown,
        "kind": _kind(target),
        "error": secrets.scrub(" ".join(error.split())),
    }
