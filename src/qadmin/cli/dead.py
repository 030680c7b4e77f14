"""Dead letters of claim queues: alter (max attempts), dead (list, one message's history),
discard (throw away), redrive (move back, or into another queue)."""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import click

from qadmin import catalog, render
from qadmin.cli.options import (
    MESSAGE_ID,
    Duration,
    Target,
    confirm,
    connection_options,
    count_option,
    format_option,
)
from qadmin.engines.base import Engine
from qadmin.errors import QadminError, UsageError, counted
from qadmin.kinds import QueueSpec
from qadmin.ops import dead, dead_jobs
from qadmin.profiles import query

F = TypeVar("F", bound=Callable[..., Any])

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
@click.option("--dry-run", is_flag=True, help="Show the setting before and after; change nothing.")
@connection_options
@format_option
def alter(name: str, max_attempts: str, dry_run: bool, target: Target, fmt: str | None) -> None:
    """Change a setting of queue NAME in its catalog entry; its routines read it on their
    next call (nothing is recreated)."""
    value = max_attempts_value(max_attempts)
    engine = target.engine()
    from qadmin.diagnostics import run

    before = run.catalog_bounded(engine, lambda: catalog.get(engine, name))
    dead.require(before, "alter --max-attempts")
    after = value if dry_run else dead.set_max_attempts(engine, before, value).max_attempts
    render.document(
        {
            "name": before.name,
            "max_attempts": after,
            "previous": before.max_attempts,
            "dry_run": dry_run,
        },
        fmt,
    )


def _not_ours(reader: query.Reader, name: str, command: str) -> UsageError:
    """A library's table given to a command only qadmin claim queues have (exit 2)."""
    return UsageError(
        f"{command}: {name} is a {reader.profile.library} table: {command} works on qadmin "
        "claim queues' dead letters (dead and redrive read a library's failed jobs)"
    )


def _either(target: Target, engine: Engine, name: str, command: str) -> QueueSpec | query.Reader:
    """The qadmin queue NAME, or a job-queue library's table (found as every other command
    finds it) to read its failed jobs; a table no library made is refused in one line (exit
    2): it has no dead letters qadmin knows of."""
    from qadmin.diagnostics import run

    spec = run.catalog_bounded(engine, lambda: catalog.find(engine, name))
    if spec is not None:
        return catalog.get(engine, name)
    # NotFound (exit 5) when there is no table
    resolved = run.catalog_bounded(engine, lambda: target.resolve(engine, name, {}))
    if resolved.spec is not None:
        return resolved.spec
    if resolved.profile.library and resolved.shape is not None:
        return query.Reader(engine, resolved.profile, resolved.shape)
    raise UsageError(
        f"{command}: {name} is a table, not a qadmin queue: dead letters are qadmin claim "
        "queues' (a library's failed rows are counted in inspect's size.states)"
    )


class Rate(click.ParamType):  # type: ignore[type-arg]
    """--rate: messages a second, as ``N/s`` (or ``N/m``, ``N/h``, or a bare number)."""

    name = "rate"
    _PER: ClassVar[dict[str, float]] = {"s": 1.0, "m": 60.0, "h": 3600.0}

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, dead.Pace):
            return value
        number, _, unit = str(value).strip().lower().partition("/")
        try:
            per_s = float(number) / self._PER[unit or "s"]
        except (ValueError, KeyError):
            self.fail(f"{value!r} is not a rate such as 50/s, 600/m or 10", param, ctx)
        if not (math.isfinite(per_s) and 0.001 <= per_s <= 1_000_000):
            self.fail(f"{value!r} is out of range (0.001/s to 1,000,000/s)", param, ctx)
        return dead.Pace(per_s)


def filter_options(func: F) -> F:
    """--older-than, --newer-than, --error: which dead messages dead, discard and redrive
    pick (the error it died with; a substring, case-insensitive, wildcards literal)."""
    func = click.option(
        "--error",
        "error",
        metavar="TEXT",
        help="Only those whose last error contains TEXT (case-insensitive; no wildcards).",
    )(func)
    func = click.option(
        "--newer-than",
        "newer_s",
        type=Duration(),
        metavar="AGE",
        help="Only those that died within the last AGE (30s, 5m, 2h, 7d).",
    )(func)
    return click.option(
        "--older-than",
        "older_s",
        type=Duration(),
        metavar="AGE",
        help="Only those that died more than AGE ago (30s, 5m, 2h, 7d).",
    )(func)


def _picked(older_s: int | None, newer_s: int | None, error: str | None) -> dead.Filter:
    if error is not None and (not error or any(ord(c) < 32 for c in error)):
        raise UsageError("--error takes a non-empty text without control characters")
    if older_s is not None and newer_s is not None and older_s >= newer_s:
        # died more than older_s ago and within newer_s: no time is both, so nothing matches
        raise UsageError(
            f"--older-than ({older_s}s) must be shorter than --newer-than ({newer_s}s): "
            "no message died in that range"
        )
    return dead.Filter(older_s=older_s, newer_s=newer_s, error=error)


