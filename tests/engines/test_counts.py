"""Every count that backs a decision (``size``, ``inspect``, ``check``, ``purge --dry-run``)
counts every place a ring keeps a message: its slots, its overflow table and its parked
numbers, after a convert too; and each agrees with what pop then delivers or purge deletes."""

from __future__ import annotations

import json

import pytest

from qadmin import catalog
from qadmin.diagnostics.entries import ring
from qadmin.errors import QueueEmpty
from qadmin.ops import convert as convert_ops
from qadmin.ops import messages, queues, repair
from qadmin.ops import resize as resize_ops
from tests.conftest import make_target
from tests.helpers import drain_ids, invoke

BACKLOG = 30
AFTER = 5


def _json(target, *args: str, codes: tuple[int, ...] = (0,)) -> dict:
    result = invoke(*args, *target.cli_args(), "--format", "json")
    assert result.exit_code in codes, (args, result.exit_code, result.stderr)
    return json.loads(result.stdout)


def _counts(target, name: str, expected: int) -> dict[str, object]:
    """What each command says the queue holds; check is given a warning threshold of
    ``expected`` so its status says whether its count reached it."""
    size = _json(target, "size", name)
    inspected = _json(target, "inspect", name)
    checked = _json(target, "check", name, "--warn-depth", str(max(expected, 1)), codes=(0, 1, 2))
    dry = _json(target, "purge", name, "--dry-run")
    return {
        "size": (size["depth"], size["depth_exact"]),
        "inspect": inspected["size"]["depth"],
        # the depth threshold's verdict: the status also reflects every finding, which on a
        # shared server may include server-wide state (InnoDB's purge lag)
        "check": (
            checked["metrics"]["depth"],
            any(p.startswith("depth ") for p in checked["problems"]),
        ),
        "purge --dry-run": (dry["messages"], dry["messages_exact"]),
    }


def _expected(n: int) -> dict[str, object]:
    return {
        "size": (n, True),
        "inspect": n,
        "check": (float(n), bool(n)),
        "purge --dry-run": (n, True),
    }


def _hand_built(engine, label: str) -> None:
    serial = {
        "sqlite": "integer PRIMARY KEY",
        "postgresql": "bigserial PRIMARY KEY",
        "mariadb": "BIGINT AUTO_INCREMENT PRIMARY KEY",
    }[label]
    table = engine.qualified("jobs")
    engine.run([f"CREATE TABLE {table} (job_id {serial}, body text NOT NULL)"])
    values = ", ".join(f"('b{i}')" for i in range(BACKLOG))
    engine.run([f"INSERT INTO {table} (body) VALUES {values}"])


@pytest.mark.parametrize("source", ["managed", "hand-built"])
@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_counts_after_convert_include_the_parked_backlog(label, source, request, tmp_path):
    """Seen on MariaDB: after a convert with 1,000 waiting, depth 0 (exact), check OK and
    purge --dry-run 0, while purge --yes deleted all 1,000."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    if source == "managed":
        name = "conv_q"
        spec = queues.create(engine, queues.make_spec(name, "fifo", None, False))
        messages.push(engine, spec, [f"b{i}".encode() for i in range(BACKLOG)])
        src = convert_ops.source(engine, name)
    else:
        name = "jobs"
        _hand_built(engine, label)
        src = convert_ops.source(engine, name, payload_cols=("body",))
    assert convert_ops.convert(engine, src, 64).messages == BACKLOG
    assert _counts(target, name, BACKLOG) == _expected(BACKLOG)
    # the backlog is the oldest message, though no slot holds it (MariaDB said none)
    assert _json(target, "size", name)["oldest_enqueued_at"] is not None
    ring = catalog.get(engine, name)
    messages.push(engine, ring, [f"a{i}".encode() for i in range(AFTER)])  # into the slots
    assert _counts(target, name, BACKLOG + AFTER) == _expected(BACKLOG + AFTER)
    got = drain_ids(engine, name, 7)
    assert len(got) == BACKLOG + AFTER == len({i for i, _ in got})
    assert [p for _, p in got][-AFTER:] == [f"a{i}".encode() for i in range(AFTER)]
    assert _counts(target, name, 0) == _expected(0)


@pytest.mark.parametrize("label", ["postgresql", "mariadb", "mysql8"])
def test_ring_counts_slots_overflow_and_parked_numbers_and_purge_agrees(label, request, tmp_path):
    """A ring whose messages are in all three places: a number parked by repair (a popper
    that died after taking it), a message a shrinking resize left in the overflow table (its
    slot taken by the parked one), and the rest in slots. Every count says 4 (MariaDB and
    MySQL 8 left the parked number out); purge deletes exactly those 4."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 8, False))
    pushed = [m.id for m in messages.push(engine, spec, [f"m{i}".encode() for i in range(8)])]
    engine.run([ring.measure(engine, spec).hole_fix_sql])  # a popper took a number, died
    assert [m.id for m in messages.pop(engine, spec, count=4)] == pushed[1:5]
    assert _counts(target, "ring_q", 3) == _expected(3)  # the orphan is not poppable yet
    assert repair.repair(engine, spec, 0).park == [pushed[0]]
    assert _counts(target, "ring_q", 4) == _expected(4)
    resize_ops.resize(engine, spec, 5)  # pushed[0] and pushed[5] share slot 0 or 1
    spec = catalog.get(engine, "ring_q")
    state = ring.measure(engine, spec).state
    assert (state.parked, state.overflow) == (1, 1)
    assert _counts(target, "ring_q", 4) == _expected(4)
    purged = _json(target, "purge", "ring_q", "--yes")
    assert (purged["messages"], purged["messages_exact"]) == (4, True)
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)
    assert _counts(target, "ring_q", 0) == _expected(0)
