"""Whether the server maintains the queue table: statistics never gathered (the catalog's
estimates, and so index bloat, are then meaningless) and autovacuum switched off."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.entries.ghosts import DEAD_ROWS_MIN, Ghosts
from qadmin.diagnostics.model import WARNING, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import Diagnostic
from qadmin.values import to_utc

# Rows inserted before missing statistics are worth a finding (autovacuum analyzes a table
# after 50 changed rows by default, so a tiny queue may rightly never have been analyzed), and
# how long after its creation a queue is left for autovacuum (or InnoDB's recalculation) to
# gather them when the server does so by itself.
STATS_MIN_ROWS = 100
STATS_GRACE_S = 600


@dataclass
class Maintenance(Result):
    facts: dict[str, Any] = field(default_factory=dict)  # the maintenance.sql row
    notes: list[str] = field(default_factory=list)


def collect(ctx: Context) -> Maintenance | None:
    if not sql.available(ctx.engine, "maintenance"):
        return None
    part = sql.read(ctx.engine, "maintenance", ctx.params)
    return Maintenance(part.first, [part.note] if part.note else [])


def _server_gathers(facts: dict[str, Any]) -> bool:
    """Whether the server gathers the statistics by itself (autovacuum on for the table;
    InnoDB's automatic recalculation on for it): only then is waiting for them worth it."""
    if "autovacuum_server" in facts:
        return bool(facts["autovacuum_server"]) and not facts.get("autovacuum_table_off")
    return bool(facts.get("auto_recalc_server")) and not facts.get("auto_recalc_table_off")


def _young(report: InspectReport, facts: dict[str, Any]) -> bool:
    """Created within the grace period while the server will gather the statistics itself (a
    hand-built table's age is unknown: not young)."""
    if not _server_gathers(facts):
        return False
    created = to_utc(report.header.created_at)
    return created is not None and (datetime.now(UTC) - created).total_seconds() < STATS_GRACE_S


def stale_reason(facts: dict[str, Any]) -> str | None:
    """Why the statistics are missing, from whichever engine's figures are there."""
    seen = max(int(facts.get("inserted_rows") or 0), int(facts.get("live_rows") or 0))
    never = facts.get("reltuples") is not None and float(facts["reltuples"]) < 0
    if never and seen >= STATS_MIN_ROWS:
        return f"never analyzed: reltuples -1 though {seen} rows were inserted"
    inserted = int(facts.get("next_id") or 1) - 1
    if "stats_present" in facts and inserted >= STATS_MIN_ROWS:
        if not facts["stats_present"]:
            return f"no persistent statistics row though {inserted} rows were inserted"
        if int(facts.get("stats_rows") or 0) == 0:
            return f"its persistent statistics count 0 rows though {inserted} were inserted"
    return None


def rule(report: InspectReport) -> list[Finding]:
    part: Maintenance | None = report.part("maintenance")
    if part is None or not part.facts:
        return []
    facts, advice, out = part.facts, report.advice, []
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
    ghosts: Ghosts | None = report.part("ghosts")
    dead = int((ghosts.table.get("dead_rows") or 0) if ghosts else 0)
    if facts.get("autovacuum_table_off"):
        out.append(
            Finding(
                WARNING,
                "autovacuum_off",
                "autovacuum is switched off for the queue table (autovacuum_enabled = false): "
                "its dead rows are only removed by a manual VACUUM",
                advice.autovacuum_advice(report.table, server=False),
            )
        )
    elif facts.get("autovacuum_server") is False and dead >= DEAD_ROWS_MIN:
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


ENTRY = Diagnostic(
    name="maintenance",
    order=70,
    sql=("maintenance",),
    collect=collect,
    rule=rule,
    lock_free=True,
)