@click.command(name="dead")
@click.argument("name")
@click.option(
    "--id", "message_id", type=MESSAGE_ID, help="One dead message: its whole error history."
)
@filter_options
@count_option(100, "Show up to this many dead messages (first to die first).")
@connection_options
@format_option
def dead_list(
    name: str,
    message_id: int | None,
    older_s: int | None,
    newer_s: int | None,
    error: str | None,
    count: int,
    target: Target,
    fmt: str | None,
) -> None:
    """Claim queues: list the messages that failed their last allowed attempt (NAME_dead),
    or (--id) one message's whole error history; a job-queue library's table: its failed
    jobs with their errors."""
    picked = _picked(older_s, newer_s, error)
    if message_id is not None and picked.given:
        raise UsageError("dead: --id shows one message; filters pick from the list")
    engine = target.engine()
    found = _either(target, engine, name, "dead")
    if isinstance(found, query.Reader):
        _dead_jobs(found, message_id, picked, count, fmt)
        return
    if message_id is not None:
        _show_history(dead.history(engine, found, message_id), fmt)
        return
    rows = dead.listing(engine, found, count, picked)
    if not rows:
        render.note(f"qadmin: {name}: no dead messages" + (" match" if picked.given else ""))
    render.rows(_clipped(rows, fmt), DEAD_COLUMNS, fmt)


HISTORY_COLUMNS = ["attempt", "at", "error"]
JOB_COLUMNS = ["id", "state", "attempts", "errors", "first_error", "last_error", "failed_at"]


def _dead_jobs(
    reader: query.Reader, job_id: int | None, picked: dead.Filter, count: int, fmt: str | None
) -> None:
    """A library's failed jobs, or (--id) one job's errors as the library recorded them."""
    if job_id is not None:
        one = dead_jobs.history(reader, job_id)
        if render.resolve_format(fmt) == "json":
            render.document(one.to_json_dict(), fmt)
            return
        render.note(
            f"qadmin: {reader.profile.label(one.id)}: {one.state} after "
            f"{one.attempts} attempts; {counted(len(one.errors), 'error')} recorded"
        )
        render.rows(one.errors, HISTORY_COLUMNS, fmt)
        return
    rows = dead_jobs.listing(reader, count, picked)
    if not rows:
        render.note(f"qadmin: {reader.profile.shown}: no failed jobs")
    render.rows(_clipped(rows, fmt), JOB_COLUMNS, fmt)


def _show_history(one: dead.DeadHistory, fmt: str | None) -> None:
    """JSON: the message as one document; otherwise its errors as rows, the rest in a note."""
    if render.resolve_format(fmt) == "json":
        render.document(one.to_json_dict(), fmt)
        return
    render.note(
        f"qadmin: dead message {one.id}: enqueued {one.enqueued_at}, died "
        f"{one.died_at} after {counted(one.attempts, 'attempt')}; "
        f"{counted(len(one.errors), 'error')} recorded"
    )
    render.rows(one.errors, HISTORY_COLUMNS, fmt)


# Characters of an error a table or plain listing shows (a traceback can be 100 KB).
ERROR_SHOWN = 200
CLIPPED = ("first_error", "last_error")


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= ERROR_SHOWN:
        return text
    return f"{text[:ERROR_SHOWN]}... ({len(text):,} chars; --format json shows it whole)"


Listed = TypeVar("Listed", dead.DeadMessage, dead_jobs.FailedJob)


def _clipped(rows: list[Listed], fmt: str | None) -> list[Listed]:
    """A table or plain listing clips long errors; JSON and CSV keep them whole."""
    if render.resolve_format(fmt) not in ("table", "plain"):
        return rows
    return [
        dataclasses.replace(r, first_error=_clip(r.first_error), last_error=_clip(r.last_error))
        for r in rows
    ]


def _selection(
    command: str, ids: tuple[int, ...], every: bool, picked: dead.Filter
) -> list[int] | None:
    """Exactly one way of choosing: --id (repeatable), filters, or --all."""
    if sum((bool(ids), every, picked.given)) != 1:
        raise UsageError(
            f"{command}: give --id ID (repeatable), a filter (--older-than, --newer-than, "
            "--error) or --all"
        )
    return list(ids) if ids else None


def _move_options(func: F) -> F:
    """What discard and redrive share: which ones, pacing, --dry-run and --yes."""
    for option in reversed(
        [
            click.option(
                "--id", "ids", type=MESSAGE_ID, multiple=True, help="A dead message (repeatable)."
            ),
            filter_options,
            click.option("--all", "every", is_flag=True, help="Every dead message."),
            click.option(
                "--rate",
                "pace",
                type=Rate(),
                metavar="N/s",
                help="At most N messages a second, in small batches (one transaction each).",
            ),
            click.option("--dry-run", is_flag=True, help="Show the count and ids; change nothing."),
            click.option(
                "--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY)."
            ),
        ]
    ):
        func = option(func)
    return func


@click.command()
@click.argument("name")
@_move_options
@connection_options
@format_option
def discard(**options: Any) -> None:
    """Claim queues: throw dead messages away (from NAME_dead only; the live queue is never
    touched), each exactly once even beside other discards and redrives."""
    _move(dead.DISCARD, to=None, **options)


