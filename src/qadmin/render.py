"""The one print path for data: every command hands rows here and never prints them itself.

Formats:
- ``table``: a rich table, the default on a terminal (colour unless NO_COLOR is set);
- ``plain``: aligned text from tabulate, the default when stdout is not a terminal;
- ``json``: one JSON document per invocation, stable snake_case keys, nothing else on stdout;
- ``csv``: a header line, then one line per row.
Booleans are ``yes``/``no`` in every text format, CSV included; table and plain round floats to
four significant digits, CSV and JSON keep them whole.
Payloads are shown as UTF-8 text when they decode, else as ``base64:...``; JSON carries an
``encoding`` key ("utf-8" or "base64") beside ``payload`` so scripts can round-trip any bytes.
Text shown to a person (table, plain, notes, stderr lines) has its control characters made
visible (``visible``): stored data (an error, a payload, a queue's name) must not drive the
reader's terminal. JSON escapes them itself; CSV keeps the data exact, for machines.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol

import click

FORMATS = ("table", "plain", "json", "csv")


# C0 (but tab and newline, which a cell may hold), DEL, C1, and the bidi overrides/isolates
# that reorder what a line seems to say: each shown as its escape (``\\x1b``, ``\\u202e``).
_UNSAFE = [*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _UNSAFE}
_VISIBLE_CELL = {c: v for c, v in _VISIBLE.items() if c not in (0x09, 0x0A)}


def visible(text: str, *, lines: bool = True) -> str:
    """``text`` safe to write to a terminal: escape sequences, BEL, C1 and bidi overrides from
    stored data shown as ``\\x1b``-style text, never sent raw (``lines``: tab and newline kept,
    as a cell may hold them; else they are shown too, for a one-line message)."""
    if text.isascii() and text.isprintable():  # nothing to escape (most cells): no copy
        return text
    return text.translate(_VISIBLE_CELL if lines else _VISIBLE)


def resolve_format(fmt: str | None) -> str:
    if fmt:
        return fmt
    return "table" if sys.stdout.isatty() else "plain"


def payload_text(payload: bytes) -> tuple[str, str]:
    """(text, encoding) for a payload: UTF-8 when it decodes cleanly, else base64."""
    try:
        return payload.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(payload).decode("ascii"), "base64"


def _json_default(value: Any) -> Any:
    """What json cannot encode itself: MySQL's DECIMAL figures as numbers (a script compares
    ``wait_s > 5``), NaN-free; anything else (times) as text."""
    if isinstance(value, Decimal):
        number = float(value)
        return number if math.isfinite(number) else None
    return str(value)


def json_line(data: Mapping[str, Any]) -> str:
    """One JSON object on one line (tail's stream), with the same encoding as the rest."""
    return json.dumps(_json_row(data), default=_json_default)


def _json_row(row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, bytes):
            text, encoding = payload_text(value)
            out[key] = text
            out["encoding"] = encoding
        else:
            out[key] = value
    return out


def _cell(value: Any, exact: bool = False) -> str:
    """One value as text: booleans ``yes``/``no`` in every text format (CSV too); floats to
    four significant digits for people (table, plain), in full with ``exact`` (CSV); control
    characters made visible for people, kept exact for CSV."""
    if value is None:
        return ""
    if type(value) is int:  # ids and counts, most cells of a big listing
        return str(value)
    if type(value) is str:  # times, names
        return value if exact else visible(value)
    if isinstance(value, bytes):
        text, encoding = payload_text(value)
        text = text if encoding == "utf-8" else "base64:" + text
    elif isinstance(value, bool):
        return "yes" if value else "no"
    elif isinstance(value, float | Decimal) and not exact:
        return _rounded(float(value))  # MySQL's DECIMAL figures (xact_age_s) too
    else:
        text = str(value)
    return text if exact else visible(text)  # CSV keeps the data exact, for machines


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def escaped(text: str) -> str:
    """A control character (a newline in a queue's name) as its escape (``\\n``,
    ``\\x1b``): one row or one plugin line stays one line, and a terminal is not steered."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def figure(value: Any) -> str:
    """A figure inside a sentence (a headline): as a table cell shows it, ``unknown`` for none,
    never Python's ``None``."""
    return "unknown" if value is None else _cell(value)


def _rounded(value: float, digits: int = 4) -> str:
    """``0.001346`` for 0.0013461538461538463, ``12346`` for 12345.678, ``0.5`` for 0.5: four
    significant digits without an exponent, trailing zeros dropped."""
    if not math.isfinite(value) or value == 0:
        return str(value)
    decimals = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def text_row(row: Mapping[str, Any], columns: Sequence[str], exact: bool = False) -> list[str]:
    """One row's cells as the text formats write them (``exact``: as CSV does)."""
    return [_cell(row.get(c), exact) for c in columns]


def plain_lines(table: list[list[str]], columns: Sequence[str]) -> list[str]:
    """The plain format's lines: tabulate's ``plain`` layout. Cells of printable ASCII
    (every cell qadmin prints for its own rows: ids, times, counts) are laid out here, the
    same bytes tabulate writes (tests/unit/test_render.py) in a quarter of its time (0.17 s
    against 0.76 s for the 100,000 rows of a push --lines); any other table goes through
    tabulate (wide characters, line breaks, tabs)."""
    headers = list(columns)
    if not all(h.isascii() and h.isprintable() for h in headers) or not all(
        cell.isascii() and cell.isprintable() for row in table for cell in row
    ):
        from tabulate import tabulate

        return str(tabulate(table, headers=headers, tablefmt="plain", disable_numparse=True)).split(
            "\n"
        )
    stripped = [[cell.strip() for cell in row] for row in table]
    columns_of = zip(*stripped, strict=True)  # tabulate pads a header by 2 at least
    widths = [max(len(h) + 2, *map(len, col)) for h, col in zip(headers, columns_of, strict=True)]
    return ["  ".join(map(str.ljust, line, widths)).rstrip() for line in [headers, *stripped]]


class Record(Protocol):
    """A typed row (``diagnostics.model.Row``): printed as the columns its SQL gave."""

    def as_dict(self) -> dict[str, Any]: ...


def rows(
    records: Sequence[Mapping[str, Any]] | Sequence[Record],
    columns: Sequence[str],
    fmt: str | None,
    *,
    title: str | None = None,
) -> None:
    """Print rows in the chosen format; ``columns`` fixes the order (and the CSV header)."""
    data = [r if isinstance(r, Mapping) else r.as_dict() for r in records]
    fmt = resolve_format(fmt)
    if fmt == "json":
        click.echo(
            json.dumps(
                [_json_row({c: r.get(c) for c in columns}) for r in data], default=_json_default
            )
        )
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(r.get(c), exact=True) for c in columns] for r in data])
        click.echo(buf.getvalue(), nl=False, color=True)  # exact: no ANSI stripped
    elif fmt == "plain":
        if data:
            table = [[_cell(r.get(c)) for c in columns] for r in data]
            click.echo("\n".join(plain_lines(table, columns)))
    else:
        console = _console()
        table = _table(data, columns, title)
        if data and _natural_width(console, table) > console.width:
            table = _expanded(data, columns, title)
        console.print(table)


