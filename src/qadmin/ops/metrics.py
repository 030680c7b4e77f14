"""Prometheus figures for every queue ``status`` finds: one bounded read, as plain data.

A scrape is status's read (the same discovery and the same cheap parts, each statement under
the queue timeout) with a deadline for the whole of it, plus one more cheap read per qadmin
queue: its sequences' high-water marks (pushed, and a ring's popped), which only grow and so
are Prometheus counters. Nothing here imports prometheus_client: ``qadmin.prometheus`` turns a
``Scrape`` into the exposition. A scrape that cannot reach the server is still a scrape:
``up`` false and the reason, never an exception, so an exporter answers every request.

Labels never carry a secret: the server is named by engine, host, port and database only
(no user, no password, no query parameters), and queue names are data the role can read.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from qadmin import secrets
from qadmin.catalog import sql
from qadmin.diagnostics import registry
from qadmin.diagnostics.model import PART_LOCK_MS, InspectReport, Options
from qadmin.engines.base import Engine
from qadmin.errors import QadminError
from qadmin.kinds import Kind
from qadmin.ops import status as status_ops

QUEUE_LABELS = ("server", "schema", "table", "queue", "kind", "library")
SERVER_LABELS = ("server",)
TABLE_LABELS = ("server", "schema", "table")
QUALITY_LABELS = (*QUEUE_LABELS, "figure", "quality")


@dataclass(frozen=True)
class Family:
    """One metric: its name as exposed (a counter's with ``_total``), its type and help."""

    name: str
    type: str  # "gauge" or "counter"
    help: str
    labels: tuple[str, ...]


FAMILIES = (
    Family(
        "qadmin_up",
        "gauge",
        "1 when the scrape reached the server and listed its queues, else 0",
        SERVER_LABELS,
    ),
    Family(
        "qadmin_scrape_error",
        "gauge",
        "1 when the scrape failed (no connection, an error: qadmin's log says why), else 0",
        SERVER_LABELS,
    ),
    Family("qadmin_scrape_duration_seconds", "gauge", "how long the scrape took", SERVER_LABELS),
    Family(
        "qadmin_scrape_queues",
        "gauge",
        "queues found (qadmin's, library tables' named queues, [tables.NAME])",
        SERVER_LABELS,
    ),
    Family(
        "qadmin_scrape_queues_unread",
        "gauge",
        "queues found but not read (an error, a lock, the scrape timeout): "
        "their qadmin_queue_status is 3 (2 when what was read is CRITICAL)",
        SERVER_LABELS,
    ),
    Family(
        "qadmin_queue_status",
        "gauge",
        "check's verdict on the queue: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (not read, "
        "or a part of it a lock kept from being read)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_depth",
        "gauge",
        "messages waiting and due (exact, a floor or an estimate: qadmin_queue_quality)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_scheduled",
        "gauge",
        "messages waiting that are not due yet (exact, a floor or an estimate: "
        "qadmin_queue_quality)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_oldest_age_seconds",
        "gauge",
        "age of the oldest due message; 0 when empty (a floor or exact: qadmin_queue_quality)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_claimed", "gauge", "messages claimed by a consumer (running)", QUEUE_LABELS
    ),
    Family(
        "qadmin_queue_stale_claims",
        "gauge",
        "claims older than --stale-after (exact or a floor: qadmin_queue_quality)",
        QUEUE_LABELS,
    ),
    Family("qadmin_queue_dead", "gauge", "dead letters, or a library's failed jobs", QUEUE_LABELS),
    Family("qadmin_queue_ring_fill_ratio", "gauge", "a ring's depth / capacity", QUEUE_LABELS),
    Family(
        "qadmin_queue_paused",
        "gauge",
        "1 while qadmin pause stops the queue's pops, else 0 (qadmin queues)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_paused_seconds",
        "gauge",
        "how long the queue has been paused (present only while it is)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_quality",
        "gauge",
        "1 for each figure that is not sure: its quality (floor: at least; estimate: "
        "the catalog's figure); a figure with no series here is exact",
        QUALITY_LABELS,
    ),
    Family("qadmin_queue_read_seconds", "gauge", "how long reading the queue took", QUEUE_LABELS),
    Family(
        "qadmin_queue_pushed_total",
        "counter",
        "messages ever pushed: the queue's id or push sequence high-water mark (qadmin queues)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_queue_popped_total",
        "counter",
        "messages ever popped: the ring's pop sequence (rings)",
        QUEUE_LABELS,
    ),
    Family(
        "qadmin_table_size_bytes",
        "gauge",
        "the queue table's size on disk (the catalog's figure)",
        TABLE_LABELS,
    ),
)
BY_NAME = {f.name: f for f in FAMILIES}


@dataclass(frozen=True)
class Sample:
    family: str
    labels: tuple[str, ...]  # in the family's label order
    value: float


@dataclass
class Scrape:
    """One scrape: its samples, and whether it reached the server (``error``: why not)."""

    server: str
    up: bool = False
    error: str | None = None
    duration_s: float = 0.0
    queues: int = 0
    unread: int = 0
    samples: list[Sample] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # the queues found, as status names them
    code: int = 0  # the worst queue's check code (as status's exit code)
    exit_code: int = 0  # the error's (6: no connection), when the scrape failed


def server_label(engine: Engine) -> str:
    """The server as a label: scheme://host:port/database as the DSN names it (mariadb://
    stays mariadb://), a SQLite file as its DSN writes it (sqlite:////abs, sqlite:///rel),
    never a user or a secret."""
    d = engine.dsn
    scheme = d.flavor or d.engine
    # a socket-style DSN (postgresql:///db?host=H&port=P) names its server in the query
    host = d.host or d.query.get("host") or d.query.get("hostaddr")
    port_of = d.port or d.query.get("port")
    if host and not host.startswith("/"):
        port = f":{port_of}" if port_of else ""
        return secrets.scrub(f"{scheme}://{host}{port}/{d.database or ''}")
    if host:  # a Unix socket's folder
        return secrets.scrub(f"{scheme}://localhost/{d.database or ''}")
    if d.path:
        return secrets.scrub(f"{scheme}:///{d.path}")
    return scheme


def _queue_label(line: status_ops.StatusLine) -> str:
    """The named queue: what status shows in brackets (``[]``: rows naming none, an empty
    label; ``['']``: the queue named by the empty string, ``''``)."""
    if line.queue is not None:
        return line.queue or "''"
    if line.name.endswith("]") and "[" in line.name:
        return line.name[line.name.rindex("[") + 1 : -1]
    return ""


def _field(name: str, report: InspectReport) -> Any:
    for one in registry.fields():
        if one.name == name:
            return one.value(report)
    raise KeyError(name)


class _Collector:
    """Samples from each queue status reads (status's ``Each``)."""

    def __init__(self, engine: Engine, server: str) -> None:
        self.engine, self.server = engine, server
        self.samples: list[Sample] = []
        self.seen: set[tuple[str, tuple[str, ...]]] = set()
        self.lines: set[str] = set()  # the status lines already turned into samples
        self.blocked: set[str] = set()  # read, but a part was blocked by a lock: unread

    def add(self, family: str, labels: tuple[str, ...], value: float | int | None) -> None:
        if value is None or (family, labels) in self.seen:
            return  # one series once: Prometheus refuses a scrape's duplicates
        self.seen.add((family, labels))
        self.samples.append(Sample(family, labels, float(value)))

    def labels(self, line: status_ops.StatusLine, library: str | None) -> tuple[str, ...]:
        kinds = {k.value for k in Kind}
        kind = line.what if line.what in kinds else "declared" if line.what == "declared" else ""
        if not kind and line.what != "?":
            kind, library = "library", library or line.what
        return (
            self.server,
            line.schema,
            line.table,
            _queue_label(line),
            kind,
            library or "",
        )

    def __call__(
        self,
        engine: Engine,
        item: status_ops.Item,
        line: status_ops.StatusLine,
        report: InspectReport | None,
    ) -> None:
        self.line(line, item.resolved.profile.library, report, item, engine)

    def line(
        self,
        line: status_ops.StatusLine,
        library: str | None,
        report: InspectReport | None = None,
        item: status_ops.Item | None = None,
        engine: Engine | None = None,
    ) -> None:
        """``engine``: the connection that read the queue, still in its schema (its
        sequences are read there too)."""
        if line.name in self.lines:
            return
        self.lines.add(line.name)
        at = self.labels(line, library)
        if report is not None and report.blocked:
            # a part waited out its lock (another session's ACCESS EXCLUSIVE): counted unread,
            # as monitoring.md says; its status is check's (3, or 2 when what was read is
            # CRITICAL) and what was read still shows
            self.blocked.add(line.name)
        self.add("qadmin_queue_status", at, line.code)
        if report is None:
            return
        self.add("qadmin_queue_read_seconds", at, line.read_ms / 1000)
        self.add("qadmin_queue_depth", at, line.depth)
        self.add("qadmin_queue_scheduled", at, line.scheduled)
        oldest = registry.metric_spec("oldest_age").value(report)
        self.add("qadmin_queue_oldest_age_seconds", at, oldest)
        self.add("qadmin_queue_claimed", at, line.running)
        self.add("qadmin_queue_stale_claims", at, line.stale)
        self.add("qadmin_queue_dead", at, line.dead)
        self.add("qadmin_queue_ring_fill_ratio", at, _field("ring_fill", report))
        qualities = {
            "depth": _field("depth_quality", report),
            "oldest_age": _field("oldest_quality", report) if oldest is not None else None,
            "scheduled": line.scheduled_quality,
            "claimed": _field("claimed_quality", report) if line.running is not None else None,
            "stale_claims": line.stale_quality,  # a floor when the claims listed stopped short
            "dead": line.dead_quality if line.dead is not None else None,
        }
        for figure, quality in qualities.items():
            if quality in ("floor", "estimate"):
                self.add("qadmin_queue_quality", (*at, figure, quality), 1)
        size = _field("table_bytes", report)
        self.add("qadmin_table_size_bytes", (self.server, line.schema, line.table), size)
        spec = item.resolved.spec if item is not None else None
        if spec is not None:
            paused_for = _field("paused_for_s", report)
            self.add("qadmin_queue_paused", at, 0 if paused_for is None else 1)
            self.add("qadmin_queue_paused_seconds", at, paused_for)
            self.counters(engine or self.engine, at, spec)

    def counters(self, engine: Engine, at: tuple[str, ...], spec: Any) -> None:
        """The queue's sequences (one cheap read); left out when they cannot be read."""
        params = {"schema": engine.schema, "table": spec.name}
        try:
            with engine.lock_timeout(PART_LOCK_MS):
                rows = sql.template_rows(engine, spec, "counters", params)
        except QadminError:
            return
        first = rows[0] if rows else {}
        self.add("qadmin_queue_pushed_total", at, sql.as_int(first.get("enqueued_total")))
        self.add("qadmin_queue_popped_total", at, sql.as_int(first.get("dequeued_total")))


@dataclass
class ReadOrder:
    """The order a scrape reads queues in, kept from one scrape to the next (an exporter's,
    ``--listen``): those read longest ago first, never read ones before them (in the order
    found), so a budget too short for every queue reads the ones it left out on the next
    scrapes instead of starving the same ones every time."""

    last: dict[str, int] = field(default_factory=dict)  # queue -> the scrape that read it
    scrapes: int = 0

    def order(self, items: list[status_ops.Item]) -> list[status_ops.Item]:
        return sorted(items, key=lambda item: self.last.get(item.name, -1))  # stable

    def read(self, names: list[str]) -> None:
        self.scrapes += 1
        for name in names:
            self.last[name] = self.scrapes


def scrape(
    open_engine: Callable[[], Engine],
    declared: dict[str, dict[str, Any]],
    broken: dict[str, str],
    options: Options,
    timeout_s: float,
    options_for: Callable[[str], Options] | None = None,
    read_order: ReadOrder | None = None,
    schema: str | None = None,
) -> Scrape:
    """Every queue's figures, read within ``timeout_s`` (queues not begun by then are
    counted unread); a failure to reach the server is ``up`` false with its reason.
    ``options_for``: each queue's thresholds (the config's [check], as check --all's).
    ``read_order``: the queues read longest ago first (see ``ReadOrder``), updated with
    those this scrape began. ``schema`` (--schema): that schema's queues only."""
    started = time.monotonic()
    engine = open_engine()
    result = Scrape(server_label(engine))
    collector = _Collector(engine, result.server)
    try:
        found = status_ops.gather(
            engine,
            declared,
            options,
            broken,
            options_for=options_for,
            each=collector,
            deadline=started + timeout_s,
            order=read_order.order if read_order is not None else None,
            schema=schema,
        )
    except QadminError as exc:
        result.error = secrets.scrub(" ".join(str(exc).split()))
        result.exit_code = exc.exit_code
    else:
        result.up = True
        result.notes = found.notes
        result.queues = len(found.lines)
        result.names = [line.name for line in found.lines]
        result.unread = sum(
            1 for line in found.lines if line.error is not None or line.name in collector.blocked
        )
        result.code = found.code
        if read_order is not None:
            read_order.read([x.name for x in found.lines if x.error != status_ops.OUT_OF_TIME])
        for line in found.lines:
            if line.error is not None:
                collector.line(line, None)  # its status 3, even when status gave no item
    finally:
        with contextlib.suppress(QadminError):
            engine.close()
    result.duration_s = round(time.monotonic() - started, 3)
    return _finish(result, collector.samples)


def failed(server: str, error: str, exit_code: int, duration_s: float = 0.0) -> Scrape:
    """A scrape that ended in an error nobody classified: up 0 all the same."""
    result = Scrape(server, error=error, exit_code=exit_code, duration_s=duration_s)
    return _finish(result, [])


def _finish(result: Scrape, queue_samples: list[Sample]) -> Scrape:
    scrape_samples = (
        ("qadmin_up", 1 if result.up else 0),
        ("qadmin_scrape_error", 0 if result.up else 1),
        ("qadmin_scrape_duration_seconds", result.duration_s),
        ("qadmin_scrape_queues", result.queues),
        ("qadmin_scrape_queues_unread", result.unread),
    )
    result.samples = [Sample(n, (result.server,), float(v)) for n, v in scrape_samples]
    result.samples += queue_samples
    return result
