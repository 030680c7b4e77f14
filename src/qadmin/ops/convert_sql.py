"""What a convert works on, and ``sql/queues/<dialect>/convert.sql`` rendered for it.

Shared by both ways of switching: one transaction where DDL is transactional (``convert``) and
resumable steps where it commits on its own (``convert_staged``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qadmin import catalog, sqlfiles
from qadmin.catalog import sql as diagnostic_sql
from qadmin.engines.base import CATALOG_TABLE, Engine, Execute
from qadmin.errors import NotFound, UnsupportedError, UsageError
from qadmin.kinds import (
    MAX_CAPACITY,
    PAUSABLE,
    PAUSED_AT,
    REVISION,
    ROUTINES_REVISION,
    Kind,
    QueueSpec,
)
from qadmin.names import validate_schema_name
from qadmin.profiles.model import Value
from qadmin.profiles.resolve import typed_values
from qadmin.profiles.shape import read_shape

BACKUP_SUFFIX = "_before_ring"
# Names of a staged switch's objects while it is under way (convert_staged).
GATE_SUFFIX = "__gate"
STAGED_SUFFIX = "__ring"
# Ids copied per statement (a progress step).
CHUNK = 10_000
# After a queue's push/pop are replaced, calls that began with the old ones are given this long
# to end before the switch goes on (it waits for them rather than surprising them).
GATE_GRACE_S = 1.0
_BINARY_TYPES = {"bytea", "blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary"}

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
    # Hand-built: only rows whose state_col equals waiting (a bound value) are messages.
    state_col: str | None = None
    waiting: Value | None = None  # typed as the column holds it (True, 7, 'new')
    # A staged convert that switched but did not finish: only its clean-up is left.
    switched: bool = False

    @property
    def origin(self) -> str:
        return self.managed.kind.value if self.managed else "table"


@dataclass(frozen=True)
class Renamed(QueueSpec):
    """A queue with some objects under other names: the ring built beside the queue before a
    staged switch, or the naive queue's leftovers after it."""

    renamed: tuple[tuple[str, str], ...] = ()

    def objects(self) -> dict[str, str]:
        return {**super().objects(), **dict(self.renamed)}


def gate_exists(engine: Engine, name: str) -> bool:
    """Whether a staged convert of ``name`` is under way: its gate table exists and qadmin
    recorded making it (a user's table that happens to be called <name>__gate is not one)."""
    gate = name + GATE_SUFFIX
    return engine.table_exists(gate) and catalog.owns(engine, name, ("table", gate))


def _unfinished(engine: Engine, spec: QueueSpec) -> Source | None:
    """A ring whose staged convert switched but did not finish: the source it came from."""
    origin = spec.options.get("converted_from")
    if not origin or not gate_exists(engine, spec.name):
        return None
    if origin == "table":
        return Source(table=spec.name, managed=None, switched=True)
    options = {"watermark": True} if spec.options.get("converted_watermark") else {}
    naive = QueueSpec(spec.name, Kind(origin), options=options)
    return Source(table=spec.name, managed=naive, switched=True)


def interrupted_backup(engine: Engine, name: str) -> str | None:
    """The table a staged switch renamed the source to, if it stopped before committing."""
    backup = name + BACKUP_SUFFIX
    if gate_exists(engine, name) and engine.table_exists(backup):
        return backup
    return None


def source(
    engine: Engine,
    name: str,
    id_col: str | None = None,
    payload_cols: tuple[str, ...] = (),
    time_col: str | None = None,
    state_col: str | None = None,
    waiting: Value | None = None,
) -> Source:
    """The qadmin queue called ``name``, else the hand-built table of that name."""
    validate_schema_name(name)
    if (state_col is None) != (waiting is None):
        raise UsageError("--state-column and --waiting go together")
    try:
        spec = catalog.get(engine, name)
    except NotFound:
        spec = None
    if spec is not None:
        resumed = _unfinished(engine, spec) if spec.info.ring else None
        if resumed is not None:
            return resumed
        spec.require("convertible", "convert")
        if id_col or payload_cols or time_col or state_col:
            raise UsageError(
                "--id-column/--payload-column/--time-column/--state-column are for hand-built "
                "tables"
            )
        return Source(table=name, managed=spec)
    if not engine.table_exists(name):
        engine.require_schema()
        raise NotFound(f"no queue or table {name!r} in schema {engine.schema}")
    table = interrupted_backup(engine, name) or name
    for column in filter(None, (id_col, time_col, state_col, *payload_cols)):
        validate_schema_name(column)
    if id_col is None:
        keys = diagnostic_sql.read(engine, "primary_key", {"schema": engine.schema, "table": table})
        names = [r["column_name"] for r in keys.rows]
        if len(names) != 1:
            raise UsageError(f"{name} has no single-column primary key: give --id-column")
        id_col = names[0]
    if not payload_cols:
        raise UsageError("a hand-built table needs --payload-column (one or more)")
    if state_col is not None and state_col in (id_col, time_col, *payload_cols):
        raise UsageError(f"--state-column {state_col} is also the id, time or a payload column")
    if state_col is not None and waiting is not None:
        waiting = _typed_waiting(engine, table, state_col, waiting)
    return Source(
        table=name,
        managed=None,
        id_col=id_col,
        payload_cols=payload_cols,
        time_col=time_col,
        state_col=state_col,
        waiting=waiting,
    )


