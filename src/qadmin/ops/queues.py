"""Creating, listing, dropping and purging queues."""

from __future__ import annotations

import dataclasses
from contextlib import suppress
from dataclasses import dataclass, field

from qadmin import catalog
from qadmin.diagnostics.entries import size
from qadmin.engines.base import Engine
from qadmin.errors import NotFound, QadminError, UsageError
from qadmin.kinds import (
    KINDS,
    MAX_CAPACITY,
    PAUSABLE,
    REVISION,
    ROUTINES_REVISION,
    Kind,
    QueueSpec,
    kinds_with,
    said,
)
from qadmin.names import validate_queue_name
from qadmin.ops import dead, resize


@dataclass
class Plan:
    """What a destructive command will do, shown by --dry-run and before confirmation."""

    action: str
    queue: str
    messages: int | None
    statements: list[str] = field(default_factory=list)
    messages_exact: bool = True
    # A claim queue's dead table: what drop destroys with the queue, what purge leaves.
    dead: dead.DeadDepth | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "action": self.action,
            "queue": self.queue,
            "messages": self.messages,
            "messages_exact": self.messages_exact,
        }
        if self.dead is not None:
            out.update(dead=self.dead.count, dead_exact=self.dead.exact)
        return {**out, "statements": self.statements}


def make_spec(
    name: str,
    kind: str,
    capacity: int | None,
    strict: bool,
    watermark: bool = False,
    max_attempts: int | None = None,
) -> QueueSpec:
    """Check a create request before any SQL runs."""
    validate_queue_name(name)
    k = Kind(kind)
    info = KINDS[k]
    if info.needs_capacity:
        if capacity is None:
            raise UsageError(f"a {k} queue needs --capacity N")
        if not 1 <= capacity <= MAX_CAPACITY:
            raise UsageError(f"--capacity must be between 1 and {MAX_CAPACITY:,}")
    elif capacity is not None:
        raise UsageError(f"--capacity applies to {_kinds('needs_capacity')} queues, not {k}")
    if strict and not info.allows_strict:
        raise UsageError(f"--strict applies to {_kinds('allows_strict')} queues, not {k}")
    if watermark and (not info.allows_watermark or strict):
        raise UsageError(
            f"--watermark applies to {_kinds('allows_watermark')} queues, not --strict ones"
        )
    options: dict[str, object] = {"watermark": True} if watermark else {}
    options[PAUSABLE] = True
    options[REVISION] = ROUTINES_REVISION
    if info.dead_letters:
        options["dead_table"] = True
    if max_attempts is not None:
        if not info.dead_letters:
            raise UsageError(f"--max-attempts applies to {_kinds('dead_letters')} queues, not {k}")
        options["max_attempts"] = dead.check_max_attempts(max_attempts)
    return QueueSpec(name=name, kind=k, capacity=capacity, strict=strict, options=options)


def _kinds(capability: str) -> str:
    return said(kinds_with(capability))


def create(engine: Engine, spec: QueueSpec, progress: resize.Progress | None = None) -> QueueSpec:
    """Create the queue, recording its catalog entry (state ``creating``) first and each object
    before it is made, so that whatever stops it part-way, the same create finishes the job
    and drop removes exactly what was made. ``progress`` follows a ring's slot rows."""
    catalog.ensure(engine)
    earlier = catalog.find(engine, spec.name)
    if earlier is not None and earlier.state != catalog.CREATING:
        raise UsageError(f"queue {spec.name} already exists in schema {engine.schema}")
    if earlier is not None:  # an interrupted create: start again from nothing
        _drop_objects(engine, earlier)
        catalog.forget(engine, spec.name)
    clashes = catalog.collisions(engine, spec)
    if clashes:
        raise UsageError(
            f"cannot create queue {spec.name} in schema {engine.schema}: {'; '.join(clashes)} "
            "(choose another name)"
        )
    catalog.record(engine, dataclasses.replace(spec, state=catalog.CREATING))
    try:
        for statement, obj in catalog.planned(engine, spec, engine.hooks.section(spec, "create")):
            # One statement per transaction: MySQL commits DDL implicitly anyway.
            new = obj is not None and catalog.own(engine, spec, obj)
            try:
                engine.run([statement])
            except QadminError:
                if new and obj is not None:  # not made by us: someone else's from now on
                    catalog.disown(engine, spec, obj)
                raise
        if engine.hooks.template(spec).has("resize_grow"):
            with engine.transaction() as execute:
                resize.grow(engine, spec, execute, 0, int(spec.capacity or 0), progress)
        catalog.mark_ready(engine, spec)
    except QadminError:
        _remove(engine, spec)
        raise
    except KeyboardInterrupt:
        # The connection may be mid-statement: clean up on a fresh one. Should that fail too,
        # the catalog still says "creating", and create or drop finishes the job.
        with suppress(QadminError), engine.sibling() as fresh:
            _remove(fresh, spec)
        raise
    return catalog.get(engine, spec.name)


