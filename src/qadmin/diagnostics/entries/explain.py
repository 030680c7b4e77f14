"""inspect --deep: the dequeue's plan (``qadmin explain``) as one more part. Only with --deep:
PostgreSQL and MariaDB run the head's SELECT to read its plan. Its INVALID-index and
statistics findings are inspect's own parts' already: only the plan's are raised here."""

from __future__ import annotations

from qadmin.diagnostics.entries import plan as explain_ops
from qadmin.diagnostics.model import Context, Finding, InspectReport
from qadmin.diagnostics.registry import Diagnostic
from qadmin.errors import UnsupportedError, UsageError

# The findings only the plan gives (the rest come from invalid_indexes and maintenance), and
# the plan's own lock wait given up, its holder named.
PLAN_FINDINGS = ("dequeue_index_misfit", "dequeue_dead_entries", "part_blocked")


def collect(ctx: Context) -> explain_ops.Explain | None:
    if not ctx.options.deep or ctx.options.telemetry:
        return None
    try:
        result = explain_ops.explain(ctx)
    except (UsageError, UnsupportedError):  # no dequeue order to explain, or no head SQL
        return None
    result.plan = None  # the server's plan document is explain's own (nodes summarise it)
    return result


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None:
        return []
    return [f for f in part.findings if f.code in PLAN_FINDINGS]


ENTRY: Diagnostic[explain_ops.Explain] = Diagnostic(
    name="explain", order=85, sql=("explain",), collect=collect, rule=rule
)
