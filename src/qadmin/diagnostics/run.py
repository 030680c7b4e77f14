"""Running the registry's parts into one report: the one screen a DBA reads during an incident.

Parts that need no lock on the queue table (lock waits, the horizon, catalog statistics) run
first. Every part runs under its own short lock timeout: one that gives up becomes a note and a
``part_blocked`` finding naming the session that held the lock, and the rest goes on, so an
inspect during a lock incident still prints a full report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from qadmin import catalog
from qadmin.diagnostics import registry
from qadmin.diagnostics.entries import ghosts, locks, rates
from qadmin.diagnostics.model import (
    PART_LOCK_MS,
    BlockedPart,
    Context,
    Header,
    InspectReport,
    Options,
    Result,
    ServerReads,
)
from qadmin.engines.base import CATALOG_TABLE, Engine
from qadmin.errors import LockTimeout, NotFound, QadminError, StatementTimeout
from qadmin.kinds import QueueSpec
from qadmin.profiles import query
from qadmin.profiles.resolve import Resolved, from_spec

T = TypeVar("T")


def _collect(
    ctx: Context, entries: tuple[registry.Diagnostic[Any], ...]
) -> tuple[dict[str, Result | None], dict[str, BlockedPart]]:
    parts: dict[str, Result | None] = {}
    blocked: dict[str, BlockedPart] = {}
    # One lock limit for every part: each part's own ``lock_timeout`` is then no round trip.
    with ctx.engine.lock_timeout(PART_LOCK_MS):
        for entry in sorted(entries, key=lambda d: (not d.lock_free, d.order)):
            if not entry.applies(ctx):
                continue
            try:
                with ctx.engine.lock_timeout(PART_LOCK_MS):
                    parts[entry.name] = entry.collect(ctx)
            except StatementTimeout as exc:
                why = f"{entry.name} skipped: {exc}"
                blocked[entry.name] = BlockedPart(why, "", None, True, True)
            except NotFound as exc:
                # A table of a queue the catalog still lists, dropped by hand: the other
                # parts are read and objects_missing says what is gone. A queue no longer
                # listed was dropped while it was read: the caller leaves it out.
                if ctx.spec is None or catalog.find(ctx.engine, ctx.spec.name) is None:
                    raise
                why = f"{entry.name} skipped: {exc}"
                blocked[entry.name] = BlockedPart(why, "", None, gone=True)
            except LockTimeout as exc:
                seen = parts.get(ghosts.ENTRY.name)
                holders = seen.holders if isinstance(seen, ghosts.Ghosts) else []
                found = parts.get(locks.ENTRY.name)
                text, session, certain = locks.blocker_of(
                    ctx, found if isinstance(found, locks.Locks) else None, holders
                )
                why = f"{entry.name} skipped: {exc}"
                blocked[entry.name] = BlockedPart(why, text, session, certain)
    order = [e.name for e in entries if e.name in parts]
    return {name: parts[name] for name in order}, blocked


def _header(engine: Engine, table: str, spec: QueueSpec | None) -> Header:
    header = Header(
        queue=table,
        schema=engine.schema,
        engine=engine.label,
        dialect=engine.dialect,
        server_version=engine.version_label(),
        kind=spec.kind.value if spec else None,
    )
    if spec is not None:
        header.capacity, header.strict, header.created_at = (
            spec.capacity,
            spec.strict,
            spec.created_at,
        )
    return header


def _judge(report: InspectReport) -> InspectReport:
    report.findings = [f for entry in registry.entries() for f in entry.rule(report)]
    return report


def context(
    engine: Engine, resolved: Resolved, options: Options, shared: ServerReads | None = None
) -> Context:
    """What every part reads: a qadmin queue's spec, or a profiled table's reader (and, in a
    run over many queues, its server-wide readings)."""
    profile, spec = resolved.profile, resolved.spec
    if profile.schema is not None:
        engine.use_schema(profile.schema)
    if spec is not None:
        return Context(engine, spec.name, spec, options, profile, shared=shared)
    assert resolved.shape is not None, "a table qadmin did not create has its shape"
    if profile.naive_utc:
        engine.read_naive_times_as_utc(True)
    reader = query.Reader(engine, profile, resolved.shape)
    return Context(engine, profile.table, None, options, profile, reader, shared)


def bounded(ctx: Context, read: Callable[[], T]) -> T:
    """A read-only command's read (size, claims, ghosts, locks, fragmentation, peek) as inspect
    runs a part: waiting at most ``PART_LOCK_MS`` for a lock, and when that runs out, one line
    naming who held it (exit 8), not the connection's whole lock timeout and no name."""
    try:
        with ctx.engine.lock_timeout(PART_LOCK_MS):
            return read()
    except StatementTimeout:
        raise
    except LockTimeout as exc:
        try:
            holder, _, _ = locks.blocker_of(ctx, None, [])
        except QadminError as unread:
            holder = f"a session qadmin could not name ({unread})"
        raise type(exc)(f"{exc}; blocked by {holder}") from None


