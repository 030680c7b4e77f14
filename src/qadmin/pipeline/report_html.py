"""The report as one self-contained HTML file: tables and inline SVG charts, no scripts or
styles fetched from anywhere (it is opened on a DBA's laptop, maybe offline)."""

from __future__ import annotations

import html
import math
from datetime import UTC, datetime
from typing import Any

from qadmin.pipeline.report import FINDING_COLUMNS, QUEUE_COLUMNS, Report

WIDTH, HEIGHT, PAD = 720, 200, 44
COLOURS = ("#1f77b4", "#ff7f0e", "#d62728", "#2ca02c")
# Units whose figures are counts: whole numbers on the axis.
COUNTS = frozenset({"messages", "rows"})
# (title, unit, [(label, column)]) for each queue's charts.
CHARTS = (
    ("Depth", "messages", (("p50", "depth_p50"), ("p95", "depth_p95"), ("p99", "depth_p99"))),
    ("Rates", "messages/s", (("enqueue", "enqueue_rate"), ("dequeue", "dequeue_rate"))),
    ("Oldest message age", "s", (("p50", "oldest_age_p50"), ("p99", "oldest_age_p99"))),
    ("Ghost / dead rows", "rows", (("max", "ghosts_max"),)),
)
# Run in the browser once the page has loaded: proves every chart laid out (the headless
# browser test reads data-rendered), and changes nothing a reader sees.
CHECK = """
window.addEventListener('load', function () {
  var charts = document.querySelectorAll('svg.chart');
  var drawn = 0;
  charts.forEach(function (svg) {
    var box = svg.getBBox();
    if (box.width > 0 && box.height > 0 && svg.querySelectorAll('polyline').length) drawn++;
  });
  document.body.dataset.charts = String(charts.length);
  document.body.dataset.rendered = drawn === charts.length ? 'ok' : 'broken';
  var widest = 0;
  document.querySelectorAll('table, svg.chart').forEach(function (el) {
    widest = Math.max(widest, Math.ceil(el.getBoundingClientRect().right));
  });
  document.body.dataset.widest = String(widest);
});
"""
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 860px; }
table { border-collapse: collapse; margin: 1em 0; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 3px 5px; text-align: left; font-size: 12px; }
th { background: #f3f3f3; vertical-align: bottom; }
td.n { text-align: right; white-space: nowrap; }
td.detail { min-width: 16em; }
svg.chart { border: 1px solid #ddd; margin: 4px 8px 12px 0; }
.finding { color: #a40000; }
"""


def render(report: Report, title: str = "qadmin queue report") -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>History: {_e(report.history)}; {report.samples:,} samples. Times are UTC.</p>",
        "<h2>Findings</h2>",
        _table(report.findings, FINDING_COLUMNS) if report.findings else "<p>None.</p>",
        "<h2>Queues</h2>",
        _table(report.queues, QUEUE_COLUMNS),
    ]
    for (connection, queue), hours in report.charted.items():
        parts.append(f"<h2>{_e(queue)} <small>({_e(connection)})</small></h2>")
        windows = [
            (f["start"], f["end"], f["finding"])
            for f in report.findings
            if (f["connection"], f["queue"]) == (connection, queue)
        ]
        for chart_title, unit, series in CHARTS:
            parts.append(_chart(f"{chart_title} ({unit})", hours, series, unit, windows))
    parts.append(f"<script>{CHECK}</script></body></html>")
    return "\n".join(parts)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: Any) -> str:
    """A table cell: whole figures without decimals, others with two, times in UTC marked
    so (a time without a zone is UTC: the report computes in UTC)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    """Column names may wrap (at their underscores, shown as spaces): the queue table's eleven
    columns then fit a 900-pixel page."""
    head = "".join(f"<th>{_e(c.replace('_', ' '))}</th>" for c in columns)

    def td(value: Any, column: str) -> str:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        css = ' class="n"' if number else (' class="detail"' if column == "detail" else "")
        return f"<td{css}>{_e(_cell(value))}</td>"

    body = "".join("<tr>" + "".join(td(r.get(c), c) for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _axis(top: float, unit: str) -> tuple[float, str]:
    """The y axis's top and its label: counts rounded up to a whole number."""
    if unit in COUNTS:
        whole = float(max(1, math.ceil(top)))
        return whole, f"{whole:,.0f}"
    return top, _cell(top)


def _chart(
    title: str,
    hours: list[dict[str, Any]],
    series: tuple[tuple[str, str], ...],
    unit: str = "",
    windows: list[tuple[Any, Any, str]] | None = None,
) -> str:
    """A line chart, one polyline per series; hours on x, 0..max on y; each finding's window
    (its first hour to its end) shaded, with the finding's name."""
    values = [float(h[c]) for h in hours for _, c in series if h.get(c) is not None]
    top, top_label = _axis(max(values, default=0.0) or 1.0, unit)
    count = max(len(hours) - 1, 1)
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def x(i: int) -> float:
        return PAD + inner_w * i / count

    def y(v: float) -> float:
        return HEIGHT - PAD - inner_h * v / top

    lines = []
    for n, (label, column) in enumerate(series):
        marks = [
            (x(i), y(float(h[column]))) for i, h in enumerate(hours) if h.get(column) is not None
        ]
        # One hour of history: its value drawn across the chart (a one-point line is invisible).
        if len(hours) == 1 and marks:
            marks = [(x(0), marks[0][1]), (x(1), marks[0][1])]
        points = " ".join(f"{px:.1f},{py:.1f}" for px, py in marks)
        colour = COLOURS[n % len(COLOURS)]
        lines.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}">'
            f"<title>{_e(label)}</title></polyline>"
            f'<text x="{WIDTH - PAD + 4}" y="{PAD + 14 * n}" fill="{colour}" '
            f'font-size="11">{_e(label)}</text>'
        )
    bands = []
    index = {h["hour"]: i for i, h in enumerate(hours)}
    for n, (start, end, finding) in enumerate(windows or []):
        if start not in index:
            continue
        # The window's last hour is the one before its end; a one-hour window gets one step.
        last_hour = max((i for h, i in index.items() if h < end), default=index[start])
        left, right = x(index[start]), x(last_hour)
        if right - left < 1:
            right = left + inner_w / count
        text = f"{finding}: {_cell(start)} to {_cell(end)}"
        bands.append(
            f'<rect class="finding-window" x="{left:.1f}" y="{PAD}" '
            f'width="{right - left:.1f}" height="{inner_h}" fill="#d62728" '
            f'fill-opacity="0.12"><title>{_e(text)}</title></rect>'
            f'<text x="{left + 2:.1f}" y="{PAD + 11 + 12 * n}" font-size="10" '
            f'fill="#a40000">{_e(finding)}</text>'
        )
    first = _cell(hours[0]["hour"]) if hours else ""
    last = _cell(hours[-1]["hour"]) if hours else ""
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH + 60}" '
        f'height="{HEIGHT}" role="img" aria-label="{_e(title)}">'
        f'<text x="{PAD}" y="16" font-size="13" font-weight="bold">{_e(title)}</text>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#888"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>'
        f'<text x="4" y="{PAD + 4}" font-size="10">{_e(top_label)}</text>'
        f'<text x="4" y="{HEIGHT - PAD}" font-size="10">0</text>'
        f'<text x="{PAD}" y="{HEIGHT - PAD + 16}" font-size="10">{_e(first)}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 16}" font-size="10" '
        f'text-anchor="end">{_e(last)}</text>' + "".join(bands) + "".join(lines) + "</svg>"
    )