def _natural_width(console: Any, table: Any) -> int:
    """A table's width with no terminal to fit (``Console.measure`` clamps to the terminal)."""
    from rich.measure import Measurement

    return int(Measurement.get(console, console.options.update(max_width=100_000), table).maximum)


def _expanded(data: Sequence[Mapping[str, Any]], columns: Sequence[str], title: str | None) -> Any:
    """Rows too wide for the terminal, one record after another as ``column value`` lines (as
    psql's expanded display): a table squeezed into 80 columns cut times to ``2026-11…`` and
    headers to ``first_e…``."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.title = None if title is None else visible(title, lines=False)
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for n, r in enumerate(data, 1):
        grid.add_row(Text(f"-[ record {n} ]-", style="dim"), Text(""))
        for column in columns:
            grid.add_row(Text(visible(column, lines=False)), Text(_cell(r.get(column))))
    return grid


def _table(data: Sequence[Mapping[str, Any]], columns: Sequence[str], title: str | None) -> Any:
    """Rows as a rich table (drawn by the caller)."""
    from rich.table import Table
    from rich.text import Text

    title = None if title is None else visible(title, lines=False)
    table_view = Table(title=title, show_header=True, header_style="bold")
    for column in columns:
        table_view.add_column(visible(column, lines=False))
    for r in data:
        # Text, not markup: a value such as jobs[mail] or an error's [brackets] is shown
        # as it is, never read as a style.
        table_view.add_row(*[Text(_cell(r.get(c))) for c in columns])
    return table_view


def row_texts(
    records: Sequence[Mapping[str, Any]] | Sequence[Record],
    columns: Sequence[str],
    fmt: str | None,
) -> tuple[str, list[str]] | None:
    """The text ``rows`` prints, cut into what comes before the rows and one piece per row
    (each piece ends the row, the last closes the output), so a caller can write it a row at a
    time and know which rows went out; None for the table format, which is drawn whole."""
    data = [r if isinstance(r, Mapping) else r.as_dict() for r in records]
    fmt = resolve_format(fmt)
    if fmt == "json":
        items = [
            json.dumps(_json_row({c: r.get(c) for c in columns}), default=_json_default)
            for r in data
        ]
        if not items:
            return "[]\n", []
        pieces = [("[" if n == 0 else ", ") + item for n, item in enumerate(items)]
        pieces[-1] += "]\n"
        return "", pieces
    if fmt == "csv":

        def line(values: Sequence[str]) -> str:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow(values)
            return buf.getvalue()

        return line(columns), [line([_cell(r.get(c), exact=True) for c in columns]) for r in data]
    if fmt == "plain":
        if not data:
            return "", []
        table = [[_cell(r.get(c)) for c in columns] for r in data]
        lines = plain_lines(table, columns)
        heights = [max(len(cell.split("\n")) for cell in row) for row in table]
        if len(lines) != 1 + sum(heights):  # a layout not understood: one piece, all or none
            return "", ["\n".join(lines) + "\n"] + [""] * (len(table) - 1)
        pieces, at = [], 1
        for height in heights:
            pieces.append("".join(f"{text}\n" for text in lines[at : at + height]))
            at += height
        return lines[0] + "\n", pieces
    return None


def document(data: Mapping[str, Any], fmt: str | None, *, title: str | None = None) -> None:
    """Print one object: JSON as a single document, other formats as key/value rows."""
    fmt = resolve_format(fmt)
    if fmt == "json":
        click.echo(json.dumps(_json_row(data), default=_json_default))
        return
    flat = [
        {"key": k, "value": _cell(v)} for k, v in data.items() if not isinstance(v, (list, dict))
    ]
    rows(flat, ["key", "value"], fmt, title=title)


def report(
    data: Mapping[str, Any],
    sections: Sequence[tuple[str, str, Sequence[str]]],
    fmt: str | None,
    *,
    title: str | None = None,
    lead: Sequence[str] = (),
    first: int = 0,
    hidden: Sequence[str] = (),
) -> None:
    """A diagnosis: JSON as one document; else the ``lead`` lines (a status), the first
    ``first`` sections (the findings), a key/value summary of the scalars, then one table per
    non-empty section (title, key in ``data``, columns). On a terminal the summary leaves out
    empty values and the ``hidden`` keys (and what is under them), packs each part on a line
    or two, and section tables drop the columns empty in every row, so a healthy report fits
    one 80x24 screen; plain keeps every key and column for scripts."""
    fmt = resolve_format(fmt)
    if fmt == "json":
        click.echo(json.dumps(data, default=_json_default))
        return
    if fmt == "csv":
        _report_csv(data, sections)
        return
    if fmt == "table":
        for piece in _table_report(data, sections, lead, first, hidden):
            if isinstance(piece, str):
                click.echo(piece)
            else:
                _console().print(piece)
        return
    for line in lead:
        click.echo(visible(line))
    for heading, key, columns in sections[:first]:
        _section(data, heading, key, columns, fmt)
    if lead:
        click.echo("")
    document(_flatten(data), fmt, title=None if lead else title)
    for heading, key, columns in sections[first:]:
        _section(data, heading, key, columns, fmt)


def report_view(
    data: Mapping[str, Any],
    sections: Sequence[tuple[str, str, Sequence[str]]],
    *,
    lead: Sequence[str] = (),
    first: int = 0,
    hidden: Sequence[str] = (),
) -> Any:
    """What ``report`` draws on a terminal, as one rich renderable cut to the terminal's
    height (a transient ``Live`` display shows it while a part is still being read, inspect's
    rate sample, and can clear only what fits on the screen)."""
    from rich.console import Group
    from rich.segment import Segment
    from rich.text import Text

    pieces = _table_report(data, sections, lead, first, hidden)
    whole = Group(*(Text(p) if isinstance(p, str) else p for p in pieces))

    class Screenful:
        def __rich_console__(self, console: Any, options: Any) -> Any:
            lines = console.render_lines(whole, options, pad=False)
            room = max(console.height - 1, 2)
            if len(lines) > room:
                lines = [*lines[: room - 1], [Segment("…")]]
            for line in lines:
                yield from line
                yield Segment.line()

    return Screenful()


def console() -> Any:
    """The rich console every table is drawn on (a ``Live`` display draws on it too)."""
    return _console()


def _table_report(
    data: Mapping[str, Any],
    sections: Sequence[tuple[str, str, Sequence[str]]],
    lead: Sequence[str],
    first: int,
    hidden: Sequence[str],
) -> list[Any]:
    """A report for a terminal, in order: lines of text (made visible) and rich tables."""
    pieces: list[Any] = [visible(line) for line in lead]
    for heading, key, columns in sections[:first]:
        pieces += _table_section(data, heading, key, columns)
    shown = {
        k: v
        for k, v in _flatten(data).items()
        if v not in (None, "") and not any(k == h or k.startswith(h + ".") for h in hidden)
    }
    pieces += ["", _grid(shown)]
    for heading, key, columns in sections[first:]:
        pieces += _table_section(data, heading, key, columns)
    return pieces


def _table_section(
    data: Mapping[str, Any], heading: str, key: str, columns: Sequence[str]
) -> list[Any]:
    """A section on a terminal: a blank line and its table, without the columns empty in
    every row; nothing when it has no rows."""
    items = _lookup(data, key)
    if not items:
        return []
    columns = [c for c in columns if any(_cell(r.get(c)) for r in items)]
    return ["", _table(items, columns, heading)]


def _report_csv(
    data: Mapping[str, Any], sections: Sequence[tuple[str, str, Sequence[str]]]
) -> None:
    """A report as one CSV table, long format: ``section,row,key,value``. The scalars first
    (section ``summary``, dotted keys, row empty), then each section's rows by number from 1;
    values as CSV writes them elsewhere (whole floats, yes/no)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["section", "row", "key", "value"])
    for key, value in _flatten(data).items():
        writer.writerow(["summary", "", key, _cell(value, exact=True)])
    for _, key, columns in sections:
        for n, row in enumerate(_lookup(data, key) or [], 1):
            if not isinstance(row, Mapping):
                continue
            for column in columns:
                writer.writerow([key, n, column, _cell(row.get(column), exact=True)])
    click.echo(buf.getvalue(), nl=False, color=True)  # exact: no ANSI stripped