def _typed_waiting(engine: Engine, table: str, state_col: str, waiting: Value) -> Value:
    """--waiting as the state column holds it: a boolean column's ``true`` bound as text
    would read as 0 on MariaDB (and match nothing on SQLite), moving the wrong rows."""
    shape = read_shape(engine, table)
    column = shape.column(state_col) if shape is not None else None
    if column is None:
        raise UsageError(f"--state-column {state_col}: no such column in {table}")
    return typed_values((waiting,), column.family, column.labels)[0]


def refusal(table: str, reasons: list[str]) -> str:
    """The one line a refused convert prints (the dry run prints the same)."""
    return f"refusing to convert {table}: " + "; ".join(reasons)


def too_big(messages: int, capacity: int) -> str:
    return (
        f"its backlog of {messages:,} messages does not fit a ring of {capacity:,} "
        "(choose a larger --capacity)"
    )


def ring_spec(src: Source, capacity: int) -> QueueSpec:
    """The ring that takes over the queue's name; its options say where it came from."""
    if not 1 <= capacity <= MAX_CAPACITY:
        raise UsageError(f"--capacity must be between 1 and {MAX_CAPACITY:,}")
    # The ring's routines are the current template's, so they read a pause; a paused queue
    # stays paused.
    options: dict[str, Any] = {
        "converted_from": src.origin,
        PAUSABLE: True,
        REVISION: ROUTINES_REVISION,
    }
    if src.managed is not None and src.managed.watermark:
        options["converted_watermark"] = True
    if src.managed is not None and src.managed.paused_at is not None:
        options[PAUSED_AT] = src.managed.paused_at
    return QueueSpec(name=src.table, kind=Kind.RING, capacity=capacity, options=options)


def staged_switch(engine: Engine) -> bool:
    """Whether this engine switches in resumable steps (its DDL commits on its own)."""
    return _file(engine).has("rename")


def _file(engine: Engine) -> sqlfiles.SqlFile:
    found = engine.hooks.sql_file("queues", "convert")
    if found is not None:
        return found
    raise UnsupportedError(
        f"convert is not available on {engine.dialect}: its DDL commits on its own and it has "
        "no CREATE OR REPLACE PROCEDURE to switch push/pop atomically (see docs/kinds.md)"
    )


