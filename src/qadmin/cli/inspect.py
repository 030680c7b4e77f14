"""Diagnostics: inspect (everything), its parts as their own commands, requeue, and check."""

from __future__ import annotations

import sys
from typing import Any

import click
from click.core import ParameterSource

from qadmin import catalog, render
from qadmin.cli import output
from qadmin.cli.options import (
    Duration,
    Target,
    confirm,
    connection_options,
    format_option,
    plugin_format_option,
    profile_options,
    report_format_option,
)
from qadmin.cli.thresholds import limits, threshold_options
from qadmin.diagnostics import check as check_ops
from qadmin.diagnostics import registry, run
from qadmin.diagnostics.entries import claims as claims_part
from qadmin.diagnostics.entries import fragmentation as fragmentation_part
from qadmin.diagnostics.entries import ghosts as ghosts_part
from qadmin.diagnostics.entries import locks as locks_part
from qadmin.diagnostics.entries import plan as explain_ops
from qadmin.diagnostics.entries import size as size_part
from qadmin.diagnostics.model import (
    DEFAULT_MAX_PAGES,
    DEFAULT_STALE_AFTER_S,
    InspectReport,
    Options,
)
from qadmin.engines.base import Engine
from qadmin.errors import EXIT_ERROR, QadminError, UsageError, counted
from qadmin.ops import repair as repair_ops
from qadmin.profiles.resolve import Resolved

Table = tuple[str, str, list[str]]
FINDINGS: Table = ("findings", "findings", ["severity", "code", "message", "fix"])
NOTES: Table = ("notes", "notes", ["note"])
NOT_COVERED: Table = ("not covered", "not_covered", ["note"])


def _section(name: str, index: int = 0) -> Table:
    section = registry.entry(name).sections[index]
    return (section.title, section.path, list(section.columns))


# requeue refuses a shorter --stale-after: a claim taken a moment ago is not stale.
REQUEUE_MIN_STALE_S = 1

stale_option = click.option(
    "--stale-after",
    "stale_after",
    type=Duration(),
    default=DEFAULT_STALE_AFTER_S,
    show_default=True,
    metavar="DURATION",
    help="A claim older than this is stale (e.g. 90, 30s, 5m, 2h).",
)
# requeue's: 1 s at least, as releasing claims younger than that releases every claim.
requeue_stale_option = click.option(
    "--stale-after",
    "stale_after",
    type=Duration(low=REQUEUE_MIN_STALE_S, why_low="requeue would release every claim in progress"),
    default=DEFAULT_STALE_AFTER_S,
    show_default=True,
    metavar="DURATION",
    help="A claim older than this is stale (e.g. 90, 30s, 5m, 2h; 1 s at least).",
)


