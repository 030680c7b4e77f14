"""How each state of the failure matrix is created for real (tests/engines/matrix.py declares
which engine gets which). Each creator is a context manager: inside the block the state
exists, and the creator has already checked the raw condition on the server itself (pg_locks
shows the waiter, ring_state shows the hole...), so a failing matrix cell says whether qadmin
missed a real state or the state was never made. Only the test's own sessions are asserted on:
other tests run on the same servers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any

import psycopg

from qadmin import catalog
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import QadminError, QueueEmpty
from qadmin.kinds import QueueSpec
from qadmin.ops import messages, queues
from qadmin.ops import pause as pause_ops
from qadmin.ops import watermark as wm_ops
from tests.conftest import Target
from tests.engines.holding import finish, hold_pop
from tests.engines.incidents import (
    WAIT_POLL_S,
    connect,
    execute,
    pileup,
    session_id,
    until,
    waiting_sessions,
)
from tests.engines.test_ring_holes import _block_push, _kill_blocked_client, _lock_slot
from tests.helpers import make_queue

Creator = Callable[[Target, Engine], AbstractContextManager[str]]
HELD_S = 1.2  # past the 1 s thresholds the matrix passes (--warn-snapshot-age 1s, ...)


def _template(engine: Engine, spec: QueueSpec, section: str, **params: Any) -> dict[str, Any]:
    return dict(engine.run(engine.hooks.section(spec, section), params, write=False)[0])


@contextmanager
def held_snapshot(target: Target, engine: Engine) -> Iterator[str]:
    """A session that read the queue in a snapshot transaction and stays open."""
    spec = make_queue(engine, "mx_snapshot", "fifo")
    messages.push(engine, spec, [b"s"] * 10)
    holder = connect(target)
    if target.label == "postgresql":
        execute(holder, "BEGIN ISOLATION LEVEL REPEATABLE READ")
        probe = "SELECT backend_xmin IS NOT NULL FROM pg_stat_activity WHERE pid = {}"
    else:
        execute(holder, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
        probe = (
            "SELECT count(*) > 0 FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = {}"
        )
    try:
        execute(holder, f"SELECT count(*) FROM {engine.qualified(spec.name)}")
        time.sleep(HELD_S)
        assert execute(holder, probe.format(int(session_id(holder))))[0][0]
        yield spec.name
    finally:
        execute(holder, "ROLLBACK")
        holder.close()


@contextmanager
def row_lock_wait(target: Target, engine: Engine) -> Iterator[str]:
    """A consumer holds the head message in an open transaction; a strict consumer waits."""
    spec = make_queue(engine, "mx_rowlock", "fifo", strict=True)
    messages.push(engine, spec, [b"a", b"b"])
    holder, _, _ = hold_pop(target, spec)
    waiter = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=60_000))
    waiter_id = str(waiter.query(_SESSION[target.label])[0]["s"])
    thread = threading.Thread(target=_pop_quietly, args=(waiter, spec), daemon=True)
    thread.start()
    observer = connect(target)
    try:
        assert until(lambda: waiter_id in waiting_sessions(target, observer), every_s=WAIT_POLL_S)
        time.sleep(0.6)  # past --warn-lock-wait 0.5
        yield spec.name
    finally:
        finish(holder, commit=True)
        thread.join(timeout=30)
        for eng in (holder, waiter):
            eng.close()
        observer.close()


_SESSION = {
    "postgresql": "SELECT pg_backend_pid() AS s",
    "mariadb": "SELECT CONNECTION_ID() AS s",
}


def _pop_quietly(engine: Engine, spec: QueueSpec) -> None:
    with suppress(QadminError):
        messages.pop(engine, spec)


@contextmanager
def lock_pileup(target: Target, engine: Engine) -> Iterator[str]:
    """An ALTER TABLE waits behind a transaction that read the queue; a reader queues behind
    the ALTER: two sessions waiting (PostgreSQL: for the table lock; MariaDB: for the table's
    metadata lock)."""
    spec = make_queue(engine, "mx_pileup", "fifo")
    messages.push(engine, spec, [b"p"] * 10)
    with pileup(target, engine.qualified(spec.name), readers=1):
        time.sleep(0.6)
        yield spec.name


@contextmanager
def stale_claim(target: Target, engine: Engine) -> Iterator[str]:
    """A claim older than --stale-after 1 whose consumer died (its session is gone, so even
    requeue --skip-live releases it: tests/engines/test_requeue_live.py)."""
    spec = make_queue(engine, "mx_claim", "claim")
    messages.push(engine, spec, [b"job"])
    consumer = target.engine()
    messages.pop(consumer, spec, worker="stalled")
    consumer.close()
    time.sleep(HELD_S)
    claims = engine.run(engine.hooks.section(spec, "claims"), {"limit": 10}, write=False)
    assert [c["claimed_by"] for c in claims] == ["stalled"]
    assert float(claims[0]["claimed_for_s"]) >= 1
    yield spec.name


@contextmanager
def dead_letters(target: Target, engine: Engine) -> Iterator[str]:
    """A message that failed its last allowed attempt (--max-attempts 1): in the dead table."""
    spec = make_queue(engine, "mx_dead", "claim", max_attempts=1)
    messages.push(engine, spec, [b"poison", b"fine"])
    [popped] = messages.pop(engine, spec, worker="w")
    assert messages.fail(engine, spec, popped.id, "boom", retry=True).dead is True
    yield spec.name


@contextmanager
def paused(target: Target, engine: Engine) -> Iterator[str]:
    """A queue left paused (qadmin pause) with a message waiting: its pop takes nothing."""
    spec = make_queue(engine, "mx_paused", "fifo")
    messages.push(engine, spec, [b"waiting"])
    pause_ops.pause(engine, spec)
    with suppress(QueueEmpty):
        messages.pop(engine, spec)
        raise AssertionError("a paused queue's pop took a message")
    time.sleep(0.2)  # paused_for_s > 0 for tail
    yield spec.name


@contextmanager
def dropping(target: Target, engine: Engine) -> Iterator[str]:
    """A drop that stopped half-way (an engine without transactional DDL: one object at a
    time, the catalog entry marked dropping first): its DROP TABLE timed out behind a
    reader's metadata lock after the routines went. The catalog entry still says dropping."""
    spec = make_queue(engine, "mx_dropping", "fifo")
    messages.push(engine, spec, [b"a"])
    reader = connect(target)
    try:
        execute(reader, "BEGIN")
        execute(reader, f"SELECT count(*) FROM {engine.qualified(spec.name)}")  # its MDL
        short = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=500))
        try:
            with suppress(QadminError):
                queues.drop(short, spec)
                raise AssertionError("the drop finished behind a metadata lock")
        finally:
            short.close()
    finally:
        execute(reader, "ROLLBACK")
        reader.close()
    left = catalog.find(engine, spec.name)
    assert left is not None and left.state == catalog.DROPPING, left
    try:
        yield spec.name
    finally:
        with suppress(QadminError):
            queues.drop(engine, catalog.get(engine, spec.name))


