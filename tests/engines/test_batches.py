"""Batches (push --lines/--file, pop --count) and pop --wait, on the real engines.

A batch push goes in chunks of ``PUSH_CHUNK`` messages, each one statement and one transaction
where the engine has a set-based section (PostgreSQL, MariaDB); the batches here cross a chunk
boundary so the chunking itself is under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psycopg
import pytest

from qadmin.engines import open_engine
from qadmin.errors import QueueEmpty, QueueFull
from qadmin.ops import messages, queues
from tests.conftest import PG_ADMIN, make_target
from tests.engines import load

BATCH = messages.PUSH_CHUNK * 2 + 500
ENGINES = ["sqlite", "postgresql", "mariadb", "mysql8"]


@pytest.fixture(params=ENGINES)
def engine(request, tmp_path):
    eng = make_target(request.param, request, tmp_path).engine()
    yield eng
    eng.close()


def _lines(count: int) -> list[bytes]:
    return [f"m-{n}".encode() for n in range(count)]


def _drain(engine, spec) -> list[dict]:
    got: list[dict] = []
    while True:
        try:
            got.extend(messages.pop(engine, spec, 1000))
        except QueueEmpty:
            return got


@pytest.mark.parametrize("kind", ["heap", "fifo", "lifo", "pending", "claim"])
def test_a_batch_push_keeps_its_order_and_pop_count_takes_each_once(engine, kind):
    spec = queues.create(engine, queues.make_spec("bq", kind, None, False))
    sent = _lines(BATCH)
    pushed = messages.push(engine, spec, sent)
    ids = [r["id"] for r in pushed]
    assert len(ids) == BATCH and ids == sorted(set(ids)), "ids rise in the input's order"
    got = _drain(engine, spec)
    assert sorted(r["payload"] for r in got) == sorted(sent)
    by_id = dict(zip(ids, sent, strict=True))
    assert all(by_id[r["id"]] == r["payload"] for r in got), "each id carries its own line"
    if kind == "fifo":
        assert [r["payload"] for r in got] == sent
    if kind == "lifo":
        assert [r["payload"] for r in got] == sent[::-1]


def test_a_ring_batch_stops_at_the_first_refusal_and_keeps_what_went_in(engine):
    capacity = messages.PUSH_CHUNK + 700
    spec = queues.create(engine, queues.make_spec("bring", "ring", capacity, False))
    sent = _lines(BATCH)
    with pytest.raises(QueueFull) as full:
        messages.push(engine, spec, sent)
    assert len(full.value.pushed) == capacity
    got = _drain(engine, spec)
    assert [r["payload"] for r in got] == sent[:capacity]
    assert [r["id"] for r in got] == [r["id"] for r in full.value.pushed]


def test_a_capped_batch_reports_each_message_it_overwrote(engine):
    capacity = messages.PUSH_CHUNK + 700
    spec = queues.create(engine, queues.make_spec("bcap", "capped", capacity, False))
    sent = _lines(BATCH)
    pushed = messages.push(engine, spec, sent)
    ids = [r["id"] for r in pushed]
    overwritten = [r["overwritten_id"] for r in pushed if r.get("overwritten_id") is not None]
    assert overwritten == ids[: BATCH - capacity]
    assert [r["payload"] for r in _drain(engine, spec)] == sent[BATCH - capacity :]


@pytest.mark.slow
@pytest.mark.parametrize(
    "label,kind,capacity,strict",
    [
        (label, kind, capacity, strict)
        for label in ("sqlite", "postgresql", "mariadb")
        for kind, capacity, strict in (
            ("fifo", None, False),
            ("fifo", None, True),
            ("ring", 4 * BATCH, False),
            ("claim", None, False),
        )
    ],
)
def test_concurrent_batch_producers_and_consumers_exactly_once(
    label, kind, capacity, strict, request, tmp_path
):
    """2 producers pushing batches that span chunks, 2 consumers popping 25 at a time. A
    consumer's order is not checked here: a batch that took lower ids may commit after one that
    took higher ids (the single-session tests check the order)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("bload", kind, capacity, strict))
    engine.close()
    each = 2 * BATCH
    outcome = load.run(
        target.dsn,
        target.engine_schema,
        "bload",
        producers=2,
        consumers=2,
        messages_each=each,
        workdir=tmp_path,
        push_batch=BATCH,
    )
    assert (outcome.pushed, outcome.popped) == (2 * each, 2 * each)
    assert (outcome.lost, outcome.duplicated, outcome.unexpected) == (0, 0, 0)
    for producer in range(2):
        records = json.loads((tmp_path / f"prod-{producer}.json").read_text())
        ids = [r["id"] for r in records]
        assert ids == sorted(ids), "a producer's batch keeps its order"


def test_the_push_routines_notify_a_listener_on_postgresql(pg_schema):
    """An application calling the push routine itself wakes a pop --wait, as qadmin's batches
    do: every push notifies the queue's channel at commit."""
    engine = open_engine(PG_ADMIN, pg_schema)
    spec = queues.create(engine, queues.make_spec("nq", "ring", 100, False))
    channel = engine._channel(spec)
    with psycopg.connect(PG_ADMIN, autocommit=True) as listener:
        listener.execute(f'LISTEN "{channel}"')
        with psycopg.connect(PG_ADMIN, autocommit=True) as app:
            app.execute(f'SELECT * FROM "{pg_schema}"."nq_push"(%s)', [b"x"])
        heard = [n.channel for n in listener.notifies(timeout=30, stop_after=1)]
        assert heard == [channel]
        messages.push(engine, spec, [b"a", b"b"])
        heard = [n.channel for n in listener.notifies(timeout=30, stop_after=1)]
        assert heard == [channel]
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_pop_wait_returns_a_message_pushed_by_another_process(label, request, tmp_path):
    """The waiting pop is another process, already waiting when the push commits: it returns
    that message, long before its wait limit (no tighter bound: the machine may be busy)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("wq", "fifo", None, False))
    limit_s = 120
    started = time.monotonic()
    waiter = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qadmin",
            "pop",
            "wq",
            "--wait",
            str(limit_s),
            "--raw",
            *target.cli_args(),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(3)  # the waiter has started and found the queue empty (or soon will)
        assert waiter.poll() is None, waiter.stderr.read() if waiter.stderr else ""
        messages.push(engine, spec, [b"wake up"])
        out, err = waiter.communicate(timeout=limit_s)
    finally:
        if waiter.poll() is None:
            waiter.kill()
    assert (waiter.returncode, out) == (0, b"wake up"), err
    assert time.monotonic() - started < limit_s / 2
    engine.close()