deep_options = [
    click.option(
        "--deep",
        is_flag=True,
        help="Also measure (pgstatindex, pgstattuple_approx, dbstat, SAMPLED stats) and "
        "explain the dequeue: reads the queue's pages.",
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


# What a terminal's first screen says of the rates while their sample runs (headline and
# summary), replaced by the figures when it is over.
SAMPLING = "sampling…"

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
    "explain.queue",
    "explain.engine",
    "explain.statistics",
)


def show(report: InspectReport, fmt: str | None, target: Target | None = None) -> None:
    """The one way an inspect report is printed (inspect and demo): a status line and the
    findings first, as a status tool reads, then the figures and the sections. ``target``:
    the fixes that are qadmin commands name its connection, so they run as printed."""
    data, sections, shape = _laid_out(report, render.resolve_format(fmt) == "table", target)
    render.report(data, sections, fmt, title=f"qadmin inspect {report.queue}", **shape)


def _laid_out(
    report: InspectReport,
    terminal: bool,
    target: Target | None,
    sampling: float | None = None,
) -> tuple[dict[str, Any], list[Table], dict[str, Any]]:
    """A report's data, its sections and how a terminal shows it (lead, first, hidden);
    ``sampling``: the rate sample is still running, over that many seconds."""
    verdict = check_ops.evaluate(report)
    data = report.to_json_dict()
    if target is not None:
        declared = report.profile is not None and report.profile.source == "declared"
        for finding in data.get("findings") or []:
            finding["fix"] = target.runnable(finding["fix"], declared)
    data["status"] = verdict.status
    data["not_covered"] = [{"note": n} for n in report.not_covered]
    data["notes"] = [{"note": n} for n in report.notes()]
    if sampling is not None:  # the first screen: the rates are still being sampled
        data["rates"] = {SAMPLING: f"over {render.figure(sampling)} s"}
    raised = {f.code for f in report.findings}
    sections = [
        (s.title, s.path, list(s.columns))
        for s in registry.sections()
        if not (terminal and s.shown_with and raised.isdisjoint(s.shown_with))
    ]
    shape = dict(
        lead=_headline(data, verdict),
        first=1,
        hidden=[*HIDDEN_ON_TERMINAL, *_read_flags(data), *_serving(data)],
    )
    return data, [FINDINGS, *sections, NOTES, NOT_COVERED], shape


def _live(engine: Engine, resolved: Resolved, options: Options, target: Target) -> InspectReport:
    """inspect on a terminal: every part but the rates' second read, shown at once (the rates
    ``sampling…``), then the full report once the sample is over. The first screen is drawn
    by rich's Live, transient: it is cleared (cursor shown again) before the report is
    printed, and on Ctrl-C before qadmin's one line."""
    report, finish = run.inspect_staged(engine, resolved, options)
    if finish is None:
        return report
    from rich.live import Live

    data, sections, shape = _laid_out(report, True, target, options.sample_s)
    screen = render.report_view(data, sections, **shape)
    live = Live(screen, console=render.console(), auto_refresh=False, transient=True)
    try:
        # started here, not by ``with``: a Ctrl-C while the screen is being drawn (Live's
        # start stops itself on an Exception only) must still show the cursor and clear it
        live.start(refresh=True)
        return finish()
    finally:
        live.stop()


def _serving(data: dict[str, Any]) -> list[str]:
    """A queue that is not paused needs no pause line on a screen (scripts still get it)."""
    pause = data.get("pause")
    return ["pause"] if isinstance(pause, dict) and not pause.get("paused") else []


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
    depth = size.get("depth")
    if depth is None:
        figures = ["depth not counted (see notes)"]
    else:
        quality = size.get("depth_quality") or ("exact" if size.get("depth_exact") else "")
        at_least = "at least " if quality == "floor" else ""
        exact = "" if quality in ("exact", "floor") else " (estimate)"
        figures = [f"depth {at_least}{render.figure(depth)}{exact}"]
    if size.get("oldest_age_s") is not None:
        floor = size.get("oldest_at_least") or size.get("oldest_quality") == "floor"
        at_least = "at least " if floor else ""
        figures.append(f"oldest {at_least}{render.figure(size['oldest_age_s'])} s")
    if "claimed_quality" in size and size.get("states") is None:  # a claim queue
        listed = data.get("claims") or {}
        claimed, quality = claims_part.best_claimed(
            (size.get("claimed"), size.get("claimed_quality")),
            (listed.get("claimed"), "floor" if listed.get("claimed_note") else "exact"),
        )
        if claimed is not None:
            more = " or more" if quality == "floor" else ""
            figures.append(f"{render.figure(claimed)}{more} claimed")
    rates = data.get("rates") or {}
    if SAMPLING in rates:
        figures.append(f"rates {SAMPLING}")
    elif rates.get("enqueue_per_s") is not None:
        into, out = (render.figure(rates.get(k)) for k in ("enqueue_per_s", "dequeue_per_s"))
        figures.append(f"in {into}/s, out {out}/s")
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
    return engine, run.catalog_bounded(engine, lambda: catalog.get(engine, name))


def _resolve(target: Target, name: str, profile: dict[str, Any]) -> tuple[Engine, Resolved]:
    """NAME as a qadmin queue, a declared profile or an existing table (docs/profiles.md)."""
    engine = target.engine()
    resolved = run.catalog_bounded(engine, lambda: target.resolve(engine, name, profile))
    if resolved.profile.schema is not None:
        engine.use_schema(resolved.profile.schema)
    return engine, resolved


def _claims_of(resolved: Resolved, command: str) -> None:
    """Refuse (exit 2, one line) a claims command on something that has no claims."""
    if resolved.spec is not None:
        resolved.spec.require("claims", command)
    elif not resolved.profile.has_claims and resolved.profile.library:
        raise UsageError(
            f"{command}: {resolved.profile.name}: {resolved.profile.library} keeps no claims "
            "in its table (what a worker has taken is not recorded there)"
        )
    elif not resolved.profile.has_claims:
        raise UsageError(
            f"{command}: {resolved.profile.name} has no claims qadmin can see: give "
            "--state-column with --claimed VALUE, or --claimed-at-column"
        )


@click.command()
@click.argument("name")
@stale_option
@click.option(
    "--table", is_flag=True, help="NAME is a table, not a qadmin queue or a declared profile."
)
@sample_option
@_deep
@threshold_options
@profile_options
@connection_options
@report_format_option
def inspect(
    name: str,
    stale_after: int,
    sample_s: float,
    table: bool,
    deep: bool,
    max_pages: int,
    profile: dict[str, Any],
    target: Target,
    fmt: str | None,
    **given: Any,
) -> None:
    """One screen on queue NAME: size, rates, ghosts and who holds them, locks, claims,
    index bloat, findings. NAME may also be a table qadmin did not create: a declared
    [tables.NAME] profile, a job-queue library's table, or any table (docs/profiles.md).

    Each part waits at most a second for a lock: during a lock incident a blocked part is a
    note and a part_blocked finding naming the blocking session, and the rest still prints.
    The --warn-*/--crit-* limits are check's: the findings use them too."""
    options = Options(stale_after, sample_s, deep, max_pages, limits(given))
    engine = target.engine()
    resolved = run.catalog_bounded(
        engine,
        lambda: target.resolve(engine, name, profile, table_only=table, creating=True),
    )
    spec = resolved.spec
    if spec is not None and spec.state == catalog.CREATING:
        render.document(_creating(engine, spec), fmt)
        return
    if sample_s > 0 and render.resolve_format(fmt) == "table" and sys.stdout.isatty():
        show(_live(engine, resolved, options, target), fmt, target)
        return
    show(run.inspect_resolved(engine, resolved, options), fmt, target)


@click.command()
@click.argument("name")
@_deep
@profile_options
@connection_options
@report_format_option
def fragmentation(
    name: str,
    deep: bool,
    max_pages: int,
    profile: dict[str, Any],
    target: Target,
    fmt: str | None,
) -> None:
    """Index size and bloat of queue NAME (estimated; measured with --deep)."""
    engine, resolved = _resolve(target, name, profile)
    ctx = run.context(engine, resolved, Options())
    part = run.bounded(
        ctx, lambda: fragmentation_part.measure(engine, resolved.profile.table, deep, max_pages)
    )
    data = dict(
        queue=name, fragmentation=part.to_json_dict(), notes=[{"note": n} for n in part.notes]
    )
    render.report(data, [_section("fragmentation"), _section("fragmentation", 1), NOTES], fmt)


@click.command()
@click.argument("name")
@profile_options
@connection_options
@format_option
def size(name: str, profile: dict[str, Any], target: Target, fmt: str | None) -> None:
    """Depth (estimate; exact when cheap), oldest message, bytes on disk; a profiled table's
    waiting rows and each state's rows."""
    engine, resolved = _resolve(target, name, profile)
    ctx = run.context(engine, resolved, Options())
    spec = resolved.spec
    if spec is not None:
        part = run.bounded(ctx, lambda: size_part.measure(engine, spec))
    else:
        part = run.bounded(ctx, lambda: size_part.profiled(ctx))
    if spec is not None and spec.info.claims and part.claimed is None:
        # not counted (dead entries in the claimed index's way): the claims' bounded listing
        # gives the figure inspect and tail show, a floor
        listed = run.bounded(ctx, lambda: claims_part.measure(engine, spec, 0))
        part.claimed, quality = listed.claimed, listed.claimed_quality
        part.claimed_at_least = quality == "floor"
    render.document(dict(queue=resolved.profile.shown, **part.to_json_dict()), fmt)


@click.command()
@click.argument("name")
@profile_options
@connection_options
@report_format_option
def ghosts(name: str, profile: dict[str, Any], target: Target, fmt: str | None) -> None:
    """Dead / ghost records of queue NAME and the sessions that hold their cleanup back."""
    engine, resolved = _resolve(target, name, profile)
    ctx = run.context(engine, resolved, Options())
    part = run.bounded(ctx, lambda: ghosts_part.collect(ctx))
    data = dict(
        queue=name,
        **part.table.as_dict(),
        holders=[h.as_dict() for h in part.holders],
        notes=[{"note": n} for n in part.notes],
    )
    title, _, columns = _section("ghosts")
    render.report(data, [(title, "holders", columns), NOTES], fmt)


@click.command()
@click.argument("name")
@profile_options
@connection_options
@format_option
def locks(name: str, profile: dict[str, Any], target: Target, fmt: str | None) -> None:
    """Lock waits on queue NAME: waiter, blocker, lock, wait time."""
    engine, resolved = _resolve(target, name, profile)
    ctx = run.context(engine, resolved, Options())
    part = run.bounded(ctx, lambda: locks_part.collect(ctx))
    for note in part.notes:
        render.note(f"qadmin: {note}")
    render.rows(part.waits, _section("locks")[2], fmt)


def _stale_claims(engine: Engine, resolved: Resolved, stale_after: int) -> claims_part.Claims:
    _claims_of(resolved, "claims")
    ctx = run.context(engine, resolved, Options(stale_after_s=stale_after))
    return run.bounded(ctx, lambda: claims_part.collect(ctx))


@click.command()
@click.argument("name")
@stale_option
@profile_options
@connection_options
@format_option
def claims(
    name: str, stale_after: int, profile: dict[str, Any], target: Target, fmt: str | None
) -> None:
    """Claimed messages older than --stale-after, and whether their consumer's session (or
    worker's heartbeat) is still alive: claim queues and profiled tables with claims."""
    engine, resolved = _resolve(target, name, profile)
    part = _stale_claims(engine, resolved, stale_after)
    for note in part.notes:
        render.note(f"qadmin: {note}")
    if not part.stale and not part.undated and part.claimed is not None:
        render.note(f"qadmin: no claim of {name} is older than {stale_after} s")
    live = claims_part.live(part.stale)
    if live and (resolved.spec is None or claims_part.guards_sessions(engine, resolved.spec)):
        render.note(
            f"qadmin: {len(live)} of these claims are held by sessions still connected "
            "(session_alive yes: a slow consumer, or a pooled connection whose worker lost "
            "the claim): requeue releases them too (--skip-live leaves them)"
        )
    if part.undated:
        render.note(
            f"qadmin: {len(part.undated)} claims of {name} have no claim time and no worker "
            "heartbeat: their age is unknown (listed with claimed_for_s empty)"
        )
    render.rows([*part.stale, *part.undated], _columns(resolved), fmt)
    if (part.claimed is None and part.notes) or part.undated:
        # Not read (no index fits a big table), or not datable: an empty or short list must
        # not read as "no stale claims".
        raise click.exceptions.Exit(EXIT_ERROR)


def _columns(resolved: Resolved) -> list[str]:
    """The claims table's columns: qadmin's own, and a profiled table's liveness and error."""
    columns = _section("claims")[2]
    if resolved.spec is not None:
        return columns
    return [*columns, "state", "worker_alive", "heartbeat_age_s", "error"]


@click.command()
@click.argument("name")
@requeue_stale_option
@click.option("--dry-run", is_flag=True, help="List the claims that would be released.")
@click.option(
    "--skip-live",
    is_flag=True,
    help="Leave stale claims whose consumer's session is still connected (PostgreSQL, "
    "MariaDB/MySQL): for consumers that hold their own connection while they work.",
)
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@profile_options
@connection_options
@format_option
def requeue(
    name: str,
    stale_after: int,
    dry_run: bool,
    skip_live: bool,
    yes: bool,
    profile: dict[str, Any],
    target: Target,
    fmt: str | None,
) -> None:
    """Release stale claims of queue NAME so another consumer gets the messages (at-least-once:
    a consumer that was only slow may still finish and find its ack refused). A profiled
    table is released only as its profile says (state back, claim columns cleared), and only
    rows still claimed and still stale when the UPDATE runs. A claim whose session is still
    connected is released too (a pooled connection outlives its worker), unless
    --skip-live."""
    engine, resolved = _resolve(target, name, profile)
    spec = resolved.spec
    _claims_of(resolved, "requeue")
    if spec is None and resolved.profile.release is None:
        raise UsageError(f"requeue: {name}: {claims_part.why_no_release(resolved.profile)}")
    # --skip-live keeps the claims of sessions still connected where the engine can tell:
    # counted as skipped, listed by --dry-run.
    guarded = skip_live and (spec is None or claims_part.guards_sessions(engine, spec))
    if dry_run:
        read = _stale_claims(engine, resolved, stale_after)
        stale = read.stale
        kept = claims_part.live(stale) if guarded else []
        shown = stale if spec is not None else claims_part.releasable(stale, skip_live)
        columns = _columns(resolved)
        if spec is not None:  # a stale claim at its last attempt goes to the dead table
            shown = [
                {**c, "outcome": claims_part.outcome(spec, c.get("attempts"), c in kept)}
                for c in shown
            ]
            columns = [*columns, "outcome"]
        # The claims are listed up to CLAIMS_SHOWN (or from a window of ids): the stale ones
        # shown are then a floor of what the run would release (1000 shown, 30,000 released).
        complete = read.claimed_quality != "floor"
        if not complete:
            shown = [{**c, "listing_complete": False} for c in shown]
            columns = [*columns, "listing_complete"]
        _skipped(name, kept, "would be ")
        if not shown and complete:
            render.note(f"qadmin: {name}: no claim is stale: nothing to requeue")
        elif not shown:
            render.note(
                f"qadmin: {name}: no stale claim among the {read.claimed:,} claims listed "
                f"({_listing(read)}): older ones may lie past them"
            )
        elif spec is not None:
            _counts(name, shown, "would be ", None if complete else _listing(read))
        elif not complete:
            render.note(
                f"qadmin: {name}: at least {len(shown):,} would be requeued ({_listing(read)})"
            )
        render.rows(shown, columns, fmt)
        return
    confirm("requeue stale claims of", name, yes)
    if spec is not None:
        done = claims_part.requeue(engine, spec, stale_after, skip_live)
        rows = [{"id": i, "outcome": "requeued"} for i in done.requeued]
        rows += [{"id": i, "outcome": "dead"} for i in done.dead]
        # The claims --skip-live left: stale still, their session still connected.
        kept = (
            claims_part.live(_stale_claims(engine, resolved, stale_after).stale) if guarded else []
        )
    else:
        ctx = run.context(engine, resolved, Options(stale_after_s=stale_after))
        measured = claims_part.measure_profile(ctx)
        listed = measured.stale
        stale = claims_part.releasable(listed, skip_live)
        released = claims_part.requeue_profile(ctx, [c["id"] for c in stale], skip_live)
        rows = [{"id": i, "outcome": "requeued"} for i in released.done]
        if released.busy:
            render.note(
                f"qadmin: {name}: {len(released.busy):,} stale claims passed: their rows stayed "
                "locked (a worker's ack in progress, or a transaction left open); the next "
                "requeue tries them again"
            )
        kept = claims_part.live(listed)
        if measured.claimed_quality == "floor":
            render.note(
                f"qadmin: {name}: {_listing(measured)}: stale claims past them were not read "
                "nor released; run requeue again to release them"
            )
    _skipped(name, kept if guarded else [], "")
    if not rows and not (guarded and kept):  # a cron job's log: the run found nothing
        render.note(f"qadmin: {name}: no claim is stale: nothing requeued")
    else:
        _counts(name, rows, "")
    render.rows(rows, ["id", "outcome"], fmt)


def _skipped(name: str, kept: list[dict[str, Any]], verb: str) -> None:
    """``q: 2 stale claims skipped: their consumer's session is still connected ...``"""
    if kept:
        ids = ", ".join(str(c.get("id")) for c in kept[:10]) + (", ..." if len(kept) > 10 else "")
        render.note(
            f"qadmin: {name}: {len(kept):,} stale claims {verb}skipped (ids {ids}): "
            + claims_part.LIVE_KEPT
        )


def _counts(name: str, rows: list[dict[str, Any]], verb: str, partial: str | None = None) -> None:
    """``q: 3 requeued, 1 dead``: a stale claim at max_attempts moves to the dead table; from
    a listing that stopped (``partial`` says where), each count is a floor."""
    dead = sum(1 for r in rows if r["outcome"] == "dead")
    released = sum(1 for r in rows if r["outcome"] == "requeued")
    floor = "at least " if partial else ""
    text = f"{floor}{released} {verb}requeued, {floor}{dead} {verb}dead"
    render.note(f"qadmin: {name}: {text}" + (f" ({partial})" if partial else ""))


def _listing(read: claims_part.Claims) -> str:
    """Where a listing of claims stopped: its row limit, or the window of ids it read."""
    if read.claimed_source:
        return f"claims listed from {read.claimed_source} only"
    return f"the listing stops at {claims_part.CLAIMS_SHOWN:,} claims"


PLAN: Table = (
    "plan",
    "nodes",
    ["node", "relation", "index", "rows", "removed", "buffers", "detail"],
)
INVALID: Table = ("invalid indexes", "invalid_indexes", ["index_name", "index_bytes", "definition"])


@click.command()
@click.argument("name")
@profile_options
@connection_options
@report_format_option
def explain(name: str, profile: dict[str, Any], target: Target, fmt: str | None) -> None:
    """Why is dequeue slow? The plan of NAME's dequeue (its head, read-only: no row lock):
    seek or scan, the index, rows and page accesses to reach the head, whether an index fits
    the order, INVALID indexes, stale statistics; findings with their fix. PostgreSQL and
    MariaDB run the head's SELECT (EXPLAIN ANALYZE, READ ONLY, under the timeouts) only when
    the estimated plan reaches it through an index: a head that would scan or sort a big table
    is shown as estimated, never run. A lock held on the table is waited for 1 s, then named."""
    engine, resolved = _resolve(target, name, profile)
    result = explain_ops.explain(run.context(engine, resolved, Options()))
    data = result.to_json_dict()
    declared = resolved.profile.source == "declared"
    for finding in data["findings"]:
        finding["fix"] = target.runnable(finding["fix"], declared)
    data["notes"] = [{"note": n} for n in result.notes]
    if render.resolve_format(fmt) != "json":
        data.pop("plan")
    kind = f"{resolved.spec.kind} queue" if resolved.spec else "table"
    render.report(
        data,
        [FINDINGS, PLAN, INVALID, NOTES],
        fmt,
        title=f"qadmin explain {name}",
        lead=[
            f"qadmin explain {name}: {kind} in {engine.schema} on {engine.dialect}",
            _plan_line(result),
        ],
        first=1,
        hidden=["queue", "engine"],
    )


def _plan_line(result: explain_ops.Explain) -> str:
    """The plan in one line: how the head is reached, at what cost, and the findings."""
    how = result.access or ("no table read" if result.nodes else "plan not read")
    if result.index:
        how += f" on {result.index}"
    if result.sorts:
        how += ", then a sort"
    walked = "rows walked" if result.access == "index walk" else "rows examined"
    figures = [
        f"{render.figure(value)} {unit}"
        for value, unit in (
            (result.rows_examined, walked if result.analyzed else "rows estimated"),
            (result.buffers, "page accesses"),
            (result.execution_ms, "ms"),
        )
        if value is not None
    ]
    if not result.analyzed and result.estimated_cost is not None:
        figures.append("estimated, not run")
    found = counted(len(result.findings), "finding") if result.findings else "no findings"
    return f"{how}" + (f" ({', '.join(figures)})" if figures else "") + f"; {found}"


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
@click.argument("name", required=False)
@click.option(
    "--all",
    "all_queues",
    is_flag=True,
    help="Every queue status finds, in one run: the worst state is the exit code, one line "
    "and the performance data of each queue; thresholds also from the config's [check].",
)
@click.option(
    "--queue-timeout",
    "queue_timeout",
    type=Duration(fractional=True, low=0.1),
    default=None,
    metavar="DURATION",
    help="With --all: the longest any one statement of a queue's reads may run (as "
    "status's; default 2s).",
)
@stale_option
@sample_option
@threshold_options
@profile_options
@connection_options
@plugin_format_option
def check(
    name: str | None,
    all_queues: bool,
    queue_timeout: float | None,
    stale_after: int,
    sample_s: float,
    profile: dict[str, Any],
    target: Target,
    fmt: str | None,
    **given: Any,
) -> int:
    """Nagios-style check of queue NAME: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.

    The status is the worst of the thresholds given and of every warning (1) or critical (2)
    finding inspect would show. A threshold this engine has no figure for (dead_ratio on
    MariaDB, snapshot_age on SQLite) is named in the line and left out of the performance
    data; UNKNOWN when no threshold given could be judged and nothing else is wrong. Usage
    errors (a bad value, warn above crit, an unknown option) exit 3 as well.

    --all checks every queue status finds in one run (no NAME, no rate sample, no profile
    options: those are refused, exit 2)."""
    if all_queues or queue_timeout is not None:
        _all_refusals(name, all_queues, profile, given)
        from qadmin.cli import check_all

        try:
            return check_all.run(target, given, stale_after, queue_timeout or 2.0, fmt)
        except QadminError as exc:  # the config's thresholds, the connection: UNKNOWN
            return check_all.failed(exc, fmt)
    if name is None:
        click.echo("QADMIN UNKNOWN - usage: Missing argument 'NAME' (or --all).")
        return check_ops.UNKNOWN
    try:
        options = Options(stale_after, sample_s, limits=limits(given))
        engine, resolved = _resolve(target, name, profile)
        result = check_ops.evaluate(run.inspect_resolved(engine, resolved, options))
    except QadminError as exc:
        result = check_ops.unknown(name, str(exc))
    output.if_reader_leaves(result.code)
    if render.resolve_format(fmt) == "json":
        render.document(result.to_json_dict(), "json")
    else:
        click.echo(render.visible(result.line, lines=False))
    return result.code


def _all_refusals(
    name: str | None, all_queues: bool, profile: dict[str, Any], given: dict[str, Any]
) -> None:
    """What makes no sense with --all (or without it): one line, exit 2, as status's."""
    ctx = click.get_current_context()
    if not all_queues:
        raise UsageError("--queue-timeout applies to check --all only")
    if name is not None:
        raise UsageError(
            f"check --all reads every queue: leave out NAME ({name}), or leave out --all"
        )
    if ctx.get_parameter_source("sample_s") is not ParameterSource.DEFAULT:
        raise UsageError("check --all takes no rate sample: --sample applies to check NAME")
    sampled = {m.name for m in registry.entry("rates").metrics}
    for key, value in given.items():
        if value is not None and key.split("_", 1)[1] in sampled:
            option = "--" + key.replace("_", "-")
            raise UsageError(f"check --all takes no rate sample: {option} applies to check NAME")
    if profile:
        option = "--" + next(iter(profile)).replace("_", "-")
        raise UsageError(
            f"check --all reads each table through its own profile: {option} applies to "
            "check NAME (declare a table in the config's [tables.NAME])"
        )


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
@click.option(
    "--dry-run", is_flag=True, help="Show what would be made again, parked, voided or skipped."
)
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def repair(
    name: str, older_than: int, dry_run: bool, yes: bool, target: Target, fmt: str | None
) -> None:
    """Make again the routines of queue NAME someone dropped (objects_missing), replace those
    an older qadmin made (routines_outdated); rings: also get a ring stalled by a dead pusher
    or popper moving again. Safe from cron."""
    engine, spec = _load(target, name)
    if dry_run:
        result = dict(repair_ops.plan(engine, spec, older_than).to_json_dict(), dry_run=True)
    else:
        confirm("repair", name, yes)
        result = dict(repair_ops.repair(engine, spec, older_than).to_json_dict(), dry_run=False)
    if render.resolve_format(fmt) != "json":
        result = {k: _listed(v) for k, v in result.items()}
    render.document(result, fmt)


def _listed(value: Any) -> Any:
    """Lists as one cell for the table and plain formats (JSON keeps them as lists)."""
    if not isinstance(value, list):
        return value
    return ", ".join(f"{v['id']} {v['action']}" if isinstance(v, dict) else str(v) for v in value)


COMMANDS = [
    inspect,
    explain,
    size,
    ghosts,
    fragmentation,
    locks,
    claims,
    requeue,
    repair,
    check,
]