class ConvertSql:
    """convert.sql rendered for one source and the ring replacing it."""

    def __init__(self, engine: Engine, src: Source, ring: QueueSpec, columns_from: str = ""):
        """``columns_from``: the table whose column types shape the copy (default the source;
        its backup once a staged switch has renamed it)."""
        self.engine, self.src, self.ring = engine, src, ring
        self.file = _file(engine)
        self.backup = src.table + BACKUP_SUFFIX
        self.gate = src.table + GATE_SUFFIX
        staged = src.table + STAGED_SUFFIX
        self.staged = {
            "table": staged,
            "push": staged + "_push",
            "push_many": staged + "_push_many",
            "pop": staged + "_pop",
        }
        self.names = {
            **ring.objects(),
            "catalog": CATALOG_TABLE,  # the gate's pop reads the pause there
            "src": src.table,
            "id_col": src.id_col,
            "backup": self.backup,
            "gate": self.gate,
            "staged_table": self.staged["table"],
            "staged_push": self.staged["push"],
            "staged_push_many": self.staged["push_many"],
            "staged_pop": self.staged["pop"],
        }
        self.keywords = engine.hooks.keywords(ring)
        self.keywords["src_order_by"] = src.managed.keywords()["order_by"] if src.managed else ""
        self.keywords["waiting"] = "1 = 1"
        if src.state_col:
            state = {"state_col": src.state_col}
            self.keywords["waiting"] = engine.hooks.render_text(
                "{state_col.bare} = :waiting", state
            )
        # Bound with every statement that filters on {waiting}.
        self.params: dict[str, Any] = {"waiting": src.waiting} if src.state_col else {}
        hand_built = src.managed is None and not src.switched  # switched: nothing to copy
        types = self._column_types(columns_from or src.table) if hand_built else {}
        self.keywords["time_expr"] = self._time()
        self.keywords["payload_expr"] = self._payload(types)

    def _fragment(
        self, name: str, names: dict[str, str] | None = None, keywords: dict[str, str] | None = None
    ) -> str:
        """One of convert.sql's column expressions, rendered for this source."""
        return self.engine.hooks.render_text(self.file.statements(name)[0], names or {}, keywords)

    def _column_types(self, table: str) -> dict[str, str]:
        rows = self.engine.query(
            self.engine.base_hooks.engine_sql("column_types"),
            {"schema": self.engine.schema, "name": table},
        )
        types = {r["column_name"]: str(r["data_type"]).lower() for r in rows}
        src = self.src
        for column in (src.id_col, src.time_col, src.state_col, *src.payload_cols):
            if column and column not in types:
                raise NotFound(f"{self.src.table} has no column {column!r}")
        return types

    def _time(self) -> str:
        if self.src.time_col is None:
            return self._fragment("time_now")
        return self._fragment("time_col", {"col": self.src.time_col})

    def _payload(self, types: dict[str, str]) -> str:
        cols = self.src.payload_cols
        if len(cols) > 1:
            pair = "{col.bare_lit}, {col.bare}"
            pairs = ", ".join(self.engine.hooks.render_text(pair, {"col": c}) for c in cols)
            return self._fragment("payload_json", keywords={"pairs": pairs})
        binary = types.get(cols[0], "bytea") in _BINARY_TYPES
        return self._fragment("payload_bytes" if binary else "payload_text", {"col": cols[0]})

    def section(self, name: str) -> list[str]:
        statements = self.file.statements(name) if self.file.has(name) else ()
        return [self.engine.hooks.render_text(s, self.names, self.keywords) for s in statements]


@dataclass(frozen=True)
class Converted:
    """What a convert reports, the same whichever way the engine switched (docs/commands.md:
    output keys). ``rows_left``: rows that were not waiting messages, left in the kept table;
    ``backup_table``: a hand-built table, kept under that name (None for a qadmin queue)."""

    queue: str
    origin: str
    capacity: int
    messages: int | None
    rows_left: int | None
    next_id: int
    backup_table: str | None

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "from": self.origin,
            "to": "ring",
            "capacity": self.capacity,
            "messages": self.messages,
            "rows_left": self.rows_left,
            "next_id": self.next_id,
            "backup_table": self.backup_table,
        }


@dataclass(frozen=True)
class ConvertPlan:
    """What a convert would do (--dry-run, read-only): the backlog, whether it fits, what the
    convert would refuse, every step still to do (``resuming``: the state an interrupted staged
    convert left, None when nothing is under way) and its SQL."""

    queue: str
    origin: str
    to_capacity: int
    resuming: str | None
    messages: int | None
    rows_left: int | None
    fits: bool
    refused: tuple[str, ...]
    steps: tuple[str, ...]
    statements: tuple[str, ...]

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "from": self.origin,
            "to_capacity": self.to_capacity,
            "resuming": self.resuming,
            "messages": self.messages,
            "rows_left": self.rows_left,
            "fits": self.fits,
            "refused": list(self.refused),
            "steps": list(self.steps),
            "statements": list(self.statements),
        }


def outcome(
    src: Source, capacity: int, messages: int | None, next_id: int, rows_left: int | None = 0
) -> Converted:
    """What convert reports, the same whichever way the engine switched."""
    return Converted(
        queue=src.table,
        origin=src.origin,
        capacity=capacity,
        messages=messages,
        rows_left=rows_left,
        next_id=next_id,
        backup_table=None if src.managed else src.table + BACKUP_SUFFIX,
    )


def copy_backlog(
    sql: ConvertSql, execute: Execute, first_id: int, messages: int, progress: Progress | None
) -> None:
    """Park the backlog in id order, a chunk of rows at a time (keyset, so sparse ids cost
    nothing)."""
    after, copied = first_id - 1, 0
    while copied < messages:
        rows: list[dict[str, Any]] = []
        for statement in sql.section("copy"):
            rows = execute(statement, {**sql.params, "after": after, "chunk": CHUNK})
        copied += int(rows[0]["copied"])
        after = int(rows[0]["last_id"])
        if progress:
            progress(copied, messages)
    for statement in sql.section("finish"):
        execute(statement)
