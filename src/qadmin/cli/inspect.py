"""Diagnostics: inspect (everything), its parts as their own commands, requeue, and check."""

from __future__ import annotations

from typing import Any

import click

from qadmin import render, secrets
from qadmin.cli.options import Duration, Target, confirm, connection_options, format_option
from qadmin.errors import NotFound, QadminError
from qadmin.ops import catalog, diagnose
from qadmin.ops import check as check_ops
from qadmin.ops import repair as repair_ops

FINDINGS = ("findings", "findings", ["severity", "code", "message", "fix"])
HOLDERS = (
    "what holds cleanup back",
    "ghosts.holders",
    ["holder_kind", "holder", "role", "state", "xact_age_s", "xmin_age_xids", "detail"],
)
WAITS = (
    "lock waits",
    "locks.waits",
    [
        "waiter",
        "blocker",
        "lock",
        "wait_s",
        "blocker_state",
        "blocker_xact_age_s",
        "waiter_query",
        "blocker_query",
    ],
)
STALE = (
    "stale claims",
    "claims.stale",
    [
        "id",
        "processing_started_at",
        "claimed_for_s",
        "claimed_by",
        "claimed_session",
        "session_alive",
        "attempts",
    ],
)
NOTES = ("notes", "notes", ["note"])
INDEXES = (
    "indexes",
    "fragmentation.indexes",
    [
        "index_name",
        "index_bytes",
        "pages",
        "entries",
        "expected_pages",
        "bloat_pct",
        "leaf_pages",
        "fragmentation_pct",
    ],
)
MEASURED = (
    "indexes measured (--deep)",
    "fragmentation.indexes_measured",
    [
        "index_name",
        "pages",
        "leaf_pages",
        "avg_leaf_density",
        "free_pages_pct",
        "leaf_fragmentation",
        "unused_pct",
        "page_density_pct",
        "ghost_records",
    ],
)
NOT_COVERED = ("not covered", "not_covered", ["note"])
SECTIONS = [FINDINGS, HOLDERS, WAITS, STALE, INDEXES, MEASURED, NOTES]

stale_option = click.option(
    "--stale-after",
    "stale_after",
    type=Duration(),
    default=diagnose.DEFAULT_STALE_AFTER_S,
    show_default=True,
    metavar="DURATION",
    help="A claim older than this is stale (e.g. 90, 30s, 5m, 2h).",
)


deep_options = [
    click.option(
        "--deep",
        is_flag=True,
        help="Also measure (pgstatindex, pgstattuple_approx, dbstat, SAMPLED stats): "
        "reads the queue's pages.",
    ),
    click.option(
        "--max-pages",
        type=click.IntRange(1),
        default=diagnose.DEFAULT_MAX_PAGES,
        show_default=True,
        help="--deep refuses a table larger than this.",
    ),
]


def _deep(func: Any) -> Any:
    for option in reversed(deep_options):
        func = option(func)
    return func


def show(report: dict[str, Any], fmt: str | None) -> None:
    """The one way an inspect report is printed (inspect and demo)."""
    report = dict(report, not_covered=[{"note": n} for n in report.get("not_covered", [])])
    render.report(
        with_notes(report), [*SECTIONS, NOT_COVERED], fmt, title=f"qadmin inspect {report['queue']}"
    )


def with_notes(report: dict[str, Any]) -> dict[str, Any]:
    notes = [
        *report["ghosts"]["notes"],
        *report["locks"]["notes"],
        *report["claims"]["notes"],
        *report["fragmentation"]["notes"],
        *report.get("rates", {}).get("notes", []),
    ]
    if report["size"].get("note"):
        notes.append(report["size"]["note"])
    return dict(report, notes=[{"note": n} for n in notes])


