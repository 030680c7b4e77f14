"""Dead letters: messages of a claim queue that failed their last allowed attempt and sit in
``<queue>_dead`` until someone looks (``qadmin dead``) and moves them back (``redrive``).
Two index reads: a bounded count and the oldest death."""

from __future__ import annotations

from dataclasses import dataclass

from qadmin.catalog import reads
from qadmin.diagnostics.entries import size
from qadmin.diagnostics.model import CRITICAL, WARNING, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import EXACT, Diagnostic, Field, Metric, Quality
from qadmin.errors import counted


@dataclass
class DeadLetters(Result):
    count: int
    exact: bool
    oldest_s: float | None
    max_attempts: int | None


def collect(ctx: Context) -> DeadLetters | None:
    spec = ctx.spec
    if spec is None or not spec.dead_table:
        return None
    depth = reads.dead_depth(ctx.engine, spec)
    return DeadLetters(depth.count, depth.exact, depth.oldest_s, spec.max_attempts)


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    limit = report.limit("dead")
    first = limit.warn if limit.warn is not None else limit.crit
    if part is None or not part.count or first is None or part.count < first:
        return []
    critical = limit.crit is not None and part.count >= limit.crit
    queue = report.queue
    more = "" if part.exact else " or more"
    one = part.count == 1 and part.exact
    verb = (
        "failed its last allowed attempt and waits"
        if one
        else ("failed their last allowed attempt and wait")
    )
    return [
        Finding(
            CRITICAL if critical else WARNING,
            "dead_letters",
            f"{counted(part.count, 'message')}{more} {verb} in {queue}_dead "
            f"(the first died {part.oldest_s} s ago)",
            f"qadmin dead {queue} to see their errors; once the cause is fixed, "
            f"qadmin redrive {queue} --all --dry-run, then qadmin redrive {queue} --all --yes",
        )
    ]


def _count(report: InspectReport) -> int | None:
    """A claim queue's dead letters, or a library's (or declared) table's failed jobs: the
    figure status shows in its dead column, judged by --warn/--crit-dead alike."""
    part = report.part(ENTRY)
    if part is not None:
        return part.count
    measured = report.part(size.ENTRY)
    return None if measured is None else measured.failed


def _failed(report: InspectReport) -> list[size.StateCount]:
    measured = report.part(size.ENTRY)
    states = measured.states if measured is not None else None
    return [s for s in states or [] if s.group == "failed"]


def failed_quality(report: InspectReport) -> str:
    """A table's failed jobs: exact when every failed state was counted, an estimate when
    one is the planner's (no index on the state: the planner's guess, 410 for a table never
    analyzed with none failed), else a floor (a count stopped at its limit)."""
    failed = _failed(report)
    if any(s.planner for s in failed):
        return "estimate"
    return "exact" if all(s.exact for s in failed) else "floor"


def _oldest(report: InspectReport) -> float | None:
    part = report.part(ENTRY)
    return None if part is None else part.oldest_s


def _quality(report: InspectReport) -> Quality:
    """The bounded count is a floor once it reaches its limit ("or more")."""
    part = report.part(ENTRY)
    if part is None:
        kind = failed_quality(report)
        if kind == "estimate":
            # no bound on a planner's error: judged only by the rows counted and the table's
            measured = report.part(size.ENTRY)
            if measured is None:
                return Quality("estimate", 1.0, "planner estimate")
            whole, error = measured.facts.estimated_rows, measured.estimate_error
            counted = sum(s.counted for s in _failed(report))
            return Quality("estimate", 1.0, "planner estimate", counted, whole, error)
        return EXACT if kind == "exact" else Quality("floor")
    return Quality("floor") if not part.exact else EXACT


def _count_quality(report: InspectReport) -> str | None:
    part = report.part(ENTRY)
    return None if part is None else ("exact" if part.exact else "floor")


ENTRY: Diagnostic[DeadLetters] = Diagnostic(
    name="dead",
    order=25,
    sql=(),
    collect=collect,
    rule=rule,
    queue_only=True,
    metrics=(
        Metric(
            "dead",
            "",
            "dead letters (claim queues with --max-attempts), or a job-queue library's (or a "
            "declared table's) failed jobs (an estimate, judged only within its bounds, where "
            "no index on the state lets them be counted)",
            lambda r: float(n) if (n := _count(r)) is not None else None,
            warn=1,
            applies=lambda r: _count(r) is not None,
            quality=_quality,
        ),
    ),
    fields=(
        Field(
            "dead",
            "messages",
            "messages in the dead table, counted up to 10,000 (claim queues)",
            "int64",
            _count,
        ),
        Field(
            "dead_quality",
            "",
            "exact, or floor (the count stopped at 10,000: that many or more)",
            "string",
            _count_quality,
        ),
        Field(
            "oldest_dead_s",
            "s",
            "how long the first dead message has been in the dead table (claim queues)",
            "float64",
            _oldest,
        ),
    ),
)
