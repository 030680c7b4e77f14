"""resize and convert on live queues: 4 producers and 4 consumers keep running while the
operation happens, and every message is popped exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from qadmin import catalog
from qadmin.engines import Timeouts, open_engine
from qadmin.errors import LockTimeout, QadminError, UnsupportedError, UsageError
from qadmin.ops import convert as convert_ops
from qadmin.ops import messages, queues
from qadmin.ops import resize as resize_ops
from tests.conftest import MY_HOST, make_target
from tests.engines import load
from tests.helpers import drain_ids

LABELS = ["sqlite", "postgresql", "mariadb", "mysql8"]
TOTAL = 6_000
# fifo producers push 100 per transaction: more messages, so the switch lands mid-run.
FIFO_TOTAL = 60_000


def _four_by_four(target, tmp_path, total: int, during, push_batch=None) -> load.Outcome:
    """4 producer and 4 consumer processes on load_q, ``during`` run while they work (SQLite
    clients reload the queue when a convert makes their SQL stale: it has no routines)."""
    return load.run(
        target.dsn,
        target.engine_schema,
        "load_q",
        producers=4,
        consumers=4,
        messages_each=total // 4,
        workdir=tmp_path,
        during=during,
        push_batch=push_batch,
        reload_stale=target.label == "sqlite",
    )


def _assert_exactly_once(outcome: load.Outcome, total: int) -> None:
    summary = (
        f"pushed={outcome.pushed} popped={outcome.popped} lost={outcome.lost} "
        f"dup={outcome.duplicated} unexpected={outcome.unexpected} left={outcome.leftover}"
    )
    # producers push at least ``total``, and on until the operation has ended
    assert outcome.pushed >= total and (outcome.lost, outcome.duplicated) == (0, 0), summary
    assert (outcome.unexpected, outcome.leftover) == (0, 0), summary
    assert outcome.overlapped is not False, "the operation ended after the producers"


def _resize_until_done(target, capacity: int) -> None:
    """Shrinking is refused while the backlog is larger; a DBA would try again."""
    engine = target.engine()
    for _ in range(200):
        try:
            resize_ops.resize(engine, catalog.get(engine, "load_q"), capacity)
            return
        except UsageError:
            time.sleep(0.05)
    raise AssertionError(f"could not resize to {capacity}")


@pytest.mark.parametrize("kind", ["ring", "capped"])
@pytest.mark.parametrize("label", LABELS)
def test_resized_up_and_down_under_load_loses_nothing(label, kind, request, tmp_path):
    """A capped queue may overwrite while it is small; every overwrite is reported."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("load_q", kind, 64, False))

    def grow_then_shrink() -> None:
        _resize_until_done(target, 1500)
        _resize_until_done(target, 100)

    # capped producers push 10 per transaction and more messages, so the resize lands mid-run
    # (100 per transaction on a capped queue shrunk to 100 slots: every transaction overwrites
    # every slot, they deadlock in turn, 1 s each on PostgreSQL, and the test crawled).
    total, batch = (TOTAL, None) if kind == "ring" else (FIFO_TOTAL // 2, 10)
    outcome = _four_by_four(target, tmp_path, total, grow_then_shrink, batch)
    _assert_exactly_once(outcome, total)
    assert catalog.get(engine, "load_q").capacity == 100


@pytest.mark.parametrize("label", LABELS)
def test_resize_keeps_order_and_ids_and_refuses_to_shrink_below_backlog(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    messages.push(engine, spec, [b"a", b"b", b"c"])
    messages.pop(engine, spec)
    pushed = messages.push(engine, spec, [b"d", b"e"])
    with pytest.raises(UsageError, match="holds 4 messages"):
        resize_ops.resize(engine, spec, 3)
    plan = resize_ops.plan(engine, spec, 2500)
    assert (plan.from_capacity, plan.messages, plan.fits) == (4, 4, True)
    resize_ops.resize(engine, spec, 2500)
    spec = catalog.get(engine, "ring_q")
    assert spec.capacity == 2500
    more = messages.push(engine, spec, [b"f"])
    assert more[0].id == pushed[-1].id + 1
    got = messages.pop(engine, spec, count=10)
    assert [m.payload for m in got] == [b"b", b"c", b"d", b"e", b"f"]
    assert [m.id for m in got] == sorted(m.id for m in got)
    resize_ops.resize(engine, spec, 2)
    spec = catalog.get(engine, "ring_q")
    messages.push(engine, spec, [b"g", b"h"])
    assert [m.payload for m in messages.pop(engine, spec, count=5)] == [b"g", b"h"]


CONVERT_LABELS = ["sqlite", "postgresql", "mariadb"]
# The steps convert reports, in order, where the switch is one transaction and where it is
# staged (MariaDB: DDL commits on its own, so a kill can land between committed steps).
ONE_TRANSACTION_STEPS = [
    "lock",
    "measure",
    "set_aside",
    "retire",
    "create",
    "start_sequences",
    "copy",
    "drop_set_aside",
    "catalog",
]
STAGED_STEPS = [
    "measure",
    "mark",
    "prepare",
    "gate",
    "lock",
    "rename",
    "measure_backup",
    "start_sequences",
    "copy",
    "catalog",
    "finish",
    "cleanup",
]

# argv: DSN, schema or '-', the step to be killed at: the convert reports each step and stops
# at that one until the test's SIGKILL lands there (the steps before it run at full speed).
KILLABLE = """
import sys, time
from qadmin.engines import Timeouts, open_engine
from qadmin.ops import convert
engine = open_engine(sys.argv[1], None if sys.argv[2] == '-' else sys.argv[2], Timeouts())
def step(name):
    print(name, flush=True)
    if name == sys.argv[3]:
        time.sleep(600)
convert.convert(engine, convert.source(engine, 'conv_q'), 1000, on_step=step)
print('done', flush=True)
"""


def _fifo_with_backlog(engine, n: int = 50):
    spec = queues.create(engine, queues.make_spec("conv_q", "fifo", None, False))
    pushed = messages.push(engine, spec, [f"b{i}".encode() for i in range(n)])
    messages.pop(engine, spec, count=5)  # the backlog starts above the first id
    return [(m.id, f"b{i}".encode()) for i, m in enumerate(pushed)][5:]


@pytest.mark.parametrize("label", CONVERT_LABELS)
def test_convert_keeps_backlog_ids_and_order(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    backlog = _fifo_with_backlog(engine)
    src = convert_ops.source(engine, "conv_q")
    plan = convert_ops.plan(engine, src, 10)
    assert (plan.messages, plan.fits) == (45, False)
    with pytest.raises(UsageError, match="backlog of 45 messages"):
        convert_ops.convert(engine, src, 10)
    assert catalog.get(engine, "conv_q").kind.value == "fifo"  # refused: nothing changed
    result = convert_ops.convert(engine, src, 64)
    assert (result.messages, result.next_id) == (45, backlog[-1][0] + 1)
    spec = catalog.get(engine, "conv_q")
    assert (spec.kind.value, spec.capacity) == ("ring", 64)
    new = messages.push(engine, spec, [b"after"])
    assert new[0].id == result.next_id
    assert drain_ids(engine, "conv_q") == [*backlog, (new[0].id, b"after")]


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_convert_never_reuses_an_id_the_queue_handed_out(label, request, tmp_path):
    """A drained fifo's ids are gone, not free: the ring starts above the table's identity /
    AUTO_INCREMENT counter, so a consumer that remembers ids never sees one twice."""
    engine = make_target(label, request, tmp_path).engine()
    spec = queues.create(engine, queues.make_spec("conv_q", "fifo", None, False))
    last = max(messages.push(engine, spec, [b"x"])[-1].id for _ in range(10))
    messages.pop(engine, spec, count=10)
    result = convert_ops.convert(engine, convert_ops.source(engine, "conv_q"), 8)
    assert result.next_id == last + 1
    assert messages.push(engine, catalog.get(engine, "conv_q"), [b"y"])[0].id == last + 1


@pytest.mark.parametrize("label", CONVERT_LABELS)
def test_convert_hand_built_table_keeps_a_backup_and_fails_old_sql_loudly(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("jobs")
    serial = {
        "sqlite": "integer PRIMARY KEY",
        "postgresql": "bigserial PRIMARY KEY",
        "mariadb": "BIGINT AUTO_INCREMENT PRIMARY KEY",
    }[label]
    engine.run([f"CREATE TABLE {table} (job_id {serial}, body text NOT NULL, prio int)"])
    engine.run([f"INSERT INTO {table} (body, prio) VALUES ('x', 1), ('y', 2), ('z', 3)"])
    src = convert_ops.source(engine, "jobs", payload_cols=("body", "prio"))
    assert src.id_col == "job_id"
    result = convert_ops.convert(engine, src, 16)
    assert result.backup_table == "jobs_before_ring"
    got = drain_ids(engine, "jobs")
    assert [i for i, _ in got] == [1, 2, 3]
    assert [json.loads(p) for _, p in got] == [
        {"body": "x", "prio": 1},
        {"body": "y", "prio": 2},
        {"body": "z", "prio": 3},
    ]
    backup = engine.qualified("jobs_before_ring")
    assert engine.query(f"SELECT count(*) AS n FROM {backup}")[0]["n"] == 3
    with pytest.raises(QadminError):
        engine.run([f"INSERT INTO {table} (body, prio) VALUES ('late', 9)"])


def test_convert_is_refused_on_mysql8(request, tmp_path):
    """MySQL 8 commits DDL on its own and has no CREATE OR REPLACE PROCEDURE: no atomic switch."""
    target = make_target("mysql8", request, tmp_path)
    engine = target.engine()
    _fifo_with_backlog(engine, 8)
    with pytest.raises(UnsupportedError, match="not available on mysql"):
        convert_ops.convert(engine, convert_ops.source(engine, "conv_q"), 8)
    assert [p for _, p in drain_ids(engine, "conv_q")] == [b"b5", b"b6", b"b7"]  # still a fifo


def _autocommit_push(database: str, payload: bytes) -> None:
    """A client that is not qadmin: autocommit on, calls the queue's push routine itself, then
    its push_many of two, whose ids come back as ONE result set at every step of a convert
    (the gate's gave one per message) with the routine's columns."""
    import base64

    import pymysql

    conn = pymysql.connect(host=MY_HOST, user="root", database=database, autocommit=True)
    batch = json.dumps([base64.b64encode(payload + n).decode() for n in (b"-1", b"-2")])
    try:
        with conn.cursor() as cur:
            cur.execute("CALL conv_q_push(%s)", (payload,))
            cur.execute("CALL conv_q_push_many(%s)", (batch,))
            sets = [(cur.description, cur.fetchall())]
            while cur.nextset():
                if cur.description is not None:
                    sets.append((cur.description, cur.fetchall()))
        [(columns, rows)] = sets
        assert [c[0] for c in columns][:2] == ["id", "enqueued_at"] and len(rows) == 2, sets
    finally:
        conn.close()


@pytest.mark.parametrize("label", CONVERT_LABELS)
def test_convert_killed_at_each_step_then_run_again_loses_nothing(label, request, tmp_path):
    """After each kill the queue keeps working (MariaDB: a push from an autocommit client and
    one from qadmin land between kills), and the last run finishes: every message once, in
    order."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    expected = _fifo_with_backlog(engine)
    if label == "mariadb":
        steps = STAGED_STEPS
    else:
        steps = (["gate"] if label == "postgresql" else []) + ONE_TRANSACTION_STEPS
    for victim in steps:
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLABLE, target.dsn, target.engine_schema or "-", victim],
            stdout=subprocess.PIPE,
            text=True,
        )
        while (line := proc.stdout.readline().strip()) != victim:
            assert line, f"convert ended before step {victim}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        engine.close()
        time.sleep(0.3)  # the server notices the dead client and rolls its transaction back
        switched = label == "mariadb" and steps.index(victim) >= steps.index("finish")
        kind = catalog.get(engine, "conv_q").kind.value
        assert kind == ("ring" if switched else "fifo"), f"killed at {victim}"
        if label == "mariadb":
            plan = convert_ops.plan(engine, convert_ops.source(engine, "conv_q"), 1000)
            assert plan.resuming == RESUMING.get(victim, "gated"), victim
            _autocommit_push(engine.schema, f"auto-{victim}".encode())
            pushed = messages.push(engine, catalog.get(engine, "conv_q"), [victim.encode()])
            auto = f"auto-{victim}".encode()
            expected += [(None, auto), (None, auto + b"-1"), (None, auto + b"-2")]
            expected += [(pushed[0].id, victim.encode())]
    convert_ops.convert(engine, convert_ops.source(engine, "conv_q"), 1000)
    got = drain_ids(engine, "conv_q")
    assert [p for _, p in got] == [p for _, p in expected]
    assert [i for i, _ in got] == sorted(i for i, _ in got)
    assert all(want in (None, i) for (want, _), (i, _) in zip(expected, got, strict=True))
    if label == "mariadb":
        assert _schema_objects(engine, "conv_q") == RING_OBJECTS


def test_an_interrupted_convert_refused_on_rerun_puts_the_queue_back(request, tmp_path):
    """MariaDB: killed once gated, then run again with too small a capacity: the refusal undoes
    the prepared ring and the gate, and the queue is the plain fifo it was."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    backlog = _fifo_with_backlog(engine, 20)
    before = _schema_objects(engine, "conv_q")
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, target.dsn, "-", "lock"], stdout=subprocess.PIPE, text=True
    )
    while (line := proc.stdout.readline().strip()) != "lock":
        assert line, "convert ended before it gated the queue"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert "conv_q__gate" in _schema_objects(engine, "conv_q")
    with pytest.raises(UsageError, match="backlog of 15 messages"):
        convert_ops.convert(engine, convert_ops.source(engine, "conv_q"), 10)
    assert _schema_objects(engine, "conv_q") == before
    assert drain_ids(engine, "conv_q") == backlog


def test_convert_refuses_when_a_name_the_ring_needs_is_taken(request, tmp_path):
    """MariaDB: the staged switch creates the ring's tables beside the queue, so it must never
    drop or reuse an object it did not make (here a user's table, conv_q_ctl: create refuses
    another queue of that name since qadmin records what it owns)."""
    engine = make_target("mariadb", request, tmp_path).engine()
    backlog = _fifo_with_backlog(engine, 10)
    other = engine.qualified("conv_q_ctl")
    engine.run([f"CREATE TABLE {other} (note VARCHAR(20))", f"INSERT INTO {other} VALUES ('keep')"])
    with pytest.raises(UsageError, match="conv_q_ctl already exist"):
        convert_ops.convert(engine, convert_ops.source(engine, "conv_q"), 64)
    assert "conv_q__gate" not in _schema_objects(engine, "conv_q")
    assert drain_ids(engine, "conv_q") == backlog
    assert engine.query(f"SELECT note FROM {other}") == [{"note": "keep"}]


# What a dry run after a kill at each MariaDB step says the next run will resume.
RESUMING = {
    "measure": None,
    "mark": None,
    "rename": "gated",
    "measure_backup": "renamed",
    "start_sequences": "renamed",
    "copy": "renamed",
    "catalog": "renamed",
    "finish": "switched",
    "cleanup": "switched",
}


def _hold_table_open(target, seconds: float) -> tuple[threading.Thread, threading.Event]:
    """Another client's transaction that has read the queue's table: MariaDB keeps its
    metadata lock to the end, so the switch's RENAME waits for it. It ends after ``seconds``,
    or when the returned event is set."""
    holder = target.engine()
    opened, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.transaction() as execute:
            execute(f"SELECT count(*) AS n FROM {holder.qualified('conv_q')}")
            opened.set()
            release.wait(seconds)
        holder.close()

    thread = threading.Thread(target=hold)
    thread.start()
    opened.wait(10)
    return thread, release


def test_convert_waits_out_an_open_transaction_or_gives_up_cleanly(request, tmp_path):
    """MariaDB, lock timeout 1 s: a transaction open for 2.5 s costs the switch a retry or two;
    one open longer than five tries leaves a one-line error and a queue still working (through
    the gate); the next run, once it has ended, finishes."""
    target = make_target("mariadb", request, tmp_path)
    backlog = _fifo_with_backlog(target.engine(), 10)
    impatient = open_engine(target.dsn, None, Timeouts(lock_ms=1_000))
    holder, release = _hold_table_open(target, 60)  # open until every try has given up
    with pytest.raises(LockTimeout, match="open transactions held it") as refused:
        convert_ops.convert(impatient, convert_ops.source(impatient, "conv_q"), 64)
    assert "\n" not in str(refused.value)
    engine = target.engine()
    spec = catalog.get(engine, "conv_q")
    assert spec.kind.value == "fifo"
    late = messages.push(engine, spec, [b"late"])[0].id
    release.set()
    holder.join()
    holder, _ = _hold_table_open(target, 2.5)
    result = convert_ops.convert(impatient, convert_ops.source(impatient, "conv_q"), 64)
    holder.join()
    assert result.messages == len(backlog) + 1
    assert drain_ids(engine, "conv_q") == [*backlog, (late, b"late")]


KILLABLE_TABLE = KILLABLE.replace(
    "convert.source(engine, 'conv_q')", "convert.source(engine, 'jobs', payload_cols=('body',))"
)


@pytest.mark.parametrize("victim", ["prepare", "measure_backup", "copy", "cleanup"])
def test_hand_built_convert_killed_then_run_again_keeps_every_row(victim, request, tmp_path):
    """MariaDB, a hand-built table (no gate routines): killed before the rename, after it,
    mid-copy and mid-clean-up, then run again: every row once, in id order; backup kept."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified("jobs")
    engine.run([f"CREATE TABLE {table} (job_id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT)"])
    engine.run([f"INSERT INTO {table} (body) VALUES ('a'), ('b'), ('c'), ('d')"])
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_TABLE, target.dsn, "-", victim],
        stdout=subprocess.PIPE,
        text=True,
    )
    while (line := proc.stdout.readline().strip()) != victim:
        assert line, f"convert ended before step {victim}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    engine.close()
    time.sleep(0.3)
    src = convert_ops.source(engine, "jobs", payload_cols=("body",))
    result = convert_ops.convert(engine, src, 1000)  # the capacity the killed run began
    assert (result.backup_table, result.next_id) == ("jobs_before_ring", 5)
    assert drain_ids(engine, "jobs") == [(1, b"a"), (2, b"b"), (3, b"c"), (4, b"d")]
    backup = engine.qualified("jobs_before_ring")
    assert engine.query(f"SELECT count(*) AS n FROM {backup}")[0]["n"] == 4
    assert "jobs__gate" not in _schema_objects(engine, "jobs")


RING_OBJECTS = {
    "conv_q",
    "conv_q_ctl",
    "conv_q_overflow",
    "conv_q_pending",
    "conv_q_pop_seq",
    "conv_q_push_seq",
    "conv_q_pop",
    "conv_q_push",
    "conv_q_push_many",
}


def _schema_objects(engine, prefix: str) -> set[str]:
    """MariaDB: the tables, sequences and routines named after a queue."""
    pattern = {"schema": engine.schema, "like": prefix + "%"}
    tables = engine.query(
        "SELECT TABLE_NAME AS n FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = :schema AND TABLE_NAME LIKE :like",
        pattern,
    )
    routines = engine.query(
        "SELECT ROUTINE_NAME AS n FROM information_schema.ROUTINES "
        "WHERE ROUTINE_SCHEMA = :schema AND ROUTINE_NAME LIKE :like",
        pattern,
    )
    return {r["n"] for r in tables + routines}


@pytest.mark.parametrize("label", CONVERT_LABELS)
def test_convert_under_load_loses_nothing_and_callers_see_no_error(label, request, tmp_path):
    """Producers and consumers call the queue's routines throughout the switch (SQLite, which
    has no routines: their statements fail once, write nothing, and they reload the queue)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("load_q", "fifo", None, False))

    def switch() -> None:
        """Producers push on until the convert ends, so the backlog can outgrow a first
        capacity on a machine whose consumers lag: a DBA told "does not fit" asks for more."""
        capacity = FIFO_TOTAL
        while True:
            try:
                convert_ops.convert(engine, convert_ops.source(engine, "load_q"), capacity)
                return
            except UsageError as refused:
                assert "does not fit" in str(refused), refused
                capacity *= 2

    _assert_exactly_once(_four_by_four(target, tmp_path, FIFO_TOTAL, switch), FIFO_TOTAL)
    assert catalog.get(engine, "load_q").kind.value == "ring"


