"""Turning a naive INSERT/DELETE queue into a ring, with its backlog, ids and order kept.

The source is a qadmin ``fifo``/``heap`` queue, or a hand-built table named with its id column
and payload column(s). The ring takes over the queue's name. Everything that changes data runs
in one transaction where DDL is transactional (PostgreSQL, SQLite:
``sql/queues/<dialect>/convert.sql`` explains the steps), so a convert that is killed or loses
its connection rolls back whole and running it again finishes the job: nothing is lost or
duplicated either way. Where DDL commits on its own (MariaDB) the switch is a sequence of
resumable steps instead (``convert_staged``).

Cut-over: a qadmin queue's push/pop routines (PostgreSQL) are switched inside that transaction
after being replaced by versions that re-dispatch once it commits, so callers see no error. A
hand-built table is renamed to ``<table>_before_ring`` (kept, with its rows, for the DBA to
drop) and the ring gets its name: applications must stop writing it with their own SQL and
call ``<table>_push`` / ``<table>_pop`` (or ``qadmin push/pop``) instead; their old statements
fail loudly against the ring table rather than writing where nobody reads.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from qadmin import catalog
from qadmin.engines.base import Engine, Execute
from qadmin.errors import InvalidName, UsageError
from qadmin.kinds import QueueSpec
from qadmin.names import validate_schema_name
from qadmin.ops import convert_guard, convert_sql, convert_staged, resize
from qadmin.ops.convert_sql import (
    BACKUP_SUFFIX,
    GATE_GRACE_S,
    Converted,
    ConvertPlan,
    ConvertSql,
    Progress,
    Source,
    Step,
    outcome,
    refusal,
    ring_spec,
    staged_switch,
    too_big,
)
from qadmin.profiles.model import Value
from qadmin.profiles.resolve import split_table_name

STEPS = {
    "gate": "replace the queue's push/pop with versions that wait for the switch and then call "
    "the ring's (own transaction; PostgreSQL only); wait {grace}s for calls already running",
    "lock": "lock the table (PostgreSQL: ACCESS EXCLUSIVE, under the lock timeout; SQLite: the "
    "write lock): pushes and pops wait until commit",
    "measure": "count the backlog (only the waiting rows with --state-column); refuse if it is "
    "larger than the capacity",
    "set_aside": "rename the table to {backup.bare}: the backlog is read from there, once",
    "retire": "drop the objects qadmin made for the queue (routines; its table, renamed aside, "
    "is not found by name)",
    "create": "create the ring under the queue's name (slot table, sequences, overflow, parked "
    "numbers, push/pop routines)",
    "start_sequences": "start both ring sequences above the highest id (PostgreSQL: above "
    "every id the table's identity sequence handed out)",
    "copy": "move the backlog in, each message written once (one INSERT ... SELECT): into slot "
    "id % capacity when its ids have no gap up to the next id, else into the overflow table; "
    "add the free slot rows; park the numbers (PostgreSQL), so pops serve them first, in id "
    "order; PostgreSQL drops the new tables' primary keys before and builds them after",
    "drop_set_aside": "drop {backup.bare} (a qadmin queue's; a hand-built table is kept)",
    "catalog": "record the queue as a ring in qadmin's catalog; commit",
}


def source(
    engine: Engine,
    name: str,
    id_col: str | None = None,
    payload_cols: tuple[str, ...] = (),
    time_col: str | None = None,
    state_col: str | None = None,
    waiting: Value | None = None,
) -> Source:
    """The qadmin queue called ``name``, else the hand-built table of that name; never one of
    qadmin's own tables (refused before anything else is asked of it)."""
    _convertible_name(name)
    owner = convert_guard.internal_owner(engine, name)
    if owner:
        raise UsageError(refusal(name, [owner]))
    return convert_sql.source(engine, name, id_col, payload_cols, time_col, state_col, waiting)


