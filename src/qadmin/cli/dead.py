"""Dead letters of claim queues: alter (max attempts), dead (list), redrive (move back)."""

from __future__ import annotations

import sys

import click

from qadmin import catalog, render
from qadmin.cli.options import (
    MESSAGE_ID,
    Target,
    confirm,
    connection_options,
    count_option,
    format_option,
)
from qadmin.engines.base import Engine
from qadmin.errors import UsageError
from qadmin.kinds import QueueSpec
from qadmin.ops import dead

DEAD_COLUMNS = [
    "id",
    "attempts",
    "errors",
    "first_error",
    "last_error",
    "enqueued_at",
    "died_at",
    "payload",
]


def max_attempts_value(value: str) -> int | None:
    """``N`` or ``none`` (failures never move a message)."""
    if value.strip().lower() == "none":
        return None
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"--max-attempts takes a number or none, not {value!r}") from None
    return dead.check_max_attempts(number)


@click.command()
@click.argument("name")
@click.option(
    "--max-attempts",
    "max_attempts",
    metavar="N|none",
    required=True,
    help="Claim queues: the failed attempt that moves a message to NAME_dead (none: never).",
)
@connection_options
@format_option
def alter(name: str, max_attempts: str, target: Target, fmt: str | None) -> None:
    """Change a setting of queue NAME in its catalog entry; its routines read it on their
    next call (nothing is recreated)."""
    value = max_attempts_value(max_attempts)
    engine = target.engine()
    spec = dead.set_max_attempts(engine, catalog.get(engine, name), value)
    render.document({"name": spec.name, "max_attempts": spec.max_attempts}, fmt)


def _queue(target: Target, engine: Engine, name: str, command: str) -> QueueSpec:
    """The qadmin queue NAME; a table read through a profile (a library's, found as every
    other command finds it) is refused in one line (exit 2): it has no dead table."""
    spec = catalog.find(engine, name)
    if spec is not None:
        return catalog.get(engine, name)
    resolved = target.resolve(engine, name, {})  # NotFound (exit 5) when there is no table
    if resolved.spec is not None:
        return resolved.spec
    whose = f"a {resolved.profile.library} table" if resolved.profile.library else "a table"
    raise UsageError(
        f"{command}: {name} is {whose}, not a qadmin queue: dead letters are qadmin claim "
        "queues' (a library's failed rows are counted in inspect's size.states)"
    )


@click.command(name="dead")
@click.argument("name")
@count_option(100, "Show up to this many dead messages (first to die first).")
@connection_options
@format_option
def dead_list(name: str, count: int, target: Target, fmt: str | None) -> None:
    """Claim queues: list the messages that failed their last allowed attempt (NAME_dead)."""
    engine = target.engine()
    rows = dead.listing(engine, _queue(target, engine, name, "dead"), count)
    if not rows:
        render.note(f"qadmin: {name}: no dead messages")
    if render.resolve_format(fmt) in ("table", "plain"):  # JSON and CSV keep them whole
        rows = [{**r, **{k: _clip(r[k]) for k in CLIPPED}} for r in rows]
    render.rows(rows, DEAD_COLUMNS, fmt)


# Characters of an error a table or plain listing shows (a traceback can be 100 KB).
ERROR_SHOWN = 200
CLIPPED = ("first_error", "last_error")


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= ERROR_SHOWN:
        return text
    return f"{text[:ERROR_SHOWN]}... ({len(text):,} chars; --format json shows it whole)"


@click.command()
@click.argument("name")
@click.option("--id", "ids", type=MESSAGE_ID, multiple=True, help="A dead message to move back.")
@click.option("--all", "every", is_flag=True, help="Every dead message (up to 10,000 a run).")
@click.option("--dry-run", is_flag=True, help="Show what would move; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def redrive(
    name: str,
    ids: tuple[int, ...],
    every: bool,
    dry_run: bool,
    yes: bool,
    target: Target,
    fmt: str | None,
) -> None:
    """Claim queues: move dead messages back to queue NAME as waiting messages, in one
    transaction, each under a new id (so acks fenced with its old attempts find nothing),
    attempts reset, error history kept."""
    if bool(ids) == every:
        raise UsageError("redrive: give --id ID (repeatable) or --all")
    engine = target.engine()
    spec = _queue(target, engine, name, "redrive")
    wanted = None if every else list(ids)
    if not dry_run:
        dead.require(spec, "redrive")
        if not yes and sys.stdin.isatty():  # what the name typed will move, before asking
            render.note(_would_move(dead.redrive(engine, spec, wanted, dry_run=True)))
        confirm("redrive dead messages of", name, yes)
    done = dead.redrive(engine, spec, wanted, dry_run=dry_run)
    render.document(done.to_json_dict(), fmt)
    if done.moved and render.resolve_format(fmt) in ("table", "plain"):  # JSON has moved
        render.note(_new_ids(done.moved))


# Ids a confirmation lists before it says "and N more".
IDS_SHOWN = 20


def _new_ids(moved: list[dead.Moved]) -> str:
    """Which new id each message went back under (acks of the old ids find nothing)."""
    pairs = [f"{m.id} -> {m.new_id}" for m in moved[:IDS_SHOWN]]
    more = len(moved) - IDS_SHOWN
    rest = f" and {more:,} more" if more > 0 else ""
    return "qadmin: redrive: new ids " + ", ".join(pairs) + rest


def _would_move(plan: dead.Redriven) -> str:
    ids = [str(i) for i in plan.ids]
    if not ids:
        return f"qadmin: redrive: {plan.queue} has no dead messages: nothing would move"
    more = len(ids) - IDS_SHOWN
    shown = ", ".join(ids[:IDS_SHOWN]) + (f" and {more:,} more" if more > 0 else "")
    moving = f"{len(ids):,} dead message{'' if len(ids) == 1 else 's'}"
    return f"qadmin: redrive would move {moving} of {plan.queue}: {shown}"


COMMANDS = [alter, dead_list, redrive]
