"""A consumer that pops and keeps its transaction open, as one still processing its message."""

from __future__ import annotations

from typing import Any

from qadmin.engines import Engine
from qadmin.kinds import QueueSpec

SESSION_ID = {
    "postgresql": "SELECT pg_backend_pid()",
    "mysql": "SELECT CONNECTION_ID()",
    "mssql": "SELECT @@SPID",
}


def hold_pop(target: Any, spec: QueueSpec) -> tuple[Engine, list[tuple[Any, ...]], str | None]:
    """Pop one message on a new connection and leave the transaction open; also return the
    server's id for that session (read on the raw cursor: a qadmin query would commit)."""
    engine = target.engine()
    cursor = engine.conn.cursor()
    session = None
    if engine.name in SESSION_ID:
        cursor.execute(SESSION_ID[engine.name])
        session = str(cursor.fetchone()[0])
    if engine.name == "mssql":
        cursor.execute(engine.base_hooks.engine_sql("begin"))
    if engine.name == "sqlite":
        cursor.execute("BEGIN IMMEDIATE")
    rows: list[tuple[Any, ...]] = []
    for statement in engine.hooks.section(spec, "pop"):
        sql, args = engine.bind(statement, {"count": 1, "worker": "holder"})
        cursor.execute(sql, args)
        while True:
            if cursor.description:
                rows.extend(cursor.fetchall())
            nextset = getattr(cursor, "nextset", None)
            if nextset is None or not nextset():
                break
    return engine, rows, session


def finish(holder: Engine, commit: bool) -> None:
    """End the held transaction the way the engine itself does."""
    if commit:
        holder._commit(holder.conn.cursor(), True)
    else:
        holder._rollback()
