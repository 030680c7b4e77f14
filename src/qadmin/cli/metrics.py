"""``qadmin metrics``: every queue status finds, as Prometheus metrics (printed, served over
HTTP, or written for node_exporter's textfile collector)."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import click

from qadmin import config as config_mod
from qadmin import render, secrets
from qadmin.cli import check_all
from qadmin.cli.inspect import stale_option
from qadmin.cli.options import (
    Target,
    check_sqlite_file,
    connection_options,
    queue_timeout_option,
    queue_timeouts,
    seconds_option,
)
from qadmin.errors import EXIT_ERROR, QadminError, UsageError


def _listen(value: str) -> tuple[str, int]:
    """HOST:PORT ([::1]:PORT for IPv6); port 0 picks a free one (said on stderr)."""
    host, sep, port = value.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {value!r}: give HOST:PORT (127.0.0.1:9187, [::1]:9187)")
    return host, int(port)


def _textfile(value: str) -> Path:
    path = Path(value)
    if path.suffix != ".prom":
        raise UsageError(
            f"--textfile {value}: node_exporter's textfile collector reads only *.prom files"
        )
    if not path.parent.is_dir():
        raise UsageError(f"--textfile {value}: no such folder {path.parent}")
    return path


def _never_made(conn: config_mod.Connection) -> config_mod.Connection:
    """The DSN opening only a database that exists (the dialect's ``existing_only``: SQLite's
    ``mode=rw``), so a file removed between a scrape's check and its connection is a failed
    scrape, never a new empty database. The embedded default is made as ever."""
    from qadmin import dsn as dsn_mod
    from qadmin.engines import registry

    if conn.source == config_mod.EMBEDDED:
        return conn
    parsed = dsn_mod.parse(conn.dsn)
    dialect = registry.dialect_class(parsed.engine)
    return dataclasses.replace(conn, dsn=dialect.existing_only(conn.dsn, parsed.path, parsed.query))


@click.command()
@click.option(
    "--listen",
    metavar="HOST:PORT",
    help="Serve the metrics over HTTP (every request runs one bounded read) until stopped.",
)
@click.option(
    "--textfile",
    metavar="PATH",
    help="Write them to PATH (*.prom) for node_exporter's textfile collector, atomically.",
)
@click.option(
    "--openmetrics",
    "open_metrics",
    is_flag=True,
    help="Print OpenMetrics text instead of the Prometheus text format.",
)
@seconds_option(
    "--scrape-timeout",
    10.0,
    0.5,
    "The longest one scrape may take (served: less when Prometheus waits less); "
    "queues not read by then are counted in qadmin_scrape_queues_unread.",
)
@queue_timeout_option
@stale_option
@connection_options
def metrics(
    listen: str | None,
    textfile: str | None,
    open_metrics: bool,
    scrape_timeout: float,
    queue_timeout: float,
    stale_after: int,
    target: Target,
    **_: Any,
) -> int:
    """Prometheus metrics for every queue status finds.

    One bounded read of every queue (status's: catalog estimates, bounded counts, index
    probes, each statement under --queue-timeout, the whole under --scrape-timeout), printed
    in the Prometheus text format, served with --listen, or written with --textfile. A
    scrape that cannot reach the server is qadmin_up 0 (and, printed or written, exit 6 with
    one line on stderr); the metrics and their labels: docs/monitoring.md."""
    if listen is not None and (textfile is not None or open_metrics):
        given = "--textfile" if textfile is not None else "--openmetrics"
        raise UsageError(
            f"--listen serves the metrics and takes no {given} (Prometheus picks the format)"
        )
    if textfile is not None and open_metrics:
        raise UsageError("--textfile writes the Prometheus text format: leave out --openmetrics")
    where = _listen(listen) if listen is not None else None
    path = _textfile(textfile) if textfile is not None else None
    try:
        from qadmin import prometheus
    except ImportError as exc:
        from qadmin import extras

        raise extras.missing("prometheus_client", "qadmin metrics") from exc
    from qadmin.engines import open_engine
    from qadmin.ops import metrics as metrics_ops

    conf = config_mod.load_config(target.config)
    conn = config_mod.resolve(target.dsn, target.connection, conf)
    if click.get_current_context().find_root().params.get("verbose"):
        click.echo(f"qadmin: using {conn.masked} ({conn.source})", err=True)
    conn = _never_made(conn)
    declared, broken = conf.tables, conf.broken
    limits_for = check_all.thresholds(conf, {})  # qadmin_queue_status judged as check --all
    timeouts = queue_timeouts(target, queue_timeout)
    schema = target.schema or conn.schema
    # a bad DSN or schema: exit 2 now, not per scrape
    server = metrics_ops.server_label(open_engine(conn.dsn, schema, timeouts))

    said: list[str] = []  # the unmatched [check.queues] patterns already said
    # Served, each scrape starts with the queues read longest ago: a short budget reads the
    # ones the last scrape left out, never the same ones every time.
    read_order = metrics_ops.ReadOrder()

    def scrape(seconds: float) -> metrics_ops.Scrape:
        try:  # every scrape: a file removed since is a down database, never a new empty one
            check_sqlite_file(conn)
        except QadminError as exc:
            result = metrics_ops.failed(server, secrets.scrub(str(exc)), exc.exit_code)
            render.note(f"qadmin: scrape failed: {result.error}")
            return result
        # the connection too within the scrape's time (a server that accepts TCP and never
        # answers held a 3 s scrape for the whole 5 s connect timeout)
        bounded = dataclasses.replace(
            timeouts, connect_s=max(1, min(timeouts.connect_s, int(seconds)))
        )
        result = metrics_ops.scrape(
            lambda: open_engine(conn.dsn, schema, bounded),
            declared,
            broken,
            limits_for.options("", stale_after),
            seconds,
            lambda name: limits_for.options(name, stale_after),
            read_order,
            target.schema,
        )
        if result.error is not None:
            render.note(f"qadmin: scrape failed: {result.error}")
        else:
            unmatched = limits_for.unmatched(result.names)
            if unmatched != said:  # said once, not every scrape, and again when it changes
                for line in unmatched:
                    render.note(f"qadmin: warning: {render.escaped(line)}")
                said[:] = unmatched
        return result

    if where is not None:

        def listening(url: str) -> None:
            render.note(f"qadmin: serving metrics on {url}")

        def served(seconds: float) -> metrics_ops.Scrape:
            started = time.monotonic()
            try:
                return scrape(seconds)
            except Exception as exc:  # a bug must not end the endpoint: up 0 and one line
                why = secrets.scrub(f"internal error: {type(exc).__name__}: {exc}")
                render.note(f"qadmin: scrape failed: {why}")
                return metrics_ops.failed(server, why, EXIT_ERROR, time.monotonic() - started)

        try:
            prometheus.serve(where[0], where[1], served, scrape_timeout, listening)
        except OSError as exc:
            raise QadminError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        return 0
    result = scrape(scrape_timeout)
    if path is not None:
        try:
            prometheus.write_textfile(path, result)
        except OSError as exc:
            raise QadminError(f"--textfile {path}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.buffer.write(prometheus.text(result, open_metrics))
        sys.stdout.flush()
    return result.exit_code


COMMANDS = [metrics]