@click.command()
@click.argument("name")
@_move_options
@click.option(
    "--to",
    "to",
    metavar="QUEUE",
    help="Move them into this other qadmin queue (same connection; payload only).",
)
@connection_options
@format_option
def redrive(**options: Any) -> None:
    """Claim queues: move dead messages back to queue NAME as waiting messages (or --to
    another queue), one transaction per batch, each under a new id (so acks fenced with its
    old attempts find nothing), attempts reset, error history kept. A library's table: its
    failed jobs given back as its own retry does, where that is one row's change."""
    _move(dead.REDRIVE, **options)


def _move(
    action: dead.Action,
    *,
    name: str,
    ids: tuple[int, ...],
    older_s: int | None,
    newer_s: int | None,
    error: str | None,
    every: bool,
    pace: dead.Pace | None,
    dry_run: bool,
    yes: bool,
    to: str | None,
    target: Target,
    fmt: str | None,
) -> None:
    """discard and redrive, one path: the selection checked before connecting, then the
    batched mover run with ``action`` (a redrive of a library's table: its own retry)."""
    picked = _picked(older_s, newer_s, error)
    wanted = _selection(action.name, ids, every, picked)
    engine = target.engine()
    found = _either(target, engine, name, action.name)
    if isinstance(found, query.Reader):
        if action is not dead.REDRIVE:
            raise _not_ours(found, name, action.name)
        _redrive_jobs(found, name, wanted, picked, pace, dry_run, yes, to, fmt)
        return
    spec = found
    dead.require(spec, action.name)
    other = catalog.get(engine, to) if to is not None else None

    def run(dry: bool) -> dead.Outcome:
        return dead.move(
            engine, spec, action, wanted, picked=picked, dry_run=dry, pace=pace, to=other
        )

    done = _act(action.name, name, run, dry_run, yes, fmt, f"to {to}" if other else "")
    if done.moved and render.resolve_format(fmt) in ("table", "plain"):  # JSON has them
        render.note(_new_ids(done.moved))


def _redrive_jobs(
    reader: query.Reader,
    name: str,
    wanted: list[int] | None,
    picked: dead.Filter,
    pace: dead.Pace | None,
    dry_run: bool,
    yes: bool,
    to: str | None,
    fmt: str | None,
) -> None:
    """A library's failed jobs given back as its own retry does, where that is one row's
    change (Profile.retry); elsewhere one line, exit 2."""
    if reader.profile.retry is None:
        raise UsageError(dead_jobs.why_no_retry(reader.profile))
    if to is not None:
        raise UsageError("redrive --to: a library's failed jobs go back into their own table")

    def run(dry: bool) -> dead.Outcome:
        return dead_jobs.redrive(reader, wanted, picked=picked, dry_run=dry, pace=pace)

    _act("redrive", name, run, dry_run, yes, fmt)


def _act(
    action: str,
    name: str,
    run: Callable[[bool], dead.Outcome],
    dry_run: bool,
    yes: bool,
    fmt: str | None,
    to: str = "",
) -> dead.Outcome:
    """Dry run, or ask (on a terminal, after listing what it would take) and do it."""
    if not dry_run:
        if not yes and sys.stdin.isatty():  # what the name typed will take, before asking
            render.note(_would(run(True)))
        confirm(f"{action} dead messages of", name, yes, to)
    try:
        done = run(dry_run)
    except QadminError as exc:  # stopped: what the batches before it committed, printed first
        if isinstance(exc.partial, dead.Outcome):
            render.document(exc.partial.to_json_dict(), fmt)
        raise
    render.document(done.to_json_dict(), fmt)
    if dry_run and render.resolve_format(fmt) in ("table", "plain"):
        render.note(_would(done, shown=None))  # a dry run names every id it would take
    return done


# Ids a confirmation lists before it says "and N more".
IDS_SHOWN = 20


def _new_ids(moved: list[dead.Moved]) -> str:
    """Which new id each message went back under (acks of the old ids find nothing)."""
    pairs = [f"{m.id} -> {m.new_id}" for m in moved[:IDS_SHOWN]]
    more = len(moved) - IDS_SHOWN
    rest = f" and {more:,} more" if more > 0 else ""
    return "qadmin: redrive: new ids " + ", ".join(pairs) + rest


def _would(plan: dead.Outcome, shown: int | None = IDS_SHOWN) -> str:
    action, verb = plan.action.name, plan.action.verb
    ids = [str(i) for i in plan.ids]
    if not ids:
        return f"qadmin: {action}: {plan.queue} has no dead messages to take: nothing would {verb}"
    more = len(ids) - (shown or len(ids))
    listed = ", ".join(ids[:shown]) + (f" and {more:,} more" if more > 0 else "")
    taking = f"{len(ids):,} dead message{'' if len(ids) == 1 else 's'}"
    return f"qadmin: {action} would {verb} {taking} of {plan.queue}: {listed}"


COMMANDS = [alter, dead_list, discard, redrive]
