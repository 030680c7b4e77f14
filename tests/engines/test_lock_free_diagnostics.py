"""The catalog diagnostics answer during the lock incidents a DBA opens inspect for (issue 14):
they read catalogs and statistics only, so they never queue behind a lock on the queue table,
whether that lock is granted (LOCK TABLE ... ACCESS EXCLUSIVE) or only waiting (an ALTER TABLE
behind an open transaction, which makes every later reader of the table queue too)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from qadmin import sqlfiles
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import LockTimeout
from tests.conftest import Target, make_target
from tests.engines.incidents import connect, execute, pileup, table_locked
from tests.helpers import make_queue

SHORT = Timeouts(lock_ms=500)
# Diagnostics that must return at least one row for an existing queue table.
ANSWERS = {"size", "ghosts", "primary_key", "counters", "fragmentation", "sessions"}


def catalog_diagnostics(engine: Engine) -> list[str]:
    """Every diagnostic of the engine but the --deep ones (which read the table's pages) and
    explain's plan (a wrapper of the queue's head, which reads the table: test_explain.py)."""
    root = sqlfiles.sql_root() / "diagnostics"
    names = {
        p.stem
        for dialect in (engine.dialect, engine.base_dialect)
        for p in (root / dialect).glob("*.sql")
    }
    return sorted(n for n in names if not n.endswith("_deep") and n != "explain")


def _answers(target: Target) -> dict[str, list[dict[str, object]]]:
    """Each catalog diagnostic run on a fresh session with a 500 ms lock timeout."""
    engine = open_engine(target.dsn, target.engine_schema, SHORT)
    try:
        params = {
            "schema": engine.schema,
            "table": "lockfree_q",
            "dead": "lockfree_q",  # lock_holders: the dead table, the queue again when none
            "max_pages": 1000,
            "names": "qadmin_queues,lockfree_q",  # queue_tables: the tables status starts from
            "prefixes": "ack_queue_",
        }
        return {name: engine.diagnostic(name, params) for name in catalog_diagnostics(engine)}
    finally:
        engine.close()


def _reading_the_table_times_out(target: Target, sql: str) -> None:
    """The incident is real: an ordinary read of the table does wait, and times out."""
    engine = open_engine(target.dsn, target.engine_schema, SHORT)
    try:
        with pytest.raises(LockTimeout):
            engine.query(sql)
    finally:
        engine.close()


def _assert_answered(answers: dict[str, list[dict[str, object]]]) -> None:
    empty = sorted(n for n in ANSWERS & set(answers) if not answers[n])
    assert not empty, f"no rows from {empty}"


def test_postgres_catalog_diagnostics_answer_behind_access_exclusive_lock(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    table = engine.qualified(make_queue(engine, "lockfree_q", count=50).name)
    with table_locked(target, table):
        _reading_the_table_times_out(target, f"SELECT pg_table_size('{table}') AS b")
        _assert_answered(_answers(target))
    engine.close()


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_catalog_diagnostics_answer_behind_a_waiting_alter(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified(make_queue(engine, "lockfree_q", count=50).name)
    with pileup(target, table, readers=1) as incident:
        _reading_the_table_times_out(target, f"SELECT count(*) AS n FROM {table}")
        answers = _answers(target)
        _assert_answered(answers)
        mine = [r for r in answers["locks"] if r["waiter"] in incident.waiters]
        assert {r["waiter"] for r in mine} == set(incident.waiters), (incident, answers["locks"])
        assert {r["root_blocker"] for r in mine} == {incident.holder}, mine
    engine.close()


def test_mariadb_catalog_diagnostics_answer_behind_lock_tables_write(request, tmp_path):
    """LOCK TABLES ... WRITE held in another session: readers of the table wait for its
    metadata lock, the catalog diagnostics (information_schema.TABLES included) do not."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified(make_queue(engine, "lockfree_q", count=50).name)
    holder = connect(target)
    try:
        execute(holder, f"LOCK TABLES {table} WRITE")
        _reading_the_table_times_out(target, f"SELECT count(*) AS n FROM {table}")
        _assert_answered(_answers(target))
    finally:
        execute(holder, "UNLOCK TABLES")
        holder.close()
    engine.close()


@contextmanager
def _sqlite_writer(path: str) -> Iterator[None]:
    """Another connection in the middle of a write transaction on the queue table."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("DELETE FROM lockfree_q")
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_sqlite_diagnostics_answer_while_a_writer_holds_the_file(request, tmp_path):
    target = make_target("sqlite", request, tmp_path)
    engine = target.engine()
    make_queue(engine, "lockfree_q", count=50)
    with _sqlite_writer(str(tmp_path / "queues.db")):
        answers = _answers(target)
        _assert_answered(answers)
    engine.close()


def test_mariadb_metadata_lock_pileup_shows_each_waiter_and_the_holder(request, tmp_path):
    """A reads the table and stays open; B's ALTER waits for the metadata lock; C's SELECT
    queues behind B. ``locks`` names B and C as waiting on a metadata lock, once each: B
    blocked by A, C by B's pending ALTER, both with A at the root (a guess: no plugin)."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified(make_queue(engine, "lockfree_q", count=50).name)
    with pileup(target, table, readers=1) as incident:
        rows = engine.diagnostic("locks", {"schema": engine.schema, "table": "lockfree_q"})
        mdl = [r for r in rows if r["waiter"] in incident.waiters]
        assert {r["waiter"] for r in mdl} == set(incident.waiters), rows
        assert len(mdl) == len(incident.waiters), rows
        blockers = {r["waiter"]: r["blocker"] for r in mdl}
        assert blockers == {incident.alter: incident.holder, incident.readers[0]: incident.alter}
        assert {r["root_blocker"] for r in mdl} == {incident.holder}
        assert {r["blocker_source"] for r in mdl} == {"inferred"}
        assert all(r["lock"] == "metadata lock (table)" for r in mdl)
        assert all(float(r["wait_s"]) > 0 for r in mdl)
        alter = next(r for r in mdl if r["waiter"] == incident.alter)
        assert float(alter["blocker_xact_age_s"]) >= 0  # the reader's blocker, the ALTER, has none
        assert (
            "ALTER TABLE" in next(r for r in mdl if r["waiter"] == incident.alter)["waiter_query"]
        )
    engine.close()
