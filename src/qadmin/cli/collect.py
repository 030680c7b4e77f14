"""``qadmin collect``: one telemetry sample per queue, appended to a Parquet history (cron)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from qadmin import catalog, render
from qadmin import config as config_mod
from qadmin import dsn as dsn_mod
from qadmin.cli.inspect import stale_option
from qadmin.cli.options import (
    Target,
    check_sqlite_file,
    connection_options,
    format_option,
    profile_options,
)
from qadmin.engine_table import BY_NAME
from qadmin.engines import open_engine
from qadmin.engines.base import Engine
from qadmin.errors import MissingDependency, QadminError, UsageError
from qadmin.ops import collect as collect_ops
from qadmin.ops import telemetry
from qadmin.profiles.resolve import Resolved, from_spec, resolve


def _server(text: str) -> str:
    """Where a sample came from, without credentials: the engine, then host, port and database
    (SQLite: the file)."""
    parsed = dsn_mod.parse(text)
    if BY_NAME[parsed.engine].file:
        return f"{parsed.engine} {parsed.path}"
    if parsed.odbc is not None:
        return "mssql " + dsn_mod.mask(parsed.odbc)
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.engine} {parsed.host or 'localhost'}{port}/{parsed.database or ''}"


@click.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_queues", is_flag=True, help="Every queue qadmin manages there.")
@click.option(
    "--to",
    "to",
    required=True,
    metavar="PATH",
    type=click.Path(file_okay=False),
    help="Folder of the Parquet history (created if missing).",
)
@click.option(
    "--connections",
    metavar="A,B,...",
    help="Sample these named connections from the config, one file each.",
)
@click.option("--all-connections", is_flag=True, help="Sample every named connection.")
@click.option(
    "--resolution",
    type=click.IntRange(1, 86400),
    default=60,
    show_default=True,
    metavar="SECONDS",
    help="One sample per connection per slot of this length.",
)
@stale_option
@profile_options
@connection_options
@format_option
def collect(
    names: tuple[str, ...],
    all_queues: bool,
    to: str,
    connections: str | None,
    all_connections: bool,
    resolution: int,
    stale_after: int,
    profile: dict[str, Any],
    target: Target,
    fmt: str | None,
) -> int:
    """Sample queues once and append the figures to a Parquet history (safe every minute).

    Each connection's file is labelled by its name in the config, else by its server (engine,
    host, port, database; SQLite: the file), and by --schema when one is given. Exit 1 when a
    connection failed, or when its slot was already collected (said on stderr; the file there
    is kept); collecting one connection that failed, that failure's own code."""
    if bool(names) == all_queues:
        raise UsageError("name the queues to collect, or give --all (not both)")
    conf = target.loaded_config()
    if connections or all_connections:
        known = conf.connections
        chosen = (
            sorted(known)
            if all_connections
            else [c.strip() for c in (connections or "").split(",")]
        )
        unknown = [c for c in chosen if c not in known]
        if unknown:
            raise UsageError(f"unknown connection(s): {', '.join(unknown)}")
        sources = [config_mod.resolve(None, c, conf) for c in chosen]
    else:
        sources = [config_mod.resolve(target.dsn, target.connection, conf)]
    slot = collect_ops.slot_of(datetime.now(UTC), resolution)
    summary = []
    failed = 0
    codes: list[int] = []  # of the connections that failed
    for source in sources:
        # The connection's name, else its server: two servers collected by --dsn into one
        # folder get files of their own; and a --schema other than the connection's own, so
        # two schemas of one server collected in the same slot do not collide.
        label = source.name or _server(source.dsn)
        if target.schema and target.schema != source.schema:
            label += f" schema {target.schema}"
        try:
            check_sqlite_file(source)
            engine = open_engine(source.dsn, target.schema or source.schema, target.timeouts)
            try:
                declared = conf.tables
                if all_queues:
                    specs = [
                        Resolved(from_spec(s, engine.schema), s) for s in catalog.all_queues(engine)
                    ]
                else:
                    specs, bad = _resolve_each(engine, names, conf, declared, profile, label)
                    failed += bad
                records = []
                for spec in specs:
                    snap = telemetry.snapshot(engine, spec, stale_after, True)
                    if snap.blocked:
                        name = spec.profile.name
                        render.note(f"qadmin: {label}: {name}: partial: {snap.blocked}")
                    figures = snap.figures(True).as_dict()  # the edge: Parquet's records
                    figures.update(connection=label, server=_server(source.dsn))
                    records.append(figures)
            finally:
                engine.close()
            if not specs:  # every queue named was refused (said above): no empty sample
                summary.append({"connection": label, "queues": 0, "file": None, "status": "failed"})
                continue
            path = collect_ops.write(Path(to), label, slot, records)
            if path is None:
                failed += 1
                render.note(
                    f"qadmin: {label}: the {slot:%Y-%m-%d %H:%M:%S} UTC slot is already "
                    f"collected in {to}: nothing written (one sample per --resolution)"
                )
            summary.append(
                {
                    "connection": label,
                    "queues": len(records),
                    "file": str(path) if path else None,
                    "status": "written" if path else "slot already collected",
                }
            )
        except MissingDependency:
            raise  # the same for every connection: one line, its own exit code
        except QadminError as exc:
            failed += 1
            codes.append(exc.exit_code)
            render.note(f"qadmin: error: {label}: {' '.join(str(exc).split())}")
            summary.append({"connection": label, "queues": 0, "file": None, "status": "failed"})
    render.rows(summary, ["connection", "queues", "status", "file"], fmt)
    if len(sources) == 1 and codes:
        return codes[0]  # one connection: its own code (5 no such schema, 6 unreachable...)
    return 1 if failed else 0


def _resolve_each(
    engine: Engine,
    names: Sequence[str],
    conf: config_mod.Config,
    declared: dict[str, dict[str, Any]],
    given: dict[str, Any],
    label: str,
) -> tuple[list[Resolved], int]:
    """Each NAME's profile; one that cannot be read (a column it lacks, a bad [tables.NAME])
    is a note and counts as failed (exit 1), and the others are still collected."""
    out: list[Resolved] = []
    bad = 0
    for name in names:
        try:
            conf.check_table(name)
            out.append(resolve(engine, name, declared, given))
        except MissingDependency:
            raise
        except QadminError as exc:
            bad += 1
            render.note(f"qadmin: error: {label}: {name}: {' '.join(str(exc).split())}")
    return out, bad


COMMANDS = [collect]
