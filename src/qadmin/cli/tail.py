"""``qadmin tail``: is it moving? Live rates and figures for one or more queues."""

from __future__ import annotations

import csv
import io
import sys
import time
from collections import deque
from functools import partial
from typing import Any

import click

from qadmin import catalog, render
from qadmin.cli.inspect import stale_option
from qadmin.cli.options import (
    Duration,
    Target,
    connection_options,
    format_option,
    profile_options,
)
from qadmin.diagnostics import registry, run
from qadmin.engines import Engine
from qadmin.errors import ConnectionFailed, LockTimeout, QadminError, UsageError
from qadmin.ops import telemetry
from qadmin.profiles.resolve import Resolved, from_spec

# The keys of each JSON line (and the CSV header): the diagnostics registry's tail fields
# between the rates and the rates' sources.
COLUMNS = [
    "time",
    "queue",
    "kind",
    "interval_s",
    "enqueue_per_s",
    "dequeue_per_s",
    *registry.tail_fields(),
    "enqueue_source",
    "dequeue_source",
    "error",
]
SPARK = "▁▂▃▄▅▆▇█"
# The figures a person reads, in the live table and in --format plain (one line per queue).
FIGURES = (
    "enq/s",
    "deq/s",
    "depth",
    "oldest",
    "claimed",
    "stale",
    "ghosts",
    "lock waits",
    "ring fill",
)


SPARK_HEADER = "deq/s last min"
# The live table's headers on lines of their own, so the columns stay as narrow as their figures.
HEADERS = {
    SPARK_HEADER: "deq/s\nlast\nmin",
    "lock waits": "lock\nwaits",
    "ring fill": "ring\nfill",
}


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    top = max(values) or 1.0
    return "".join(SPARK[min(int(v / top * (len(SPARK) - 1)), len(SPARK) - 1)] for v in values)


