"""pause and resume: stop a queue's pops (qadmin's and applications') while pushes go on."""

from __future__ import annotations

from collections.abc import Callable

import click

from qadmin import render
from qadmin.cli.options import Target, confirm, connection_options, format_option
from qadmin.ops import pause as pause_ops


def _command(action: str, run: Callable[..., pause_ops.Outcome], help_text: str) -> click.Command:
    @click.command(name=action, help=help_text)
    @click.argument("name")
    @click.option(
        "--queue",
        "named",
        metavar="QUEUE",
        help="River or Solid Queue tables: the named queue (the library's own pause row).",
    )
    @click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
    @click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
    @connection_options
    @format_option
    def command(
        name: str,
        named: str | None,
        dry_run: bool,
        yes: bool,
        target: Target,
        fmt: str | None,
    ) -> None:
        engine = target.engine()
        resolved = target.resolve(engine, name, {"queue": named} if named is not None else {})
        spec = resolved.spec

        def apply(dry: bool) -> pause_ops.Outcome:
            if spec is None:
                return pause_ops.library(engine, resolved, action, dry_run=dry)
            return run(engine, spec, dry_run=dry)

        plan = apply(True)
        if dry_run:
            render.document(dict(plan.as_dict(), dry_run=True), fmt)
            if render.resolve_format(fmt) != "json":
                for statement in plan.statements:
                    click.echo(statement.rstrip() + ";")
            return
        if plan.changed:
            confirm(action, plan.queue, yes)
        done = apply(False)
        if not done.changed:
            state = f"paused since {done.paused_at}" if done.paused else "not paused"
            render.note(f"qadmin: {done.queue} is already {state}: nothing changed")
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
