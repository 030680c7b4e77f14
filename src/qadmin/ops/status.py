"""The whole server on one screen: every queue qadmin can find, one line each, worst first.

Found from the catalog alone: qadmin's own queues in every schema this role may read (each
schema's ``qadmin_queues``), each named queue of every job-queue library table (told from its
name and columns, named queues read as inspect reads them), and every ``[tables.NAME]`` of the
config. Each line is judged from the parts check NAME reads (catalog estimates, bounded counts
and index probes; dead rows and what holds them, lock waits, indexes), all but the rate sample
(``NOT_READ``), so a line is never OK where check NAME is CRITICAL, under the connection's
statement timeout: one slow or locked queue is a line saying why, never a stalled screen.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from qadmin import catalog
from qadmin.catalog import sql
from qadmin.diagnostics import check as check_mod
from qadmin.diagnostics import registry, run
from qadmin.diagnostics.entries import claims as claims_entry
from qadmin.diagnostics.entries import dead_letters
from qadmin.diagnostics.entries import pause as pause_entry
from qadmin.diagnostics.entries import size as size_entry
from qadmin.diagnostics.model import PART_LOCK_MS, InspectReport, Options, ServerReads
from qadmin.engines.base import CATALOG_TABLE, Engine
from qadmin.errors import LockTimeout, NotFound, QadminError
from qadmin.names import quoted, validate_quoted_schema
from qadmin.profiles import detect, query, queue_names
from qadmin.profiles.libraries import SHAPES
from qadmin.profiles.model import bracketed
from qadmin.profiles.resolve import Resolved, check, from_spec, resolve
from qadmin.profiles.shape import read_shape

# What a status line (and check --all's) does not read, and why: everything else is what
# check NAME reads, so a finding (dead rows a snapshot holds, a lock wait) is never CRITICAL
# in check NAME and OK here. The rate sample waits --sample seconds per queue; check --all
# refuses the thresholds read from it.
NOT_READ = {"rates": "the rate sample (backlog_growth, backlog_growing: check NAME --sample S)"}
PARTS = tuple(e.name for e in registry.entries() if e.name not in NOT_READ)


@dataclass
class StatusLine:
    """One queue. ``depth_exact`` False: an estimate or a floor; ``error``: why it was not
    read (the line is then UNKNOWN)."""

    name: str  # as status shows it: schema.table, and [queue] for a named queue
    schema: str
    table: str
    queue: str | None  # the named queue (other commands: TABLE --queue QUEUE)
    what: str  # a qadmin kind, a library, or "declared"
    depth: int | None = None
    depth_exact: bool = False
    scheduled: int | None = None
    oldest_age_s: float | None = None
    running: int | None = None
    stale: int | None = None
    dead: int | None = None
    paused_at: str | None = None  # qadmin pause (qadmin's queues)
    # Each figure's quality, as size and tail say it: exact, floor (at least) or estimate;
    # None where the figure is None. claimed_quality is the running column's.
    depth_quality: str | None = None
    oldest_quality: str | None = None
    scheduled_quality: str | None = None
    claimed_quality: str | None = None
    stale_quality: str | None = None
    dead_quality: str | None = None
    status: str = "UNKNOWN"
    code: int = check_mod.UNKNOWN
    worst: str | None = None  # the worst finding or threshold crossed
    error: str | None = None
    read_ms: int = 0


@dataclass
class Status:
    lines: list[StatusLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def code(self) -> int:
        """The exit code: the worst line's, as check ranks them (CRITICAL, then UNKNOWN);
        UNKNOWN when no queue was found, as check --all's: a monitoring role that lost its
        grants on a schema must not read as all clear."""
        if not self.lines:
            return check_mod.UNKNOWN
        return check_mod.worst(line.code for line in self.lines)


@dataclass(frozen=True)
class Item:
    """One queue status reads: how it is shown, where it is, and how it is read."""

    name: str
    schema: str
    table: str
    queue: str | None
    what: str
    resolved: Resolved


def _library_tables() -> str:
    names = {t for shape in SHAPES for t in shape.tables if not t.endswith("*")}
    return ",".join(sorted({CATALOG_TABLE, *names}))


def _library_prefixes() -> str:
    """The name prefixes of libraries that make a table per named queue (persist-queue's
    ack_queue_NAME): detection then checks each candidate's columns."""
    return ",".join(sorted({t[:-1] for shape in SHAPES for t in shape.tables if t.endswith("*")}))