class Emitter:
    """Writes each sample: a rich Live table on a terminal, else one line per queue sample
    (JSON, CSV, or aligned text under one header for --format plain)."""

    def __init__(self, fmt: str, interval: float) -> None:
        self.fmt = fmt
        self.history: dict[str, deque[float]] = {}
        self.points = max(int(60 / interval), 2)
        self.header_done = False
        self.live: Any = None

    def __enter__(self) -> Emitter:
        if self.fmt == "table":
            from rich.live import Live

            self.live = Live(refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)

    def emit(self, rows: list[telemetry.TailRow], note: str | None) -> None:
        for row in rows:
            rates = self.history.setdefault(row.queue, deque(maxlen=self.points))
            if row.dequeue_per_s is not None:
                rates.append(float(row.dequeue_per_s))
        if self.live is not None:
            self.live.update(self._table(rows, note))
        elif self.fmt == "csv":
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            if not self.header_done:
                writer.writerow(COLUMNS)
                self.header_done = True
            writer.writerows(render.text_row(r.to_json_dict(), COLUMNS, exact=True) for r in rows)
            click.echo(buf.getvalue(), nl=False, color=True)  # exact: no ANSI stripped
        elif self.fmt == "plain":
            self._plain(rows)
        else:
            for row in rows:
                line = row.to_json_dict()
                click.echo(render.json_line({c: line.get(c) for c in COLUMNS}))

    def _plain(self, rows: list[telemetry.TailRow]) -> None:
        """Columns as wide as their header or a typical value: a stream cannot realign."""
        from qadmin.profiles.detect import libraries

        headers = ("time", "queue", "kind", *FIGURES)
        kind = max(8, *(len(name) for name in libraries()))  # a library's name is the kind
        widths = [27, 16, kind, *[max(len(h), 7) for h in FIGURES]]
        if not self.header_done:
            click.echo("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
            self.header_done = True
        for r in rows:
            cells = [render.visible(str(c), lines=False) for c in (r.time, r.queue, r.kind)]
            cells += _figures(r)
            line = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
            error = render.visible(str(r.error), lines=False) if r.error else ""
            click.echo(f"{line}  error: {error}" if error else line)

    def _table(self, rows: list[telemetry.TailRow], note: str | None, width: int = 0) -> Any:
        """The live table, as wide as the terminal (``width``) allows without cutting a number
        or a name (a cut "763000~" read "76…"): figures never wrap, a long queue name folds
        onto a second line, and when that is not enough the sparkline, then the kind, go."""
        from rich.table import Table
        from rich.text import Text

        when = rows[0].time if rows else ""
        interval = rows[0].interval_s if rows else None
        names = ("queue", "kind", *FIGURES[:2], SPARK_HEADER, *FIGURES[2:])
        cells = []
        for r in rows:
            figures = _figures(r)
            spark = "-" if r.error else sparkline(list(self.history.get(r.queue, [])))
            queue, kind = (render.visible(str(c), lines=False) for c in (r.queue, r.kind))
            cells.append([queue, kind, *figures[:2], spark, *figures[2:]])
        widths = [
            max(_widest(cells, n), *(len(line) for line in HEADERS.get(c, c).split("\n")))
            for n, c in enumerate(names)
        ]
        shown = list(range(len(names)))
        width = width or self._width()
        for dropped in (names.index(SPARK_HEADER), names.index("kind")):
            need = sum(widths[n] for n in shown) + 2 * (len(shown) - 1)
            if need <= width:
                break
            shown.remove(dropped)
        table = Table(
            box=None,
            pad_edge=False,
            padding=(0, 1),
            header_style="bold",
            title=f"qadmin tail  {when}  interval {interval or '-'} s",
            caption=(note and render.visible(note, lines=False))
            or "rates: "
            + ", ".join(
                sorted(
                    {
                        render.visible(f"{r.queue}: {r.dequeue_source}", lines=False)
                        for r in rows
                        if r.dequeue_source
                    }
                )
            ),
        )
        for n in shown:
            column = names[n]
            header = HEADERS.get(column, column)
            if column in ("queue", "kind"):  # a long name folds onto a second line
                table.add_column(header, overflow="fold", min_width=min(widths[n], 8))
            elif column == SPARK_HEADER:
                table.add_column(header, justify="right", overflow="crop")
            else:
                table.add_column(header, justify="right", no_wrap=True, min_width=widths[n])
        for row in cells:
            table.add_row(*(Text(str(row[n])) for n in shown))  # jobs[mail]: a name, no markup
        return table

    def _width(self) -> int:
        if self.live is not None:
            return int(self.live.console.width)
        return 80


def _widest(cells: list[list[str]], n: int) -> int:
    return max((len(row[n]) for row in cells), default=1)


def _figures(r: telemetry.TailRow) -> list[str]:
    """The FIGURES of one row as text (all ``-`` for a sample that failed or was partial)."""
    f = r.figures
    if r.error or f is None:
        return ["-"] * len(FIGURES)
    return [
        _num(r.enqueue_per_s),
        _num(r.dequeue_per_s),
        _marked(_num(f.depth), f.depth_quality),
        _marked(_age(f.oldest_age_s), f.oldest_quality),
        _marked(_num(f.claimed), f.claimed_quality),
        _num(f.stale_claims),
        _num(f.ghosts),
        _num(f.lock_waits),
        "" if f.ring_fill is None else f"{f.ring_fill:.0%}",
    ]


def _marked(text: str, quality: str | None) -> str:
    """A figure that is not exact says so: ``5000+`` a floor (at least), ``~5000`` an estimate."""
    if text == "-" or quality in (None, "exact"):
        return text
    return f"{text}+" if quality == "floor" else f"~{text}"


def _num(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m"


@click.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_queues", is_flag=True, help="Every queue qadmin manages here.")
@click.option(
    "--interval",
    type=Duration(fractional=True, low=0.2, high=3600),
    default=2.0,
    show_default=True,
    metavar="DURATION",
    help="Time between samples.",
)
@click.option("--count", type=click.IntRange(1), metavar="N", help="Stop after N samples.")
@stale_option
@profile_options
@connection_options
@format_option
def tail(
    names: tuple[str, ...],
    all_queues: bool,
    interval: float,
    count: int | None,
    stale_after: int,
    profile: dict[str, Any],
    target: Target,
    fmt: str | None,
) -> int:
    """Watch queues live: enqueue/s, dequeue/s, depth, oldest age, claims, ghosts, lock waits.

    On a terminal a live table; otherwise (or --format json) one JSON object per queue per
    sample, flushed, so `qadmin tail q | jq` works; --format plain: one aligned text line
    per queue per sample, --format csv: a header, then one CSV line per queue per sample.
    Ctrl-C stops it (exit 0).
    A sample that fails (lock timeout, lost connection) is a row with an error and counts
    towards --count; tail then exits with the last sample's failure code (8 or 6), else 0.
    """
    if not names and not all_queues:
        raise UsageError("name one or more queues, or give --all")
    engine = target.engine()
    if all_queues:
        every = run.catalog_bounded(engine, lambda: catalog.all_queues(engine))
        specs = [Resolved(from_spec(s, engine.schema), s) for s in every]
    else:
        specs = [
            run.catalog_bounded(engine, partial(target.resolve, engine, n, profile)) for n in names
        ]
    if not specs:
        raise UsageError("no queues to watch")
    # Off a terminal the default stays JSON lines (a stream for jq); plain is asked for.
    output = fmt or ("table" if sys.stdout.isatty() else "json")
    previous: dict[str, telemetry.Snapshot] = {}
    taken = 0
    failure: QadminError | None = None
    try:
        with Emitter(output, interval) as emitter:
            while count is None or taken < count:
                started = time.monotonic()
                rows, failure = _sample(engine, specs, previous, stale_after)
                note = None
                if failure is not None:
                    then = "reconnecting" if isinstance(failure, ConnectionFailed) else "retrying"
                    note = f"qadmin: {' '.join(str(failure).split())}; {then} at the next sample"
                    render.note(note)
                emitter.emit(rows, note)
                taken += 1
                if count is not None and taken >= count:
                    break
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
    except KeyboardInterrupt:
        return 0
    return failure.exit_code if failure is not None else 0


def _sample(
    engine: Engine,
    specs: list[Resolved],
    previous: dict[str, telemetry.Snapshot],
    stale_after: int,
) -> tuple[list[telemetry.TailRow], QadminError | None]:
    """One row per queue, and the last failure of this sample if any. Passing trouble (a lock
    held, a restart, a killed session) makes the queue's row an error row: it is printed and
    counts, so --count always ends. Anything else (a missing privilege, a dropped queue) ends
    tail with its exit code rather than repeating for ever."""
    rows: list[telemetry.TailRow] = []
    failure: QadminError | None = None
    for spec in specs:
        if isinstance(failure, ConnectionFailed):
            rows.append(telemetry.error_row(spec, str(failure)))
            continue
        try:
            snap = telemetry.snapshot(engine, spec, stale_after)
        except (ConnectionFailed, LockTimeout) as exc:
            failure = exc
            rows.append(telemetry.error_row(spec, str(exc)))
            if isinstance(exc, ConnectionFailed):
                engine.close()
                previous.clear()
            continue
        rows.append(telemetry.tail_row(previous.get(spec.profile.name), snap))
        previous[spec.profile.name] = snap
        if snap.blocked:  # a partial row: printed with what could be read, exit 8 if last
            failure = LockTimeout(snap.blocked)
    return rows, failure


COMMANDS = [tail]
