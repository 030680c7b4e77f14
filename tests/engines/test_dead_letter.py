"""Dead letters of claim queues on every engine: the fail that records the last allowed attempt
moves the message to <queue>_dead with its error history, in the same transaction; redrive
moves it back; nothing is lost or duplicated between the two tables, even with consumers
failing and acking concurrently, one of them killed mid-claim and redrive running alongside."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import signal
import sqlite3
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pytest

from qadmin import catalog
from qadmin.diagnostics.entries import claims as claims_part
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import LockTimeout, NotFound, QueueEmpty, QueueFull, UsageError, WrongKind
from qadmin.kinds import ERROR_CHARS, ERRORS_KEPT
from qadmin.ops import dead, messages, queues, watermark
from tests.conftest import MY_HOST, PG_ADMIN, make_target
from tests.engines.holding import finish, hold_pop
from tests.helpers import invoke_on


@pytest.fixture
def engine(target):
    eng = target.engine()
    yield eng
    eng.close()


# Claims here are held by the test's own session, still connected: requeue judges them by age
# alone, as a consumer that died (tests/engines/test_requeue_live.py has --skip-live).
def _claim(engine: Engine, name: str = "q", max_attempts: int | None = 3, wm: bool = False):
    return queues.create(engine, queues.make_spec(name, "claim", None, False, wm, max_attempts))


def _fail_once(engine: Engine, spec, error: str) -> messages.Failed:
    got = messages.pop(engine, spec, 1)
    return messages.fail(engine, spec, got[0].id, error, retry=True)


def _ids(engine: Engine, spec) -> list[int]:
    return sorted(r.id for r in messages.peek(engine, spec, 1000))


def test_the_last_allowed_failure_moves_the_message_with_every_error(engine):
    spec = _claim(engine)
    first, second = (r.id for r in messages.push(engine, spec, [b"poison", b"fine"]))
    outcomes = [_fail_once(engine, spec, f"boom {n}") for n in (1, 2, 3)]
    assert [(o.id, o.attempts, o.dead) for o in outcomes] == [
        (first, 1, False),
        (first, 2, False),
        (first, 3, True),
    ]
    assert _ids(engine, spec) == [second]
    [row] = dead.listing(engine, spec, 10)
    assert (row.id, row.attempts, row.errors) == (first, 3, 3)
    assert (row.first_error, row.last_error) == ("boom 1", "boom 3")
    assert row.payload == b"poison" and row.died_at
    depth = dead.depth(engine, spec)
    assert (depth.count, depth.exact) == (1, True) and depth.oldest_s is not None
    # Once failed, a message not claimed any more is refused, dead or not.
    with pytest.raises(NotFound):
        messages.fail(engine, spec, first, "again")


def test_a_stale_consumers_late_fail_or_ack_cannot_touch_the_new_claim(engine):
    """The attempt pop returned fences ack and fail: after a requeue and a second claim, the
    first consumer's late fail (which would kill the message at the limit) and late ack are
    refused, and the second consumer finishes it."""
    spec = _claim(engine, max_attempts=2)
    messages.push(engine, spec, [b"m"])
    [a] = messages.pop(engine, spec, 1, worker="A")
    time.sleep(1.2)
    assert claims_part.requeue(engine, spec, 1).requeued == [a.id]
    [b] = messages.pop(engine, spec, 1, worker="B")
    assert (b.id, a.attempts, b.attempts) == (a.id, 1, 2)
    with pytest.raises(NotFound, match="not claimed at attempt 1"):
        messages.fail(engine, spec, a.id, "A timeout", attempt=a.attempts)
    with pytest.raises(NotFound, match="not claimed at attempt 1"):
        messages.ack(engine, spec, a.id, attempt=a.attempts)
    assert dead.listing(engine, spec, 10) == []
    assert messages.ack(engine, spec, b.id, attempt=b.attempts).id == b.id
    assert _ids(engine, spec) == [] and dead.listing(engine, spec, 10) == []
    if engine.base_dialect == "mysql":  # procedures have no defaults: own names
        owned = catalog.owned(engine, spec)
        assert {("procedure", "q_ack_fenced"), ("procedure", "q_fail_fenced")} <= set(owned)


def test_requeue_moves_a_stale_claim_at_its_last_attempt_to_the_dead_table(engine):
    """A poison message kills its consumer every time and never calls fail: requeue must not
    release it forever. At max_attempts its stale claim dies, with an error saying why; the
    other stale claim is released, in the same run."""
    spec = _claim(engine, max_attempts=2)
    poison, fine = (r.id for r in messages.push(engine, spec, [b"poison", b"fine"]))
    messages.pop(engine, spec, 1)
    time.sleep(0.01)  # SQLite's claim time has millisecond steps: older than "now"
    first = claims_part.requeue(engine, spec, 0)
    assert (first.requeued, first.dead) == ([poison], [])
    popped = messages.pop(engine, spec, 2)
    assert {r.id: r.attempts for r in popped} == {poison: 2, fine: 1}
    time.sleep(0.01)
    second = claims_part.requeue(engine, spec, 0)
    assert (second.requeued, second.dead) == ([fine], [poison])
    [row] = dead.listing(engine, spec, 10)
    assert (row.id, row.attempts, row.payload) == (poison, 2, b"poison")
    assert row.last_error == "claim went stale after attempt 2 (consumer lost)"
    assert _ids(engine, spec) == [fine]


def test_a_70000_character_error_is_cut_and_the_message_still_dies(engine):
    """MariaDB's TEXT parameter refused 64 KiB, leaving the message claimed for ever: every
    engine keeps ERROR_CHARS characters and says how long the text was, through qadmin and
    (where there are routines) through an application's own call."""
    spec = _claim(engine, max_attempts=2)
    messages.push(engine, spec, [b"m"])
    long_error = "é" + "x" * 69_999
    kept = "é" + "x" * (ERROR_CHARS - 1) + "... (truncated, 70000 chars)"
    [got] = messages.pop(engine, spec, 1)
    assert messages.fail(engine, spec, got.id, long_error, retry=True).attempts == 1
    [got] = messages.pop(engine, spec, 1)
    if engine.base_dialect != "sqlite":  # the routine itself, as an application calls it
        params = {"id": got.id, "error": long_error, "retry": True}
        engine.run(engine.hooks.section(spec, "fail"), params)
    else:
        messages.fail(engine, spec, got.id, long_error, retry=True)
    [row] = dead.listing(engine, spec, 10)
    for got_error in (row.first_error, row.last_error):
        assert (len(got_error), got_error[:3], got_error[-30:]) == (len(kept), kept[:3], kept[-30:])