def catalog_bounded(engine: Engine, read: Callable[[], T]) -> T:
    """A read-only command's lookup of its queue (qadmin's catalog, a table's shape) bounded
    as a part is: a lock held on ``qadmin_queues`` (a LOCK TABLE, a DDL queued behind a long
    transaction) costs 1 s and one line naming its holder, not the connection's whole lock
    timeout and no name."""
    return bounded(Context(engine, CATALOG_TABLE, None, Options()), read)


def inspect(engine: Engine, spec: QueueSpec, options: Options | None = None) -> InspectReport:
    """Every part of a qadmin queue, and the findings over them."""
    return inspect_resolved(engine, Resolved(from_spec(spec, engine.schema), spec), options)


def inspect_resolved(
    engine: Engine,
    resolved: Resolved,
    options: Options | None = None,
    only: tuple[str, ...] | None = None,
    shared: ServerReads | None = None,
) -> InspectReport:
    """Every part of a queue or a profiled table (or the parts named in ``only``), and the
    findings over them. A table qadmin did not create is read through its profile; the parts
    that need qadmin's catalog (ring fill, due counts, rates from its sequences) are left
    out, and said so. ``shared``: the server-wide readings of a run over many queues
    (``registry.server_reads``)."""
    options = options or Options()
    ctx = context(engine, resolved, options, shared)
    entries = registry.entries()
    if only is not None:
        entries = tuple(e for e in entries if e.name in only)
    parts, blocked = _collect(ctx, entries)
    profile, spec = resolved.profile, resolved.spec
    header = _header(engine, profile.shown if spec is None else spec.name, spec)
    if spec is not None:
        report = InspectReport(header, parts, options, engine, blocked=blocked, profile=profile)
        return _judge(report)
    notes = [
        f"not a qadmin queue: a hand-built or library table read through its {profile.source} "
        "profile"
        + (f" ({profile.library})" if profile.library else "")
        + "; ring fill, due counts and rates from qadmin's sequences do not apply",
        *resolved.notes,
    ]
    report = InspectReport(
        header,
        parts,
        options,
        engine,
        not_covered=notes,
        blocked=blocked,
        extra={"order_by": profile.order_by, "time_column": profile.time_column},
        profile=profile,
    )
    return _judge(report)


def inspect_staged(
    engine: Engine, resolved: Resolved, options: Options
) -> tuple[InspectReport, Callable[[], InspectReport] | None]:
    """``inspect_resolved`` in two steps, for a terminal: the report at once, its rates part
    holding the sample's first read only (no figures yet), and the call that waits out the
    rest of ``--sample``, reads the counters again and judges the report anew (None when no
    sample is pending: ``--sample 0``, a part that does not apply or was blocked)."""
    report = inspect_resolved(engine, resolved, dataclasses.replace(options, rates_later=True))
    report.options = options
    started = report.part(rates.ENTRY)
    if started is None or options.sample_s <= 0:
        return report, None

    def finish() -> InspectReport:
        ctx = context(engine, resolved, options)
        second = dataclasses.replace(rates.ENTRY, collect=lambda c: rates.finish(c, started))
        parts, blocked = _collect(ctx, (second,))
        done = parts.get(rates.ENTRY.name)
        if done is None:  # the second read was blocked: a note and a finding, as any part's
            report.parts.pop(rates.ENTRY.name, None)
            report.blocked.update(blocked)
        else:
            report.parts[rates.ENTRY.name] = done
        return _judge(report)

    return report, finish


def snapshot(
    engine: Engine, resolved: Resolved, options: Options, collecting: bool = False
) -> InspectReport:
    """The parts behind telemetry fields (tail; with ``collecting``, collect's too): no
    sleep for rates, no findings."""
    options.telemetry = True
    ctx = context(engine, resolved, options)
    polled = tuple(e for e in registry.entries() if e.polled(collecting))
    parts, blocked = _collect(ctx, polled)
    spec = resolved.spec
    kind = spec.kind.value if spec else None
    header = Header(resolved.profile.name, engine.schema, engine.name, "", "", kind)
    return InspectReport(header, parts, options, engine, blocked=blocked, profile=resolved.profile)