def _creating(engine: Any, spec: Any) -> dict[str, Any]:
    """A queue whose create has not finished has nothing to measure yet: say so, and what
    exists of it."""
    made = {n for _, n in catalog.schema_objects(engine, spec.name)}
    return {
        "queue": spec.name,
        "kind": spec.kind.value,
        "capacity": spec.capacity,
        "state": spec.state,
        "objects": [f"{t} {n}" for t, n in catalog.owned(engine, spec) if n in made],
        "note": f"still being created, or its create was interrupted: run the same "
        f"'qadmin create' again to finish it, or 'qadmin drop {spec.name}'",
    }


def _load(target: Target, name: str) -> tuple[Any, Any]:
    engine = target.engine()
    return engine, catalog.get(engine, name)


@click.command()
@click.argument("name")
@stale_option
@click.option("--table", is_flag=True, help="NAME is a hand-built queue table, not a qadmin queue.")
@click.option(
    "--order-by",
    metavar="COLUMN",
    help="Hand-built table: its ordering key (default: its primary key).",
)
@click.option(
    "--time-column",
    metavar="COLUMN",
    help="Hand-built table: the enqueue-time column, for the oldest message's age.",
)
@click.option(
    "--sample",
    "sample_s",
    type=click.FloatRange(0, 60),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Read the counters twice this far apart for rates (0: no rates).",
)
@_deep
@connection_options
@format_option
def inspect(
    name: str,
    stale_after: int,
    sample_s: float,
    table: bool,
    order_by: str | None,
    time_column: str | None,
    deep: bool,
    max_pages: int,
    target: Target,
    fmt: str | None,
) -> None:
    """One screen on queue NAME: size, rates, ghosts and who holds them, locks, claims,
    index bloat, findings. A table qadmin did not create is inspected as a hand-built queue."""
    engine = target.engine()
    spec = None
    if not table:
        try:
            spec = catalog.get(engine, name, creating=True)
        except NotFound:
            if not engine.table_exists(name):
                raise
    if spec is not None and spec.state == catalog.CREATING:
        render.document(_creating(engine, spec), fmt)
        return
    if spec is None:
        report = diagnose.inspect_table(engine, name, order_by, time_column, deep, max_pages)
    else:
        report = diagnose.inspect(engine, spec, stale_after, sample_s, deep, max_pages)
    show(report, fmt)


@click.command()
@click.argument("name")
@_deep
@connection_options
@format_option
def fragmentation(name: str, deep: bool, max_pages: int, target: Target, fmt: str | None) -> None:
    """Index size and bloat of queue NAME (estimated; measured with --deep)."""
    engine, spec = _load(target, name)
    part = diagnose.fragmentation(engine, spec, deep, max_pages)
    data = dict(queue=name, fragmentation=part, notes=[{"note": n} for n in part["notes"]])
    render.report(data, [INDEXES, MEASURED, NOTES], fmt)


@click.command()
@click.argument("name")
@connection_options
@format_option
def size(name: str, target: Target, fmt: str | None) -> None:
    """Depth (estimate; exact when cheap), oldest message, bytes on disk."""
    engine, spec = _load(target, name)
    render.document(dict(queue=name, **diagnose.size(engine, spec)), fmt)


@click.command()
@click.argument("name")
@connection_options
@format_option
def ghosts(name: str, target: Target, fmt: str | None) -> None:
    """Dead / ghost records of queue NAME and the sessions that hold their cleanup back."""
    engine, spec = _load(target, name)
    part = diagnose.ghosts(engine, spec)
    data = dict(
        queue=name,
        **part["table"],
        holders=part["holders"],
        notes=[{"note": n} for n in part["notes"]],
    )
    render.report(data, [(HOLDERS[0], "holders", HOLDERS[2]), NOTES], fmt)


@click.command()
@click.argument("name")
@connection_options
@format_option
def locks(name: str, target: Target, fmt: str | None) -> None:
    """Lock waits on queue NAME: waiter, blocker, lock, wait time."""
    engine, spec = _load(target, name)
    part = diagnose.locks(engine, spec)
    if part.note:
        render.note(f"qadmin: {part.note}")
    render.rows(part.rows, WAITS[2], fmt)


