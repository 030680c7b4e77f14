"""A ``Scrape`` as Prometheus sees it, through prometheus_client (imported only by ``qadmin
metrics``): the text exposition, OpenMetrics, a node_exporter textfile written atomically, and
an HTTP endpoint whose every request runs one bounded scrape.

The endpoint runs one scrape at a time (a second request waits for the first: each is
bounded), and each within the lower of ``--scrape-timeout`` and the timeout Prometheus sends
(``X-Prometheus-Scrape-Timeout-Seconds``) less half a second, so Prometheus gets an answer
before it gives up. A scrape that fails is ``qadmin_up 0``, never an HTTP error.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import exposition, openmetrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from qadmin.ops import metrics as metrics_ops
from qadmin.ops.metrics import Scrape


def families(scrape: Scrape) -> list[Metric]:
    """Every family with its HELP and TYPE, samples or none."""
    out: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}
    for family in metrics_ops.FAMILIES:
        labels = list(family.labels)
        if family.type == "counter":
            out[family.name] = CounterMetricFamily(family.name, family.help, labels=labels)
        else:
            out[family.name] = GaugeMetricFamily(family.name, family.help, labels=labels)
    for sample in scrape.samples:
        out[sample.family].add_metric(list(sample.labels), sample.value)
    return list(out.values())


class _Once(Collector):
    """One scrape's families."""

    def __init__(self, scrape: Scrape) -> None:
        self.scrape = scrape

    def collect(self) -> Iterable[Metric]:
        return families(self.scrape)


def text(scrape: Scrape, open_metrics: bool = False) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Once(scrape))
    if open_metrics:
        return bytes(openmetrics.exposition.generate_latest(registry))  # type: ignore[no-untyped-call]
    return bytes(exposition.generate_latest(registry))


def write_textfile(path: Path, scrape: Scrape) -> None:
    """node_exporter's textfile collector reads every ``*.prom`` file whenever it is scraped:
    written beside it under a name it ignores, flushed to disk, then renamed over it, so it
    never reads half a file."""
    data = text(scrape)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request: a scrape every 15 s would fill the log."""


class _Server(WSGIServer):
    daemon_threads = True

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per request (as socketserver.ThreadingMixIn), so a slow scrape never
        stops the next request from being accepted and queued."""
        thread = threading.Thread(target=self._handle, args=(request, client_address), daemon=True)
        thread.start()

    def _handle(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)


class _Server6(_Server):
    address_family = socket.AF_INET6


def _budget(header: str | None, limit: float) -> float:
    """The time a scrape may take: ours, or less when Prometheus says it waits less."""
    try:
        theirs = float(header) - 0.5 if header else limit
    except ValueError:
        theirs = limit
    return max(0.5, min(limit, theirs))


def serve(
    host: str,
    port: int,
    scrape: Callable[[float], Scrape],
    timeout_s: float,
    listening: Callable[[str], None],
) -> None:
    """Serve until stopped: every request runs ``scrape(seconds)`` once."""
    local = threading.local()
    lock = threading.Lock()

    class PerRequest(Collector):
        def collect(self) -> Iterator[Metric]:
            budget = getattr(local, "budget", timeout_s)
            asked = time.monotonic()
            with lock:  # a second request waits: its wait comes out of its own budget
                result = scrape(max(0.1, budget - (time.monotonic() - asked)))
            yield from families(result)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(PerRequest())
    inner = exposition.make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        local.budget = _budget(environ.get("HTTP_X_PROMETHEUS_SCRAPE_TIMEOUT_SECONDS"), timeout_s)
        return inner(environ, start_response)

    server_class = _Server6 if ":" in host else _Server
    httpd = make_server(host, port, app, server_class, handler_class=_Quiet)
    try:
        shown = f"[{host}]" if ":" in host else host
        listening(f"http://{shown}:{httpd.server_port}/metrics")
        httpd.serve_forever(poll_interval=0.5)
    finally:
        httpd.server_close()