def _convertible_name(name: str) -> None:
    """A name the ring can take: its table, routines and catalog entry are named after it. A
    quoted or schema-qualified name (which inspect and size read) is refused saying so, not
    as an "invalid schema name"."""
    try:
        validate_schema_name(name)
        return
    except InvalidName:
        pass
    schema, table, quoted = split_table_name(name)  # InvalidName for what names no table
    if schema is not None and not quoted and _plain(table) and _plain(schema):
        raise UsageError(
            f"convert: give the table's own name and its schema apart: --schema {schema} {table}"
        )
    raise UsageError(
        f"convert: table {name} cannot become a ring under that name: the ring's table, "
        "routines and catalog entry are named after it, in letters, digits and _ starting "
        "with a letter or _; rename the table first (ALTER TABLE ... RENAME TO a_plain_name)"
    )


def _plain(part: str) -> bool:
    try:
        validate_schema_name(part)
    except InvalidName:
        return False
    return True


def refused(result: ConvertPlan) -> str | None:
    """A dry run's refusal as the one line the convert itself would fail with, or None."""
    reasons = list(result.refused)
    return refusal(result.queue, reasons) if reasons else None


def plan(engine: Engine, src: Source, capacity: int) -> ConvertPlan:
    """Every step, the locks it takes, the SQL, whether the backlog fits and what the convert
    would refuse (read-only)."""
    ring = ring_spec(src, capacity)
    result = (
        convert_staged.plan(engine, src, ring)
        if staged_switch(engine)
        else _plan(engine, src, ring, capacity)
    )
    if not result.fits:  # in "refused" too, so every format says why it would not run
        reasons = (*result.refused, too_big(result.messages or 0, capacity))
        result = dataclasses.replace(result, refused=reasons)
    return result


def _plan(engine: Engine, src: Source, ring: QueueSpec, capacity: int) -> ConvertPlan:
    sql = ConvertSql(engine, src, ring)
    measured = engine.run(sql.section("measure"), sql.params, write=False)[0]
    messages = int(measured["messages"])
    gated = src.managed is not None and sql.file.has("gate")
    skipped = {"gate"} if not gated else set()
    if src.managed is None:
        skipped |= {"retire", "drop_set_aside"}
    names = [n for n in STEPS if n not in skipped]
    return ConvertPlan(
        queue=src.table,
        origin=src.origin,
        to_capacity=capacity,
        resuming=None,  # one transaction: nothing is ever left half-done
        messages=messages,
        rows_left=int(measured["rows_left"]),
        fits=messages <= capacity,
        refused=tuple(convert_guard.refusals(engine, src, sql)),
        steps=tuple(
            engine.hooks.render_text(
                STEPS[n],
                {"backup": src.table + BACKUP_SUFFIX},
                {"grace": str(GATE_GRACE_S)},
            )
            for n in names
        ),
        statements=(
            *(
                s
                for n in ("gate", "lock", "measure", "set_aside")
                if n != "gate" or gated
                for s in sql.section(n)
            ),
            *_retire(engine, src),
            *engine.hooks.section(ring, "create"),
            *sql.section("start_sequences"),
            *_copy_sql(engine, sql, ring, _dense(sql, measured, capacity)),
            *(sql.section("drop_set_aside") if src.managed is not None else []),
        ),
    )


def _retire(engine: Engine, src: Source) -> list[str]:
    """A qadmin queue's objects (only what qadmin recorded as its own); its table is already
    renamed aside, so its DROP TABLE IF EXISTS finds nothing and set_aside's name stays."""
    if src.managed is not None:
        return catalog.drop_statements(engine, catalog.made_by_create(engine, src.managed))
    return []


def _next_id(measured: dict[str, Any]) -> int:
    # SQLite's measure has no next_id: its AUTOINCREMENT counter is not read (yet).
    return int(measured.get("next_id") or int(measured["max_id"] or 0) + 1)


def _dense(sql: ConvertSql, measured: dict[str, Any], capacity: int) -> bool:
    """Whether the backlog's ids fill [min_id, next_id) with no gap (and the engine can put
    messages straight into their slots): then message k can take slot k % capacity, and no
    push the ring's count allows needs one of those slots before its message is popped. With
    a gap, a push could find its slot still held by an old message and be refused early, so
    the backlog goes to the overflow table instead."""
    messages = int(measured["messages"])
    if not sql.file.has("place_slots") or messages == 0 or messages > capacity:
        return False
    return messages == _next_id(measured) - int(measured["min_id"])


