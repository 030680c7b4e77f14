"""4 producer and 4 consumer processes per kind and engine: every message exactly once.

The message count is QADMIN_TEST_MESSAGES (default 4,000 per kind and engine: the ring of 1,000
goes round its slots four times and the capped queue of 500 eight, with 4 processes contending
on each side; set 20,000 or more for a soak run). The MySQL 8 templates differ from MariaDB's
only for capped and ring queues, so only those run as mysql8.
"""

from __future__ import annotations

import os

import pytest

from qadmin.ops import queues
from tests.conftest import make_target
from tests.engines import load

TOTAL = int(os.environ.get("QADMIN_TEST_MESSAGES", "4000"))
CASES = [
    (engine, kind, capacity, strict)
    for engine in ("sqlite", "postgresql", "mariadb", "mssql")
    for kind, capacity, strict in [
        ("heap", None, False),
        ("fifo", None, False),
        ("fifo", None, True),
        ("lifo", None, False),
        ("pending", None, False),
        ("claim", None, False),
        ("capped", 500, False),
        ("ring", 1000, False),
    ]
] + [("mysql8", "capped", 500, False), ("mysql8", "ring", 1000, False)]


def _id(case: tuple) -> str:
    engine, kind, _, strict = case
    return f"{engine}-{kind}{'-strict' if strict else ''}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_four_producers_four_consumers_exactly_once(case, request, tmp_path):
    label, kind, capacity, strict = case
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("load_q", kind, capacity, strict))
    engine.close()
    schema = target.engine_schema
    outcome = load.run(
        target.dsn,
        schema,
        "load_q",
        producers=4,
        consumers=4,
        messages_each=TOTAL // 4,
        workdir=tmp_path,
    )
    summary = (
        f"pushed={outcome.pushed} popped={outcome.popped} dropped={outcome.dropped} "
        f"lost={outcome.lost} dup={outcome.duplicated} unexpected={outcome.unexpected} "
        f"left={outcome.leftover}"
    )
    assert outcome.pushed == TOTAL, summary
    assert outcome.lost == 0, summary
    assert outcome.duplicated == 0, summary
    assert outcome.unexpected == 0, summary
    assert outcome.leftover == 0, summary
    if kind != "capped":
        assert outcome.dropped == 0 and outcome.popped == TOTAL, summary


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_ring_with_room_never_refuses_concurrent_batch_pushes(label, request, tmp_path):
    """Push reads the next number without taking it, then checks that number's slot. Another
    pusher can take and commit that number in between: its own message in the slot must not
    read as "full" (it did, under 4 producers pushing 100 per transaction: a few hundred of
    60,000 pushes were refused; here 20,000: the same 4-way overlap, a third as long)."""
    total = 20_000
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("load_q", "ring", total, False))
    engine.close()
    outcome = load.run(
        target.dsn,
        target.engine_schema,
        "load_q",
        producers=4,
        consumers=4,
        messages_each=total // 4,
        workdir=tmp_path,
        push_batch=100,
    )
    assert (outcome.pushed, outcome.lost, outcome.duplicated) == (total, 0, 0)
    assert outcome.refused == 0, f"{outcome.refused} pushes refused with free slots"


@pytest.mark.slow
@pytest.mark.parametrize(
    "label,kind,capacity",
    [
        (e, k, c)
        for e in ("sqlite", "postgresql", "mariadb", "mssql")
        # The ring's capacity is below the message count, so order holds across wrap-arounds.
        for k, c in (("fifo", None), ("ring", 100), ("capped", 100_000), ("claim", None))
    ],
)
def test_single_consumer_sees_fifo_order(label, kind, capacity, request, tmp_path):
    """The producer commits 100 messages per transaction, except to a MariaDB capped queue: its
    pop scans the id index (the slot is the clustered key), where InnoDB can miss the implicit
    lock of a row whose insert is in flight; SKIP LOCKED then takes that row (the pop waits for
    its commit) ahead of the older rows of the same transaction, which it skipped as locked.
    Nothing is lost or duplicated; order holds for one message per transaction (docs/kinds.md)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("order_q", kind, capacity, False))
    engine.close()
    schema = target.engine_schema
    count = max(TOTAL // 10, 100)
    outcome = load.run(
        target.dsn,
        schema,
        "order_q",
        producers=1,
        consumers=1,
        messages_each=count,
        workdir=tmp_path,
        push_batch=1 if (label, kind) == ("mariadb", "capped") else None,
    )
    got = [int(r["payload"].split("-")[1]) for r in outcome.consumer_orders[0]]
    assert got == list(range(count))
