"""Whether the server maintains the queue table: statistics never gathered (the catalog's
estimates, and so index bloat, are then meaningless) and autovacuum switched off."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.entries.ghosts import DEAD_ROWS_MIN
from qadmin.diagnostics.entries.ghosts import ENTRY as GHOSTS
from qadmin.diagnostics.model import (
    WARNING,
    Context,
    Finding,
    InspectReport,
    Number,
    Result,
    Row,
)
from qadmin.diagnostics.registry import Diagnostic
from qadmin.values import to_utc

# Rows inserted before missing statistics are worth a finding (autovacuum analyzes a table
# after 50 changed rows by default, so a tiny queue may rightly never have been analyzed), and
# how long after its creation a queue is left for autovacuum (or InnoDB's recalculation) to
# gather them when the server does so by itself.
STATS_MIN_ROWS = 100
STATS_GRACE_S = 600


@dataclass(frozen=True)
class MaintenanceFacts(Row):
    """The row of maintenance.sql: whether the table's statistics exist and who gathers them."""

    reltuples: Number | None = None  # PostgreSQL (-1: never analyzed)
    live_rows: Number | None = None
    inserted_rows: Number | None = None
    modified_since_analyze: Number | None = None
    last_analyzed: Any = None  # a timestamptz
    autovacuum_server: bool | None = None
    track_counts: bool | None = None
    autovacuum_table_off: bool | None = None
    may_vacuum: bool | None = None  # PostgreSQL: whether this role may VACUUM the table
    table_rows: Number | None = None  # MySQL, MariaDB
    next_id: Number | None = None
    stats_rows: Number | None = None
    stats_updated: Any = None  # a datetime
    stats_present: bool | int | None = None
    auto_recalc_server: bool | int | None = None
    auto_recalc_table_off: bool | int | None = None


@dataclass
class Maintenance(Result):
    facts: MaintenanceFacts = field(default_factory=MaintenanceFacts)
    notes: list[str] = field(default_factory=list)


def collect(ctx: Context) -> Maintenance | None:
    if not sql.available(ctx.engine, "maintenance"):
        return None
    part = sql.read(ctx.engine, "maintenance", ctx.params)
    return Maintenance(part.first_typed(MaintenanceFacts), [part.note] if part.note else [])


def _server_gathers(facts: MaintenanceFacts) -> bool:
    """Whether the server gathers the statistics by itself (autovacuum on for the table;
    InnoDB's automatic recalculation on for it): only then is waiting for them worth it."""
    if facts.has("autovacuum_server"):
        return bool(facts.autovacuum_server) and not facts.autovacuum_table_off
    return bool(facts.auto_recalc_server) and not facts.auto_recalc_table_off


def _young(report: InspectReport, facts: MaintenanceFacts) -> bool:
    """Created within the grace period while the server will gather the statistics itself (a
    hand-built table's age is unknown: not young)."""
    if not _server_gathers(facts):
        return False
    created = to_utc(report.header.created_at)
    return created is not None and (datetime.now(UTC) - created).total_seconds() < STATS_GRACE_S


def stale_reason(facts: MaintenanceFacts) -> str | None:
    """Why the statistics are missing, from whichever engine's figures are there."""
    seen = max(int(facts.inserted_rows or 0), int(facts.live_rows or 0))
    never = facts.reltuples is not None and float(facts.reltuples) < 0
    if never and seen >= STATS_MIN_ROWS:
        return f"never analyzed: reltuples -1 though {seen} rows were inserted"
    inserted = int(facts.next_id or 1) - 1
    if facts.has("stats_present") and inserted >= STATS_MIN_ROWS:
        if not facts.stats_present:
            return f"no persistent statistics row though {inserted} rows were inserted"
        if int(facts.stats_rows or 0) == 0:
            return f"its persistent statistics count 0 rows though {inserted} were inserted"
    return None


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None or not part.facts.columns:
        return []
    facts, advice, out = part.facts, report.advice.base_hooks, []
    why = stale_reason(facts)
    if why and not _young(report, facts):
        out.append(
            Finding(
                WARNING,
                "stale_statistics",
                f"the queue table's statistics are missing ({why}): size estimates and index bloat "
                "figures are not meaningful",
                advice.analyze_advice(report.table),
            )
        )
    ghosts = report.part(GHOSTS)
    dead = int((ghosts.table.dead_rows or 0) if ghosts else 0)
    if facts.autovacuum_table_off:
        out.append(
            Finding(
                WARNING,
                "autovacuum_off",
                "autovacuum is switched off for the queue table (autovacuum_enabled = false): "
                "its dead rows are only removed by a manual VACUUM",
                advice.autovacuum_advice(report.table, server=False),
            )
        )
    elif facts.autovacuum_server is False and dead >= DEAD_ROWS_MIN:
        out.append(
            Finding(
                WARNING,
                "autovacuum_off",
                f"autovacuum is off on the server while the queue table has {dead} dead rows: "
                "nothing removes them but a manual VACUUM",
                advice.autovacuum_advice(report.table, server=True),
            )
        )
    return out


ENTRY: Diagnostic[Maintenance] = Diagnostic(
    name="maintenance",
    order=70,
    sql=("maintenance",),
    rows=(("maintenance", MaintenanceFacts),),
    collect=collect,
    rule=rule,
    lock_free=True,
)
