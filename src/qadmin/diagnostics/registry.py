"""One entry per diagnostic; inspect, check, tail, collect and the CLI iterate them.

An entry names the SQL it reads (``sql/diagnostics/<engine>/<file>.sql``), collects its typed
result, holds its findings rule, the check metrics it feeds (with default thresholds), its
telemetry fields and its CLI table sections. Entries are the modules of
``qadmin.diagnostics.entries``, found at import: adding a diagnostic is its SQL file, one
module there, and its test.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Generic, TypeVar

from qadmin.diagnostics.model import (
    DEFAULT_LIMITS,
    Context,
    Finding,
    InspectReport,
    Limit,
    Result,
    Row,
    ServerReads,
)
from qadmin.kinds import KINDS, Kind

Rule = Callable[[InspectReport], list[Finding]]
R = TypeVar("R", bound=Result)


def no_findings(report: InspectReport) -> list[Finding]:
    return []


@dataclass(frozen=True)
class Quality:
    """What a figure is: ``exact`` (counted), ``floor`` (at least this much: the rest may lie
    past what was read) or ``estimate`` (the catalog's, or a probe's, figure that may be
    ``error`` off, as a fraction of the truth), and where it came from."""

    kind: str
    error: float = 0.0
    source: str | None = None
    # An estimate known to count more than the figure (a claim queue's row estimate, its
    # claimed rows included): the truth is only known to be at least this (what was counted).
    low: float | None = None
    # A floor's upper bound (a claim queue's waiting rows: the catalog's estimate minus a floor
    # of its claimed rows), itself an estimate that may be ``error`` off; None: no ceiling.
    ceiling: float | None = None
    # The ceiling's own error when it is not the figure's (an unbounded estimate's ceiling:
    # the catalog's row count of the whole table, Engine.ESTIMATE_ERROR off).
    ceiling_error: float | None = None

    @property
    def unbounded(self) -> bool:
        """An estimate whose error has no bound (a planner's, from stale statistics): only
        ``low`` (the rows counted) and the ceiling (the table's rows) bound the truth."""
        return self.kind == "estimate" and self.error >= 1

    def bounds(self, value: float) -> tuple[float, float]:
        """Where the true figure lies, given this figure."""
        if self.kind == "floor":
            return value, self.high_ceiling()
        if self.unbounded:
            return self.low or 0.0, self.high_ceiling(self.ceiling_error)
        if self.kind == "estimate":
            high = value / (1 - self.error) if self.error < 1 else float("inf")
            return (value / (1 + self.error) if self.low is None else self.low), high
        return value, value

    def high_ceiling(self, error: float | None = None) -> float:
        """The most a floor (or an unbounded estimate) can be: its ceiling widened by that
        ceiling's own error (``error``; the figure's by default)."""
        error = self.error if error is None else error
        if self.ceiling is None or error >= 1:
            return float("inf")
        return self.ceiling / (1 - error)


EXACT = Quality("exact")


@dataclass(frozen=True)
class Metric:
    """A figure check judges, with its ``--warn-<name>`` / ``--crit-<name>`` options."""

    name: str
    unit: str  # "s" for durations: their options take units (30s, 5m)
    help: str
    value: Callable[[InspectReport], float | None]  # None: no figure on this engine
    warn: float | None = None
    crit: float | None = None
    # Whether the queue has this figure at all (ring fill: rings only). A threshold given for
    # a queue it does not apply to is noted, never UNKNOWN: one monitoring template can then
    # serve every queue.
    applies: Callable[[InspectReport], bool] | None = None
    # Whether the figure is exact, a floor or an estimate (None: always exact). check judges
    # a threshold only where the figure proves which side of it the truth lies.
    quality: Callable[[InspectReport], Quality] | None = None
    # Why the figure was not read when it exists on this engine (a privilege missing), else
    # None: a threshold given on it is then UNKNOWN with that reason, never OK.
    unread: Callable[[InspectReport], str | None] | None = None
    # Whether check's performance data carries the defaults when no threshold is given. False
    # where a default is judged only with another condition (snapshot_age: while dead rows
    # are held back): a graph would show a breach the status denies.
    perf_default: bool = True

    @property
    def duration(self) -> bool:
        return self.unit == "s"


def kind_has(capability: str) -> Callable[[InspectReport], bool]:
    """A ``Metric.applies`` for the kinds with this KindSpec flag (``ring``, ``claims``)."""

    def applies(report: InspectReport) -> bool:
        kind = report.header.kind
        return kind is not None and bool(getattr(KINDS[Kind(kind)], capability))

    return applies


@dataclass(frozen=True)
class Field:
    """A telemetry field of tail and collect (documented in docs/diagnostics.md from this list)."""

    name: str
    unit: str
    help: str
    arrow: str  # the Parquet column type collect writes
    value: Callable[[InspectReport], Any]
    collect_only: bool = False  # too costly to poll: collect records it, tail leaves it out
    tail: bool = True  # one of tail's columns (cumulative counters and sizes are not)


@dataclass(frozen=True)
class Section:
    """A table of rows in inspect's output: title, where the rows are, which columns."""

    title: str
    path: str
    columns: tuple[str, ...]
    # On a terminal, shown only while one of these findings is raised: context a script may
    # want every time is noise on a screen otherwise (empty: always shown when it has rows).
    shown_with: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnostic(Generic[R]):
    """One diagnostic: everything qadmin knows about it, in one place. ``R`` is its result
    type: ``report.part(ENTRY)`` returns an ``R`` (or None)."""

    name: str  # its key in the inspect report
    order: int  # display order (fields, sections); lock-free parts still run first
    sql: tuple[str, ...]  # the sql/diagnostics files (and template sections) it reads
    collect: Callable[[Context], R | None]
    rule: Rule = no_findings
    metrics: tuple[Metric, ...] = ()
    fields: tuple[Field, ...] = ()
    sections: tuple[Section, ...] = ()
    lock_free: bool = False  # reads only catalogs and statistics: never waits on the table
    # Each SQL file's typed row (its fields are the file's columns on every engine: a test).
    rows: tuple[tuple[str, type[Row]], ...] = ()
    queue_only: bool = False  # needs qadmin's catalog: not run on a hand-built table
    # Its files that read the server, not the queue (no parameters: the horizon's holders):
    # a run over many queues reads each once (``server_reads``), and every queue's part judges
    # that one reading. The part reads them with ``ctx.read``.
    server_wide: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Its metrics' default levels, where a report's ``limit`` reads them (the model cannot
        # import this registry: the registry imports the model).
        DEFAULT_LIMITS.update({m.name: Limit(m.warn, m.crit) for m in self.metrics})

    def applies(self, ctx: Context) -> bool:
        return ctx.spec is not None or not self.queue_only

    def polled(self, collecting: bool) -> bool:
        """Whether a tail (or, with ``collecting``, a collect) snapshot runs this part."""
        return any(collecting or not f.collect_only for f in self.fields)


# Where the entry modules are (a folder, not an import: see ``entries``).
ENTRIES_PACKAGE = "qadmin.diagnostics.entries"
ENTRIES_FOLDER = Path(__file__).with_name("entries")


@cache
def entries() -> tuple[Diagnostic[Any], ...]:
    """Every entry module's ``ENTRY``, in run order.

    The entries are found at run time, as plugins: each entry module imports this registry (its
    types), never the other way round, so adding one touches nothing here. A module there
    without an ``ENTRY`` is one the entries share (``plan``: explain's plan of the head)."""
    found = []
    for module in pkgutil.iter_modules([str(ENTRIES_FOLDER)]):
        loaded = importlib.import_module(f"{ENTRIES_PACKAGE}.{module.name}")
        if hasattr(loaded, "ENTRY"):
            found.append(loaded.ENTRY)
    return tuple(sorted(found, key=lambda d: (d.order, d.name)))


def server_reads() -> ServerReads:
    """One run's server-wide readings (status, check --all, a scrape): empty, each file read
    the first time a queue's part asks for it."""
    return ServerReads(frozenset(f for d in entries() for f in d.server_wide))


def entry(name: str) -> Diagnostic[Any]:
    for one in entries():
        if one.name == name:
            return one
    raise KeyError(name)


def metrics() -> tuple[Metric, ...]:
    return tuple(m for d in entries() for m in d.metrics)


def metric_spec(name: str) -> Metric:
    for one in metrics():
        if one.name == name:
            return one
    raise KeyError(name)


def fields() -> tuple[Field, ...]:
    return tuple(f for d in entries() for f in d.fields)


def tail_fields() -> tuple[str, ...]:
    return tuple(f.name for f in fields() if f.tail and not f.collect_only)


def sections() -> tuple[Section, ...]:
    return tuple(s for d in entries() for s in d.sections)


# Files read outside the entries: a table's primary key (convert), columns and indexes
# (profiles), explain's plan and SQLite statistics (qadmin.diagnostics.entries.plan), and the
# tables status starts from (qadmin.ops.status).
SUPPORT_SQL = ("primary_key", "columns", "indexes", "explain", "statistics", "queue_tables")


def sql_files() -> set[str]:
    """Every diagnostic SQL file name qadmin reads (a test holds it against sql/)."""
    return {name for d in entries() for name in d.sql} | set(SUPPORT_SQL)