def _found(engine: Engine) -> tuple[list[tuple[str, str]], list[str]]:
    params = {"names": _library_tables(), "prefixes": _library_prefixes()}
    part = sql.read(engine, "queue_tables", params)
    rows = [(str(r["schema_name"]), str(r["table_name"])) for r in part.rows]
    return rows, [part.note] if part.note else []


def _own(engine: Engine, schema: str) -> Iterator[Item | StatusLine]:
    """The queues of a schema's catalog; one whose create has not finished (a killed create)
    is an UNKNOWN line with its state and the fix, never left out."""
    engine.use_schema(schema)
    for spec in run.catalog_bounded(engine, lambda: catalog.all_queues(engine, creating=True)):
        if spec.state == catalog.CREATING:
            name = f"{schema}.{spec.name}"
            why = f"state {spec.state}: {catalog.unfinished(spec.name)}"
            yield StatusLine(name, schema, spec.name, None, spec.kind.value, error=why)
            continue
        yield Item(
            f"{schema}.{spec.name}",
            schema,
            spec.name,
            None,
            spec.kind.value,
            Resolved(from_spec(spec, schema), spec),
        )


def _library(
    engine: Engine, schema: str, table: str, notes: list[str]
) -> Iterator[Item | StatusLine]:
    shape = read_shape(engine, table, schema)
    if shape is None:
        return
    found = detect.detect(shape, engine.dialect)
    if found is None:
        return
    resolved = Resolved(check(found, shape, engine.dialect), None, shape)
    yield from _named(engine, f"{schema}.{table}", found.library or "library", resolved, notes)


def _named(
    engine: Engine, label: str, what: str, resolved: Resolved, notes: list[str]
) -> Iterator[Item | StatusLine]:
    """One item per named queue of a table that holds several (and one for its rows that
    name none), else the table. Names that cannot be read in time (a lock) leave the table
    as one item, whose line names the lock's holder."""
    profile, shape = resolved.profile, resolved.shape
    assert shape is not None, "a table qadmin did not create has its shape"
    table_item = Item(label, shape.schema, shape.table, profile.queue, what, resolved)
    if profile.queue_column is None or profile.queue is not None or profile.queue_null:
        yield table_item
        return
    engine.use_schema(shape.schema)
    reader = query.Reader(engine, profile, shape)
    try:
        with engine.lock_timeout(PART_LOCK_MS):
            names, source = reader.queue_names()
            unnamed = reader.holds_unnamed()
            labels = queue_names.labels(engine, profile, shape.schema)
    except LockTimeout:
        yield table_item
        return
    if source and "statistics" in source:
        notes.append(f"{label}: {source}")
    if not names and not unnamed:
        yield table_item
    for name in names:
        one = dataclasses.replace(profile, queue=name, queue_label=labels.get(name))
        named = dataclasses.replace(resolved, profile=one)
        shown = name if one.queue_label is None else one.queue_label
        yield Item(label + bracketed(shown), shape.schema, shape.table, shown, what, named)
    if unnamed:
        nulls = dataclasses.replace(profile, queue_null=True)
        yield Item(
            label + bracketed(None),
            shape.schema,
            shape.table,
            None,
            what,
            dataclasses.replace(resolved, profile=nulls),
        )
    if source and source.startswith("the first"):
        yield StatusLine(
            f"{label}[...]",
            shape.schema,
            shape.table,
            None,
            what,
            error=f"more than {query.QUEUES_SHOWN} named queues: the rest were not read",
        )