@contextmanager
def ring_push_hole(target: Target, engine: Engine) -> Iterator[str]:
    """A pusher killed after taking its number: pops stop at the missing message."""
    spec = make_queue(engine, "ring_q", "ring", capacity=4)
    _kill_blocked_client(target, "push", _block_push(target))  # number 0, slot 0
    messages.push(engine, spec, [b"behind"])
    time.sleep(HELD_S)  # the message behind the hole waits past --crit-ring-stall 1s
    assert _template(engine, spec, "ring_state")["missing_id"] == 0
    yield spec.name


@contextmanager
def ring_orphan(target: Target, engine: Engine) -> Iterator[str]:
    """A popper killed after taking its number: its slot stays full and blocks the pushes."""
    spec = make_queue(engine, "ring_q", "ring", capacity=4)
    messages.push(engine, spec, [b"a", b"b"])
    _kill_blocked_client(target, "pop", _lock_slot(target, 0))  # number 0, slot 0
    messages.pop(engine, spec)
    messages.push(engine, spec, [b"c", b"d"])
    assert _template(engine, spec, "ring_state")["orphan_id"] == 0
    yield spec.name


@contextmanager
def ring_nearly_full(target: Target, engine: Engine) -> Iterator[str]:
    """9 messages in a ring of 10 (fill 0.9, between --warn-ring-fill 0.8 and crit 0.95)."""
    spec = make_queue(engine, "mx_ring", "ring", capacity=10)
    messages.push(engine, spec, [b"r"] * 9)
    state = _template(engine, spec, "ring_state")
    assert int(state["push_next"]) - int(state["pop_next"]) == 9
    yield spec.name


@contextmanager
def watermark_stranded(target: Target, engine: Engine) -> Iterator[str]:
    """The watermark set above committed messages: two are below it and never served."""
    spec = make_queue(engine, "mx_wm", "fifo", watermark=True)
    ids = [m.id for m in messages.push(engine, spec, [b"w1", b"w2", b"w3"])]
    statements = [f"UPDATE {engine.qualified(spec.name + '_wm')} SET wm = {int(ids[-1])}"]
    if engine.dialect == "postgresql":  # and the copy its dequeues read
        seq = engine.quote_literal(engine.qualified(spec.name + "_wm_seq"))
        statements.append(f"SELECT setval({seq}, {int(ids[-1])})")
    engine.run(statements)
    assert wm_ops.show(engine, spec).stranded == 2
    yield spec.name


