"""Watermarked fifo and claim queues: the dequeue serves every message, a producer that holds
its transaction open while others commit and dequeue is not stranded, and `watermark repair`
fixes a watermark set too high (stranded rows served) or too low (raised) while consumers run."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import partial

import pytest

from qadmin import catalog
from qadmin.engines import Timeouts, open_engine
from qadmin.errors import QueueEmpty
from qadmin.kinds import WATERMARK_EVERY
from qadmin.ops import messages
from qadmin.ops import watermark as wm_ops
from tests.conftest import make_target
from tests.helpers import drain_payloads, invoke, make_queue

LABELS = ["sqlite", "postgresql", "mariadb", "mysql8"]
# One worker runs this module (pytest-xdist's loadgroup): on MariaDB each dequeue's advance reads
# INNODB_TRX, which the server refills only when read 0.1 s apart; these tests, side by side,
# would keep each other's watermarks from moving.
pytestmark = pytest.mark.xdist_group("watermark")
# A claim queue's messages acknowledged as they come out: nothing stays claimed below the head.
drained = partial(drain_payloads, batch=50, ack=True)


def _set_wm(engine, spec, value: int) -> None:
    """A watermark set by hand: the row, and on PostgreSQL the copy the dequeues read."""
    statements = [f"UPDATE {engine.qualified(spec.name + '_wm')} SET wm = {int(value)}"]
    if engine.dialect == "postgresql":
        seq = engine.quote_literal(engine.qualified(spec.name + "_wm_seq"))
        statements.append(f"SELECT setval({seq}, {int(value)})")
    engine.run(statements)


@pytest.mark.parametrize("kind", ["fifo", "claim"])
@pytest.mark.parametrize("label", LABELS)
def test_watermark_moves_with_the_dequeues_and_serves_everything(label, kind, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", kind, watermark=True)
    payloads = [f"m{i}".encode() for i in range(3 * WATERMARK_EVERY)]
    messages.push(engine, spec, payloads)
    assert drained(engine, spec) == payloads
    messages.push(engine, spec, [b"late"])
    moved = wm_ops.advance(engine, spec)
    assert moved.reached and moved.to > 3 * WATERMARK_EVERY - WATERMARK_EVERY
    state = wm_ops.show(engine, spec)
    assert (state.stranded, state.lag_ids) == (0, 0)
    assert drained(engine, spec) == [b"late"]


@pytest.mark.parametrize("label", LABELS)
def test_watermark_set_too_high_strands_rows_and_repair_serves_them(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    ids = [m.id for m in messages.push(engine, spec, [f"s{i}".encode() for i in range(20)])]
    _set_wm(engine, spec, ids[10])
    state = wm_ops.show(engine, spec)
    assert (state.state, state.stranded, state.stranded_min_id) == (
        "stranded",
        10,
        ids[0],
    )
    assert wm_ops.plan(engine, spec).action == "lower"
    assert [m.id for m in messages.pop(engine, spec)] == [ids[10]]  # the first ten are stuck
    fixed = wm_ops.repair(engine, spec)
    assert (fixed.action, fixed.to) == ("lower", ids[0])
    assert drained(engine, spec) == [f"s{i}".encode() for i in range(20) if i != 10]
    assert wm_ops.show(engine, spec).stranded == 0


@pytest.mark.parametrize("label", LABELS)
def test_watermark_set_too_low_is_raised_by_repair(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    messages.push(engine, spec, [f"r{i}".encode() for i in range(30)])
    for _ in range(20):
        messages.pop(engine, spec)
    _set_wm(engine, spec, 0)
    before = wm_ops.show(engine, spec)
    assert before.lag_ids >= 20 and before.stranded == 0
    assert wm_ops.plan(engine, spec).action == "raise"
    fixed = wm_ops.repair(engine, spec)
    assert fixed.action == "raise" and fixed.reached
    assert wm_ops.show(engine, spec).lag_ids == 0
    assert len(drained(engine, spec)) == 10


@pytest.mark.parametrize("label", ["postgresql", "mariadb", "mysql8"])
def test_an_open_producer_is_not_stranded(label, request, tmp_path):
    """Its id is handed out first, it commits last: the watermark must wait for it."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    held = target.engine()
    with held.transaction() as execute:
        slow = execute(held.hooks.section(spec, "push")[0], {"payload": b"slow"})
        slow_id = int(slow[0]["id"])
        others = messages.push(engine, spec, [f"o{i}".encode() for i in range(2 * WATERMARK_EVERY)])
        assert drained(engine, spec) == [f"o{i}".encode() for i in range(2 * WATERMARK_EVERY)]
        moved = wm_ops.advance(engine, spec)  # returns after SETTLE_S without reaching the head
        assert moved.to <= slow_id < others[0].id
    assert drained(engine, spec) == [b"slow"]
    assert wm_ops.show(engine, spec).stranded == 0


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_repair_during_concurrent_dequeues_loses_nothing(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    total = 600
    messages.push(engine, spec, [f"c{i}".encode() for i in range(total)])
    _set_wm(engine, spec, 300)
    got: list[bytes] = []
    lock = threading.Lock()

    def consume() -> None:
        mine = target.engine()
        while True:
            try:
                batch = messages.pop(mine, spec, count=5, wait_s=1.0)
            except QueueEmpty:
                return
            with lock:
                got.extend(m.payload for m in batch)

    workers = [threading.Thread(target=consume) for _ in range(3)]
    for w in workers:
        w.start()
    fixed = wm_ops.repair(engine, spec)
    for w in workers:
        w.join()
    got.extend(drained(engine, spec))
    assert fixed.action == "lower"
    assert sorted(got) == sorted(f"c{i}".encode() for i in range(total))


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_inspect_names_stranded_rows_and_the_fix(label, request, tmp_path):
    from tests.engines import diag

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    ids = [m.id for m in messages.push(engine, spec, [b"a", b"b", b"c"])]
    assert diag.inspect(engine, spec)["watermark"]["state"] == "ok"
    _set_wm(engine, spec, ids[-1])
    report = diag.inspect(engine, spec)
    finding = next(f for f in report["findings"] if f["code"] == "watermark_stranded")
    assert finding["severity"] == "critical"
    assert finding["fix"] == (
        "qadmin watermark wm_q repair --dry-run, then qadmin watermark wm_q repair --yes"
    )
    assert report["watermark"]["stranded"] == 2


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_inspect_names_a_watermark_held_back_by_an_open_producer(
    label, request, tmp_path, monkeypatch
):
    """A producer's transaction left open keeps the watermark behind while the queue moves on:
    once that has lasted (60 s in production, shortened here), inspect says so and what to do."""

    from qadmin.diagnostics.entries import watermark
    from tests.engines import diag

    monkeypatch.setattr(watermark, "WATERMARK_STUCK_S", 0.5)
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    held = target.engine()
    with held.transaction() as execute:
        execute(held.hooks.section(spec, "push")[0], {"payload": b"slow"})
        count = watermark.WATERMARK_LAG_IDS + 2 * WATERMARK_EVERY
        for start in range(0, count + 50, 500):
            messages.push(engine, spec, [b"o"] * min(500, count + 50 - start))
        for _ in range(count // 50):  # the queue moves on; 50 messages stay behind the head
            messages.pop(engine, spec, count=50)
        time.sleep(1.0)
        report = diag.inspect(engine, spec)
        codes = [f["code"] for f in report["findings"]]
        assert "watermark_lagging" in codes, report["watermark"]
        finding = next(f for f in report["findings"] if f["code"] == "watermark_lagging")
        assert finding["severity"] == "warning"
        # MariaDB: when another session on the server read INNODB_TRX within 0.1 s of the
        # advance (a monitor; here, the other tests), the advance cannot trust the cache it
        # reads and says so instead: a fix for what was seen last, either way.
        assert "open transaction" in finding["fix"] or "INNODB_TRX" in finding["fix"]
    assert drained(engine, spec) == [b"slow"] + [b"o"] * 50  # the held one first: lowest id


def _assert_unrelated_open(label, engine, unrelated) -> None:
    """The session fixture's transactions in other databases are really open right now."""
    if label == "postgresql":
        rows = engine.query(
            "SELECT state, backend_xid IS NOT NULL AS has_xid, datname FROM pg_stat_activity "
            "WHERE pid = :pid",
            {"pid": unrelated.pg_pid},
        )
        assert [(r["state"], r["has_xid"], r["datname"]) for r in rows] == [
            ("idle in transaction", True, "postgres")
        ]
    else:
        rows = engine.query(
            "SELECT trx_mysql_thread_id AS t, trx_lock_structs AS locks "
            "FROM information_schema.INNODB_TRX"
        )
        held = {int(r["t"]): int(r["locks"]) for r in rows}
        assert set(unrelated.my_threads) <= set(held), held
        assert any(held[t] > 0 for t in unrelated.my_threads)  # the locking reader


@pytest.mark.parametrize("label", ["postgresql", "mariadb", "mysql8"])
def test_unrelated_transactions_elsewhere_do_not_hold_the_watermark(
    label, request, tmp_path, unrelated_transactions
):
    """Transactions in another database (PostgreSQL: one with a transaction id that wrote;
    MariaDB: a reader and a locking reader) stay open for the whole session: the watermark
    still advances past its candidate, by the dequeues and by `watermark advance`."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    _assert_unrelated_open(label, engine, unrelated_transactions)
    payloads = [f"u{i}".encode() for i in range(3 * WATERMARK_EVERY)]
    messages.push(engine, spec, payloads)
    assert drained(engine, spec) == payloads
    if label == "postgresql":  # only writers of this table count: the dequeues moved it
        assert wm_ops.show(engine, spec).watermark > WATERMARK_EVERY
    late = messages.push(engine, spec, [b"late"])[0].id
    # On MariaDB any writer open anywhere on the server holds it (other tests', other
    # sessions'), and INNODB_TRX is not refilled when read less than 0.1 s apart: those pass,
    # while the unrelated transactions stay open throughout (checked after), so advance is
    # tried again until it reaches the row, for a bounded time.
    moved = _advanced(engine, spec, label)
    assert moved.reached and moved.to == late, moved
    assert drained(engine, spec) == [b"late"]
    _assert_unrelated_open(label, engine, unrelated_transactions)


def test_an_ordinary_role_advances_the_watermark_on_postgresql(request, tmp_path):
    """pg_locks is readable by every role: a consumer without superuser rights moves it too."""
    import uuid

    from tests.conftest import PG_ADMIN

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    role = "qt_role_" + uuid.uuid4().hex[:12]
    schema = f'"{target.schema}"'
    engine.run(
        [
            f'CREATE ROLE "{role}" LOGIN NOSUPERUSER',
            f'GRANT USAGE ON SCHEMA {schema} TO "{role}"',
            f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO "{role}"',
            f'GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {schema} TO "{role}"',
        ]
    )
    request.addfinalizer(lambda: engine.run([f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"']))
    from qadmin.engines import open_engine

    consumer = open_engine(PG_ADMIN.replace("postgres@", f"{role}@", 1), target.schema)
    assert consumer.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user") == [
        {"rolsuper": False}
    ]
    payloads = [f"o{i}".encode() for i in range(3 * WATERMARK_EVERY)]
    messages.push(consumer, spec, payloads)
    assert drained(consumer, spec) == payloads
    assert wm_ops.show(consumer, spec).watermark > WATERMARK_EVERY
    late = messages.push(consumer, spec, [b"late"])[0].id
    assert wm_ops.advance(consumer, spec).to == late
    consumer.close()


def test_a_table_lock_that_writes_nothing_does_not_hold_the_watermark_on_postgresql(
    request, tmp_path
):
    """Only RowExclusiveLock counts (every INSERT takes it): a transaction holding the mode
    VACUUM and ANALYZE take on the queue table for as long as they run does not hold it."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    held = target.engine()
    with held.transaction() as execute:
        execute(f"LOCK TABLE {engine.qualified(spec.name)} IN SHARE UPDATE EXCLUSIVE MODE")
        messages.push(engine, spec, [f"v{i}".encode() for i in range(2 * WATERMARK_EVERY)])
        drained(engine, spec)
        late = messages.push(engine, spec, [b"late"])[0].id
        assert wm_ops.advance(engine, spec).to == late
    assert drained(engine, spec) == [b"late"]


def test_a_repeatable_read_caller_does_not_move_the_watermark_past_a_late_row_on_postgresql(
    request, tmp_path
):
    """Its snapshot can predate a recorded producer's commit: it would not see that row, so it
    leaves the move to a READ COMMITTED call and the row is still served."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    advance = engine.hooks.section(spec, "wm_advance")
    producer, reader = target.engine(), target.engine()
    producing = producer.transaction()
    produce = producing.__enter__()
    slow_id = int(produce(producer.hooks.section(spec, "push")[0], {"payload": b"slow"})[0]["id"])
    messages.push(engine, spec, [b"x"])
    assert drained(engine, spec) == [b"x"]
    engine.run(advance, {"to": None})  # phase 1 records the open producer
    assert wm_ops.show(engine, spec).candidate > slow_id
    with reader.transaction() as execute:
        execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        execute(f"SELECT count(*) FROM {engine.qualified(spec.name)}")  # its snapshot
        producing.__exit__(None, None, None)  # the producer commits after that snapshot
        execute(advance[0], {"to": None})
    assert wm_ops.show(engine, spec).watermark <= slow_id
    assert drained(engine, spec) == [b"slow"]
    assert wm_ops.show(engine, spec).stranded == 0


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_an_insert_waiting_with_its_id_taken_holds_the_watermark(label, request, tmp_path):
    """InnoDB hands out the AUTO_INCREMENT value before the INSERT waits for a lock: such a
    producer has modified no rows yet, but its statement is running and it still counts."""

    import pymysql

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    gap = pymysql.connect(host="127.0.0.1", user="root", password="", database=target.schema)
    with gap.cursor() as cur:  # REPEATABLE READ: locks the gap above the last row
        cur.execute(f"SELECT id FROM `{spec.name}` WHERE id > 1000000 FOR UPDATE")
    # A lock wait longer than the test: under load its push may start late, and must still
    # be waiting when the advances run.
    producer = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=120_000))
    pushed: list[int] = []
    waiting = threading.Thread(
        target=lambda: pushed.extend(m.id for m in messages.push(producer, spec, [b"w"]))
    )
    waiting.start()
    advance = engine.hooks.section(spec, "wm_advance")
    try:
        time.sleep(3.0)  # it has its id and waits for the gap lock (up to its 120 s)
        engine.run(advance, {"to": None})  # phase 1: the candidate is above the waiting id
        time.sleep(1.0)
        engine.run(advance, {"to": None})  # phase 2: the producer is still running
        state = wm_ops.show(engine, spec)
    finally:
        gap.rollback()
        gap.close()
        waiting.join()
        producer.close()
    assert state.candidate > pushed[0] >= state.watermark, (state, pushed)
    assert drained(engine, spec) == [b"w"]
    assert wm_ops.show(engine, spec).stranded == 0


@contextmanager
def _innodb_trx_polled(every_s: float | None) -> Iterator[None]:
    """A monitor reading INNODB_TRX every ``every_s`` (None: no monitor) while the block runs."""
    import pymysql

    stop = threading.Event()

    def poll() -> None:
        monitor = pymysql.connect(host="127.0.0.1", user="root", password="", autocommit=True)
        with monitor.cursor() as cur:
            while not stop.is_set():
                cur.execute("SELECT count(*) FROM information_schema.INNODB_TRX")
                stop.wait(every_s)
        monitor.close()

    poller = threading.Thread(target=poll)
    if every_s is not None:
        poller.start()
        time.sleep(0.3)  # the cache is now held as it was, before what the block does
    try:
        yield
    finally:
        stop.set()
        if every_s is not None:
            poller.join()


@pytest.mark.parametrize("monitor_s", [None, 0.02], ids=["quiet", "polled"])
@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_an_open_write_in_another_database_holds_a_mariadb_watermark(
    label, monitor_s, request, tmp_path, monkeypatch
):
    """INNODB_TRX does not say which tables a transaction wrote: an open writer anywhere on the
    server counts (docs/kinds.md, Watermarks), until it ends. It is also a cache refilled only
    after 0.1 s without readers: a monitor polling it every 20 ms freezes it from before the
    writer began, and that must not read as "no writer" (CI saw the watermark pass an open
    writer); the watermark waits instead, and moves once the monitor is gone."""
    import pymysql

    from tests.conftest import UNRELATED_DB

    monkeypatch.setattr(wm_ops, "SETTLE_S", 1.0)
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    with _innodb_trx_polled(monitor_s):
        writer = pymysql.connect(host="127.0.0.1", user="root", password="", database=UNRELATED_DB)
        try:
            with writer.cursor() as cur:
                cur.execute("INSERT INTO held (at) VALUES (NOW(6))")
            messages.push(engine, spec, [f"w{i}".encode() for i in range(WATERMARK_EVERY)])
            drained(engine, spec)
            messages.push(engine, spec, [b"late"])
            assert not wm_ops.advance(engine, spec).reached
        finally:
            writer.rollback()
            writer.close()
    monkeypatch.setattr(wm_ops, "SETTLE_S", 10.0)
    assert _advanced(engine, spec, label).reached  # (other tests' writers come and go)
    assert drained(engine, spec) == [b"late"]


def _advanced(engine, spec, label: str):
    """A watermark advance, tried again for a bounded time on MySQL/MariaDB: there any writer
    open anywhere on the server holds it (other tests', other sessions'), and INNODB_TRX is
    not refilled when read less than 0.1 s apart; such writers come and go."""
    deadline = time.monotonic() + 120
    moved = wm_ops.advance(engine, spec)
    while not moved.reached and label != "postgresql" and time.monotonic() < deadline:
        time.sleep(0.2)
        moved = wm_ops.advance(engine, spec)
    return moved


class _RolledBack(Exception):
    """Raised inside a transaction to roll it back."""


def _pop_then_roll_back(engine, spec, counts: list[int]) -> list[int]:
    """Pops of ``counts`` messages in one transaction that is then rolled back: their ids."""
    taken: list[int] = []
    with pytest.raises(_RolledBack), engine.transaction() as execute:
        for count in counts:
            taken += [
                int(r["id"])
                for r in execute(engine.hooks.section(spec, "pop")[0], {"count": count})
            ]
        raise _RolledBack
    return taken


def test_pops_rolled_back_after_moving_the_watermark_strand_nothing_on_postgresql(
    request, tmp_path
):
    """The dequeues read a copy of the watermark that is not transactional. A transaction that
    pops several times moves the watermark past its own pops; rolled back, they are served."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    payloads = [f"r{i}".encode() for i in range(5 * WATERMARK_EVERY)]
    messages.push(engine, spec, payloads)
    taken = _pop_then_roll_back(engine, spec, [150, 150, 150])
    assert len(taken) == 450
    assert wm_ops.show(engine, spec).stranded == 0
    assert drained(engine, spec) == payloads


def test_a_late_row_popped_and_rolled_back_is_served_again_on_postgresql(request, tmp_path):
    """A producer's late row is below the recorded candidate. One pop takes it and advances the
    watermark to that candidate, then rolls back: the copy the dequeues read stayed at the row."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    held = target.engine()
    with held.transaction() as execute:
        slow_id = int(execute(held.hooks.section(spec, "push")[0], {"payload": b"slow"})[0]["id"])
        others = [f"o{i}".encode() for i in range(2 * WATERMARK_EVERY)]
        messages.push(engine, spec, others)
        assert drained(engine, spec) == others  # the candidate is recorded above slow_id
    assert wm_ops.show(engine, spec).candidate > slow_id
    after = [f"a{i}".encode() for i in range(WATERMARK_EVERY)]
    messages.push(engine, spec, after)
    taken = _pop_then_roll_back(engine, spec, [1 + WATERMARK_EVERY])
    assert taken[0] == slow_id
    assert drained(engine, spec) == [b"slow", *after]
    assert wm_ops.show(engine, spec).stranded == 0


@pytest.mark.parametrize("kind", ["fifo", "claim"])
def test_concurrent_pops_rolled_back_or_killed_lose_nothing_on_postgresql(kind, request, tmp_path):
    """Producers push while consumers pop in transactions that commit, roll back, or whose
    session is terminated before the commit: every message is received exactly once."""
    import random

    from qadmin.errors import QadminError

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", kind, watermark=True)
    per_producer = 3 * WATERMARK_EVERY
    received: list[bytes] = []
    undone: list[str] = []  # the transactions that took messages and did not commit
    lock = threading.Lock()
    producing = threading.Event()

    pushed: list[bytes] = []

    def produce(p: int) -> None:
        """Its share, and on until a rollback and a kill have each undone a pop that took
        messages (how the consumers' fates meet the traffic depends on the machine's speed)."""
        mine = target.engine()
        start = 0
        while start < per_producer or (
            not {"rollback", "kill"} <= set(undone) and start < 50 * per_producer
        ):
            batch = [f"p{p}-{n}".encode() for n in range(start, start + 10)]
            messages.push(mine, spec, batch)
            with lock:
                pushed.extend(batch)
            start += 10
        mine.close()

    def consume(seed: int) -> None:
        rng = random.Random(seed)
        mine = target.engine()
        while True:
            fate = rng.choice(["commit", "commit", "rollback", "kill"])
            got: list[dict] = []
            try:
                with mine.transaction() as execute:
                    pid = execute("SELECT pg_backend_pid() AS pid")[0]["pid"]
                    params = {"count": rng.randint(1, 2 * WATERMARK_EVERY)}
                    if kind == "claim":
                        params["worker"] = f"w{seed}"
                    for _ in range(2):  # the second pop's transaction has written already
                        got += execute(mine.hooks.section(spec, "pop")[0], params)
                    if kind == "claim":
                        for m in got:
                            execute(mine.hooks.section(spec, "ack")[0], {"id": m["id"]})
                    if fate == "rollback":
                        raise _RolledBack
                    if fate == "kill":
                        engine.query("SELECT pg_terminate_backend(:pid, 5000)", {"pid": pid})
            except _RolledBack:
                undone.extend(["rollback"] if got else [])
                continue
            except QadminError:
                assert fate == "kill"
                undone.extend(["kill"] if got else [])
                mine = target.engine()
                continue
            assert fate != "kill"
            with lock:
                received.extend(m["payload"] for m in got)
            if not got and not producing.is_set():
                return

    producers = [threading.Thread(target=produce, args=(p,)) for p in range(2)]
    consumers = [threading.Thread(target=consume, args=(c,)) for c in range(3)]
    producing.set()
    for t in producers + consumers:
        t.start()
    for t in producers:
        t.join()
    producing.clear()
    for t in consumers:
        t.join()
    received.extend(drained(engine, spec))
    assert len(pushed) >= 2 * per_producer
    assert sorted(received) == sorted(pushed)
    assert wm_ops.show(engine, spec).stranded == 0
    assert {"rollback", "kill"} <= set(undone)


def test_a_watermarked_fifo_converts_to_a_ring_and_leaves_no_copy_behind_on_postgresql(
    request, tmp_path
):
    from qadmin import catalog
    from qadmin.ops import convert as convert_ops

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    payloads = [f"c{i}".encode() for i in range(3 * WATERMARK_EVERY)]
    messages.push(engine, spec, payloads)
    assert len(_drain_some(engine, spec, WATERMARK_EVERY + 50)) == WATERMARK_EVERY + 50
    convert_ops.convert(engine, convert_ops.source(engine, spec.name), 1000)
    ring = catalog.get(engine, spec.name)
    assert ring.kind.value == "ring"
    assert drained(engine, ring) == payloads[WATERMARK_EVERY + 50 :]
    assert not engine.table_exists(spec.name + "_wm")
    seq = engine.qualified(spec.name + "_wm_seq")
    assert engine.query("SELECT to_regclass(:s) IS NULL AS gone", {"s": seq}) == [{"gone": True}]


def _drain_some(engine, spec, count: int) -> list[bytes]:
    return [m.payload for m in messages.pop(engine, spec, count=count)]


def _tick(engine, spec, count: int = WATERMARK_EVERY) -> None:
    """Pops that take ``count`` ids, the last a multiple of WATERMARK_EVERY: one advance."""
    messages.pop(engine, spec, count=count)


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_a_busy_queue_s_own_ticks_do_not_freeze_its_watermark(label, request, tmp_path):
    """Every pop of 100 ticks; 20 ms apart, the ticks' own reads kept INNODB_TRX from being
    refilled, so the watermark stood still while the ids went 3,000 further. Phase 2 reads it
    at most every 0.2 s per queue, so the watermark follows the head. (Other sessions reading
    INNODB_TRX, another test run's, can skip a refill now and then: the pops go on until the
    watermark has moved three times, or 10,000 ids.)"""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    messages.push(engine, spec, [b"m"] * (100 * WATERMARK_EVERY))
    seen = {wm_ops.show(engine, spec).watermark}
    for _ in range(100):
        _tick(engine, spec)
        seen.add(wm_ops.show(engine, spec).watermark)
        if len(seen) > 3:
            break
        time.sleep(0.02)
    assert len(seen) > 3, seen  # it moved, again and again


@pytest.mark.parametrize("level", ["REPEATABLE READ", "READ UNCOMMITTED", "SERIALIZABLE"])
@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_a_transaction_not_at_read_committed_in_a_read_committed_session_does_not_move_it(
    label, level, request, tmp_path
):
    """SET TRANSACTION ISOLATION LEVEL for one transaction leaves the session variable at READ
    COMMITTED; the pop's phase 2 trusted the variable and read the head from the transaction's
    old snapshot (a tester stranded a message that way). READ UNCOMMITTED stranded one too: its
    head read sees another pop's delete before that pop rolls back. The level is read from
    INNODB_TRX now: such a pop only records why it did not move the watermark."""
    import pymysql

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    messages.push(engine, spec, [b"m"] * (30 * WATERMARK_EVERY))
    _tick(engine, spec)  # phase 1: a candidate
    before = wm_ops.show(engine, spec).watermark
    caller = pymysql.connect(host="127.0.0.1", user="root", password="", database=target.schema)
    states = []
    try:
        with caller.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            cur.execute("SET @qadmin_fresh = 1")  # a flag a failed gate call left: ignored
            # until a tick finds INNODB_TRX refilled (another test run's reads can skip one)
            while len(states) < 20 and f"is {level}" not in (states[-1:] or [""])[0]:
                time.sleep(0.25)  # past the 0.2 s between reads
                cur.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")
                cur.execute("START TRANSACTION")
                cur.execute(f"SELECT count(*) FROM `{spec.name}`")  # the snapshot
                cur.execute(f"CALL `{spec.name}_pop`(%s)", (WATERMARK_EVERY,))
                while cur.nextset():
                    pass
                caller.commit()
                state = wm_ops.show(engine, spec)
                assert state.watermark == before, state
                states.append(state.held_by or "")
    finally:
        caller.close()
    assert f"transaction is {level}" in states[-1], states
    assert _advanced(engine, spec, "mariadb").reached  # an autocommit caller moves it


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_a_long_read_only_statement_elsewhere_does_not_hold_the_watermark(label, request, tmp_path):
    """A read-only transaction (an autocommit SELECT, START TRANSACTION READ ONLY) cannot take
    an id, yet a long one (a report, a dump) held every watermark on the server: INNODB_TRX
    shows it inside a statement like an INSERT that has its id. trx_is_read_only tells them
    apart."""
    import pymysql

    from tests.conftest import UNRELATED_DB

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    messages.push(engine, spec, [f"w{i}".encode() for i in range(WATERMARK_EVERY)])
    reader = pymysql.connect(host="127.0.0.1", user="root", password="", database=UNRELATED_DB)

    def read() -> None:
        with suppress(pymysql.err.OperationalError):  # the KILL QUERY that ends it
            reader.cursor().execute("SELECT SLEEP(60) FROM held LIMIT 1")

    reading = threading.Thread(target=read)
    with reader.cursor() as cur:
        cur.execute("START TRANSACTION READ ONLY")
    reading.start()
    try:
        time.sleep(0.5)
        drained(engine, spec)
        messages.push(engine, spec, [b"late"])
        reached = wm_ops.advance(engine, spec).reached  # SETTLE_S: 10 s
        still_reading = reading.is_alive()
    finally:
        with pymysql.connect(host="127.0.0.1", user="root", password="") as admin:
            admin.cursor().execute(f"KILL QUERY {reader.thread_id()}")
        reading.join()
        reader.rollback()
        reader.close()
    assert reached and still_reading
    assert drained(engine, spec) == [b"late"]


def test_a_definer_without_process_is_named_as_what_holds_the_watermark(
    request, tmp_path, monkeypatch
):
    """Without PROCESS the routine cannot read INNODB_TRX: the watermark never moves (safe),
    and `watermark` and `check` said "ok" / blamed an open transaction that did not exist, and
    create said nothing."""
    import json
    import uuid

    import pymysql

    from qadmin.diagnostics.entries import watermark as wm_entry
    from qadmin.engines import open_engine

    target = make_target("mariadb", request, tmp_path)
    user = "qt_np_" + uuid.uuid4().hex[:8]
    admin = pymysql.connect(host="127.0.0.1", user="root", password="", autocommit=True)
    with admin.cursor() as cur:
        cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw-{user}'")
        cur.execute(f"GRANT ALL ON `{target.schema}`.* TO '{user}'@'%'")
    dsn = f"mysql://{user}:pw-{user}@127.0.0.1:3306/{target.schema}"
    try:
        made = invoke("create", "np_q", "--kind", "fifo", "--watermark", "--dsn", dsn)
        assert made.exit_code == 0, made.stderr
        assert "will never move" in made.stderr and "needs PROCESS" in made.stderr, made.stderr
        engine = open_engine(dsn)
        spec = catalog.get(engine, "np_q")
        messages.push(engine, spec, [b"m"] * (20 * WATERMARK_EVERY))
        for _ in range(14):
            _tick(engine, spec)
            time.sleep(0.25)
        state = wm_ops.show(engine, spec)
        engine.close()
        assert state.watermark <= WATERMARK_EVERY + 1, state
        assert "PROCESS" in (state.held_by or ""), state
        monkeypatch.setattr(wm_entry, "WATERMARK_STUCK_S", 0.5)
        check = invoke("check", "np_q", "--dsn", dsn, "--format", "json")
        found = {f["code"]: f for f in json.loads(check.stdout)["findings"]}
        assert "definer needs PROCESS" in found["watermark_lagging"]["message"], found
        shown = invoke("inspect", "np_q", "--dsn", dsn, "--format", "json")
        found = {f["code"]: f for f in json.loads(shown.stdout)["findings"]}
        assert found["watermark_lagging"]["fix"].startswith("GRANT PROCESS"), found
        assert f"pw-{user}" not in check.stdout + check.stderr
    finally:
        with admin.cursor() as cur:
            cur.execute(f"DROP USER '{user}'@'%'")
        admin.close()


@pytest.mark.parametrize("label", LABELS)
def test_advance_on_an_empty_queue_moves_past_the_popped_ids(label, request, tmp_path):
    """With nothing waiting the goal is the next id: `advance --to N` had waited out its 10 s
    and said "not reached", and a plain advance said "reached" after only recording a
    candidate, the watermark still below every popped id."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "wm_q", "fifo", watermark=True)
    messages.push(engine, spec, [b"m"] * 5)
    drained(engine, spec)
    _set_wm(engine, spec, 0)
    for to in (99_999_999_999, None):
        for _ in range(3):
            result = wm_ops.advance(engine, spec, to=to)
            held = wm_ops.show(engine, spec).held_by or ""
            # MariaDB: other tests' reads of INNODB_TRX less than 0.1 s apart keep its cache
            # from refilling; the advance then records why it waited, and is run again.
            if result.reached or "not refilled" not in held:
                break
        assert result.reached and result.to > 5, (result, held)