def _declared(
    engine: Engine, declared: dict[str, dict[str, Any]], home: str, notes: list[str]
) -> Iterator[Item | StatusLine]:
    """Each [tables.NAME]: its named queues; a table this connection does not have is a
    note (one config file serves several servers), any other failure a line."""
    for name in sorted(declared):
        engine.use_schema(home)
        try:
            resolved = resolve(engine, name, declared, {}, table_only=True)
            yield from _named(engine, name, "declared", resolved, notes)
        except NotFound as exc:
            notes.append(f"[tables.{name}] not read here: {exc}")
        except QadminError as exc:
            yield StatusLine(name, home, name, None, "declared", error=str(exc))


# Called with the engine that read the queue (still in the queue's schema), the queue, its
# line and its report (None when it could not be read): metrics and check --all take more
# from a report than a status line shows. Calls come one at a time, from either connection.
Each = Callable[[Engine, Item, StatusLine, InspectReport | None], None]


def _line(
    engine: Engine,
    item: Item,
    options: Options,
    shared: ServerReads,
    each: Each | None = None,
) -> StatusLine | None:
    """The item judged (``shared``: the run's server-wide readings, read once for every
    queue); None for a queue found by the catalog that is gone since (dropped while status
    ran); a declared table that is missing stays a line saying so."""
    line = StatusLine(item.name, item.schema, item.table, item.queue, item.what)
    started = time.monotonic()
    report: InspectReport | None = None
    try:
        engine.use_schema(item.schema)
        engine.read_naive_times_as_utc(item.resolved.profile.naive_utc)
        report = run.inspect_resolved(engine, item.resolved, options, PARTS, shared)
        _fill(line, report)
    except NotFound as exc:
        if item.what != "declared" and (item.resolved.spec is None or _dropped_since(engine, item)):
            return None  # a library table gone, or a queue dropped while status ran
        line.error = str(exc)
    except QadminError as exc:
        if _dropped_since(engine, item):
            return None
        line.error = str(exc)
        line.worst = f"not read: {exc}"
    line.read_ms = round((time.monotonic() - started) * 1000)
    if each is not None:
        each(engine, item, line, report if line.error is None else None)
    return line


def _dropped_since(engine: Engine, item: Item) -> bool:
    """A qadmin queue the catalog no longer lists: dropped while status ran (SQLite says "no
    such table", not NotFound), so no line rather than an UNKNOWN that pages someone."""
    spec = item.resolved.spec
    if spec is None:
        return False
    try:
        return catalog.find(engine, spec.name) is None
    except QadminError:
        return False


def _fill(line: StatusLine, report: InspectReport) -> None:
    size = report.part(size_entry.ENTRY)
    if size is not None:
        line.depth, line.depth_exact = size.depth, size.depth_exact
        line.depth_quality = size.depth_quality
        line.oldest_age_s = size.oldest_age_s
        line.oldest_quality = size.oldest_quality if size.oldest_age_s is not None else None
        line.scheduled = size.scheduled.rows if size.scheduled is not None else None
        line.scheduled_quality = size.scheduled_quality
        line.dead = size.failed
        if size.failed is not None and size.states is not None:
            line.dead_quality = dead_letters.failed_quality(report)
    claims = report.part(claims_entry.ENTRY)
    if claims is not None and claims.claimed is not None:
        # Claims with no claim time: how many are stale is unknown, never 0 (as inspect's
        # named queues say; the claims_unread finding says why).
        counted = (size.claimed, size.claimed_quality) if size is not None else (None, None)
        line.running, line.claimed_quality = claims_entry.best_claimed(
            (claims.claimed, claims.claimed_quality), counted
        )
        line.stale = None if claims.undated else len(claims.stale)
        # stale claims are read from the claims listed: a floor when the listing is one
        line.stale_quality = None if line.stale is None else claims.claimed_quality
    dead = report.part(dead_letters.ENTRY)
    if dead is not None:
        line.dead = dead.count
        line.dead_quality = None if dead.count is None else ("exact" if dead.exact else "floor")
    pause = report.part(pause_entry.ENTRY)
    if pause is not None:
        line.paused_at = pause.paused_at
    verdict = check_mod.evaluate(report)
    line.status, line.code = verdict.status, verdict.code
    if verdict.problems:
        line.worst = _worst(report, verdict)
    for blocked in report.blocked.values():
        line.worst = line.worst or blocked.error


