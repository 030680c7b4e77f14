"""``qadmin conn``: the named connections of the config file, passwords masked."""

from __future__ import annotations

import time

import click
from click.core import ParameterSource

from qadmin import config as config_mod
from qadmin import render
from qadmin.cli.options import Target, connection_options, format_option, given
from qadmin.dsn import mask


@click.group(name="conn")
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="Config file (also accepted before conn and after list).",
)
def conn(config_path: str | None) -> None:
    """Named connections from the config file."""


def _config_path(config_path: str | None) -> str | None:
    """--config after ``list``, else after ``conn``, else before ``conn``, else the variable."""
    ctx = click.get_current_context()
    group = ctx.parent
    typed = ctx.get_parameter_source("config_path") is ParameterSource.COMMANDLINE
    if not typed and group is not None and group.params.get("config_path") is not None:
        return str(group.params["config_path"])
    value: str | None = given("config_path", config_path)
    return value


@conn.command(name="list")
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    envvar="QADMIN_CONFIG",
    help="Config file (default: qadmin/config.toml in the user config dir).",
)
@click.option("-v", "--verbose", is_flag=True, help="Show DSNs too, passwords masked.")
@format_option
def list_connections(config_path: str | None, verbose: bool, fmt: str | None) -> None:
    """List connection names (with -v, their DSNs with passwords masked)."""
    config_path = _config_path(config_path)
    conf = config_mod.load_config(config_path)
    rows = [
        {
            "name": name,
            "default": name == conf.default,
            "schema": entry.schema,
            "dsn": mask(entry.dsn),
        }
        for name, entry in sorted(conf.connections.items())
    ]
    columns = ["name", "default", "schema"] + (["dsn"] if verbose else [])
    if not rows:
        where = config_path or config_mod.default_config_path()
        render.note(f"qadmin: no named connections (config file: {where})")
    render.rows(rows, columns, fmt)


@click.command()
@connection_options
@format_option
def ping(target: Target, fmt: str | None) -> None:
    """Connect, and say which server answered and how fast (exit 6 when it cannot): the time
    to connect and log in, and one query's round trip after it, apart (the driver's import
    is timed by neither)."""
    engine = target.engine()  # imports the driver
    started = time.monotonic()
    engine.conn  # noqa: B018 - opens the connection, so connecting is timed on its own
    connected = time.monotonic()
    version = engine.server_version()
    answered = time.monotonic()
    render.document(
        {
            "engine": engine.label,
            "server_version": version,
            "connect_ms": round((connected - started) * 1000, 1),
            "round_trip_ms": round((answered - connected) * 1000, 1),
        },
        fmt,
    )


COMMANDS = [conn, ping]
