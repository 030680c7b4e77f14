"""Diagnostics: inspect (everything), its parts as their own commands, requeue, and check."""

from __future__ import annotations

from typing import Any

import click

from qadmin import render
from qadmin.cli.options import Duration, Target, confirm, connection_options, format_option
from qadmin.cli.thresholds import limits, threshold_options
from qadmin.diagnostics import check as check_ops
from qadmin.diagnostics import registry, run
from qadmin.diagnostics.entries import claims as claims_part
from qadmin.diagnostics.entries import fragmentation as fragmentation_part
from qadmin.diagnostics.entries import ghosts as ghosts_part
from qadmin.diagnostics.entries import locks as locks_part
from qadmin.diagnostics.entries import size as size_part
from qadmin.diagnostics.model import (
    DEFAULT_MAX_PAGES,
    DEFAULT_STALE_AFTER_S,
    Context,
    InspectReport,
    Options,
)
from qadmin.errors import NotFound, QadminError, counted
from qadmin.ops import catalog
from qadmin.ops import repair as repair_ops

Table = tuple[str, str, list[str]]
FINDINGS: Table = ("findings", "findings", ["severity", "code", "message", "fix"])
NOTES: Table = ("notes", "notes", ["note"])
NOT_COVERED: Table = ("not covered", "not_covered", ["note"])


def _section(name: str, index: int = 0) -> Table:
    section = registry.entry(name).sections[index]
    return (section.title, section.path, list(section.columns))


stale_option = click.option(
    "--stale-after",
    "stale_after",
    type=Duration(),
    default=DEFAULT_STALE_AFTER_S,
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
        default=DEFAULT_MAX_PAGES,
        show_default=True,
        help="--deep refuses a table larger than this.",
    ),
]


def _deep(func: Any) -> Any:
    for option in reversed(deep_options):
        func = option(func)
    return func


sample_option = click.option(
    "--sample",
    "sample_s",
    type=Duration(fractional=True, high=60),
    default=1.0,
    show_default=True,
    metavar="DURATION",
    help="Read the counters twice this far apart for rates and backlog growth (0: no rates).",
)


# Keys a terminal's summary leaves out: the headline says them, the findings judge them (the
# maintenance facts), or they only tell a script whether a part could be read (a note says so
# when it could not).
HIDDEN_ON_TERMINAL = (
    "queue",
    "schema",
    "engine",
    "dialect",
    "kind",
    "status",
    "maintenance",
)


def show(report: InspectReport, fmt: str | None) -> None:
    """The one way an inspect report is printed (inspect and demo): a status line and the
    findings first, as a status tool reads, then the figures and the sections."""
    verdict = check_ops.evaluate(report)
    data = report.to_json_dict()
    data["status"] = verdict.status
    data["not_covered"] = [{"note": n} for n in report.not_covered]
    data["notes"] = [{"note": n} for n in report.notes()]
    raised = {f.code for f in report.findings}
    terminal = render.resolve_format(fmt) == "table"
    sections = [
        (s.title, s.path, list(s.columns))
        for s in registry.sections()
        if not (terminal and s.shown_with and raised.isdisjoint(s.shown_with))
    ]
    render.report(
        data,
        [FINDINGS, *sections, NOTES, NOT_COVERED],
        fmt,
        title=f"qadmin inspect {report.queue}",
        lead=_headline(data, verdict),
        first=1,
        hidden=[*HIDDEN_ON_TERMINAL, *_read_flags(data)],
    )


def _headline(data: dict[str, Any], verdict: check_ops.CheckResult) -> list[str]:
    """Two lines: what was inspected, and its status with the figures a DBA asks first."""
    kind = f"{data['kind']} queue" if data.get("kind") else "table"
    what = f"qadmin inspect {data['queue']}: {kind} in {data['schema']} on {data['engine']}"
    findings = data.get("findings") or []
    counts = [
        counted(sum(1 for f in findings if f["severity"] == level), f"{level} finding")
        for level in ("critical", "warning", "info")
        if any(f["severity"] == level for f in findings)
    ]
    size = data.get("size") or {}
    figures = [f"depth {size.get('depth')}" + ("" if size.get("depth_exact") else " (estimate)")]
    if size.get("oldest_age_s") is not None:
        figures.append(f"oldest {size['oldest_age_s']} s")
    rates = data.get("rates") or {}
    if rates.get("enqueue_per_s") is not None:
        figures.append(f"in {rates['enqueue_per_s']}/s, out {rates.get('dequeue_per_s')}/s")
    found = ", ".join([*verdict.breaches, *counts]) or "no findings"
    return [what, f"{verdict.status}: {found}; {', '.join(figures)}"]