@click.command()
@click.argument("name")
@stale_option
@connection_options
@format_option
def claims(name: str, stale_after: int, target: Target, fmt: str | None) -> None:
    """Claim queues: claimed messages older than --stale-after, and whether their consumer's
    session still exists."""
    engine, spec = _load(target, name)
    part = diagnose.claims(engine, spec, stale_after)
    for note in part["notes"]:
        render.note(f"qadmin: {note}")
    render.rows(part["stale"], STALE[2], fmt)


@click.command()
@click.argument("name")
@stale_option
@click.option("--dry-run", is_flag=True, help="List the claims that would be released.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def requeue(
    name: str, stale_after: int, dry_run: bool, yes: bool, target: Target, fmt: str | None
) -> None:
    """Release stale claims of queue NAME so another consumer gets the messages (at-least-once:
    a consumer that was only slow may still finish and find its ack refused)."""
    engine, spec = _load(target, name)
    if dry_run:
        stale = diagnose.claims(engine, spec, stale_after)["stale"]
        render.rows(stale, STALE[2], fmt)
        return
    confirm("requeue stale claims of", name, yes)
    released = diagnose.requeue(engine, spec, stale_after)
    render.rows([{"id": i} for i in released], ["id"], fmt)


def _threshold_options(func: Any) -> Any:
    for metric, unit, help_text in reversed(check_ops.METRICS):
        for level in ("crit", "warn"):
            func = click.option(
                f"--{level}-{metric.replace('_', '-')}",
                type=float,
                metavar=unit or "N",
                help=f"{'Critical' if level == 'crit' else 'Warning'} threshold: {help_text}.",
            )(func)
    return func


@click.command()
@click.argument("name")
@stale_option
@_threshold_options
@connection_options
@format_option
def check(
    name: str, stale_after: int, target: Target, fmt: str | None, **limits: float | None
) -> int:
    """Nagios-style check of queue NAME: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
    thresholds = [
        check_ops.Threshold(metric, unit, limits[f"warn_{metric}"], limits[f"crit_{metric}"])
        for metric, unit, _ in check_ops.METRICS
    ]
    try:
        engine, spec = _load(target, name)
        result = check_ops.evaluate(diagnose.inspect(engine, spec, stale_after), thresholds)
    except QadminError as exc:
        result = {
            "status": "UNKNOWN",
            "code": check_ops.UNKNOWN,
            "queue": name,
            "line": f"QADMIN UNKNOWN - {name}: {secrets.scrub(' '.join(str(exc).split()))}",
            "metrics": {},
            "problems": [secrets.scrub(str(exc))],
        }
    if render.resolve_format(fmt) == "json":
        render.document(result, "json")
    else:
        click.echo(result["line"])
    return int(result["code"])


@click.command()
@click.argument("name")
@click.option(
    "--older-than",
    "older_than",
    type=Duration(),
    default=repair_ops.DEFAULT_OLDER_THAN_S,
    show_default=True,
    metavar="DURATION",
    help="A parked number or a gap this old is taken as left by a dead client.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be parked, voided or skipped.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def repair(
    name: str, older_than: int, dry_run: bool, yes: bool, target: Target, fmt: str | None
) -> None:
    """Rings: get a ring stalled by a dead pusher or popper moving again (safe from cron)."""
    engine, spec = _load(target, name)
    if dry_run:
        result = dict(repair_ops.plan(engine, spec, older_than), dry_run=True)
    else:
        confirm("repair", name, yes)
        result = dict(repair_ops.repair(engine, spec, older_than), dry_run=False)
    if render.resolve_format(fmt) != "json":
        result = {k: _listed(v) for k, v in result.items()}
    render.document(result, fmt)


def _listed(value: Any) -> Any:
    """Lists as one cell for the table and plain formats (JSON keeps them as lists)."""
    if not isinstance(value, list):
        return value
    return ", ".join(f"{v['id']} {v['action']}" if isinstance(v, dict) else str(v) for v in value)


COMMANDS = [inspect, size, ghosts, fragmentation, locks, claims, requeue, repair, check]