def _remove(engine: Engine, spec: QueueSpec) -> None:
    _drop_objects(engine, spec)
    catalog.forget(engine, spec.name)


def _drop_objects(engine: Engine, spec: QueueSpec) -> None:
    """Drop the queue's recorded objects (and only those), last made first."""
    for statement in catalog.drop_statements(engine, catalog.owned(engine, spec)):
        engine.run([statement])


def _plan(engine: Engine, spec: QueueSpec, action: str) -> Plan:
    """The plan with the message count inspect would show: exact when cheap, else the
    engine's estimate (a dry run must not scan a big queue)."""
    if action == "drop":
        statements = catalog.drop_statements(engine, catalog.owned(engine, spec))
    else:
        statements = engine.hooks.section(spec, action)
    if spec.state == catalog.CREATING:  # no queue to count yet
        return Plan(action, spec.name, None, statements, False)
    try:
        measured = size.measure(engine, spec)
        dead_depth = _dead(engine, spec)
    except NotFound:
        if action != "drop":
            raise
        # A table of the queue dropped by hand (objects_missing): nothing to count, and the
        # drop, its printed fix, removes what is left.
        return Plan(action, spec.name, None, statements, False)
    messages, exact = measured.depth, measured.depth_exact
    if spec.info.claims and messages is not None:  # its claimed rows go too
        messages += measured.claimed or 0
        # not counted (dead entries in the way): the waiting rows are a floor of what goes
        exact = exact and measured.claimed is not None and not measured.claimed_at_least
    return Plan(action, spec.name, messages, statements, exact, dead_depth)


def _dead(engine: Engine, spec: QueueSpec) -> dead.DeadDepth | None:
    """The dead table's bounded count, for a claim queue that has one."""
    return dead.depth(engine, spec) if spec.dead_table else None


def drop_plan(engine: Engine, spec: QueueSpec) -> Plan:
    return _plan(engine, spec, "drop")


def drop(engine: Engine, spec: QueueSpec) -> Plan:
    """Drop the queue's recorded objects and its catalog entry: nothing else, whatever its
    name (a queue ``a_stage`` is not queue ``a``'s staging table)."""
    catalog.ensure(engine)
    plan = drop_plan(engine, spec)
    objs = catalog.owned(engine, spec)
    blocking = catalog.dependents(engine, objs)
    if blocking:
        raise QadminError(
            f"cannot drop {spec.name}: {', '.join(blocking)} depends on it; drop or change "
            "that first (nothing was dropped)"
        )
    if not engine.hooks.transactional_ddl:
        # One by one, the catalog entry last and marked first: a drop that stops half-way
        # (a lock timeout on the table after its routines went) is a finding, and re-runnable.
        catalog.set_options(engine, dataclasses.replace(spec, state=catalog.DROPPING))
        _remove(engine, spec)
        return plan
    # All or nothing: a refusal half-way (a dependent made since the check) leaves the queue
    # whole, its routines, table and catalog entry, and applications still pushing.
    with engine.transaction() as execute:
        for statement in catalog.drop_statements(engine, objs):
            execute(statement)
        catalog.forget(engine, spec.name, execute)
    return plan


def purge_plan(engine: Engine, spec: QueueSpec) -> Plan:
    return _plan(engine, spec, "purge")


def purge(engine: Engine, spec: QueueSpec) -> Plan:
    """Delete every message; the count is taken in the same transaction as the delete."""
    rows = engine.run(engine.hooks.section(spec, "purge"))
    # A purge reports a count, or (a ring drained through its pop routine) the messages.
    counted = [int(r["purged"]) for r in rows if "purged" in r]
    purged = counted[0] if counted else sum(1 for r in rows if r.get("id") is not None)
    return Plan("purge", spec.name, purged, [], dead=_dead(engine, spec))
