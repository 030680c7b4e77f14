"""Watermarked queues: rows stranded below the watermark (never dequeued), and a watermark held
far behind the head (every dequeue walks the dead rows between them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qadmin.catalog import reads
from qadmin.diagnostics.model import (
    CRITICAL,
    WARNING,
    Context,
    Finding,
    InspectReport,
    Result,
    json_safe,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric
from qadmin.errors import counted
from qadmin.kinds import WATERMARK_EVERY

# A watermark this many ids behind the head, with a candidate this old, is being held back.
WATERMARK_LAG_IDS = 10 * WATERMARK_EVERY
WATERMARK_STUCK_S = 60.0
# What to do about each reason the MySQL / MariaDB advance records (held_by in watermark.sql),
# by a word of the reason; any other (or none recorded): an open transaction holds it.
HELD_BY_FIX = {
    "PROCESS": "GRANT PROCESS ON *.* TO the account that created the queue",
    "refilled": "find what polls information_schema.INNODB_TRX more often than every 0.1 s (a "
    "monitor) and slow it down",
    "dequeues move it": "dequeue in autocommit or at READ COMMITTED",
}
OPEN_WRITER_FIX = "{ghosts} to find the open transaction (or {locks}), then end it"


def _fix_for(held_by: str | None, report: InspectReport) -> str:
    """The fix for what holds the watermark back: the open transaction by default, found with
    qadmin ghosts (or locks) on this queue, commands that run as printed."""
    opened = OPEN_WRITER_FIX.format(ghosts=report.command("ghosts"), locks=report.command("locks"))
    return next((fix for word, fix in HELD_BY_FIX.items() if word in (held_by or "")), opened)


@dataclass
class Watermark(Result):
    state: reads.WatermarkState  # what ``qadmin watermark show`` prints

    def to_json_dict(self) -> dict[str, Any]:
        return dict(json_safe(self.state.to_json_dict()))

    @property
    def stranded(self) -> int:
        return self.state.stranded


def collect(ctx: Context) -> Watermark | None:
    if ctx.spec is None or not ctx.spec.watermark:
        return None
    return Watermark(reads.watermark(ctx.engine, ctx.spec))


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None:
        return []
    wm, queue = part.state, report.queue
    limit = report.limit("watermark_stranded")
    first = limit.warn if limit.warn is not None else limit.crit
    if part.stranded and first is not None and part.stranded >= first:
        critical = limit.crit is not None and part.stranded >= limit.crit
        return [
            Finding(
                CRITICAL if critical else WARNING,
                "watermark_stranded",
                f"{counted(wm.stranded, 'message')} below the watermark {wm.watermark} "
                f"{'is' if wm.stranded == 1 else 'are'} never dequeued (lowest id "
                f"{wm.stranded_min_id}, oldest "
                f"{wm.oldest_stranded_s} s)",
                f"qadmin watermark {queue} repair --dry-run, then qadmin watermark {queue} "
                "repair --yes",
            )
        ]
    age = wm.candidate_age_s
    if wm.lag_ids and wm.lag_ids > WATERMARK_LAG_IDS and age and age > WATERMARK_STUCK_S:
        held_by = wm.held_by or "a transaction open since then holds it back"
        return [
            Finding(
                WARNING,
                "watermark_lagging",
                f"the watermark is {wm.lag_ids} ids behind the head and has not moved for "
                f"{age:.0f} s: {held_by}, so dequeues walk the dead rows in between",
                _fix_for(wm.held_by, report),
            )
        ]
    return []


def _stranded(report: InspectReport) -> int | None:
    part = report.part(ENTRY)
    return None if part is None else part.stranded


ENTRY: Diagnostic[Watermark] = Diagnostic(
    name="watermark",
    order=60,
    sql=(),
    collect=collect,
    rule=rule,
    queue_only=True,
    metrics=(
        Metric(
            "watermark_stranded",
            "",
            "messages stranded below the watermark (watermarked queues)",
            lambda r: float(n) if (n := _stranded(r)) is not None else None,
            crit=1,
            applies=lambda r: r.part(ENTRY) is not None,
        ),
    ),
    fields=(
        Field(
            "watermark_stranded",
            "messages",
            "messages below the watermark, never dequeued (watermarked queues)",
            "int64",
            _stranded,
        ),
    ),
)
