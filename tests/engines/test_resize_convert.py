"""resize and convert on live queues: 4 producers and 4 consumers keep running while the
operation happens, and every message is popped exactly once."""

from __future__ import annotations

import time

import pytest

from qadmin.errors import UsageError
from qadmin.ops import catalog, messages, queues
from qadmin.ops import resize as resize_ops
from tests.conftest import make_target
from tests.engines import load

LABELS = ["sqlite", "postgresql", "mariadb", "mysql8"]
TOTAL = 6_000


def _assert_exactly_once(outcome: load.Outcome, total: int) -> None:
    summary = (
        f"pushed={outcome.pushed} popped={outcome.popped} lost={outcome.lost} "
        f"dup={outcome.duplicated} unexpected={outcome.unexpected} left={outcome.leftover}"
    )
    assert (outcome.pushed, outcome.lost, outcome.duplicated) == (total, 0, 0), summary
    assert (outcome.unexpected, outcome.leftover) == (0, 0), summary


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


@pytest.mark.parametrize("label", LABELS)
def test_ring_resized_up_and_down_under_load_loses_nothing(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("load_q", "ring", 64, False))

    def grow_then_shrink() -> None:
        _resize_until_done(target, 1500)
        _resize_until_done(target, 100)

    outcome = load.run(
        target.dsn,
        target.engine_schema,
        "load_q",
        producers=4,
        consumers=4,
        messages_each=TOTAL // 4,
        workdir=tmp_path,
        during=grow_then_shrink,
    )
    _assert_exactly_once(outcome, TOTAL)
    assert catalog.get(engine, "load_q").capacity == 100


@pytest.mark.parametrize("label", LABELS)
def test_resize_keeps_order_and_ids_and_refuses_to_shrink_below_backlog(
    label, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    messages.push(engine, spec, [b"a", b"b", b"c"])
    messages.pop(engine, spec)
    pushed = messages.push(engine, spec, [b"d", b"e"])
    with pytest.raises(UsageError, match="holds 4 messages"):
        resize_ops.resize(engine, spec, 3)
    plan = resize_ops.plan(engine, spec, 2500)
    assert (plan["from_capacity"], plan["messages"], plan["fits"]) == (4, 4, True)
    resize_ops.resize(engine, spec, 2500)
    spec = catalog.get(engine, "ring_q")
    assert spec.capacity == 2500
    more = messages.push(engine, spec, [b"f"])
    assert more[0]["id"] == pushed[-1]["id"] + 1
    got = messages.pop(engine, spec, count=10)
    assert [m["payload"] for m in got] == [b"b", b"c", b"d", b"e", b"f"]
    assert [m["id"] for m in got] == sorted(m["id"] for m in got)
    resize_ops.resize(engine, spec, 2)
    spec = catalog.get(engine, "ring_q")
    messages.push(engine, spec, [b"g", b"h"])
    assert [m["payload"] for m in messages.pop(engine, spec, count=5)] == [b"g", b"h"]