def _copy_sql(engine: Engine, sql: ConvertSql, ring: QueueSpec, dense: bool) -> list[str]:
    """What the copy step runs (the dry run's list; ``_copy`` runs it)."""
    if dense:
        place = sql.section("place_slots") + sql.section("place_free")
    else:
        grows = engine.hooks.template(ring).has("resize_grow")
        grow = engine.hooks.section(ring, "resize_grow") if grows else []
        place = sql.section("place_overflow") + grow
    return sql.section("unindex") + place + sql.section("park") + sql.section("reindex")


def _copy(
    engine: Engine,
    sql: ConvertSql,
    ring: QueueSpec,
    execute: Execute,
    measured: dict[str, Any],
    progress: Progress | None,
) -> None:
    """Move the backlog into the ring, each message written once: into its slot when the ids
    are dense (``_dense``), else into the overflow table; then the free slot rows and the
    parked numbers. Each an INSERT ... SELECT of the whole backlog, in the switch's one
    transaction (killed, it all rolls back); where the engine says so (``unindex`` /
    ``reindex``), the new tables' primary keys are built after the load."""
    capacity = int(ring.capacity or 0)
    messages = int(measured["messages"])
    params = {
        **sql.params,
        "capacity": capacity,
        "first": int(measured["min_id"] or 0),
        "messages": messages,
    }
    for statement in sql.section("unindex"):
        execute(statement)
    if _dense(sql, measured, capacity):
        for name in ("place_slots", "place_free"):
            for statement in sql.section(name):
                execute(statement, params)
    else:
        for statement in sql.section("place_overflow"):
            execute(statement, params)
        resize.grow(engine, ring, execute, 0, capacity)
    for name in ("park", "reindex"):
        for statement in sql.section(name):
            execute(statement, params if name == "park" else None)
    if progress:
        progress(messages, messages)


def convert(
    engine: Engine,
    src: Source,
    capacity: int,
    on_step: Step | None = None,
    progress: Progress | None = None,
) -> Converted:
    ring = ring_spec(src, capacity)
    step = on_step or (lambda name: None)
    if staged_switch(engine):
        return convert_staged.convert(engine, src, ring, step, progress)
    sql = ConvertSql(engine, src, ring)
    reasons = convert_guard.refusals(engine, src, sql)
    if reasons:
        raise UsageError(refusal(src.table, reasons))
    catalog.ensure(engine)  # outside the switch: creating an empty catalog is harmless
    if src.managed is not None and sql.file.has("gate"):
        step("gate")
        engine.run(sql.section("gate"))
        time.sleep(GATE_GRACE_S)
    retire = _retire(engine, src)  # read before the switch's transaction begins
    with engine.transaction() as execute:
        step("lock")
        for statement in sql.section("lock"):
            execute(statement)
        step("measure")
        measured = execute(sql.section("measure")[0], sql.params)[0]
        messages = int(measured["messages"])
        if messages > capacity:
            raise UsageError(refusal(src.table, [too_big(messages, capacity)]))
        if measured["min_id"] is not None and int(measured["min_id"]) < 0:
            raise UsageError(f"{src.table} has negative ids: a ring numbers messages from 0")
        _switch(engine, ring, sql, retire, execute, step)
        next_id = _next_id(measured)
        step("start_sequences")
        for statement in sql.section("start_sequences"):
            execute(statement, {"next": next_id})
        step("copy")
        _copy(engine, sql, ring, execute, measured, progress)
        if src.managed is not None:
            step("drop_set_aside")
            for statement in sql.section("drop_set_aside"):
                execute(statement)
        step("catalog")
        if src.managed is not None:
            execute(engine.hooks.catalog_sql("delete")[0], {"name": src.table})
        for statement in engine.hooks.catalog_sql("insert"):
            execute(statement, catalog.row(ring))
    return outcome(src, capacity, messages, next_id, int(measured["rows_left"]))


def _switch(
    engine: Engine,
    ring: QueueSpec,
    sql: ConvertSql,
    retire: list[str],
    execute: Execute,
    step: Step,
) -> None:
    step("set_aside")
    for statement in sql.section("set_aside"):
        execute(statement, sql.params)
    if retire:
        step("retire")
        for statement in retire:
            execute(statement)
    step("create")
    catalog.own_all(engine, ring, execute)
    for statement in engine.hooks.section(ring, "create"):
        execute(statement)