def _worst(report: InspectReport, verdict: check_mod.CheckResult) -> str:
    """The most severe finding (its code and message; of equal ones, the queue's own before
    the server's), else the first threshold crossed."""
    rank = {"critical": 0, "warning": 1}
    findings = sorted(report.findings, key=lambda f: (rank.get(f.severity, 2), f.server_wide))
    if findings and findings[0].severity in rank:
        return f"{findings[0].code}: {findings[0].message}"
    return verdict.problems[0]


@dataclass
class Found:
    """What status will read: the queues found, the lines already known (a declared table
    that cannot be resolved), and notes."""

    items: list[Item] = field(default_factory=list)
    lines: list[StatusLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find(
    engine: Engine,
    declared: dict[str, dict[str, Any]],
    broken: dict[str, str] | None = None,
    schema: str | None = None,
) -> Found:
    """Every queue on the server this role can see (see the module's docstring); a
    [tables.NAME] entry the config cannot give (``broken``: its one line) is a line too.
    ``schema`` (--schema): only the queues in that schema (MySQL: database), the others not
    read at all."""
    home = engine.schema
    found = Found()
    if schema is not None:
        if quoted(schema):  # '"Odd-Sch"', as --schema takes it
            schema = validate_quoted_schema(schema)
        engine.require_schema(schema)  # a typo is no "no queues found"
    tables, found.notes = _found(engine)
    tables = [(s, t) for s, t in tables if schema is None or s == schema]
    for name, why in sorted((broken or {}).items()):
        found.lines.append(StatusLine(name, home, name, None, "declared", error=why))
    entries: list[Item | StatusLine] = [
        e
        for e in _declared(engine, declared, home, found.notes)
        if schema is None or e.schema == schema
    ]
    seen = {(e.schema, e.table) for e in entries if isinstance(e, Item)}
    for where, table in tables:
        try:
            if table == CATALOG_TABLE:
                entries.extend(_own(engine, where))
            elif (where, table) not in seen:
                entries.extend(_library(engine, where, table, found.notes))
        except NotFound:
            continue  # dropped since the catalog listed it: not a queue any more
        except QadminError as exc:
            entries.append(StatusLine(f"{where}.{table}", where, table, None, "?", error=str(exc)))
    for entry in entries:
        if isinstance(entry, StatusLine):
            found.lines.append(entry)
        else:
            found.items.append(entry)
    engine.use_schema(home)
    return found


# A queue a run with a deadline did not begin in time (status's line, a scrape's unread queue).
OUT_OF_TIME = "the time allowed for the whole run had passed"


def _serial(each: Each | None, lock: threading.Lock) -> Each | None:
    """``each`` called by one connection at a time."""
    if each is None:
        return None

    def one(engine: Engine, item: Item, line: StatusLine, report: InspectReport | None) -> None:
        with lock:
            each(engine, item, line, report)

    return one


def _helper(engine: Engine, items: int) -> Engine | None:
    """A second connection to read half the queues with, on a server (not an embedded file,
    whose reads share one process's interpreter): the server works on one queue while qadmin
    judges another (206 queues read in process: 1.50 s against 2.98 s on one connection,
    benchmarks/results/status.md Run 10). None when
    there is little to share or the server refuses another session (max_connections): then
    one connection reads them all, as before."""
    if engine.hooks.file or items < 2:
        return None
    helper = engine.sibling()
    try:
        # connects now: a refusal is known before any queue is read
        helper.sibling_session, engine.sibling_session = engine.session_id(), helper.session_id()
    except QadminError:
        helper.close()
        engine.sibling_session = 0
        return None
    return helper


def _read_all(
    engine: Engine,
    items: list[Item],
    read: Callable[[Engine, int, Item], StatusLine | None],
    connections: int,
) -> list[StatusLine | None]:
    """Each item read by ``read`` in order of ``items``, on this connection and a helper's,
    each taking the next item as it is free; the lines in the items' order. Every queue's
    reads wait at most PART_LOCK_MS for a lock, as each part does: the limit set once for
    the run on each connection, not twice a queue; and each read made cheaper as the engine
    can (Engine.reading_many). An interrupt (Ctrl-C) stops both: this connection at once,
    the helper after its current queue (waited for a second at most)."""
    lines: list[StatusLine | None] = [None] * len(items)
    queue = iter(enumerate(items))
    taking = threading.Lock()
    stop = threading.Event()
    failed: list[BaseException] = []

    def work(reader: Engine) -> None:
        with reader.lock_timeout(PART_LOCK_MS), reader.reading_many():
            while not stop.is_set():
                with taking:
                    n, item = next(queue, (-1, None))
                if item is None:
                    return
                lines[n] = read(reader, n, item)

    def helping(reader: Engine) -> None:
        try:
            work(reader)
        except BaseException as exc:
            failed.append(exc)

    helper = _helper(engine, len(items)) if connections > 1 else None
    thread = None
    if helper is not None:
        thread = threading.Thread(target=helping, args=(helper,), daemon=True)
        thread.start()
    try:
        work(engine)
    except BaseException:
        # Ctrl-C or an error: the helper is not waited for past a second (its statement
        # may run to the statement timeout); it only reads, and its session ends with ours
        stop.set()
        if thread is not None:
            thread.join(1)
        raise
    finally:
        stop.set()
        engine.sibling_session = 0
    if thread is not None and helper is not None:
        thread.join()
        helper.close()
    if failed:
        raise failed[0]
    return lines


def gather(
    engine: Engine,
    declared: dict[str, dict[str, Any]],
    options: Options | None = None,
    broken: dict[str, str] | None = None,
    *,
    options_for: Callable[[str], Options] | None = None,
    each: Each | None = None,
    deadline: float | None = None,
    order: Callable[[list[Item]], list[Item]] | None = None,
    schema: str | None = None,
    connections: int = 2,
) -> Status:
    """Every queue found (``schema``: in that schema only), judged; lines worst first, then
    by name. ``options_for``: each
    queue's own options by its name (check --all's thresholds from the config); ``each``: see
    ``Each``; ``deadline`` (time.monotonic): queues not begun by then are lines saying so,
    not read (a scrape that must answer in time). ``order``: which queues to read first
    (a scrape's: those read longest ago); with it, the first is begun even past the deadline
    (one queue, each statement under the queue timeout), so a time too short for any queue
    still reads one per run, in turn. ``connections``: 2 reads a server's queues on two (see
    ``_read_all``), 1 on this one alone (benchmarks/status_scale.py compares them)."""
    started = time.monotonic()
    options = options or Options(sample_s=0)
    home = engine.schema
    found = find(engine, declared, broken, schema)
    status = Status(list(found.lines), found.notes)
    items = order(found.items) if order is not None else found.items
    # The server-wide parts (the horizon's holders) are read once, for every queue: each
    # queue's judgement is the one check NAME makes from the same reading.
    shared = registry.server_reads()
    lock = threading.Lock()

    def read(reader: Engine, n: int, item: Item) -> StatusLine | None:
        late = deadline is not None and time.monotonic() >= deadline
        if late and not (order is not None and n == 0):
            line = StatusLine(item.name, item.schema, item.table, item.queue, item.what)
            line.error = OUT_OF_TIME
            if each is not None:
                with lock:
                    each(reader, item, line, None)
            return line
        own = options_for(item.name) if options_for is not None else options
        return _line(reader, item, own, shared, _serial(each, lock))

    lines = _read_all(engine, items, read, connections)
    status.lines += [line for line in lines if line is not None]
    for line in status.lines:
        if line.error is not None:
            line.worst = line.worst or f"not read: {line.error}"
    status.lines.sort(key=lambda line: (check_mod.RANK[line.code], line.name))
    engine.use_schema(home)
    status.elapsed_s = round(time.monotonic() - started, 3)
    return status
