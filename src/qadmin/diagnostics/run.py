"""Running the registry's parts into one report: the one screen a DBA reads during an incident.

Parts that need no lock on the queue table (lock waits, the horizon, catalog statistics) run
first. Every part runs under its own short lock timeout: one that gives up becomes a note and a
``part_blocked`` finding naming the session that held the lock, and the rest goes on, so an
inspect during a lock incident still prints a full report.
"""

from __future__ import annotations

from qadmin.diagnostics import registry, sql
from qadmin.diagnostics.entries import locks
from qadmin.diagnostics.model import (
    BlockedPart,
    Context,
    Header,
    InspectReport,
    Options,
    Result,
)
from qadmin.engines.base import Engine
from qadmin.errors import LockTimeout, NotFound
from qadmin.kinds import QueueSpec
from qadmin.names import validate_schema_name

# How long one part waits for a lock before it is reported blocked (the connection's own
# --lock-timeout caps it).
PART_LOCK_MS = 1000


def _collect(
    ctx: Context, entries: tuple[registry.Diagnostic, ...]
) -> tuple[dict[str, Result | None], dict[str, BlockedPart]]:
    parts: dict[str, Result | None] = {}
    blocked: dict[str, BlockedPart] = {}
    for entry in sorted(entries, key=lambda d: (not d.lock_free, d.order)):
        if not entry.applies(ctx):
            continue
        try:
            with ctx.engine.lock_timeout(PART_LOCK_MS):
                parts[entry.name] = entry.collect(ctx)
        except LockTimeout as exc:
            holders = getattr(parts.get("ghosts"), "holders", [])
            found = parts.get("locks")
            text, session, certain = locks.blocker_of(
                ctx, found if isinstance(found, locks.Locks) else None, holders
            )
            blocked[entry.name] = BlockedPart(
                f"{entry.name} skipped: {exc}", text, session, certain
            )
    order = [e.name for e in entries if e.name in parts]
    return {name: parts[name] for name in order}, blocked


def _header(engine: Engine, table: str, spec: QueueSpec | None) -> Header:
    header = Header(
        queue=table,
        schema=engine.schema,
        engine=engine.name,
        dialect=engine.dialect,
        server_version=engine.server_version(),
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


def inspect(engine: Engine, spec: QueueSpec, options: Options | None = None) -> InspectReport:
    """Every part of a qadmin queue, and the findings over them."""
    options = options or Options()
    ctx = Context(engine, spec.name, spec, options)
    header = _header(engine, spec.name, spec)
    parts, blocked = _collect(ctx, registry.entries())
    return _judge(InspectReport(header, parts, options, engine, blocked=blocked))


def snapshot(
    engine: Engine, spec: QueueSpec, options: Options, collecting: bool = False
) -> InspectReport:
    """The parts behind telemetry fields (tail; with ``collecting``, collect's too): no
    sleep for rates, no findings."""
    options.telemetry = True
    ctx = Context(engine, spec.name, spec, options)
    polled = tuple(e for e in registry.entries() if e.polled(collecting))
    parts, blocked = _collect(ctx, polled)
    header = Header(spec.name, engine.schema, engine.name, "", "", spec.kind.value)
    return InspectReport(header, parts, options, engine, blocked=blocked)


def inspect_table(engine: Engine, table: str, options: Options | None = None) -> InspectReport:
    """Inspect a table qadmin did not create: the parts that need qadmin's catalog (kind,
    claims, ring fill, due counts, rates from its sequences) are left out, and said so."""
    options = options or Options()
    for name in filter(None, (table, options.order_by, options.time_column)):
        validate_schema_name(name)
    if not engine.table_exists(table):
        raise NotFound(f"no table {table!r} in schema {engine.schema}")
    notes = [
        "not a qadmin queue: inspected as a hand-built table; kind, claims, ring fill, due "
        "counts and rates need qadmin's catalog and are not shown"
    ]
    if options.order_by is None:
        params = {"schema": engine.schema, "table": table}
        keys = [r["column_name"] for r in sql.read(engine, "primary_key", params).rows]
        if len(keys) == 1:
            options.order_by = keys[0]
            notes.append(f"ordering key detected: primary key column {options.order_by}")
        else:
            notes.append("no single-column primary key: give --order-by COLUMN for the oldest row")
    if options.order_by and not options.time_column:
        notes.append("give --time-column COLUMN for the oldest message's age")
    ctx = Context(engine, table, None, options)
    parts, blocked = _collect(ctx, registry.entries())
    report = InspectReport(
        _header(engine, table, None),
        parts,
        options,
        engine,
        not_covered=notes,
        blocked=blocked,
        extra={"order_by": options.order_by, "time_column": options.time_column},
    )
    return _judge(report)
