"""``qadmin conn``: the named connections of the config file, passwords masked."""

from __future__ import annotations

import click

from qadmin import config as config_mod
from qadmin import render
from qadmin.cli.options import format_option
from qadmin.dsn import mask


@click.group(name="conn")
def conn() -> None:
    """Named connections from the config file."""


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
    conf = config_mod.load_config(config_path)
    default = conf.get("default")
    rows = [
        {
            "name": name,
            "default": name == default,
            "schema": entry.get("schema"),
            "dsn": mask(entry["dsn"]),
        }
        for name, entry in sorted(config_mod.connections(conf).items())
    ]
    columns = ["name", "default", "schema"] + (["dsn"] if verbose else [])
    render.rows(rows, columns, fmt)


COMMANDS = [conn]