@contextmanager
def backlog_growing(target: Target, engine: Engine) -> Iterator[str]:
    """A producer pushing 10 messages every 0.1 s, no consumer, while the block runs."""
    spec = make_queue(engine, "mx_backlog", "fifo")
    stop = threading.Event()

    def produce() -> None:
        producer = target.engine()
        while not stop.is_set():
            messages.push(producer, spec, [b"b"] * 10)
            time.sleep(0.1)
        producer.close()

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    try:
        walk = {"lo": 0, "hi": 2**63 - 1, "limit": 100_001}  # every row: a small queue
        depth = _template(engine, spec, "depth", **walk)["depth"]
        assert until(lambda: _template(engine, spec, "depth", **walk)["depth"] > depth)
        yield spec.name
    finally:
        stop.set()
        thread.join(timeout=30)


@contextmanager
def invalid_index(target: Target, engine: Engine) -> Iterator[str]:
    """A CREATE UNIQUE INDEX CONCURRENTLY that failed on duplicates leaves an INVALID index."""
    spec = make_queue(engine, "mx_invalid", "fifo")
    messages.push(engine, spec, [b"dup", b"dup"])
    conn = connect(target)
    index = engine.quote_ident("mx_invalid_payload")
    try:
        with suppress(psycopg.errors.UniqueViolation):
            execute(
                conn,
                f"CREATE UNIQUE INDEX CONCURRENTLY {index} "
                f"ON {engine.qualified(spec.name)} (payload)",
            )
        valid = execute(
            conn,
            "SELECT i.indisvalid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid "
            f"JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            f"WHERE n.nspname = {engine.quote_literal(engine.schema)} "
            "AND c.relname = 'mx_invalid_payload'",
        )
        assert valid == [(False,)]
    finally:
        conn.close()
    yield spec.name


@contextmanager
def stale_statistics(target: Target, engine: Engine) -> Iterator[str]:
    """A table with rows whose statistics were never gathered (PostgreSQL: autovacuum kept
    off the table so it cannot ANALYZE it meanwhile; MariaDB: the persistent statistics of
    the table removed and their automatic recalculation off)."""
    spec = make_queue(engine, "mx_stats", "fifo")
    table = engine.qualified(spec.name)
    conn = connect(target)
    try:
        if target.label == "postgresql":
            execute(conn, f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
            _push_on_own_session(target, spec, 500)
            gathered = (
                "SELECT reltuples >= 0 FROM pg_class "
                f"WHERE oid = {engine.quote_literal(table)}::regclass"
            )
            assert execute(conn, gathered) == [(False,)]
            live = (
                "SELECT n_live_tup FROM pg_stat_user_tables "
                f"WHERE schemaname = {engine.quote_literal(engine.schema)} "
                "AND relname = 'mx_stats'"
            )
            assert until(lambda: execute(conn, live)[0][0] > 0)
        else:
            execute(conn, f"ALTER TABLE {table} STATS_AUTO_RECALC = 0")
            _push_on_own_session(target, spec, 500)
            where = (
                f"WHERE database_name = {engine.quote_literal(engine.schema)} "
                "AND table_name = 'mx_stats'"
            )
            for stats in ("mysql.innodb_table_stats", "mysql.innodb_index_stats"):
                execute(conn, f"DELETE FROM {stats} {where}")
            execute(conn, f"FLUSH TABLES {table}")
            assert execute(conn, f"SELECT count(*) FROM mysql.innodb_index_stats {where}") == [(0,)]
        yield spec.name
    finally:
        conn.close()


def _push_on_own_session(target: Target, spec: QueueSpec, count: int) -> None:
    """Push and close: a backend that ends flushes its statistics counters at once."""
    pusher = target.engine()
    messages.push(pusher, spec, [b"x" * 100] * count)
    pusher.close()


@contextmanager
def autovacuum_off(target: Target, engine: Engine) -> Iterator[str]:
    """The table's autovacuum_enabled reloption set to false."""
    spec = make_queue(engine, "mx_autovac", "fifo")
    table = engine.qualified(spec.name)
    engine.run([f"ALTER TABLE {table} SET (autovacuum_enabled = false)"])
    rows = engine.query(
        f"SELECT reloptions FROM pg_class WHERE oid = {engine.quote_literal(table)}::regclass"
    )
    assert "autovacuum_enabled=false" in rows[0]["reloptions"]
    yield spec.name
