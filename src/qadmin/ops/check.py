"""Threshold checks for cron and monitoring, in the Nagios plugin convention.

One status line with performance data; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the check
itself could not run: no connection, no such queue, bad thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATUS = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}


# (metric, unit, what it measures) for each threshold pair --warn-X / --crit-X.
METRICS = (
    ("depth", "", "messages in the queue"),
    ("oldest_age", "s", "age of the oldest message in seconds"),
    ("dead_ratio", "", "dead/ghost rows per live row (SQLite: free pages per page)"),
    ("lock_wait", "s", "longest lock wait on the queue in seconds"),
    ("stale_claims", "", "claims older than --stale-after"),
)


@dataclass(frozen=True)
class Threshold:
    metric: str
    unit: str
    warning: float | None
    critical: float | None


def metrics(report: dict[str, Any]) -> dict[str, float | None]:
    """The figures a check can judge, taken from an inspect report."""
    table = report["ghosts"]["table"]
    dead, live = table.get("dead_rows"), table.get("live_rows")
    free, pages = table.get("free_pages"), table.get("pages")
    if dead is not None:
        dead_ratio: float | None = float(dead) / max(float(live or 0), 1.0)
    elif free is not None and pages:
        dead_ratio = float(free) / float(pages)
    else:
        dead_ratio = None
    waits = [float(w.get("wait_s") or 0) for w in report["locks"]["waits"]]
    return {
        "depth": float(report["size"]["depth"]),
        "oldest_age": report["size"]["oldest_age_s"] or 0.0,
        "dead_ratio": dead_ratio,
        "lock_wait": max(waits, default=0.0),
        "stale_claims": float(len(report["claims"]["stale"])),
    }


def evaluate(report: dict[str, Any], thresholds: list[Threshold]) -> dict[str, Any]:
    values = metrics(report)
    code = OK
    problems: list[str] = []
    perf: list[str] = []
    for t in thresholds:
        value = values[t.metric]
        if value is None:
            continue
        level = OK
        if t.critical is not None and value >= t.critical:
            level = CRITICAL
        elif t.warning is not None and value >= t.warning:
            level = WARNING
        if level != OK:
            limit = t.critical if level == CRITICAL else t.warning
            problems.append(f"{t.metric} {_fmt(value)}{t.unit} >= {_fmt(limit)}{t.unit}")
        code = max(code, level)
        warn = "" if t.warning is None else _fmt(t.warning)
        crit = "" if t.critical is None else _fmt(t.critical)
        perf.append(f"{t.metric}={_fmt(value)}{t.unit};{warn};{crit};0")
    summary = ", ".join(problems) if problems else "all within thresholds"
    line = f"QADMIN {STATUS[code]} - {report['queue']}: {summary} | {' '.join(perf)}"
    return {
        "status": STATUS[code],
        "code": code,
        "queue": report["queue"],
        "line": line,
        "metrics": values,
        "problems": problems,
    }


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0")
