"""Checks for cron and monitoring, in the Nagios plugin convention.

One status line with performance data; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the check
could not run: no connection, no such queue, bad thresholds). The status is the worst of the
thresholds given and of every finding (critical 2, warning 1): a ring stalled behind a push
hole is CRITICAL even with no threshold given. A threshold whose figure this engine does not
have is named in the line and left out of the performance data; when a threshold given could
not be judged and nothing else is wrong, the status is UNKNOWN. A part that was not read (a
lock held past its short lock timeout, the statement timeout) leaves its figures and findings
unjudged: the status is then UNKNOWN unless what was read is CRITICAL (``worst``: Nagios's
ranking, CRITICAL first, then the highest code, so UNKNOWN outranks WARNING).

A figure is exact, a floor or an estimate (``registry.Quality``): a threshold is judged only
where the figure proves which side of it the truth lies (a floor over it; an estimate whose
error range lies wholly on one side), else named as not evaluable, so the status is never OK
while the true figure is over. A figure that is not exact is followed in the performance data
by a label of its own, ``NAME_floor=1`` or ``NAME_estimated=1`` (docs/diagnostics.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from qadmin import secrets
from qadmin.diagnostics import registry
from qadmin.diagnostics.entries import size as size_entry
from qadmin.diagnostics.model import SEVERITY_CODE, BlockedPart, InspectReport, json_safe

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATUS = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}
# Worst first, as every verdict over several is ranked (a queue's, status's exit code and
# order, check --all's, a scrape's): CRITICAL, then the highest code, so UNKNOWN (nothing can
# be said) outranks WARNING.
RANK = {CRITICAL: 0, UNKNOWN: 1, WARNING: 2, OK: 3}


def worst(codes: Iterable[int]) -> int:
    """The worst of several check codes by ``RANK`` (OK when there are none)."""
    return min(codes, key=RANK.__getitem__, default=OK)


@dataclass
class CheckResult:
    status: str
    code: int
    queue: str
    line: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)

    @property
    def breaches(self) -> list[str]:
        """The thresholds crossed (the problems that are not findings)."""
        return self.problems[: len(self.problems) - len(self.findings)]

    def to_json_dict(self) -> dict[str, Any]:
        return dict(json_safe(self.__dict__))


def unknown(queue: str, error: str) -> CheckResult:
    """The check itself could not run: the reason, on the one line."""
    text = secrets.scrub(" ".join(error.split()))
    return CheckResult("UNKNOWN", UNKNOWN, queue, f"QADMIN UNKNOWN - {queue}: {text}", {}, [text])


def evaluate(report: InspectReport) -> CheckResult:
    values = {m.name: m.value(report) for m in registry.metrics()}
    code = OK
    problems: list[str] = []
    not_judged: list[str] = []
    not_applicable: list[str] = []
    given_perf: list[str] = []
    other_perf: list[str] = []
    judged = 0
    parts = {m.name: e.name for e in registry.entries() for m in e.metrics}
    for metric in registry.metrics():
        value = values[metric.name]
        limit = report.options.limits.get(metric.name)
        given = limit is not None and limit.given
        blocked = report.blocked.get(parts[metric.name])
        if value is None:
            if given and metric.applies is not None and not metric.applies(report):
                not_applicable.append(f"{metric.name} does not apply to {_what(report)}")
            elif given and blocked is not None:
                not_judged.append(_not_read(metric.name, parts[metric.name], blocked))
            elif given and metric.unread is not None and (why := metric.unread(report)):
                not_judged.append(f"{metric.name} not evaluable: {why}")
            elif given:
                not_judged.append(_not_evaluable(report, metric.name))
            continue
        quality = metric.quality(report) if metric.quality is not None else registry.EXACT
        marks = _marks(metric.name, quality)
        if not given or limit is None:
            drawn = metric.perf_default
            warn, crit = (_fmt(metric.warn), _fmt(metric.crit)) if drawn else ("", "")
            other_perf.append(f"{metric.name}={_fmt(value)}{metric.unit};{warn};{crit};0{marks}")
            continue
        low, high = quality.bounds(value)
        level, unsure = OK, None
        for bound, at in ((limit.crit, CRITICAL), (limit.warn, WARNING)):
            if bound is None or level >= at:
                continue
            if low >= bound:  # the truth is over it, whatever the figure's error
                level = at
            elif high >= bound and unsure is None:  # the truth may be either side
                unsure = bound
        shown = f"{_prefix(quality)}{_fmt(value)}{metric.unit}"
        counted = quality.low is not None and quality.low not in (0, float("-inf"))
        if quality.unbounded and counted:  # what proves a threshold: the rows counted
            shown += f" (at least {_fmt(quality.low)}{metric.unit} counted)"
        warn, crit = _fmt(limit.warn), _fmt(limit.crit)
        given_perf.append(f"{metric.name}={_fmt(value)}{metric.unit};{warn};{crit};0{marks}")
        if unsure is not None:
            not_judged.append(_unproven(metric.name, shown, quality, value, unsure, metric.unit))
            if level == OK:
                continue
        judged += 1
        if level != OK:
            bound = limit.crit if level == CRITICAL else limit.warn
            problems.append(f"{metric.name} {shown} >= {_fmt(bound)}{metric.unit}")
        code = worst((code, level))
    findings = []
    # the queue's own findings first, the server's (every queue shows them) after
    for finding in sorted(report.findings, key=lambda f: f.server_wide):
        level = SEVERITY_CODE[finding.severity]
        if finding.hides_critical and level < CRITICAL:
            level = UNKNOWN
        if level:
            problems.append(f"{finding.code}: {finding.message}")
            findings.append(
                {"severity": finding.severity, "code": finding.code, "message": finding.message}
            )
        code = worst((code, level))
    engine_lacks = f"not evaluable on {report.header.engine}"
    unread = [n for n in not_judged if not n.endswith(engine_lacks)]
    if unread:
        # A threshold given whose figure exists but could not be read (no index for it, a
        # privilege missing, an estimate or a floor that proves neither side) cannot be
        # called met, whatever the others say, nor called a mere WARNING: its truth may be
        # over a CRITICAL (UNKNOWN outranks WARNING, as in status).
        code = worst((code, UNKNOWN))
    elif not_judged and not judged and code == OK:
        # Only figures this engine never has (SQLite's snapshot age) and nothing judged: not
        # OK; beside a finding or a judged threshold they are only noted, as one template
        # serves every engine.
        code = UNKNOWN
    if report.blocked:
        # A part not read judged none of its figures or findings (stale claims, dead letters
        # behind a lock): neither OK nor a WARNING from what was read can be the verdict.
        code = worst((code, UNKNOWN))
        # a lock is named by its part_blocked finding; a statement timeout has none: said here
        named = " ".join(not_judged)
        not_judged += [
            b.note
            for name, b in report.blocked.items()
            if b.lockless and f"the {name} part" not in named
        ]
    # "all within thresholds" only when nothing was left unjudged: an UNKNOWN says why alone
    if problems:
        summary = ", ".join(problems)
    elif code == UNKNOWN or (not judged and not_judged):
        summary = ""
    else:
        summary = "all within thresholds"
    if not_judged or not_applicable:
        summary = "; ".join(x for x in (summary, ", ".join(not_judged + not_applicable)) if x)
    perf = " ".join(given_perf + other_perf)
    return CheckResult(
        STATUS[code],
        code,
        report.queue,
        f"QADMIN {STATUS[code]} - {report.queue}: {summary} | {perf}",
        values,
        problems,
        findings,
    )


# The finding that says why a metric's figure was not read (a profiled table's missing index).
_UNREAD = {
    "depth": "depth_unread",
    "stale_claims": "claims_unread",
    "oldest_age": "depth_unread",
    "ring_fill": "depth_unread",  # a ring's fill is its depth over its capacity
}


def _not_read(metric: str, part: str, blocked: BlockedPart) -> str:
    """Why a threshold given was not judged when its part was not read: the lock and who
    holds it (as the part_blocked finding names them), or the statement timeout."""
    if blocked.lockless:
        return f"{metric} not evaluable: the {part} part was not read ({blocked.cause})"
    holder = blocked.blocker
    if blocked.session is not None:
        holder = f"session {blocked.session}" + ("" if blocked.certain else " (probably)")
    return f"{metric} not evaluable: the {part} part was blocked by a lock held by {holder}"


def _not_evaluable(report: InspectReport, metric: str) -> str:
    """Why a threshold given could not be judged: the finding saying which figure was not
    read and which index would read it, else the engine having no such figure."""
    code = _UNREAD.get(metric)
    for finding in report.findings:
        if finding.code == code:
            return f"{metric} not evaluable: {finding.message}"
    size = report.part(size_entry.ENTRY)
    if metric == "oldest_age" and size is not None and size.oldest_source:
        return f"{metric} not evaluable: {size.oldest_source}"  # where it was looked for
    if metric == "oldest_age" and size is not None:
        # a profiled table's reason: the index that would make it cheap, no time column
        why = [n for n in size.all_notes() if "oldest" in n or "enqueue time" in n]
        if why:
            return f"{metric} not evaluable: {why[0]}"
    return f"{metric} not evaluable on {report.header.engine}"


def _prefix(quality: registry.Quality) -> str:
    return {"floor": "at least ", "estimate": "~"}.get(quality.kind, "")


def _marks(name: str, quality: registry.Quality) -> str:
    """Perfdata has no flag for a figure that is not exact: a label of its own, 1 when the
    figure before it is a floor (``NAME_floor=1``) or an estimate (``NAME_estimated=1``)."""
    if quality.kind == "floor":
        return f" {name}_floor=1"
    if quality.kind == "estimate":
        return f" {name}_estimated=1"
    return ""


def _unproven(
    name: str, shown: str, quality: registry.Quality, value: float, bound: float, unit: str
) -> str:
    """Why a floor or an estimate does not prove which side of a threshold the truth lies:
    the range the truth may lie in, which holds the threshold."""
    low, high = quality.bounds(value)
    if quality.kind == "floor" and quality.ceiling is None:
        return f"{name} not evaluable: {shown}"  # under the threshold; the rest is not read
    if quality.kind == "floor":
        return (
            f"{name} not evaluable: {shown}, at most ~{_fmt(quality.ceiling)}{unit} by an "
            f"estimate that may be {quality.error:.0%} off (up to {_fmt(round(high))}{unit}), "
            f"and {_fmt(bound)}{unit} lies between"
        )
    where = f" ({quality.source})" if quality.source else ""
    if quality.unbounded and low == float("-inf"):
        return f"{name} not evaluable: {shown} {quality.source or ''}: it proves neither side"
    if quality.unbounded:
        # a planner's estimate from the last ANALYZE's statistics: no error bound of its own
        table = "" if quality.ceiling is None else f", the table ~{_fmt(quality.ceiling)} rows"
        why = f"a planner's estimate has no error bound: {_fmt(low)}{unit} counted{table}"
    elif quality.low is not None and quality.low >= value / (1 + quality.error):
        why = f"{quality.error:.0%} off, {_fmt(low)}{unit} counted"
    elif quality.low is not None:
        why = f"only {_fmt(low)}{unit} counted"
    else:
        why = f"{quality.error:.0%} off"
    top = "" if high == float("inf") else f" to {_fmt(round(high))}{unit}"
    return (
        f"{name} not evaluable: estimate {shown}{where} puts the truth at "
        f"{_fmt(round(low))}{unit}{top} ({why}), and {_fmt(bound)}{unit} is within that"
    )


def _what(report: InspectReport) -> str:
    kind = report.header.kind
    return f"a {kind} queue" if kind else "a hand-built table"


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")  # 0.0001: "0", never "0."
