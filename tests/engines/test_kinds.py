"""Every queue kind behaves as its article says, on every real engine."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from qadmin import catalog
from qadmin.errors import LockTimeout, NotFound, QueueEmpty, QueueFull, WrongKind
from qadmin.kinds import Kind
from qadmin.ops import messages, queues
from tests.engines.holding import finish, hold_pop


def make(engine, name: str, kind: str, capacity: int | None = None, strict: bool = False):
    return queues.create(engine, queues.make_spec(name, kind, capacity, strict))


def payloads(rows: list[messages.Message]) -> list[bytes]:
    return [r.payload for r in rows]


@pytest.fixture
def engine(target):
    eng = target.engine()
    yield eng
    eng.close()


def first_id(target) -> int:
    """MySQL 8 ticket tables count from 1; sequences elsewhere start at 0."""
    return 1 if target.label == "mysql8" else 0


ALL_KINDS = ["heap", "fifo", "lifo", "pending", "capped", "claim", "ring"]


def capacity_for(kind: str) -> int | None:
    return 100 if kind in ("capped", "ring") else None


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_push_peek_pop_roundtrip_is_byte_exact(engine, kind):
    spec = make(engine, "q1", kind, capacity_for(kind))
    data = [b"", b"\x00\xff\x00binary\n", "unicode \u00e9\U0001f600".encode(), b"x" * (1 << 20)]
    pushed = messages.push(engine, spec, data)
    assert len(pushed) == 4
    peeked = messages.peek(engine, spec, 10)
    assert sorted(payloads(peeked)) == sorted(data)
    assert messages.peek(engine, spec, 10) == peeked, "peek must not take messages"
    popped = messages.pop(engine, spec, 10)
    assert sorted(payloads(popped)) == sorted(data)
    if kind != "claim":
        with pytest.raises(QueueEmpty):
            messages.pop(engine, spec)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_drop_removes_every_object_and_name_is_reusable(engine, kind):
    spec = make(engine, "q2", kind, capacity_for(kind))
    messages.push(engine, spec, [b"a"])
    plan = queues.drop(engine, spec)
    assert plan.messages == 1
    assert not engine.table_exists("q2")
    for name in spec.objects().values():
        assert not engine.table_exists(name)
    with pytest.raises(NotFound):
        catalog.get(engine, "q2")
    spec = make(engine, "q2", kind, capacity_for(kind))
    assert messages.push(engine, spec, [b"b"])


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_purge_deletes_and_counts_messages(engine, kind):
    spec = make(engine, "q3", kind, capacity_for(kind))
    messages.push(engine, spec, [b"1", b"2", b"3"])
    assert queues.purge_plan(engine, spec).messages == 3
    assert queues.purge(engine, spec).messages == 3
    assert messages.peek(engine, spec) == []
    messages.push(engine, spec, [b"4"])
    assert payloads(messages.pop(engine, spec)) == [b"4"]


def test_fifo_pops_in_insertion_order_and_lifo_in_reverse(engine):
    fifo = make(engine, "f", "fifo")
    lifo = make(engine, "l", "lifo")
    items = [str(i).encode() for i in range(20)]
    messages.push(engine, fifo, items)
    messages.push(engine, lifo, items)
    assert payloads(messages.pop(engine, fifo, 7)) == items[:7]
    assert payloads(messages.pop(engine, fifo, 20)) == items[7:]
    assert payloads(messages.pop(engine, lifo, 5)) == items[::-1][:5]


def test_ids_are_not_reused_after_the_queue_drains(engine):
    spec = make(engine, "f", "fifo")
    first = messages.push(engine, spec, [b"a", b"b"])
    messages.pop(engine, spec, 2)
    again = messages.push(engine, spec, [b"c"])
    assert again[0].id > first[-1].id


def test_heap_returns_every_message_once(engine):
    spec = make(engine, "h", "heap")
    items = {str(i).encode() for i in range(50)}
    messages.push(engine, spec, sorted(items))
    got = payloads(messages.pop(engine, spec, 30)) + payloads(messages.pop(engine, spec, 30))
    assert sorted(got) == sorted(items)


def test_pending_returns_only_due_messages_earliest_first(engine):
    spec = make(engine, "p", "pending")
    now = datetime.now(UTC)
    messages.push(engine, spec, [b"later"], due=now + timedelta(hours=1))
    messages.push(engine, spec, [b"due-second"], due=now - timedelta(seconds=10))
    messages.push(engine, spec, [b"due-first"], due=now - timedelta(seconds=20))
    assert payloads(messages.pop(engine, spec, 10)) == [b"due-first", b"due-second"]
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)
    assert payloads(messages.peek(engine, spec)) == [b"later"]


def test_pending_message_becomes_due(engine):
    spec = make(engine, "p", "pending")
    messages.push(engine, spec, [b"soon"], due=datetime.now(UTC) + timedelta(seconds=1.5))
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)
    assert payloads(messages.pop(engine, spec, wait_s=5)) == [b"soon"]


def test_pending_depth_and_oldest_are_the_due_messages(engine, target):
    """Messages not due yet are no backlog: check, status and inspect count the due ones as
    depth (the oldest: since it fell due), the others apart as scheduled."""
    from click.testing import CliRunner

    from qadmin.cli import cli

    spec = make(engine, "p", "pending")
    now = datetime.now(UTC)
    messages.push(engine, spec, [b"a", b"b", b"c"], due=now + timedelta(hours=1))
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)

    def run(*args: str):
        return CliRunner().invoke(cli, [*args, *target.cli_args()], catch_exceptions=False)

    # (The server is shared: its own findings, such as InnoDB's purge lag, may warn.)
    for limit in (["--crit-depth", "1"], ["--crit-oldest-age", "5m"]):
        result = run("check", "p", *limit)
        assert result.exit_code in {0, 1} and "CRITICAL" not in result.stdout, result.stdout
        assert "depth=0;" in result.stdout and "oldest_age=0s;" in result.stdout, result.stdout
    status = run("status", "--crit-depth", "1", "--format", "json")
    import json

    mine = target.schema or "main"
    line = next(
        q for q in json.loads(status.stdout)["lines"] if (q["schema"], q["table"]) == (mine, "p")
    )
    assert (line["depth"], line["scheduled"], line["oldest_age_s"]) == (0, 3, None), line
    assert line["status"] != "CRITICAL", line
    # One message fell due ten minutes ago: it is the depth and the oldest, from its due time.
    messages.push(engine, spec, [b"late"], due=now - timedelta(minutes=10))
    result = run("check", "p", "--crit-depth", "2", "--crit-oldest-age", "5m")
    assert result.exit_code == 2, result.stdout
    assert "depth=1;" in result.stdout and "oldest_age >= 300s" not in result.stdout
    assert "oldest_age 6" in result.stdout, result.stdout  # about 600 s since it fell due
    size = json.loads(run("size", "p", "--format", "json").stdout)
    assert (size["depth"], size["depth_quality"], size["scheduled"]) == (1, "exact", 3), size
    assert payloads(messages.pop(engine, spec, 10)) == [b"late"]


def test_capped_overwrites_oldest_and_reports_it(engine, target):
    spec = make(engine, "c", "capped", 3)
    base = first_id(target)
    pushed = messages.push(engine, spec, [b"a", b"b", b"c", b"d", b"e"])
    assert [p.overwritten_id for p in pushed] == [None, None, None, base, base + 1]
    assert payloads(messages.peek(engine, spec)) == [b"c", b"d", b"e"]
    assert payloads(messages.pop(engine, spec, 10)) == [b"c", b"d", b"e"]


def test_capped_gaps_from_pops_never_exceed_capacity_or_reuse_ids(engine):
    spec = make(engine, "c", "capped", 4)
    seen_ids: set[int] = set()
    for round_ in range(6):
        pushed = messages.push(engine, spec, [f"{round_}-{i}".encode() for i in range(3)])
        ids = {p.id for p in pushed}
        assert not ids & seen_ids
        seen_ids |= ids
        messages.pop(engine, spec, 1)
        assert len(messages.peek(engine, spec, 100)) <= 4
    remaining = messages.pop(engine, spec, 100)
    assert [r.id for r in remaining] == sorted(r.id for r in remaining)


def test_claim_test_and_set_ack_and_fail(engine):
    spec = make(engine, "cl", "claim")
    messages.push(engine, spec, [b"one", b"two"])
    first = messages.pop(engine, spec, worker="w1")[0]
    assert first.payload == b"one" and first.attempts == 1
    second = messages.pop(engine, spec, worker="w2")[0]
    assert second.payload == b"two"
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)
    rows = {r.id: r for r in messages.peek(engine, spec)}
    assert rows[first.id].processing_started_at is not None
    assert rows[first.id].claimed_by == "w1"
    messages.ack(engine, spec, first.id)
    with pytest.raises(NotFound):
        messages.ack(engine, spec, first.id)
    failed = messages.fail(engine, spec, second.id, "boom")
    assert failed.attempts == 1
    row = messages.peek(engine, spec)[0]
    assert row.last_error == "boom" and row.processing_started_at is not None
    messages.fail(engine, spec, second.id, "boom again", retry=True)
    retried = messages.pop(engine, spec)[0]
    assert retried.id == second.id and retried.attempts == 2


def test_ack_on_a_fifo_is_refused(engine):
    spec = make(engine, "f", "fifo")
    with pytest.raises(WrongKind):
        messages.ack(engine, spec, 1)


def test_ring_full_refuses_push_without_losing_a_number(engine, target):
    spec = make(engine, "r", "ring", 3)
    base = first_id(target)
    messages.push(engine, spec, [b"a", b"b", b"c"])
    with pytest.raises(QueueFull):
        messages.push(engine, spec, [b"d"])
    assert payloads(messages.pop(engine, spec)) == [b"a"]
    pushed = messages.push(engine, spec, [b"d"])
    assert pushed[0].id == base + 3, "the refused push must not have used a number"
    assert [r.id for r in messages.pop(engine, spec, 10)] == [base + 1, base + 2, base + 3]


def test_ring_empty_pop_takes_no_number(engine, target):
    spec = make(engine, "r", "ring", 3)
    base = first_id(target)
    for _ in range(3):
        with pytest.raises(QueueEmpty):
            messages.pop(engine, spec)
    messages.push(engine, spec, [b"x"])
    got = messages.pop(engine, spec)
    assert got[0].id == base and got[0].payload == b"x"


def test_ring_wraps_around_in_order_and_never_grows(engine):
    spec = make(engine, "r", "ring", 3)
    out: list[bytes] = []
    for i in range(10):
        messages.push(engine, spec, [f"m{i}".encode()])
        if i % 2:
            out += payloads(messages.pop(engine, spec, 2))
    assert out == [f"m{i}".encode() for i in range(10)]
    count = engine.query(f"SELECT count(*) AS n FROM {engine.qualified('r')}")[0]["n"]
    assert count == 3


@pytest.mark.parametrize("kind", ["fifo", "claim", "pending", "heap"])
def test_lax_consumers_skip_rows_another_consumer_holds(target, kind):
    if target.label == "sqlite":
        pytest.skip("SQLite has one writer at a time: no row locks to skip")
    setup = target.engine()
    spec = make(setup, "lax", kind)
    messages.push(setup, spec, [b"first", b"second"])
    holder, held, _ = hold_pop(target, spec)
    assert held, "the holder got the first message"
    other = target.engine()
    started = time.monotonic()
    got = messages.pop(other, spec)
    assert payloads(got) == [b"second"]
    assert time.monotonic() - started < 2, "a lax pop must not wait for the holder"
    finish(holder, commit=False)
    for eng in (holder, other, setup):
        eng.close()


@pytest.mark.parametrize("kind", ["fifo", "claim"])
def test_a_waiting_pop_takes_a_message_pushed_behind_a_held_head(target, kind):
    """A waiting pop that probes the head (no notifications) must not wait on a head another
    consumer holds: the message pushed behind it is taken within the wait."""
    if target.label == "sqlite":
        pytest.skip("SQLite has one writer at a time: no row locks to skip")
    setup = target.engine()
    spec = make(setup, "lax", kind)
    messages.push(setup, spec, [b"held"])
    holder, held, _ = hold_pop(target, spec)
    assert held, "the holder got the head"
    other = target.engine()
    got: list[bytes] = []
    waiter = threading.Thread(
        target=lambda: got.extend(payloads(messages.pop(other, spec, wait_s=60)))
    )
    waiter.start()
    time.sleep(0.5)  # the waiter found nothing it could take and is waiting
    messages.push(setup, spec, [b"behind"])
    waiter.join(timeout=90)
    assert got == [b"behind"]
    finish(holder, commit=False)
    for eng in (holder, other, setup):
        eng.close()


def test_strict_fifo_serialises_consumers(target):
    if target.label == "sqlite":
        pytest.skip("SQLite serialises every writer; strict and lax are the same")
    from qadmin.engines import Timeouts, open_engine

    setup = target.engine()
    spec = make(setup, "strict_q", "fifo", strict=True)
    messages.push(setup, spec, [b"first", b"second"])
    holder, _, _ = hold_pop(target, spec)
    impatient = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=1000))
    with pytest.raises(LockTimeout):
        messages.pop(impatient, spec)
    finish(holder, commit=True)
    assert payloads(messages.pop(impatient, spec)) == [b"second"]
    for eng in (holder, impatient, setup):
        eng.close()


def test_strict_fifo_keeps_order_when_the_head_is_rolled_back(target):
    if target.label == "sqlite":
        pytest.skip("SQLite serialises every writer")
    setup = target.engine()
    spec = make(setup, "strict_q", "fifo", strict=True)
    messages.push(setup, spec, [b"first", b"second"])
    holder, _, _ = hold_pop(target, spec)
    finish(holder, commit=False)
    assert payloads(messages.pop(setup, spec)) == [b"first"]
    holder.close()
    setup.close()


def test_kind_enum_covers_every_template(engine):
    for kind in Kind:
        assert engine.hooks.template(
            queues.make_spec("x", kind.value, capacity_for(kind.value), False)
        )