def _section(
    data: Mapping[str, Any], heading: str, key: str, columns: Sequence[str], fmt: str
) -> None:
    items = _lookup(data, key)
    if items:
        click.echo("")
        click.echo(f"# {visible(heading, lines=False)}")
        rows(items, columns, fmt, title=heading)


def _grid(values: Mapping[str, Any]) -> Any:
    """The summary of a terminal report: one line per part (``size``, ``rates``...) holding
    its ``key value`` pairs, folded at the terminal's width, without borders (drawn by the
    caller)."""
    from rich.table import Table
    from rich.text import Text

    parts: dict[str, list[str]] = {}
    for key, value in values.items():
        part, _, rest = key.partition(".")
        parts.setdefault(part if rest else "", []).append(f"{rest or part} {_cell(value)}")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for part, pairs in parts.items():
        grid.add_row(Text(visible(part)), Text(" · ".join(pairs)))
    return grid


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Scalars of nested mappings as dotted keys; lists are shown as their own tables."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        elif not isinstance(value, list):
            flat[prefix + key] = value
    return flat


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    value: Any = data
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False)


def note(text: str) -> None:
    """Human remarks go to stderr, so stdout stays pure data in every format; they can quote
    driver messages (and stored names and errors), so they are scrubbed of secrets like errors
    are and their control characters are made visible."""
    from qadmin import secrets

    click.echo(visible(secrets.scrub(text)), err=True)
