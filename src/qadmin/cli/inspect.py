"""``qadmin inspect``: one screen on one queue."""

from __future__ import annotations

import click

from qadmin import render
from qadmin.cli.options import Target, connection_options, format_option
from qadmin.ops import catalog
from qadmin.ops.inspect import summary


@click.command()
@click.argument("name")
@connection_options
@format_option
def inspect(name: str, target: Target, fmt: str | None) -> None:
    """Show what queue NAME is and how much it holds."""
    engine = target.engine()
    render.document(summary(engine, catalog.get(engine, name)), fmt, title=f"queue {name}")


COMMANDS = [inspect]
