"""Turning a naive INSERT/DELETE queue into a ring, with its backlog, ids and order kept.

The source is a qadmin ``fifo``/``heap`` queue, or a hand-built table named with its id column
and payload column(s). The ring takes over the queue's name. Everything that changes data runs
in one transaction (``sql/queues/<dialect>/convert.sql`` explains the steps per engine), so a
convert that is killed or loses its connection rolls back whole and running it again finishes
the job: nothing is lost or duplicated either way.

Cut-over: a qadmin queue's push/pop routines (PostgreSQL) are switched inside that transaction
after being replaced by versions that re-dispatch once it commits, so callers see no error. A
hand-built table is renamed to ``<table>_before_ring`` (kept, with its rows, for the DBA to
drop) and the ring gets its name: applications must stop writing it with their own SQL and
call ``<table>_push`` / ``<table>_pop`` (or ``qadmin push/pop``) instead; their old statements
fail loudly against the ring table rather than writing where nobody reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qadmin import sqlfiles
from qadmin.engines.base import Engine, Execute
from qadmin.errors import NotFound, UnsupportedError, UsageError, WrongKind
from qadmin.kinds import MAX_CAPACITY, Kind, QueueSpec
from qadmin.names import validate_schema_name
from qadmin.ops import catalog, diagnose, resize

CONVERTIBLE = {Kind.FIFO, Kind.HEAP}
BACKUP_SUFFIX = "_before_ring"
# Ids copied per statement (a progress step).
CHUNK = 10_000
# After the gated routines are installed, calls that began with the old ones are given this
# long to reach the table, so the switch waits for them rather than surprising them.
GATE_GRACE_S = 1.0

Progress = Callable[[int, int], None]
Step = Callable[[str], None]


@dataclass(frozen=True)
class Source:
    """What is being converted: a managed queue, or a hand-built table and its columns."""

    table: str
    managed: QueueSpec | None
    id_col: str = "id"
    payload_cols: tuple[str, ...] = ("payload",)
    time_col: str | None = "enqueued_at"


def source(
    engine: Engine,
    name: str,
    id_col: str | None = None,
    payload_cols: tuple[str, ...] = (),
    time_col: str | None = None,
) -> Source:
    """The qadmin queue called ``name``, else the hand-built table of that name."""
    validate_schema_name(name)
    try:
        spec = catalog.get(engine, name)
    except NotFound:
        spec = None
    if spec is not None:
        if spec.kind not in CONVERTIBLE:
            raise WrongKind(f"convert takes a fifo or heap queue; {name} is a {spec.kind} queue")
        if id_col or payload_cols or time_col:
            raise UsageError("--id-column/--payload-column/--time-column are for hand-built tables")
        return Source(table=name, managed=spec)
    if not engine.table_exists(name):
        raise NotFound(f"no queue or table {name!r} in schema {engine.schema}")
    for column in filter(None, (id_col, time_col, *payload_cols)):
        validate_schema_name(column)
    if id_col is None:
        keys = diagnose.run_part(engine, "primary_key", {"schema": engine.schema, "table": name})
        names = [r["column_name"] for r in keys.rows]
        if len(names) != 1:
            raise UsageError(f"{name} has no single-column primary key: give --id-column")
        id_col = names[0]
    if not payload_cols:
        raise UsageError("a hand-built table needs --payload-column (one or more)")
    return Source(
        table=name, managed=None, id_col=id_col, payload_cols=payload_cols, time_col=time_col
    )


def _file(engine: Engine) -> sqlfiles.SqlFile:
    relative = f"queues/{engine.base_dialect}/convert.sql"
    if not sqlfiles.exists(relative):
        raise UnsupportedError(
            f"convert is not available on {engine.dialect}: it relies on one transaction for "
            "the whole switch, and DDL there commits on its own (see README)"
        )
    return sqlfiles.load(relative)


def _ring(src: Source, capacity: int) -> QueueSpec:
    if not 1 <= capacity <= MAX_CAPACITY:
        raise UsageError(f"--capacity must be between 1 and {MAX_CAPACITY:,}")
    return QueueSpec(
        name=src.table,
        kind=Kind.RING,
        capacity=capacity,
        options={"converted_from": src.managed.kind.value if src.managed else "table"},
    )


class _Sql:
    """convert.sql rendered for one source and the ring replacing it."""

    def __init__(self, engine: Engine, src: Source, ring: QueueSpec):
        self.engine, self.src, self.ring = engine, src, ring
        self.file = _file(engine)
        columns = self._column_types() if src.managed is None else {}
        q = engine.quote_ident
        self.fill = {
            "{src}": engine.qualified(src.table),
            "{backup_name}": q(src.table + BACKUP_SUFFIX),
            "{id_col}": q(src.id_col),
            "{time_expr}": self._time(),
            "{payload_expr}": self._payload(columns),
            "{order_by}": src.managed.keywords()["order_by"] if src.managed else "",
        }

    def _fragment(self, name: str, **values: str) -> str:
        text = self.file.statements(name)[0]
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        return text

    def _column_types(self) -> dict[str, str]:
        rows = self.engine.query(
            self.engine.engine_sql("column_types"),
            {"schema": self.engine.schema, "name": self.src.table},
        )
        types = {r["column_name"]: str(r["data_type"]).lower() for r in rows}
        for column in (self.src.id_col, self.src.time_col, *self.src.payload_cols):
            if column and column not in types:
                raise NotFound(f"{self.src.table} has no column {column!r}")
        return types

    def _time(self) -> str:
        if self.src.time_col is None:
            return self._fragment("time_now")
        return self._fragment("time_col", col=self.engine.quote_ident(self.src.time_col))

    def _payload(self, types: dict[str, str]) -> str:
        cols = self.src.payload_cols
        q = self.engine.quote_ident
        if len(cols) > 1:
            pairs = ", ".join(f"{self.engine.quote_literal(c)}, {q(c)}" for c in cols)
            return self._fragment("payload_json", pairs=pairs)
        binary = types.get(cols[0], "bytea") in ("bytea", "blob")
        return self._fragment("payload_bytes" if binary else "payload_text", col=q(cols[0]))

    def section(self, name: str) -> list[str]:
        out = []
        for statement in self.file.statements(name) if self.file.has(name) else ():
            for key, value in self.fill.items():
                statement = statement.replace(key, value)
            out.append(self.engine.render(statement, self.ring))
        return out


STEPS = {
    "gate": "replace the queue's push/pop with versions that wait for the switch and then call "
    "the ring's (own transaction; PostgreSQL only); wait {grace}s for calls already running",
    "lock": "lock the table (PostgreSQL: ACCESS EXCLUSIVE, under the lock timeout; SQLite: the "
    "write lock): pushes and pops wait until commit",
    "measure": "count the backlog; refuse if it is larger than the capacity",
    "set_aside": "copy the backlog with its ids into a temporary table",
    "retire": "drop the queue's table and routines (a hand-built table is renamed to "
    "{backup} and kept)",
    "create": "create the ring under the queue's name (slots, sequences, overflow, parked "
    "numbers, push/pop routines)",
    "start_sequences": "start both ring sequences above the highest id",
    "copy": "park the backlog: messages into the overflow table, their numbers into the parked "
    "list, so pops serve them first, in id order (chunks of {chunk} rows)",
    "catalog": "record the queue as a ring in qadmin's catalog; commit",
}


def plan(engine: Engine, src: Source, capacity: int) -> dict[str, Any]:
    """Every step, the locks it takes, the SQL, and whether the backlog fits (read-only)."""
    ring = _ring(src, capacity)
    sql = _Sql(engine, src, ring)
    measured = engine.run(sql.section("measure"), write=False)[0]
    messages = int(measured["messages"])
    gated = src.managed is not None and sql.file.has("gate")
    names = [n for n in STEPS if n != "gate" or gated]
    return {
        "queue": src.table,
        "from": src.managed.kind.value if src.managed else "table",
        "to_capacity": capacity,
        "messages": messages,
        "fits": messages <= capacity,
        "steps": [
            STEPS[n].format(
                grace=GATE_GRACE_S, backup=src.table + BACKUP_SUFFIX, chunk=f"{CHUNK:,}"
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
        + engine.section(ring, "create")
        + [s for n in ("start_sequences", "copy", "finish") for s in sql.section(n)],
    }


def _retire(engine: Engine, src: Source, sql: _Sql) -> list[str]:
    if src.managed is not None:
        return engine.section(src.managed, "drop")
    return sql.section("retire_external")


def convert(
    engine: Engine,
    src: Source,
    capacity: int,
    on_step: Step | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    ring = _ring(src, capacity)
    sql = _Sql(engine, src, ring)
    step = on_step or (lambda name: None)
    catalog.ensure(engine)  # outside the switch: creating an empty catalog is harmless
    if src.managed is not None and sql.file.has("gate"):
        step("gate")
        engine.run(sql.section("gate"))
        time.sleep(GATE_GRACE_S)
    with engine.transaction() as execute:
        step("lock")
        for statement in sql.section("lock"):
            execute(statement)
        step("measure")
        measured = execute(sql.section("measure")[0])[0]
        messages = int(measured["messages"])
        if messages > capacity:
            raise UsageError(
                f"refusing to convert {src.table}: its backlog of {messages:,} messages does "
                f"not fit a ring of {capacity:,} (choose a larger --capacity)"
            )
        if measured["min_id"] is not None and int(measured["min_id"]) < 0:
            raise UsageError(f"{src.table} has negative ids: a ring numbers messages from 0")
        _switch(engine, src, ring, sql, execute, step)
        next_id = int(measured["max_id"] or 0) + 1
        step("start_sequences")
        for statement in sql.section("start_sequences"):
            execute(statement, {"next": next_id})
        step("copy")
        _copy(sql, execute, int(measured["min_id"] or 0), messages, progress)
        step("catalog")
        if src.managed is not None:
            execute(engine.catalog_sql("delete")[0], {"name": src.table})
        for statement in engine.catalog_sql("insert"):
            execute(statement, catalog.row(ring))
    return {
        "queue": src.table,
        "from": src.managed.kind.value if src.managed else "table",
        "to": "ring",
        "capacity": capacity,
        "messages": messages,
        "next_id": next_id,
        "backup_table": None if src.managed else src.table + BACKUP_SUFFIX,
    }


def _switch(
    engine: Engine, src: Source, ring: QueueSpec, sql: _Sql, execute: Execute, step: Step
) -> None:
    step("set_aside")
    for statement in sql.section("set_aside"):
        execute(statement)
    step("retire")
    for statement in _retire(engine, src, sql):
        execute(statement)
    step("create")
    for statement in engine.section(ring, "create"):
        execute(statement)
    resize.grow(engine, ring, execute, 0, int(ring.capacity or 0))


def _copy(
    sql: _Sql, execute: Execute, first_id: int, messages: int, progress: Progress | None
) -> None:
    """Park the backlog in id order, a chunk of rows at a time (keyset, so sparse ids cost
    nothing)."""
    after, copied = first_id - 1, 0
    while copied < messages:
        rows: list[dict[str, Any]] = []
        for statement in sql.section("copy"):
            rows = execute(statement, {"after": after, "chunk": CHUNK})
        copied += int(rows[0]["copied"])
        after = int(rows[0]["last_id"])
        if progress:
            progress(copied, messages)
    for statement in sql.section("finish"):
        execute(statement)
