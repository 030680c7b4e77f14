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
    CHUNK,
    GATE_GRACE_S,
    ConvertSql,
    Progress,
    Source,
    Step,
    copy_backlog,
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
    "set_aside": "copy the backlog with its ids into a temporary table",
    "retire": "drop the queue's table and routines (a hand-built table is renamed to "
    "{backup.bare} and kept)",
    "create": "create the ring under the queue's name (slots, sequences, overflow, parked "
    "numbers, push/pop routines)",
    "start_sequences": "start both ring sequences above the highest id (PostgreSQL: above "
    "every id the table's identity sequence handed out)",
    "copy": "park the backlog: messages into the overflow table, their numbers into the parked "
    "list, so pops serve them first, in id order (chunks of {chunk} rows)",
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


def refused(result: dict[str, Any]) -> str | None:
    """A dry run's refusal as the one line the convert itself would fail with, or None."""
    reasons = list(result["refused"])
    return refusal(result["queue"], reasons) if reasons else None


def plan(engine: Engine, src: Source, capacity: int) -> dict[str, Any]:
    """Every step, the locks it takes, the SQL, whether the backlog fits and what the convert
    would refuse (read-only)."""
    ring = ring_spec(src, capacity)
    result = (
        convert_staged.plan(engine, src, ring)
        if staged_switch(engine)
        else _plan(engine, src, ring, capacity)
    )
    if not result["fits"]:  # in "refused" too, so every format says why it would not run
        result["refused"] = [*result["refused"], too_big(result["messages"], capacity)]
    return result


def _plan(engine: Engine, src: Source, ring: QueueSpec, capacity: int) -> dict[str, Any]:
    sql = ConvertSql(engine, src, ring)
    measured = engine.run(sql.section("measure"), sql.params, write=False)[0]
    messages = int(measured["messages"])
    gated = src.managed is not None and sql.file.has("gate")
    names = [n for n in STEPS if n != "gate" or gated]
    return {
        "queue": src.table,
        "from": src.origin,
        "to_capacity": capacity,
        "resuming": None,  # one transaction: nothing is ever left half-done
        "messages": messages,
        "rows_left": int(measured["rows_left"]),
        "fits": messages <= capacity,
        "refused": convert_guard.refusals(engine, src, sql),
        "steps": [
            engine.hooks.render_text(
                STEPS[n],
                {"backup": src.table + BACKUP_SUFFIX},
                {"grace": str(GATE_GRACE_S), "chunk": f"{CHUNK:,}"},
            )
            for n in names
        ],
        "statements": [
            s
            for n in ("gate", "lock", "measure", "set_aside")
            if n != "gate" or gated
            for s in sql.section(n)
        ]
        + _retire(engine, src, sql)
        + engine.hooks.section(ring, "create")
        + [s for n in ("start_sequences", "copy", "finish") for s in sql.section(n)],
    }


def _retire(engine: Engine, src: Source, sql: ConvertSql) -> list[str]:
    if src.managed is not None:  # only what qadmin recorded as the queue's own
        return catalog.drop_statements(engine, catalog.made_by_create(engine, src.managed))
    return sql.section("retire_external")


def convert(
    engine: Engine,
    src: Source,
    capacity: int,
    on_step: Step | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
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
    retire = _retire(engine, src, sql)  # read before the switch's transaction begins
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
        # SQLite's measure has no next_id: its AUTOINCREMENT counter is not read (yet).
        next_id = int(measured.get("next_id") or int(measured["max_id"] or 0) + 1)
        step("start_sequences")
        for statement in sql.section("start_sequences"):
            execute(statement, {"next": next_id})
        step("copy")
        copy_backlog(sql, execute, int(measured["min_id"] or 0), messages, progress)
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
    step("retire")
    for statement in retire:
        execute(statement)
    step("create")
    catalog.own_all(engine, ring, execute)
    for statement in engine.hooks.section(ring, "create"):
        execute(statement)
    resize.grow(engine, ring, execute, 0, int(ring.capacity or 0))