def test_a_fenced_fail_at_the_current_attempt_still_moves_the_message(engine):
    spec = _claim(engine, max_attempts=1)
    messages.push(engine, spec, [b"m"])
    [got] = messages.pop(engine, spec, 1)
    done = messages.fail(engine, spec, got.id, "boom", attempt=got.attempts)
    assert (done.attempts, done.dead) == (1, True)
    assert [r.id for r in dead.listing(engine, spec, 10)] == [got.id]


def test_redrive_moves_back_under_a_new_id_with_attempts_reset_and_history_kept(engine):
    spec = _claim(engine, max_attempts=2)
    [pushed] = messages.push(engine, spec, [b"m"])
    [other] = messages.push(engine, spec, [b"other"])
    for n in (1, 2):
        _fail_once(engine, spec, f"e{n}")
    plan = dead.redrive(engine, spec, None, dry_run=True)
    assert (plan.count, plan.ids, plan.moved) == (1, [pushed.id], [])
    assert dead.depth(engine, spec).count == 1, "a dry run moves nothing"
    with pytest.raises(NotFound):
        dead.redrive(engine, spec, [pushed.id, 999_999])
    assert dead.depth(engine, spec).count == 1, "an unknown id moves nothing at all"
    done = dead.redrive(engine, spec, [pushed.id])
    [moved] = done.moved
    assert done.ids == [pushed.id] and moved.id == pushed.id
    assert moved.new_id > other.id, "a new id, at the queue's tail"
    assert dead.listing(engine, spec, 10) == []
    back = {r.id: r for r in messages.peek(engine, spec, 10)}
    assert set(back) == {other.id, moved.new_id}
    new = back[moved.new_id]
    assert (new.attempts, new.last_error, new.payload) == (0, "e2", b"m")
    assert new.enqueued_at == pushed.enqueued_at
    messages.ack(engine, spec, messages.pop(engine, spec, 1)[0].id)  # "other" first
    # Attempts start again: one failure does not kill it, the second does, with all four errors.
    assert _fail_once(engine, spec, "e3").dead is False
    assert _fail_once(engine, spec, "e4").dead is True
    [row] = dead.listing(engine, spec, 10)
    assert (row.id, row.errors, row.first_error, row.last_error) == (
        moved.new_id,
        4,
        "e1",
        "e4",
    )


