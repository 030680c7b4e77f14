"""Figures for watching queues over time: one snapshot per queue, rates between snapshots.

``tail`` prints them live and ``collect`` appends them to a Parquet history. A snapshot reads
only what is cheap enough to poll: the size part (an estimate on big queues), the id / sequence
counters, the table's dead-row figure (not the horizon holders), lock waits on the table and,
for claim queues, the claims. Every rate names the counter it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from qadmin import secrets
from qadmin.engines.base import Engine
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops import diagnose

# Bump when a field is added, renamed or changes meaning; collect writes it into every row.
SCHEMA_VERSION = 1

# (field, unit, meaning): the telemetry schema, documented in the README from this list.
FIELDS: tuple[tuple[str, str, str], ...] = (
    ("schema_version", "", "version of this list of fields"),
    ("time", "UTC", "when the snapshot was taken"),
    ("connection", "", "named connection (or 'default')"),
    ("server", "", "engine and host:port/database, no credentials"),
    ("engine", "", "sqlite, postgresql, mysql or mssql"),
    ("queue", "", "queue name"),
    ("kind", "", "queue kind"),
    ("depth", "messages", "messages in the queue (estimate when depth_exact is false)"),
    ("depth_exact", "", "whether depth was counted"),
    ("oldest_age_s", "s", "age of the oldest message"),
    ("enqueued_total", "messages", "cumulative enqueue counter (id high-water or push sequence)"),
    ("dequeued_total", "messages", "cumulative dequeue counter where the queue keeps one (ring)"),
    ("deleted_total", "rows", "server's cumulative delete counter (PostgreSQL, SQL Server)"),
    ("claimed", "messages", "claimed, not yet acked (claim queues)"),
    ("stale_claims", "messages", "claims older than the stale-after limit"),
    (
        "ghosts",
        "rows|undo logs|pages",
        "dead rows (PostgreSQL), history list length (InnoDB), "
        "free pages (SQLite), cumulative ghost records (SQL Server); see ghost_source",
    ),
    ("ghost_source", "", "which of those ghosts is"),
    ("lock_waits", "sessions", "sessions waiting on a lock on the queue table"),
    ("max_lock_wait_s", "s", "longest of those waits"),
    ("ring_fill", "fraction", "ring depth / capacity (rings)"),
    ("table_bytes", "bytes", "table size"),
    ("index_bytes", "bytes", "index size"),
    ("index_bloat_pct", "%", "largest estimated index bloat (catalog estimate; collect only)"),
)

GHOST_SOURCES = (
    ("dead_rows", "pg_stat_user_tables.n_dead_tup"),
    ("history_list_length", "innodb history list length"),
    ("free_pages", "sqlite freelist pages"),
    ("ghost_records_cumulative", "sql server leaf_ghost_count (cumulative)"),
)


@dataclass
class Snapshot:
    spec: QueueSpec
    sample: diagnose.Sample
    figures: dict[str, Any]


def snapshot(
    engine: Engine, spec: QueueSpec, stale_after_s: int, fragmentation: bool = False
) -> Snapshot:
    """The figures of one queue now; ``fragmentation`` adds the (cheap, catalog) bloat estimate,
    which collect records and tail leaves out."""
    params = {"schema": engine.schema, "table": spec.name}
    sample = diagnose.sample(engine, spec)
    ghost_row = (diagnose.run_part(engine, "ghosts", params).rows or [{}])[0]
    ghosts, ghost_source = None, None
    for key, source in GHOST_SOURCES:
        if ghost_row.get(key) is not None:
            ghosts, ghost_source = int(ghost_row[key]), source
            break
    waits = diagnose.locks(engine, spec).rows
    claimed = stale = None
    if spec.kind is Kind.CLAIM:
        part = diagnose.claims(engine, spec, stale_after_s)
        claimed, stale = part["claimed"], len(part["stale"])
    size = sample.size
    figures = {
        "schema_version": SCHEMA_VERSION,
        "time": datetime.now(UTC),
        "engine": engine.name,
        "queue": spec.name,
        "kind": spec.kind.value,
        "depth": sample.depth,
        "depth_exact": bool(size.get("depth_exact")),
        "oldest_age_s": size.get("oldest_age_s"),
        "enqueued_total": sample.enqueued_total,
        "dequeued_total": sample.dequeued_total,
        "deleted_total": sample.deleted,
        "claimed": claimed,
        "stale_claims": stale,
        "ghosts": ghosts,
        "ghost_source": ghost_source,
        "lock_waits": len(waits),
        "max_lock_wait_s": max((float(w.get("wait_s") or 0) for w in waits), default=0.0),
        "ring_fill": size.get("ring_fill"),
        "table_bytes": size.get("table_bytes") or size.get("file_bytes"),
        "index_bytes": size.get("index_bytes"),
        "index_bloat_pct": None,
    }
    if fragmentation:
        indexes = diagnose.fragmentation(engine, spec)["indexes"]
        bloat = [float(i["bloat_pct"]) for i in indexes if i.get("bloat_pct") is not None]
        figures["index_bloat_pct"] = max(bloat, default=None)
    return Snapshot(spec, sample, figures)


def tail_row(previous: Snapshot | None, current: Snapshot) -> dict[str, Any]:
    """One line of ``tail``: the snapshot's figures plus rates since the previous one."""
    row = {k: v for k, v in current.figures.items() if k != "schema_version"}
    row["time"] = current.figures["time"].strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if previous is None:
        row.update(
            interval_s=None,
            enqueue_per_s=None,
            dequeue_per_s=None,
            enqueue_source=None,
            dequeue_source=None,
        )
    else:
        rates = diagnose.rates(previous.sample, current.sample, current.spec)
        for key in (
            "interval_s",
            "enqueue_per_s",
            "dequeue_per_s",
            "enqueue_source",
            "dequeue_source",
        ):
            row[key] = rates[key]
    return row


def error_row(spec: QueueSpec, error: str) -> dict[str, Any]:
    """A ``tail`` row for a sample that failed (a lock held past the lock timeout, a lost
    connection): the time, the queue and the error; every figure is null."""
    return {
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "queue": spec.name,
        "kind": spec.kind.value,
        "error": secrets.scrub(" ".join(error.split())),
    }
