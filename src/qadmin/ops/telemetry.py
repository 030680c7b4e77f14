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
from qadmin.catalog.rows import Row
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


@dataclass(frozen=True)
class Figures(Row):
    """One snapshot's figures: the base fields a snapshot takes, then the diagnostics
    registry's telemetry fields in their order (``tests/unit/test_telemetry_rows.py`` holds
    these fields to ``registry.fields()``, names, order and Parquet types). ``columns`` keeps
    the ones taken: the collect-only ones only when collecting."""

    schema_version: int
    time: datetime
    engine: str
    queue: str
    kind: str
    depth: int | None = None
    depth_exact: bool | None = None
    depth_quality: str | None = None
    oldest_age_s: float | None = None
    oldest_quality: str | None = None
    ring_fill: float | None = None
    table_bytes: int | None = None
    index_bytes: int | None = None
    enqueued_total: int | None = None
    dequeued_total: int | None = None
    deleted_total: int | None = None
    backlog_growth_per_s: float | None = None
    claimed: int | None = None
    claimed_quality: str | None = None
    stale_claims: int | None = None
    dead: int | None = None
    dead_quality: str | None = None
    oldest_dead_s: float | None = None
    paused_for_s: float | None = None
    dropping: int | None = None
    ghosts: int | None = None
    ghost_source: str | None = None
    snapshot_age_s: float | None = None
    lock_waits: int | None = None
    max_lock_wait_s: float | None = None
    ring_stall_s: float | None = None
    ring_orphan_age_s: float | None = None
    watermark_stranded: int | None = None
    invalid_indexes: int | None = None
    index_bloat_pct: float | None = None


@dataclass(frozen=True)
class TailRow:
    """One line of ``tail``: a snapshot's figures and the rates since the previous one, or,
    for a sample that failed, the time, the queue and the error (``figures`` None: every
    figure null). ``error`` is also set on a partial row (a part a lock kept from being read)."""

    time: str  # ISO 8601 UTC, microseconds
    queue: str
    kind: str
    error: str | None
    figures: Figures | None = None
    interval_s: float | None = None
    enqueue_per_s: float | None = None
    dequeue_per_s: float | None = None
    enqueue_source: str | None = None
    dequeue_source: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The row as tail prints it (JSON lines, CSV): the figures but ``schema_version``,
        the error, then the rates; a failed sample's only its time, queue, kind and error."""
        if self.figures is None:
            return {"time": self.time, "queue": self.queue, "kind": self.kind, "error": self.error}
        row = {k: v for k, v in self.figures.as_dict().items() if k != "schema_version"}
        row["time"] = self.time
        row["error"] = self.error
        for key in RATE_KEYS:
            row[key] = getattr(self, key)
        return row


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

    def figures(self, collecting: bool = False) -> Figures:
        """The figures tail shows (``collecting``: and the collect-only ones)."""
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
        return Figures.of(out)


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


def tail_row(previous: Snapshot | None, current: Snapshot) -> TailRow:
    """One line of ``tail``: the snapshot's figures plus rates since the previous one."""
    before, after = previous.sample if previous else None, current.sample
    if before is not None and after is not None:
        current.report.parts[rates.ENTRY.name] = rates.between(before, after, current.target.spec)
    figures = current.figures()
    part = current.report.part(rates.ENTRY)
    return TailRow(
        _stamp(current.time),
        figures.queue,
        figures.kind,
        current.blocked and secrets.scrub(current.blocked),
        figures,
        None if part is None else part.interval_s,
        None if part is None else part.enqueue_per_s,
        None if part is None else part.dequeue_per_s,
        None if part is None else part.enqueue_source,
        None if part is None else part.dequeue_source,
    )


def error_row(target: Resolved, error: str) -> TailRow:
    """A ``tail`` row for a sample that failed (a lock held past the lock timeout, a lost
    connection): the time, the queue and the error; every figure is null."""
    return TailRow(
        _stamp(datetime.now(UTC)),
        target.profile.shown,
        _kind(target),
        secrets.scrub(" ".join(error.split())),
    )


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
