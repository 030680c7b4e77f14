"""Creating, listing, dropping and purging queues."""

from __future__ import annotations

from dataclasses import dataclass, field

from qadmin.engines.base import Engine
from qadmin.errors import QadminError, UsageError
from qadmin.kinds import (
    ALLOWS_STRICT,
    ALLOWS_WATERMARK,
    MAX_CAPACITY,
    NEEDS_CAPACITY,
    Kind,
    QueueSpec,
)
from qadmin.names import validate_queue_name
from qadmin.ops import catalog, diagnose, resize


@dataclass
class Plan:
    """What a destructive command will do, shown by --dry-run and before confirmation."""

    action: str
    queue: str
    messages: int | None
    statements: list[str] = field(default_factory=list)
    messages_exact: bool = True

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "queue": self.queue,
            "messages": self.messages,
            "messages_exact": self.messages_exact,
            "statements": self.statements,
        }


def make_spec(
    name: str, kind: str, capacity: int | None, strict: bool, watermark: bool = False
) -> QueueSpec:
    """Check a create request before any SQL runs."""
    validate_queue_name(name)
    k = Kind(kind)
    if k in NEEDS_CAPACITY:
        if capacity is None:
            raise UsageError(f"a {k} queue needs --capacity N")
        if not 1 <= capacity <= MAX_CAPACITY:
            raise UsageError(f"--capacity must be between 1 and {MAX_CAPACITY:,}")
    elif capacity is not None:
        raise UsageError(f"--capacity applies to capped and ring queues, not {k}")
    if strict and k not in ALLOWS_STRICT:
        raise UsageError(f"--strict applies to fifo and lifo queues, not {k}")
    if watermark and (k not in ALLOWS_WATERMARK or strict):
        raise UsageError("--watermark applies to fifo (not --strict) and claim queues")
    options = {"watermark": True} if watermark else {}
    return QueueSpec(name=name, kind=k, capacity=capacity, strict=strict, options=options)


def create(engine: Engine, spec: QueueSpec) -> QueueSpec:
    catalog.ensure(engine)
    if engine.table_exists(spec.name):
        raise QadminError(f"a table named {spec.name!r} already exists in schema {engine.schema}")
    statements = engine.section(spec, "create")
    try:
        for statement in statements:
            # One statement per transaction: MySQL commits DDL implicitly anyway, and a
            # failure part-way is cleaned up by the drop section below.
            engine.run([statement])
        if spec.kind is Kind.RING and engine.template(spec).has("resize_grow"):
            with engine.transaction() as execute:
                resize.grow(engine, spec, execute, 0, int(spec.capacity or 0))
        catalog.record(engine, spec)
    except QadminError:
        _drop_objects(engine, spec)
        raise
    return catalog.get(engine, spec.name)


def _drop_objects(engine: Engine, spec: QueueSpec) -> None:
    statements = engine.section(spec, "drop")
    if engine.has_data_section(spec, "drop"):  # load's staging and key tables
        statements += engine.data_section(spec, "drop")
    for statement in statements:
        engine.run([statement])


def _plan(engine: Engine, spec: QueueSpec, action: str) -> Plan:
    """The plan with the message count inspect would show: exact when cheap, else the
    engine's estimate (a dry run must not scan a big queue)."""
    measured = diagnose.size(engine, spec)
    return Plan(
        action,
        spec.name,
        int(measured["depth"]),
        engine.section(spec, action),
        bool(measured["depth_exact"]),
    )


def drop_plan(engine: Engine, spec: QueueSpec) -> Plan:
    return _plan(engine, spec, "drop")


def drop(engine: Engine, spec: QueueSpec) -> Plan:
    plan = drop_plan(engine, spec)
    _drop_objects(engine, spec)
    catalog.forget(engine, spec.name)
    return plan


def purge_plan(engine: Engine, spec: QueueSpec) -> Plan:
    return _plan(engine, spec, "purge")


def purge(engine: Engine, spec: QueueSpec) -> Plan:
    """Delete every message; the count is taken in the same transaction as the delete."""
    rows = engine.run(engine.section(spec, "purge"))
    # A purge reports a count, or (a ring drained through its pop routine) the messages.
    counted = [int(r["purged"]) for r in rows if "purged" in r]
    purged = counted[0] if counted else sum(1 for r in rows if r.get("id") is not None)
    return Plan("purge", spec.name, purged, [])
