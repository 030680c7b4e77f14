"""``qadmin status``: every queue on the server, one line each, worst first."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from qadmin import render
from qadmin.cli import check_all, output
from qadmin.cli.inspect import stale_option
from qadmin.cli.options import (
    Target,
    connection_options,
    format_option,
    queue_timeout_option,
    queue_timeouts,
)
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
    "depth_quality",
    "scheduled",
    "oldest_age_s",
    "oldest_quality",
    "running",
    "claimed_quality",
    "stale",
    "stale_quality",
    "dead",
    "dead_quality",
    "paused_at",
    "status",
    "worst",
    "error",
    "read_ms",
]


def _marked(text: str, quality: str | None) -> str:
    """A figure that is not exact says so, as tail's do: ``5000+`` a floor (at least),
    ``~5000`` an estimate."""
    if not text or quality in (None, "exact"):
        return text
    return f"{text}+" if quality == "floor" else f"~{text}"


def _depth(line: Any) -> str:
    if line.depth is None:
        return "?"
    quality = line.depth_quality or ("exact" if line.depth_exact else "estimate")
    return _marked(str(line.depth), quality)


def _count(value: int | None, quality: str | None) -> str | None:
    return None if value is None else _marked(str(value), quality)


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
        "queue": render.escaped(line.name),  # a newline in a name: still one row
        "what": line.what,
        "depth": _depth(line),
        "oldest": _marked(_age(line.oldest_age_s), line.oldest_quality),
        "running": _count(line.running, line.claimed_quality),
        "stale": _count(line.stale, line.stale_quality),
        "dead": _count(line.dead, line.dead_quality),
        "status": line.status,
        "worst": render.escaped(line.worst or ""),
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
@queue_timeout_option
@threshold_options
@connection_options
@format_option
def status(
    stale_after: int, queue_timeout: float, target: Target, fmt: str | None, **given: Any
) -> int:
    """Every queue on the server, one line each, worst first.

    qadmin's own queues in every schema this role may read, each named queue of every
    job-queue library table found, and every [tables.NAME] of the config: depth (waiting and
    due), the oldest due message's age, running and stale claims, dead or failed (each
    ~N an estimate, N+ a floor), and the worst finding. Cheap reads only (catalog estimates, bounded
    counts, index probes), each under the statement timeout: a queue that cannot be read is
    a line saying why. --schema: that schema's queues only. Exit code as check's: 0 OK, 1
    WARNING, 2 CRITICAL, 3 UNKNOWN (also when the run fails: no connection, as check --all)."""
    from qadmin.diagnostics import registry
    from qadmin.diagnostics.model import Options
    from qadmin.errors import QadminError, UsageError
    from qadmin.ops import status as status_ops

    sampled = {m.name for m in registry.entry("rates").metrics}
    for key, value in given.items():
        if value is not None and key.split("_", 1)[1] in sampled:
            option = "--" + key.replace("_", "-")
            raise UsageError(f"status takes no rate sample: {option} applies to check and inspect")
    options = Options(stale_after, 0.0, limits=limits(given))
    timeouts = queue_timeouts(target, queue_timeout)
    try:
        engine = dataclasses.replace(target, timeouts=timeouts).engine()
        conf = target.loaded_config()
        declared, broken = conf.tables, conf.broken
        found = status_ops.gather(engine, declared, options, broken, schema=target.schema)
    except UsageError:
        raise  # a bad option, DSN or config: exit 2, as every command's
    except QadminError as exc:  # the run itself failed (no connection): UNKNOWN, as check's
        return check_all.failed(exc, fmt)
    output.if_reader_leaves(found.code)
    for note in found.notes:
        render.note(f"qadmin: {note}")
    if not found.lines:
        render.note(f"qadmin: {check_all.NONE_FOUND}")
    fmt = render.resolve_format(fmt)
    if fmt == "table":
        _table(found.lines)
    elif fmt == "json":
        render.document(_document(found), "json")
    else:
        render.rows([_text(line) for line in found.lines], COLUMNS, fmt)
    return found.code


def _document(found: Any) -> dict[str, Any]:
    """--format json: one object whether the run read the server or failed (check --all's
    document, its lines status's rows), so a script reads ``lines`` and ``error`` the same way
    in both cases."""
    from qadmin.diagnostics import check as check_mod

    shown = [{c: getattr(line, c) for c in JSON_COLUMNS} for line in found.lines]
    return {
        "status": check_mod.STATUS[found.code],
        "code": found.code,
        "queues": len(shown),
        "counts": {
            s.lower(): sum(1 for line in shown if line["status"] == s)
            for s in check_mod.STATUS.values()
        },
        "lines": shown,
        "notes": list(found.notes),
        "error": None if found.lines else check_all.NONE_FOUND,
    }


COMMANDS = [status]
