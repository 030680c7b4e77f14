"""Queue lifecycle commands: create, list, drop, purge."""

from __future__ import annotations

from contextlib import nullcontext

import click

from qadmin import catalog, render
from qadmin.cli import progress
from qadmin.cli.options import Target, confirm, connection_options, format_option
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops import queues
from qadmin.ops import watermark as watermark_ops

# A ring this large takes seconds to fill with slot rows: show a bar (on a terminal).
BAR_FROM = 100_000
SPEC_COLUMNS = [
    "name",
    "kind",
    "capacity",
    "strict",
    "watermark",
    "max_attempts",
    "created_at",
    "state",
    "paused_at",
]


def _spec_row(spec: QueueSpec) -> dict[str, object]:
    return {
        "name": spec.name,
        "kind": spec.kind.value,
        "capacity": spec.capacity,
        "strict": spec.strict,
        "watermark": spec.watermark,
        "max_attempts": spec.max_attempts,
        "created_at": spec.created_at,
        "state": spec.state,
        "paused_at": spec.paused_at,
    }


@click.command()
@click.argument("name")
@click.option(
    "--kind",
    type=click.Choice([k.value for k in Kind]),
    required=True,
    help="Queue design (see docs/kinds.md: one per article).",
)
@click.option("--capacity", type=int, help="Slots of a ring or size of a capped queue.")
@click.option(
    "--strict",
    is_flag=True,
    help="fifo/lifo: one consumer at a time, so order holds across rollbacks.",
)
@click.option(
    "--watermark",
    is_flag=True,
    help="fifo/claim: dequeue range-scans from a watermark, past dead rows (article 004).",
)
@click.option(
    "--max-attempts",
    type=int,
    metavar="N",
    help="claim: the Nth failed attempt moves the message to NAME_dead (see alter).",
)
@connection_options
@format_option
def create(
    name: str,
    kind: str,
    capacity: int | None,
    strict: bool,
    watermark: bool,
    max_attempts: int | None,
    target: Target,
    fmt: str | None,
) -> None:
    """Create queue NAME: its table, its routines and its catalog entry."""
    spec = queues.make_spec(name, kind, capacity, strict, watermark, max_attempts)
    engine = target.engine(create=True)
    slots = spec.capacity or 0
    bar = progress.bar(f"creating {name}: {slots:,} slots") if slots >= BAR_FROM else nullcontext()
    with bar as update:
        created = queues.create(engine, spec, update)
    render.document(_spec_row(created), fmt)
    stuck = watermark_ops.unmovable(engine, created)
    if stuck:
        render.note(f"qadmin: warning: {stuck}")


@click.command(name="list")
@connection_options
@format_option
def list_queues(target: Target, fmt: str | None) -> None:
    """List the queues qadmin manages in the schema."""
    from qadmin.diagnostics import run

    engine = target.engine()
    specs = run.catalog_bounded(engine, lambda: catalog.all_queues(engine, creating=True))
    if not specs:  # someone else's database, or an empty one: say so rather than nothing
        where = engine.dsn.path if engine.hooks.file else f"schema {engine.schema}"
        render.note(f"qadmin: no qadmin queues in {where}")
    render.rows([_spec_row(s) for s in specs], SPEC_COLUMNS, fmt)


def _destructive(action: str) -> click.Command:
    run = queues.drop if action == "drop" else queues.purge
    plan_of = queues.drop_plan if action == "drop" else queues.purge_plan
    helps = {
        "drop": "Drop queue NAME: the objects qadmin recorded as its own, and its catalog entry.",
        "purge": "Delete every message in queue NAME; the queue itself stays.",
    }

    @click.command(name=action, help=helps[action])
    @click.argument("name")
    @click.option("--dry-run", is_flag=True, help="Show what would happen; change nothing.")
    @click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
    @connection_options
    @format_option
    def command(name: str, dry_run: bool, yes: bool, target: Target, fmt: str | None) -> None:
        engine = target.engine()
        spec = catalog.get(engine, name, creating=action == "drop")
        if dry_run:
            plan = plan_of(engine, spec)
            _dead_note(plan)
            render.document(dict(plan.as_dict(), dry_run=True), fmt)
            if render.resolve_format(fmt) != "json":
                for statement in plan.statements:
                    click.echo(statement.rstrip() + ";")
            return
        confirm(action, name, yes)
        done = run(engine, spec)
        _dead_note(done)
        render.document(dict(done.as_dict(), dry_run=False), fmt)

    return command


def _dead_note(plan: queues.Plan) -> None:
    """Say what becomes of the dead messages: drop destroys them, purge leaves them."""
    if plan.dead is None or not plan.dead.count:
        return
    one = plan.dead.count == 1 and plan.dead.exact
    count = f"{plan.dead.count:,}{'' if plan.dead.exact else ' or more'} dead message" + (
        "" if one else "s"
    )
    if plan.action == "drop":
        render.note(f"qadmin: {plan.queue}: drop also destroys {count}")
    else:
        render.note(
            f"qadmin: {plan.queue}: purge leaves {count} in {plan.queue}_dead "
            "(discard --all empties it)"
        )


COMMANDS = [create, list_queues, _destructive("drop"), _destructive("purge")]
