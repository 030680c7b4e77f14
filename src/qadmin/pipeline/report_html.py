"""The report as one self-contained HTML file: tables and inline SVG charts, no scripts or
styles fetched from anywhere (it is opened on a DBA's laptop, maybe offline)."""

from __future__ import annotations

import html
from datetime import datetime
from typing import Any

from qadmin.pipeline.report import FINDING_COLUMNS, QUEUE_COLUMNS, Report

WIDTH, HEIGHT, PAD = 720, 200, 44
COLOURS = ("#1f77b4", "#ff7f0e", "#d62728", "#2ca02c")
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
});
"""
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; font-size: 13px; }
th { background: #f3f3f3; }
svg.chart { border: 1px solid #ddd; margin: 4px 8px 12px 0; }
.finding { color: #a40000; }
"""


def render(report: Report, title: str = "qadmin queue report") -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>History: {_e(report.history)}; {report.samples} samples.</p>",
        "<h2>Findings</h2>",
        _table(report.findings, FINDING_COLUMNS) if report.findings else "<p>None.</p>",
        "<h2>Queues</h2>",
        _table(report.queues, QUEUE_COLUMNS),
    ]
    for (connection, queue), hours in report.charted.items():
        parts.append(f"<h2>{_e(queue)} <small>({_e(connection)})</small></h2>")
        for chart_title, unit, series in CHARTS:
            parts.append(_chart(f"{chart_title} ({unit})", hours, series))
    parts.append(f"<script>{CHECK}</script></body></html>")
    return "\n".join(parts)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_cell(r.get(c)))}</td>" for c in columns) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _chart(title: str, hours: list[dict[str, Any]], series: tuple[tuple[str, str], ...]) -> str:
    """A line chart, one polyline per series; hours on x, 0..max on y."""
    values = [float(h[c]) for h in hours for _, c in series if h.get(c) is not None]
    top = max(values, default=0.0) or 1.0
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
    first = _cell(hours[0]["hour"]) if hours else ""
    last = _cell(hours[-1]["hour"]) if hours else ""
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH + 60}" '
        f'height="{HEIGHT}" role="img" aria-label="{_e(title)}">'
        f'<text x="{PAD}" y="16" font-size="13" font-weight="bold">{_e(title)}</text>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#888"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>'
        f'<text x="4" y="{PAD + 4}" font-size="10">{_e(_cell(top))}</text>'
        f'<text x="4" y="{HEIGHT - PAD}" font-size="10">0</text>'
        f'<text x="{PAD}" y="{HEIGHT - PAD + 16}" font-size="10">{_e(first)}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 16}" font-size="10" '
        f'text-anchor="end">{_e(last)}</text>' + "".join(lines) + "</svg>"
    )