def _read_flags(data: dict[str, Any]) -> list[str]:
    """The dotted keys of the ``read`` / ``horizon_read`` flags (scripts' business)."""
    return [
        f"{part}.{key}"
        for part, value in data.items()
        if isinstance(value, dict)
        for key in value
        if key in ("read", "horizon_read")
    ]


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
@sample_option
@_deep
@threshold_options
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
    **given: Any,
) -> None:
    """One screen on queue NAME: size, rates, ghosts and who holds them, locks, claims,
    index bloat, findings. A table qadmin did not create is inspected as a hand-built queue.

    Each part waits at most a second for a lock: during a lock incident a blocked part is a
    note and a part_blocked finding naming the blocking session, and the rest still prints.
    The --warn-*/--crit-* limits are check's: the findings use them too."""
    options = Options(stale_after, sample_s, deep, max_pages, limits(given))
    options.order_by, options.time_column = order_by, time_column
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
        show(run.inspect_table(engine, name, options), fmt)
    else:
        show(run.inspect(engine, spec, options), fmt)


@click.command()
@click.argument("name")
@_deep
@connection_options
@format_option
def fragmentation(name: str, deep: bool, max_pages: int, target: Target, fmt: str | None) -> None:
    """Index size and bloat of queue NAME (estimated; measured with --deep)."""
    engine, spec = _load(target, name)
    part = fragmentation_part.measure(engine, spec.name, deep, max_pages)
    data = dict(
        queue=name, fragmentation=part.to_json_dict(), notes=[{"note": n} for n in part.notes]
    )
    render.report(data, [_section("fragmentation"), _section("fragmentation", 1), NOTES], fmt)


@click.command()
@click.argument("name")
@connection_options
@format_option
def size(name: str, target: Target, fmt: str | None) -> None:
    """Depth (estimate; exact when cheap), oldest message, bytes on disk."""
    engine, spec = _load(target, name)
    render.document(dict(queue=name, **size_part.measure(engine, spec).to_json_dict()), fmt)


@click.command()
@click.argument("name")
@connection_options
@format_option
def ghosts(name: str, target: Target, fmt: str | None) -> None:
    """Dead / ghost records of queue NAME and the sessions that hold their cleanup back."""
    engine, spec = _load(target, name)
    part = ghosts_part.collect(Context(engine, spec.name, spec, Options()))
    data = dict(
        queue=name,
        **part.table,
        holders=part.holders,
        notes=[{"note": n} for n in part.notes],
    )
    title, _, columns = _section("ghosts")
    render.report(data, [(title, "holders", columns), NOTES], fmt)


@click.command()
@click.argument("name")
@connection_options
@format_option
def locks(name: str, target: Target, fmt: str | None) -> None:
    """Lock waits on queue NAME: waiter, blocker, lock, wait time."""
    engine, spec = _load(target, name)
    part = locks_part.collect(Context(engine, spec.name, spec, Options()))
    for note in part.notes:
        render.note(f"qadmin: {note}")
    render.rows(part.waits, _section("locks")[2], fmt)


@click.command()
@click.argument("name")
@stale_option
@connection_options
@format_option
def claims(name: str, stale_after: int, target: Target, fmt: str | None) -> None:
    """Claim queues: claimed messages older than --stale-after, and whether their consumer's
    session still exists."""
    engine, spec = _load(target, name)
    spec.require("claims", "claims")
    part = claims_part.measure(engine, spec, stale_after)
    for note in part.notes:
        render.note(f"qadmin: {note}")
    if not part.stale and part.claimed is not None:
        render.note(f"qadmin: no claim of {name} is older than {stale_after} s")
    render.rows(part.stale, _section("claims")[2], fmt)


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
    spec.require("claims", "requeue")
    if dry_run:
        stale = claims_part.measure(engine, spec, stale_after).stale
        render.rows(stale, _section("claims")[2], fmt)
        return
    confirm("requeue stale claims of", name, yes)
    released = claims_part.requeue(engine, spec, stale_after)
    render.rows([{"id": i} for i in released], ["id"], fmt)


class PluginCommand(click.Command):
    """A monitoring plugin's command: its own usage errors (a bad value, an unknown option, a
    missing NAME) print one UNKNOWN line and exit 3, as Nagios expects, not click's 2."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.Exit:
            raise
        except click.ClickException as exc:
            click.echo(f"QADMIN UNKNOWN - usage: {' '.join(exc.format_message().split())}")
            raise click.exceptions.Exit(check_ops.UNKNOWN) from None


@click.command(cls=PluginCommand)
@click.argument("name")
@stale_option
@sample_option
@threshold_options
@connection_options
@format_option
def check(
    name: str, stale_after: int, sample_s: float, target: Target, fmt: str | None, **given: Any
) -> int:
    """Nagios-style check of queue NAME: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.

    The status is the worst of the thresholds given and of every warning (1) or critical (2)
    finding inspect would show. A threshold this engine has no figure for (dead_ratio on
    MariaDB, snapshot_age on SQLite) is named in the line and left out of the performance
    data; UNKNOWN when no threshold given could be judged and nothing else is wrong. Usage
    errors (a bad value, warn above crit, an unknown option) exit 3 as well."""
    try:
        options = Options(stale_after, sample_s, limits=limits(given))
        engine, spec = _load(target, name)
        result = check_ops.evaluate(run.inspect(engine, spec, options))
    except QadminError as exc:
        result = check_ops.unknown(name, str(exc))
    if render.resolve_format(fmt) == "json":
        render.document(result.to_json_dict(), "json")
    else:
        click.echo(result.line)
    return result.code


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
