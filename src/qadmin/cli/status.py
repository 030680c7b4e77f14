"""``qadmin status``: every queue on the server, one line each, worst first."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from qadmin import render
from qadmin.cli.inspect import stale_option
from qadmin.cli.options import Duration, Target, connection_options, format_option
from qadmin.cli.thresholds import limits, threshold_options

COLUMNS = ["queue", "what", "depth", "oldest", "running", "stale", "dead", "status", "worst"]
JSON_COLUMNS = [
    "name",
    "schema",
    "table",
    "queue",
    "what",
    "depth",
    "depth_exact",
    "scheduled",
    "oldest_age_s",
    "running",
    "stale",
    "dead",
    "paused_at",
    "status",
    "worst",
    "error",
    "read_ms",
]


def _depth(line: Any) -> str:
    """Exact as counted; ``~`` an estimate or a floor (status reads no more than that)."""
    if line.depth is None:
        return "?"
    return str(line.depth) if line.depth_exact else f"~{line.depth}"


def _age(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.0f}d"


def _text(line: Any) -> dict[str, Any]:
    return {
        "queue": line.name,
        "what": line.what,
        "depth": _depth(line),
        "oldest": _age(line.oldest_age_s),
        "running": line.running,
        "stale": line.stale,
        "dead": line.dead,
        "status": line.status,
        "worst": line.worst or "",
    }


def _table(lines: list[Any]) -> None:
    """A terminal table that fits the terminal (80 columns and up): figures never cut, the
    queue's name folded, the kind and the worst finding cut with an ellipsis (inspect QUEUE
    shows it whole). Widths are worked out here: rich would squeeze the figures first."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    headers = {"running": "run", "status": "state"}
    rows = [_text(line) for line in lines]
    cells = [[render.figure(r[c]) if r[c] is not None else "" for c in COLUMNS] for r in rows]
    widths = {
        c: max([len(headers.get(c, c)), *(len(row[i]) for row in cells)])
        for i, c in enumerate(COLUMNS)
    }
    widths["what"] = min(widths["what"], 9)
    fixed = sum(w for c, w in widths.items() if c not in ("queue", "worst"))
    room = max(console.width - fixed - 2 * (len(COLUMNS) - 1), 20)
    widths["queue"] = min(widths["queue"], max(12, room * 3 // 5))
    widths["worst"] = max(room - widths["queue"], 8)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in COLUMNS:
        header, width = headers.get(column, column), widths[column]
        if column == "queue":
            table.add_column(header, overflow="fold", width=width)
        elif column in ("worst", "what"):
            table.add_column(header, overflow="ellipsis", no_wrap=True, width=width)
        else:
            table.add_column(header, no_wrap=True, justify="right", width=width)
    for row in cells:
        table.add_row(*(Text(cell) for cell in row))  # a name like jobs[mail] is no markup
    console.print(table)


@click.command()
@stale_option
@click.option(
    "--queue-timeout",
    "queue_timeout",
    type=Duration(fractional=True, low=0.1),
    default=2.0,
    show_default=True,
    metavar="DURATION",
    help="The longest any one statement of a queue's reads may run (lower of this and "
    "--statement-timeout): a slow queue is a line saying so.",
)
@threshold_options
@connection_options
@format_option
def status(
    stale_after: int, queue_timeout: float, target: Target, fmt: str | None, **given: Any
) -> int:
    """Every queue on the server, one line each, worst first.

    qadmin's own queues in every schema this role may read, each named queue of every
    job-queue library table found, and every [tables.NAME] of the config: depth (waiting and
    due; ~ an estimate or a floor), the oldest due message's age, running and stale claims,
    dead or failed, and the worst finding. Cheap reads only (catalog estimates, bounded
    counts, index probes), each under the statement timeout: a queue that cannot be read is
    a line saying why. Exit code as check's: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
    from qadmin.diagnostics import registry
    from qadmin.diagnostics.model import Options
    from qadmin.errors import UsageError
    from qadmin.ops import status as status_ops

    sampled = {m.name for m in registry.entry("rates").metrics}
    for key, value in given.items():
        if value is not None and key.split("_", 1)[1] in sampled:
            option = "--" + key.replace("_", "-")
            raise UsageError(f"status takes no rate sample: {option} applies to check and inspect")
    options = Options(stale_after, 0.0, limits=limits(given))
    limit_ms = min(target.timeouts.statement_ms, max(1, round(queue_timeout * 1000)))
    timeouts = dataclasses.replace(target.timeouts, statement_ms=limit_ms)
    engine = dataclasses.replace(target, timeouts=timeouts).engine()
    conf = target.loaded_config()
    declared, broken = conf.tables, conf.broken
    found = status_ops.gather(engine, declared, options, broken)
    for note in found.notes:
        render.note(f"qadmin: {note}")
    if not found.lines:
        render.note("qadmin: no queues found (qadmin's catalogs, library tables, [tables.NAME])")
    fmt = render.resolve_format(fmt)
    if fmt == "table":
        _table(found.lines)
    elif fmt == "json":
        render.rows([_fields(line) for line in found.lines], JSON_COLUMNS, fmt)
    else:
        render.rows([_text(line) for line in found.lines], COLUMNS, fmt)
    return found.code


def _fields(line: Any) -> dict[str, Any]:
    return {c: getattr(line, c) for c in JSON_COLUMNS}


COMMANDS = [status]
