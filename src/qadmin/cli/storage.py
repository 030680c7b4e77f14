"""Commands that change how a live queue is stored: watermark, resize, convert, maintain."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import click

from qadmin import catalog, render
from qadmin.catalog.reads import require_watermark
from qadmin.cli import progress
from qadmin.cli.options import (
    Millis,
    Target,
    confirm,
    connection_options,
    format_option,
    report_format_option,
)
from qadmin.diagnostics import run
from qadmin.engines.base import Engine
from qadmin.errors import (
    Incomplete,
    Interrupted,
    LockTimeout,
    NotFound,
    PermissionMissing,
    QadminError,
    UsageError,
    counted,
)
from qadmin.ops import convert as convert_ops
from qadmin.ops import maintain as maintain_ops
from qadmin.ops import resize as resize_ops
from qadmin.ops import watermark as watermark_ops
from qadmin.ops.convert_sql import ring_spec, staged_switch
from qadmin.profiles.model import Profile, Value


@click.command()
@click.argument("name")
@click.argument(
    "action", type=click.Choice(["show", "advance", "repair"]), default="show", required=False
)
@click.option(
    "--to",
    "to",
    type=click.IntRange(min=0, max=2**63 - 1),
    metavar="ID",
    help="advance: stop at ID.",
)
@click.option("--dry-run", is_flag=True, help="repair: show what it would do.")
@click.option("--yes", "-y", is_flag=True, help="repair: do it without asking (needed off a TTY).")
@connection_options
@format_option
def watermark(
    name: str,
    action: str,
    to: int | None,
    dry_run: bool,
    yes: bool,
    target: Target,
    fmt: str | None,
) -> None:
    """Show, advance or repair the watermark of a fifo or claim queue (safe from cron)."""
    if to is not None and action != "advance":
        raise UsageError("--to applies to 'watermark QUEUE advance'")
    if dry_run and action != "repair":
        raise UsageError("--dry-run applies to 'watermark QUEUE repair'")
    engine = target.engine()
    try:
        spec = run.catalog_bounded(engine, lambda: catalog.get(engine, name))
    except NotFound:
        _refuse_table(target, engine, name, "watermark")
        raise
    if action == "show":
        result = watermark_ops.show(engine, spec).to_json_dict()
    elif action == "advance":
        result = watermark_ops.advance(engine, spec, to).to_json_dict()
    elif dry_run:
        result = dict(watermark_ops.plan(engine, spec).to_json_dict(), dry_run=True)
    else:
        require_watermark(spec)  # before asking: a queue with none is that line, not --yes
        confirm("repair the watermark of", name, yes)
        result = dict(watermark_ops.repair(engine, spec).to_json_dict(), dry_run=False)
    render.document(result, fmt)


def _refuse_table(target: Target, engine: Engine, name: str, command: str) -> None:
    """A table qadmin did not create (a library's or a hand-built one) has no watermark:
    say so in one line, exit 2, rather than "no queue"."""
    try:
        resolved = target.resolve(engine, name, {})
    except NotFound:
        return
    profile = resolved.profile
    what = f"a {profile.library} table" if profile.library else "a table qadmin did not create"
    raise UsageError(
        f"{command}: {profile.table} is {what}; watermarks are qadmin's fifo and claim queues' only"
    )


def show_plan(plan: dict[str, Any], fmt: str | None) -> None:
    """A dry run's plan in every format: JSON as one document; else the summary, what would be
    refused, the numbered steps with the locks they take, then (table, plain) the SQL."""
    shown = render.resolve_format(fmt)
    if shown == "json":
        render.document(plan, fmt)
        return
    data = dict(
        plan,
        refused=[{"reason": r} for r in plan.get("refused") or []],
        steps=[{"step": n, "what": s} for n, s in enumerate(plan.get("steps") or [], 1)],
    )
    render.report(
        data, [("refused", "refused", ["reason"]), ("steps", "steps", ["step", "what"])], fmt
    )
    if shown != "csv" and plan.get("statements"):
        click.echo("")
        click.echo("-- the SQL, in order (:name values are bound when it runs)")
        for statement in plan["statements"]:
            click.echo(statement.rstrip() + ";")


@click.command()
@click.argument("name")
@click.option("--capacity", type=int, required=True, help="The ring's new number of slots.")
@click.option("--dry-run", is_flag=True, help="Show the steps, their locks and the SQL.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def resize(
    name: str, capacity: int, dry_run: bool, yes: bool, target: Target, fmt: str | None
) -> None:
    """Grow or shrink a ring while producers and consumers run (never below its backlog).

    --dry-run shows the plan in any format, and exits 2 when the messages would not fit."""
    engine = target.engine()
    spec = catalog.get(engine, name)
    if dry_run:
        planned = resize_ops.plan(engine, spec, capacity)
        show_plan(dict(planned.to_json_dict(), dry_run=True), fmt)
        if not planned.fits:
            raise UsageError(
                f"refusing to resize {name} to {capacity:,}: its {planned.messages:,} messages "
                "do not fit (pop some first, or choose a larger capacity)"
            )
        return
    confirm("resize", name, yes)
    with progress.bar(f"resizing {name}") as update:
        result = resize_ops.resize(engine, spec, capacity, update)
    render.document(dict(result.to_json_dict(), dry_run=False), fmt)


@click.command()
@click.argument("name")
@click.option("--to", "to", type=click.Choice(["ring"]), required=True, help="The new design.")
@click.option("--capacity", type=int, required=True, help="Slots of the new ring.")
@click.option("--id-column", metavar="COLUMN", help="Hand-built table: its id (default: its PK).")
@click.option(
    "--payload-column",
    "payload_columns",
    metavar="COLUMN",
    multiple=True,
    help="Hand-built table: the payload (repeat for several: stored as a JSON object).",
)
@click.option("--time-column", metavar="COLUMN", help="Hand-built table: its enqueue time.")
@click.option(
    "--state-column",
    metavar="COLUMN",
    help="Hand-built table: the column saying whether a row still waits (with --waiting).",
)
@click.option(
    "--waiting",
    metavar="VALUE",
    help="The --state-column value of waiting rows: only they move; the rest stay in the kept "
    "table.",
)
@click.option(
    "--library",
    metavar="NAME|none",
    help="Read the table as this library's (or, with none, as a plain table), as the "
    "read-only commands do.",
)
@click.option("--dry-run", is_flag=True, help="Show every step, the locks it takes, the SQL.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def convert(
    name: str,
    to: str,
    capacity: int,
    id_column: str | None,
    payload_columns: tuple[str, ...],
    time_column: str | None,
    state_column: str | None,
    waiting: Value | None,
    library: str | None,
    dry_run: bool,
    yes: bool,
    target: Target,
    fmt: str | None,
) -> None:
    """Turn a fifo/heap queue or a hand-built queue table into a ring, backlog and ids kept.

    Refused (exit 2, also by --dry-run) when it would break something: see docs/kinds.md."""
    engine = target.engine()
    profile = _convert_profile(target, engine, name, library)
    if profile is not None:
        name = profile.table
        state_column = state_column or profile.state_column
        if waiting is None and profile.pending:
            waiting = profile.pending[0]
        time_column = time_column or profile.time_column
        id_column = id_column or profile.id_column
    src = convert_ops.source(
        engine, name, id_column, payload_columns, time_column, state_column, waiting
    )
    if dry_run:
        plan = convert_ops.plan(engine, src, capacity)
        show_plan(dict(plan.to_json_dict(), dry_run=True), fmt)
        refusal = convert_ops.refused(plan)
        if refusal:
            raise UsageError(refusal)
        return
    ring_spec(src, capacity)  # a bad --capacity is refused before the question
    confirm("convert", name, yes, to=f"to a {to}")
    try:
        with progress.bar(f"converting {name}") as update:
            result = convert_ops.convert(engine, src, capacity, progress=update)
    except KeyboardInterrupt:
        raise Interrupted(_convert_stopped(engine, name)) from None
    render.document(dict(result.to_json_dict(), dry_run=False), fmt)


def _convert_stopped(engine: Engine, name: str) -> str:
    """What a stopped convert left: resumable steps (MariaDB), or one transaction."""
    if staged_switch(engine):
        return (
            f"convert of {name} stopped part way; its queue keeps working, and running the "
            "same convert command again resumes it (or finishes a switch already made)"
        )
    return (
        f"convert of {name} stopped: it is one transaction, so either it had committed or "
        "nothing changed ('qadmin list' shows its kind)"
    )


def _convert_profile(
    target: Target, engine: Engine, name: str, library: str | None = None
) -> Profile | None:
    """A declared [tables.NAME] or a library's table: convert moves only its waiting rows,
    so it takes the profile's state column and waiting value; a profile whose waiting rows
    are not one value of one column is refused (exit 2, one line)."""
    try:
        resolved = target.resolve(engine, name, {"library": library} if library else {})
    except NotFound:
        return None  # convert's own path says what is missing
    profile = resolved.profile
    if resolved.spec is not None:
        return None
    if profile.source == "plain":
        return None
    if profile.state_sql is not None or (profile.has_states and len(profile.pending) != 1):
        raise UsageError(
            f"convert: {name}: its waiting rows are not one value of one column "
            f"({profile.library or 'declared'} profile): convert moves only waiting rows"
        )
    if profile.schema is not None:
        engine.use_schema(profile.schema)
    return profile


@click.command()
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Show the actions, their locks and the SQL.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@click.option(
    "--allow-blocking",
    is_flag=True,
    help="Also run actions whose lock blocks the queue (SQLite VACUUM, a copying rebuild, "
    "VACUUM's truncation).",
)
@click.option(
    "--ddl-lock-timeout",
    type=Millis(low=1, high=60_000),
    metavar="MS",
    help="Longest wait for each action's lock (default 1000, at most --lock-timeout: more is "
    "refused); one not granted in time is skipped.",
)
@connection_options
@report_format_option
def maintain(
    name: str,
    dry_run: bool,
    yes: bool,
    allow_blocking: bool,
    ddl_lock_timeout: int | None,
    target: Target,
    fmt: str | None,
) -> None:
    """Propose, and with --yes run, the online maintenance a queue's table needs, each
    action's lock stated first (VACUUM, REINDEX CONCURRENTLY, an in-place rebuild...).

    Exit 8 when an action was skipped because its lock was not granted in time; 10 when one
    was refused as blocking, or a VACUUM kept dead rows a snapshot holds (named)."""
    engine = target.engine()
    lock_ms = engine.timeouts.lock_ms
    if ddl_lock_timeout is not None and ddl_lock_timeout > lock_ms:
        raise UsageError(
            f"--ddl-lock-timeout {ddl_lock_timeout} ms is above --lock-timeout {lock_ms} ms: "
            "raise --lock-timeout too, or wait less"
        )
    resolved = run.catalog_bounded(engine, lambda: target.resolve(engine, name, {}))
    profile = resolved.profile
    if profile.schema is not None:
        engine.use_schema(profile.schema)
    spec = resolved.spec
    in_place = spec.info.updates_in_place if spec else profile.has_claims
    proposed = maintain_ops.plan(
        engine, name, profile.table, updated_in_place=in_place, allow_blocking=allow_blocking
    )
    runnable = [a for a in proposed.actions if a.status == "proposed"]
    if dry_run or not runnable:
        # a run with nothing it may run is no dry run (a role refused every action: exit 7)
        _show_maintenance(
            proposed if dry_run else dataclasses.replace(proposed, dry_run=False), fmt
        )
        if not dry_run:
            _raise_lacking(name, proposed)
        if not dry_run and proposed.incomplete:
            _raise_incomplete(name, proposed)
        return
    maintain_ops.check_runnable(engine)
    if not yes and sys.stdin.isatty():
        click.echo(f"maintain {name} will run, in order:", err=True)
        for action in runnable:
            click.echo(f"  {action.action} {action.target}: {action.lock}", err=True)
    confirm("maintain", name, yes)
    done = maintain_ops.run(engine, proposed, min(ddl_lock_timeout or 1000, lock_ms), _starting)
    _show_maintenance(done, fmt)
    _raise_lacking(name, done)
    if done.failed:
        raise QadminError(f"maintain {name}: {done.failed[0].action} {done.failed[0].status}")
    if done.skipped:
        raise LockTimeout(
            f"maintain {name}: {counted(len(done.skipped), 'action')} skipped "
            f"({'its status says' if len(done.skipped) == 1 else 'their statuses say'} why); "
            "run it again later"
        )
    _raise_incomplete(name, done)


def _starting(action: maintain_ops.Action) -> None:
    """Each action's SQL and lock on stderr before it runs: a log shows what held what."""
    code = (
        "\n".join(x for x in s.splitlines() if not x.lstrip().startswith("--"))
        for s in action.statements
    )
    sql = "; ".join(" ".join(c.split()) for c in code)
    click.echo(f"running: {sql} ({action.lock})", err=True)


def _raise_lacking(name: str, done: maintain_ops.Plan) -> None:
    """An action a missing privilege refused or failed: exit 7, as every such refusal."""
    lacking = [a for a in done.actions if a.privilege is not None]
    if lacking:
        first = lacking[0]
        raise PermissionMissing(
            f"maintain {name}: {first.action} {first.status}", privilege=first.privilege
        )


def _raise_incomplete(name: str, plan: maintain_ops.Plan) -> None:
    """Exit 10 when work was left undone without a failure: refused, or dead rows kept."""
    if plan.incomplete:
        first = plan.incomplete[0]
        raise Incomplete(f"maintain {name}: {first.action} {first.status}")


ACTION_COLUMNS = ["action", "target", "lock", "status", "seconds", "why"]


def _show_maintenance(plan: maintain_ops.Plan, fmt: str | None) -> None:
    """The plan (or what ran) through the one print path; a dry run adds its SQL, each
    action's lock first."""
    data = plan.as_dict()
    shown = render.resolve_format(fmt)
    word = "proposed" if plan.dry_run else "ran"
    lead = [] if plan.actions else [f"maintain {plan.queue}: nothing to do"]
    render.report(
        data,
        [(f"actions ({word})", "actions", ACTION_COLUMNS)],
        fmt,
        lead=lead,
    )
    if shown != "json" and plan.dry_run and plan.actions:
        click.echo("")
        click.echo("-- the SQL, in order, each statement alone (outside a transaction)")
        for action in plan.actions:
            click.echo(f"-- {action.action} {action.target}: {action.status}; lock: {action.lock}")
            for statement in action.statements:
                click.echo(statement.rstrip() + ";")


COMMANDS = [watermark, resize, convert, maintain]
