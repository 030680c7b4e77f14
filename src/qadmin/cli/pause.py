"""pause and resume: stop a queue's pops (qadmin's and applications') while pushes go on."""

from __future__ import annotations

from collections.abc import Callable

import click

from qadmin import render
from qadmin.cli.options import Target, confirm, connection_options, format_option
from qadmin.engines.base import Engine
from qadmin.errors import UsageError
from qadmin.kinds import QueueSpec
from qadmin.ops import catalog
from qadmin.ops import pause as pause_ops


def _queue(target: Target, engine: Engine, name: str, command: str) -> QueueSpec:
    """The qadmin queue NAME; a library's table is refused in one line (exit 2)."""
    spec = catalog.find(engine, name)
    if spec is not None:
        return catalog.get(engine, name)
    resolved = target.resolve(engine, name, {})  # NotFound (exit 5) when there is no table
    if resolved.spec is not None:
        return resolved.spec
    whose = f"a {resolved.profile.library} table" if resolved.profile.library else "a table"
    raise UsageError(
        f"{command}: {name} is {whose}, not a qadmin queue: qadmin pauses its own queues "
        "(their pop routines read the pause); pause this one through its library"
    )


def _command(action: str, run: Callable[..., pause_ops.Outcome], help_text: str) -> click.Command:
    @click.command(name=action, help=help_text)
    @click.argument("name")
    @click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
    @click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
    @connection_options
    @format_option
    def command(name: str, dry_run: bool, yes: bool, target: Target, fmt: str | None) -> None:
        engine = target.engine()
        spec = _queue(target, engine, name, action)
        if dry_run:
            plan = run(engine, spec, dry_run=True)
            render.document(dict(plan.as_dict(), dry_run=True), fmt)
            if render.resolve_format(fmt) != "json":
                for statement in plan.statements:
                    click.echo(statement.rstrip() + ";")
            return
        if (spec.paused_at is None) == (action == "pause"):
            confirm(action, name, yes)
        done = run(engine, spec)
        if not done.changed:
            state = f"paused since {done.paused_at}" if done.paused else "not paused"
            render.note(f"qadmin: {name} is already {state}: nothing changed")
        render.document(dict(done.as_dict(), dry_run=False), fmt)

    return command


COMMANDS = [
    _command(
        "pause",
        pause_ops.pause,
        "Pause queue NAME: its pops (qadmin's and applications' calls of its routines) take "
        "nothing until resume; pushes go on, claims already made can still be acked or failed.",
    ),
    _command(
        "resume",
        pause_ops.resume,
        "Resume queue NAME after a pause: its pops take messages again from their next call.",
    ),
]