@pytest.mark.parametrize("label", LABELS)
def test_a_ring_larger_than_a_recursion_limit_gets_every_slot(label, request, tmp_path):
    """MySQL 8's cte_max_recursion_depth (and MariaDB's max_recursive_iterations when set like
    it) stop a recursive CTE at 1,000 rows: the slots come from 1,000 × 1,000 numbers."""
    engine = make_target(label, request, tmp_path).engine()
    spec = queues.create(engine, queues.make_spec("big_r", "ring", 2_500, False))
    slots = engine.query(f"SELECT count(*) AS n FROM {engine.qualified('big_r')}")
    assert int(slots[0]["n"]) == 2_500
    resize_ops.resize(engine, spec, 4_100)
    slots = engine.query(f"SELECT count(*) AS n FROM {engine.qualified('big_r')}")
    assert int(slots[0]["n"]) == 4_100


@pytest.mark.parametrize("label", LABELS)
def test_capped_resize_keeps_ids_and_refuses_what_would_overwrite(label, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    spec = queues.create(engine, queues.make_spec("cap_q", "capped", 4, False))
    pushed = messages.push(engine, spec, [b"a", b"b", b"c", b"d"])
    messages.pop(engine, spec, count=2)  # c and d left: ids 2 and 3 (span 2)
    with pytest.raises(UsageError, match="holds 2 messages"):
        resize_ops.resize(engine, spec, 1)
    resize_ops.resize(engine, spec, 10)
    spec = catalog.get(engine, "cap_q")
    more = messages.push(engine, spec, [f"m{i}".encode() for i in range(8)])
    assert [m.overwritten_id for m in more] == [None] * 8  # 10 slots: none overwritten
    assert more[0].id == pushed[-1].id + 1
    got = messages.pop(engine, spec, count=20)
    assert [m.payload for m in got] == [b"c", b"d", *(f"m{i}".encode() for i in range(8))]
    messages.push(engine, spec, [b"x", b"y"])
    first = messages.push(engine, spec, [b"z"])[0].id
    messages.pop(engine, spec)  # x gone; y and z left, their ids two apart... span 2
    assert first - 1 == messages.peek(engine, spec)[0].id
    resize_ops.resize(engine, spec, 2)
    spec = catalog.get(engine, "cap_q")
    assert [m.payload for m in messages.pop(engine, spec, count=5)] == [b"y", b"z"]