def test_a_late_ack_or_fail_from_before_death_cannot_touch_the_redriven_claim(engine):
    """The tester's repro: A claims attempt 1 and stalls, its claim goes stale and dies,
    redrive moves it back and B claims attempt 1 of the new delivery. A's late ack and fail
    at attempt 1 find nothing (the old id is gone); B's ack is the one that counts."""
    spec = _claim(engine, "aba", max_attempts=1)
    messages.push(engine, spec, [b"m"])
    [a] = messages.pop(engine, spec, 1, worker="A")
    time.sleep(1.1)
    assert claims_part.requeue(engine, spec, 1).dead == [a.id]
    [moved] = dead.redrive(engine, spec, None).moved
    [b] = messages.pop(engine, spec, 1, worker="B")
    assert (b.id, b.attempts) == (moved.new_id, 1) and b.id != a.id
    with pytest.raises(NotFound):
        messages.ack(engine, spec, a.id, attempt=a.attempts)
    with pytest.raises(NotFound):
        messages.fail(engine, spec, a.id, "A timeout", attempt=a.attempts)
    assert dead.listing(engine, spec, 10) == [] and _ids(engine, spec) == [b.id]
    assert messages.ack(engine, spec, b.id, attempt=b.attempts).id == b.id
    assert _ids(engine, spec) == []


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_a_message_failing_forever_keeps_its_first_and_latest_errors_only(label, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    spec = _claim(engine, max_attempts=None)
    [pushed] = messages.push(engine, spec, [b"m"])
    messages.pop(engine, spec, 1)
    for n in range(1, ERRORS_KEPT + 3):  # without --retry the claim stays: fail again
        messages.fail(engine, spec, pushed.id, f"e{n}")
    dead.set_max_attempts(engine, spec, 1)
    assert messages.fail(engine, spec, pushed.id, "last").dead is True
    [row] = dead.listing(engine, spec, 10)
    assert (row.errors, row.first_error, row.last_error) == (ERRORS_KEPT, "e1", "last")
    engine.close()


def test_max_attempts_changes_without_recreating_the_routines(engine):
    spec = _claim(engine, max_attempts=None)
    messages.push(engine, spec, [b"m"])
    for n in range(3):
        assert _fail_once(engine, spec, f"e{n}").dead is False
    spec = dead.set_max_attempts(engine, spec, 5)
    assert catalog.get(engine, "q").max_attempts == 5
    assert _fail_once(engine, spec, "e3").dead is False
    dead.set_max_attempts(engine, spec, 2)  # already past it: the next failure kills it
    assert _fail_once(engine, spec, "e4").dead is True
    assert dead.set_max_attempts(engine, spec, None).max_attempts is None
    with pytest.raises(UsageError):
        dead.set_max_attempts(engine, spec, 0)


def test_max_attempts_is_refused_for_other_kinds_and_drop_removes_the_dead_table(engine):
    with pytest.raises(UsageError, match="claim"):
        queues.make_spec("f", "fifo", None, False, max_attempts=3)
    fifo = queues.create(engine, queues.make_spec("f", "fifo", None, False))
    with pytest.raises(WrongKind):
        dead.listing(engine, fifo, 10)
    spec = _claim(engine, "q", 1)
    messages.push(engine, spec, [b"m"])
    _fail_once(engine, spec, "e")
    assert ("table", "q_dead") in catalog.owned(engine, spec)
    queues.drop(engine, spec)
    assert [o for o in catalog.schema_objects(engine, "q") if o[1].startswith("q_")] == []
    again = _claim(engine, "q", 1)
    assert dead.listing(engine, again, 10) == []


OLD_PG_FAIL = """
CREATE FUNCTION {schema}.q_fail(p_id bigint, p_error text, p_retry boolean DEFAULT false)
RETURNS TABLE (id bigint, attempts integer) LANGUAGE sql AS $$
    UPDATE {schema}.q AS q SET last_error = p_error, failed_at = clock_timestamp(),
        processing_started_at = CASE WHEN p_retry THEN NULL ELSE q.processing_started_at END
    WHERE q.id = p_id AND q.processing_started_at IS NOT NULL RETURNING q.id, q.attempts
$$"""


@pytest.mark.parametrize("label", ["sqlite", "postgresql"])
def test_a_claim_queue_from_before_dead_letters_keeps_working(label, request, tmp_path):
    """Made to look like one an earlier qadmin created: no dead table, no errors column, the
    old fail routine. fail works as it did; dead, redrive and alter refuse; inspect skips."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = _claim(engine, "q", None)
    q = engine.qualified("q")
    statements = [f"DROP TABLE {engine.qualified('q_dead')}"]
    if label == "postgresql":
        statements += [
            f"DROP FUNCTION {engine.qualified('q_fail')}",
            OLD_PG_FAIL.replace("{schema}", engine.quote_ident(engine.schema)),
        ]
    engine.run([*statements, f"ALTER TABLE {q} DROP COLUMN errors"])
    for obj in (("index", "q_dead_idx"), ("table", "q_dead")):
        catalog.disown(engine, spec, obj)
    old = dataclasses.replace(spec, options={})
    catalog.set_options(engine, old)
    old = catalog.get(engine, "q")
    assert not old.dead_table
    [pushed] = messages.push(engine, old, [b"m"])
    messages.pop(engine, old, 1)
    done = messages.fail(engine, old, pushed.id, "boom", retry=True)
    assert (done.id, done.attempts, done.dead) == (pushed.id, 1, False)
    for refused in (
        lambda: dead.listing(engine, old, 10),
        lambda: dead.redrive(engine, old, None),
        lambda: dead.set_max_attempts(engine, old, 3),
    ):
        with pytest.raises(UsageError, match="before qadmin kept dead letters"):
            refused()
    report = json.loads(invoke_on(target, "inspect", "q", "--format", "json").stdout)
    assert report["dead"] is None
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb", "mysql8"])
def test_a_redriven_message_lands_above_the_watermark_and_is_served(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = _claim(engine, "w", 1, wm=True)
    messages.push(engine, spec, [b"poison"])
    assert _fail_once(engine, spec, "e").dead is True
    [later] = messages.push(engine, spec, [b"later"])
    # Where the dequeue's advance leaves it once the head has moved on (set directly: an
    # advance waits for unrelated open transactions on some engines).
    engine.run(engine.hooks.section(spec, "wm_set"), {"wm": later.id})
    [moved] = dead.redrive(engine, spec, None).moved
    assert moved.new_id > watermark.show(engine, spec).watermark
    assert [r.id for r in messages.pop(engine, spec, 5)] == [later.id, moved.new_id]
    engine.close()


# -- called by applications ---------------------------------------------------------------


@pytest.mark.parametrize("isolation", [None, "REPEATABLE READ", "SERIALIZABLE"])
def test_postgres_fail_called_by_an_application_moves_at_the_limit(isolation, request, tmp_path):
    """The routines from the application's own connection, in autocommit or in its own
    transaction at its isolation level, while another consumer holds a transaction open."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = _claim(engine, "q", 2)
    other = _claim(engine, "other", None)
    messages.push(engine, other, [b"held"])
    holder, _, _ = hold_pop(target, other)
    [pushed] = messages.push(engine, spec, [b"m"])
    with psycopg.connect(PG_ADMIN, autocommit=isolation is None) as app:
        app.execute(f'SET search_path TO "{target.schema}"')
        for n, expect in ((1, False), (2, True)):
            if isolation:
                app.execute(f"BEGIN ISOLATION LEVEL {isolation}")
            [popped] = app.execute("SELECT id FROM q_pop(1, 'app')").fetchall()
            row = app.execute("SELECT * FROM q_fail(%s, %s, true)", (popped[0], f"e{n}"))
            assert row.fetchall() == [(pushed.id, n, expect)]
            if isolation:
                app.commit()
    finish(holder, commit=False)
    assert [r.id for r in dead.listing(engine, spec, 10)] == [pushed.id]
    assert messages.peek(engine, spec, 10) == []
    engine.close()


@pytest.mark.parametrize(
    "label,isolation,autocommit",
    [
        ("mariadb", "READ COMMITTED", True),
        ("mariadb", "REPEATABLE READ", False),
        ("mysql8", "REPEATABLE READ", False),
    ],
)
def test_mysql_fail_called_by_an_application_moves_at_the_limit(
    label, isolation, autocommit, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = _claim(engine, "q", 2)
    other = _claim(engine, "other", None)
    messages.push(engine, other, [b"held"])
    holder, _, _ = hold_pop(target, other)
    [pushed] = messages.push(engine, spec, [b"m"])
    app = pymysql.connect(host=MY_HOST, user="root", database=target.schema, autocommit=autocommit)
    with app.cursor() as cur:
        cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
        for n, expect in ((1, 0), (2, 1)):
            cur.execute("CALL q_pop(1, 'app')")
            popped = cur.fetchall()[0][0]
            while cur.nextset():
                pass
            cur.execute("CALL q_fail(%s, %s, TRUE)", (popped, f"e{n}"))
            assert [tuple(r) for r in cur.fetchall()] == [(pushed.id, n, expect)]
            while cur.nextset():
                pass
            if not autocommit:
                app.commit()
    app.close()
    finish(holder, commit=False)
    assert [r.id for r in dead.listing(engine, spec, 10)] == [pushed.id]
    assert messages.peek(engine, spec, 10) == []
    engine.close()


def test_sqlite_fail_statements_run_in_autocommit_are_one_transaction(tmp_path):
    path = tmp_path / "q.db"
    engine = open_engine(f"sqlite:///{path}")
    spec = _claim(engine, "q", 1)
    [pushed] = messages.push(engine, spec, [b"m"])
    messages.pop(engine, spec, 1)
    app = sqlite3.connect(path, isolation_level=None)
    params = {"id": pushed.id, "error": "e", "retry": True}
    statements = engine.hooks.section(spec, "fail")
    for statement in statements[:-1]:
        app.execute(statement, params).fetchall()
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("BEGIN IMMEDIATE")
    app.execute(statements[-1]).fetchall()
    assert [r.id for r in dead.listing(engine, spec, 10)] == [pushed.id]
    for conn in (app, other):
        conn.close()
    engine.close()


# -- concurrency --------------------------------------------------------------------------

PUSHED = 300
MAX_ATTEMPTS = 2
# Redrive runs until it has moved this many messages back while the consumers work.
REDRIVEN = 10


def _open(dsn: str, schema: str | None) -> Engine:
    return open_engine(dsn, schema, Timeouts(lock_ms=30_000, statement_ms=60_000))


def _poison(payload: bytes) -> bool:
    """Poison by payload: a redriven message comes back under a new id."""
    return int(payload[1:]) % 3 == 0


def consumer(dsn: str, schema: str | None, out: str, redrive_done: str) -> None:
    """Ack the good messages and fail the poison ones with retry, until redrive has finished
    and nothing is left waiting (the killed consumer's committed claims stay claimed)."""
    engine = _open(dsn, schema)
    spec = catalog.get(engine, "c")
    acked: list[int] = []
    empty = 0
    while empty < 3:
        try:
            rows = messages.pop(engine, spec, 5)
        except QueueEmpty:
            empty = empty + 1 if Path(redrive_done).exists() else 0
            time.sleep(0.02)
            continue
        except LockTimeout:
            continue
        empty = 0
        for row in rows:
            if _poison(row.payload):
                messages.fail(engine, spec, row.id, f"poison {row.id}", retry=True)
            else:
                messages.ack(engine, spec, row.id)
                acked.append(row.payload.decode())
    Path(out).write_text(json.dumps(acked))
    engine.close()


def victim(dsn: str, schema: str | None, ready: str) -> None:
    """Claim (committed), then claim again inside a transaction it never ends: killed there."""
    engine = _open(dsn, schema)
    spec = catalog.get(engine, "c")
    messages.pop(engine, spec, 3)
    with engine.transaction() as execute:
        for statement in engine.hooks.section(spec, "pop"):
            execute(statement, {"count": 3, "worker": "victim"})
        Path(ready).write_text("claimed")
        time.sleep(120)


def redriver(dsn: str, schema: str | None, done: str) -> None:
    """Redrive everything dead, again and again, until ``REDRIVEN`` messages went back."""
    engine = _open(dsn, schema)
    spec = catalog.get(engine, "c")
    moved = 0
    while moved < REDRIVEN:
        with suppress(LockTimeout):
            moved += dead.redrive(engine, spec, None).count
        time.sleep(0.02)
    engine.close()
    Path(done).write_text(json.dumps(moved))


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_nothing_lost_or_duplicated_with_killed_consumers_and_concurrent_redrive(
    label, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = _claim(engine, "c", MAX_ATTEMPTS)
    pushed = {b"m%d" % n for n in range(PUSHED)}
    messages.push(engine, spec, sorted(pushed))
    ctx = mp.get_context("spawn")
    dsn, schema = target.dsn, target.engine_schema
    ready, done = tmp_path / "victim.ready", tmp_path / "redrive.done"
    killed = ctx.Process(target=victim, args=(dsn, schema, str(ready)))
    killed.start()
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    outs = [tmp_path / f"c{n}.json" for n in range(2)]
    procs = [ctx.Process(target=consumer, args=(dsn, schema, str(o), str(done))) for o in outs]
    for proc in procs:
        proc.start()
    # Redrive runs alongside on its own connection (a thread here: one process less to start).
    redriving = threading.Thread(target=redriver, args=(dsn, schema, str(done)))
    redriving.start()
    assert killed.pid is not None and ready.exists()
    os.kill(killed.pid, signal.SIGKILL)  # its open claims roll back, its committed ones stay
    killed.join()
    redriving.join(120)
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    acked = [i.encode() for o in outs for i in json.loads(o.read_text())]
    waiting = [r.payload for r in messages.peek(engine, spec, 10_000)]
    died = [r.payload for r in dead.listing(engine, spec, 10_000)]
    everywhere = acked + waiting + died
    assert len(everywhere) == len(set(everywhere)), "a message is in two places"
    assert set(everywhere) == pushed, "a message was lost"
    summary = f"acked={len(acked)} waiting={len(waiting)} dead={len(died)}"
    assert died and all(_poison(i) for i in died), summary
    engine.close()


# -- the dead-letter console: history, filters, discard, redrive --to and --rate -------------


def _kill(engine: Engine, spec, payloads: list[bytes], error: str) -> list[int]:
    """Push and fail each payload once (max_attempts 1: each dies with ``error``)."""
    ids = [r.id for r in messages.push(engine, spec, payloads)]
    for _ in ids:
        _fail_once(engine, spec, error)
    return ids


def test_history_shows_every_error_of_one_dead_message(engine):
    spec = _claim(engine, max_attempts=3)
    [pushed] = messages.push(engine, spec, [b"m"])
    for n in (1, 2, 3):
        _fail_once(engine, spec, f"boom {n}")
    one = dead.history(engine, spec, pushed.id)
    assert (one.id, one.attempts, one.payload) == (pushed.id, 3, b"m")
    assert [(e.attempt, e.error) for e in one.errors] == [
        (1, "boom 1"),
        (2, "boom 2"),
        (3, "boom 3"),
    ]
    assert all(e.at and e.at.endswith("Z") for e in one.errors)
    with pytest.raises(NotFound, match="no dead message 999"):
        dead.history(engine, spec, 999)


def test_filters_pick_by_age_and_by_error_text_taken_literally(engine):
    spec = _claim(engine, max_attempts=1)
    old = _kill(engine, spec, [b"a", b"b"], "timeout after 50% (pool_1)")
    time.sleep(1.5)  # died_at is the server's clock: the first two are now over a second old
    new = _kill(engine, spec, [b"c"], "TIMEOUT after 5s")
    other = _kill(engine, spec, [b"d"], "timeout after 500 (pool-1)")

    def ids(**given: Any) -> list[int]:
        return sorted(r.id for r in dead.listing(engine, spec, 100, dead.Filter(**given)))

    assert ids() == sorted(old + new + other)
    assert ids(older_s=1) == old
    assert ids(newer_s=1) == sorted(new + other)
    assert ids(error="timeout after") == sorted(old + new + other), "case-insensitive"
    assert ids(error="50%") == old, "% is a character, not a wildcard"
    assert ids(error="pool_1") == old, "_ is a character, not a wildcard"
    assert ids(error="after 5s") == new
    assert ids(error="[") == [] and ids(error="!") == []
    assert ids(error="pool", newer_s=1) == other
    plan = dead.discard(engine, spec, None, picked=dead.Filter(error="pool_1"), dry_run=True)
    assert (plan.count, plan.ids) == (2, old)
    assert len(dead.listing(engine, spec, 100)) == 4, "a dry run removes nothing"


def test_discard_removes_dead_letters_only_and_each_once(engine):
    spec = _claim(engine, max_attempts=1)
    died = _kill(engine, spec, [b"x", b"y", b"z"], "boom")
    live = [r.id for r in messages.push(engine, spec, [b"live1", b"live2"])]
    [claimed] = messages.pop(engine, spec, 1)
    with pytest.raises(NotFound, match="nothing was discarded"):
        dead.discard(engine, spec, [died[0], 999_999])
    assert len(dead.listing(engine, spec, 10)) == 3, "an unknown id discards nothing at all"
    done = dead.discard(engine, spec, [died[0]])
    assert (done.count, done.ids, done.gone) == (1, [died[0]], [])
    with pytest.raises(NotFound):
        dead.discard(engine, spec, [died[0]])  # a second discard of it: refused, not counted
    done = dead.discard(engine, spec, None)  # every one left
    assert (done.count, done.ids) == (2, died[1:])
    assert dead.listing(engine, spec, 10) == []
    assert _ids(engine, spec) == live, "the live queue, claims included, is untouched"
    assert messages.ack(engine, spec, claimed.id).id == claimed.id


def test_redrive_to_another_queue_moves_each_payload_once(engine):
    spec = _claim(engine, max_attempts=1)
    fifo = queues.create(engine, queues.make_spec("other", "fifo", None, False))
    died = _kill(engine, spec, [b"p1", b"p2", b"p3"], "boom")
    done = dead.redrive(engine, spec, None, picked=dead.Filter(), to=fifo)
    assert (done.count, done.to, [m.id for m in done.moved]) == (3, "other", died)
    assert dead.listing(engine, spec, 10) == [] and _ids(engine, spec) == []
    assert [r.payload for r in messages.pop(engine, fifo, 10)] == [b"p1", b"p2", b"p3"]


def test_redrive_to_a_full_ring_moves_nothing(engine):
    spec = _claim(engine, max_attempts=1)
    ring = queues.create(engine, queues.make_spec("r", "ring", 1, False))
    messages.push(engine, ring, [b"fills it"])
    died = _kill(engine, spec, [b"p1", b"p2"], "boom")
    with pytest.raises(QueueFull):
        dead.redrive(engine, spec, None, to=ring)
    assert sorted(r.id for r in dead.listing(engine, spec, 10)) == died
    assert [r.payload for r in messages.peek(engine, ring, 10)] == [b"fills it"]


def test_a_paced_redrive_moves_everything_in_small_batches(engine):
    spec = _claim(engine, max_attempts=1)
    died = _kill(engine, spec, [b"%d" % n for n in range(7)], "boom")
    assert dead.Pace(2).batch == 1 and dead.Pace(50).batch == 10 and dead.Pace(1e6).batch == 100
    done = dead.redrive(engine, spec, None, pace=dead.Pace(1000))
    assert (done.count, done.ids) == (7, died)
    assert len(_ids(engine, spec)) == 7 and dead.listing(engine, spec, 10) == []


# -- exactly once: consumers, a discarder and two redrivers at once -----------------------

CONSOLE_PUSHED = 240
# Poison by payload: these fail for ever; the discarder takes "fatal" ones, the redrivers
# send "transient" ones (and, redrive --all, any) back, where they die again.
ROUNDS = 6
# Each mover goes on until it has taken this many.
TAKEN = 8


def _console_error(payload: bytes) -> str | None:
    n = int(payload[1:])
    if n % 6 == 0:
        return f"fatal: {payload.decode()}"
    if n % 6 == 3:
        return f"transient: {payload.decode()}"
    return None


def console_consumer(dsn: str, schema: str | None, out: str, done: str) -> None:
    """Ack good messages, fail poison ones (they die at once), and log both: the payload of
    every ack, and the id each failure killed (dead ids are the ids failures killed)."""
    engine = _open(dsn, schema)
    spec = catalog.get(engine, "dl")
    acked: list[str] = []
    killed: dict[int, str] = {}
    empty = 0
    while empty < 3:
        try:
            rows = messages.pop(engine, spec, 4)
        except QueueEmpty:
            empty = empty + 1 if Path(done).exists() else 0
            time.sleep(0.02)
            continue
        except LockTimeout:
            continue
        empty = 0
        for row in rows:
            error = _console_error(row.payload)
            if error is None:
                messages.ack(engine, spec, row.id)
                acked.append(row.payload.decode())
            else:
                messages.fail(engine, spec, row.id, error)
                killed[row.id] = row.payload.decode()
    Path(out).write_text(json.dumps({"acked": acked, "killed": killed}))
    engine.close()


def _mover(dsn: str, schema: str | None, work: Any, log: list[dict[str, Any]]) -> None:
    """Run ``work`` again and again while the consumers fail messages, until it has taken
    ``TAKEN`` dead messages over at least ``ROUNDS`` runs (or a minute passed)."""
    engine = _open(dsn, schema)
    spec = catalog.get(engine, "dl")
    taken, rounds, deadline = 0, 0, time.monotonic() + 60
    while (taken < TAKEN or rounds < ROUNDS) and time.monotonic() < deadline:
        with suppress(LockTimeout):
            result = work(engine, spec)
            log.append(result)
            taken += len(result.ids)
            rounds += 1
        time.sleep(0.05)
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_every_message_is_delivered_once_or_discarded_once(label, request, tmp_path):
    """Consumer processes ack and fail; at the same time a discard by error text, a redrive
    by error text and a redrive --all run over the same dead table. Counted independently
    (the consumers' own logs, the movers' own results): every message pushed was acked once
    or discarded once, never both, never twice, never lost."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = _claim(engine, "dl", 1)
    pushed = {f"m{n}" for n in range(CONSOLE_PUSHED)}
    messages.push(engine, spec, sorted(p.encode() for p in pushed))
    ctx = mp.get_context("spawn")
    dsn, schema = target.dsn, target.engine_schema
    done = tmp_path / "movers.done"
    outs = [tmp_path / f"c{n}.json" for n in range(2)]
    procs = [
        ctx.Process(target=console_consumer, args=(dsn, schema, str(o), str(done))) for o in outs
    ]
    for proc in procs:
        proc.start()
    discards: list[dead.Outcome] = []
    redrives: list[dead.Outcome] = []
    works = [
        (lambda e, s: dead.discard(e, s, None, picked=dead.Filter(error="fatal")), discards),
        (lambda e, s: dead.redrive(e, s, None, picked=dead.Filter(error="transient")), redrives),
        (lambda e, s: dead.redrive(e, s, None, pace=dead.Pace(500)), redrives),
    ]
    threads = [threading.Thread(target=_mover, args=(dsn, schema, w, log)) for w, log in works]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    done.write_text("done")
    for proc in procs:
        proc.join(300)
        assert proc.exitcode == 0
    logs = [json.loads(o.read_text()) for o in outs]
    killed = {int(k): v for log in logs for k, v in log["killed"].items()}
    acked = [p for log in logs for p in log["acked"]]
    # What the movers left in the dead table goes too, counted as the last discard.
    discards.append(dead.discard(engine, spec, None))
    discarded = [killed[i] for d in discards for i in d.ids]
    redriven = [i for r in redrives for i in r.ids]
    summary = f"acked={len(acked)} discarded={len(discarded)} redriven={len(redriven)}"
    assert len(acked) == len(set(acked)), "a message delivered twice: " + summary
    assert len(discarded) == len(set(discarded)), "a message discarded twice: " + summary
    assert not set(acked) & set(discarded), summary
    assert set(acked) | set(discarded) == pushed, "a message lost: " + summary
    assert {p for p in pushed if _console_error(p.encode())} == set(discarded), summary
    assert len(redriven) == len(set(redriven)), "one dead id redriven twice: " + summary
    assert len(redriven) >= 2 * TAKEN and len(discarded) >= TAKEN + len(discards[-1].ids)
    assert messages.peek(engine, spec, 10) == [] and dead.listing(engine, spec, 10) == []
    engine.close()
