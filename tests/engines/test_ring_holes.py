"""A pusher or popper SIGKILLed between taking its sequence number and touching the slot:
the hole it leaves, how inspect names it, and that the printed fix gets the ring moving with
nothing lost or duplicated. (`qadmin repair` is the rings issue; these pin the diagnosis.)"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import psycopg
import pytest

from qadmin import catalog
from qadmin.catalog import sql
from qadmin.diagnostics.entries import ring as ring_part
from qadmin.diagnostics.entries import size
from qadmin.errors import QueueEmpty, QueueFull
from qadmin.ops import messages, queues
from tests.conftest import Target, make_target
from tests.engines import diag
from tests.engines.private_pg import quiet_pg  # noqa: F401 - a fixture
from tests.helpers import invoke

CLIENT = """
import sys
from qadmin.engines import Timeouts, open_engine
from qadmin import catalog
from qadmin.ops import messages
engine = open_engine(sys.argv[1], None if sys.argv[2] == '-' else sys.argv[2],
                     Timeouts(lock_ms=60000))
spec = catalog.get(engine, 'ring_q')
print('ready', flush=True)
if sys.argv[3] == 'pop':
    messages.pop(engine, spec)
else:
    messages.push(engine, spec, [b'never'])
"""
LABELS = ["postgresql", "mariadb", "mysql8"]


def _first(label: str) -> int:
    return 1 if label == "mysql8" else 0


def _lock_slot(target, slot: int):
    """Hold a row lock on one slot, so a client blocks right after taking its number."""
    engine = target.engine()
    cursor = engine.conn.cursor()
    cursor.execute(f"SELECT slot FROM {engine.qualified('ring_q')} WHERE slot = {slot} FOR UPDATE")
    cursor.fetchall()
    return engine


def _block_push(target):
    """Hold what the next push needs, so a pusher blocks right after taking its number: its
    slot (a push never waits on a slot: it goes to the overflow table) and, in the overflow
    table, an uncommitted row with its number (the push's insert waits on that key)."""
    engine = target.engine()
    spec = catalog.get(engine, "ring_q")
    number = int(sql.template_rows(engine, spec, "counters")[0]["enqueued_total"])
    now = "clock_timestamp()" if engine.name == "postgresql" else "UTC_TIMESTAMP(6)"
    cursor = engine.conn.cursor()
    table, overflow = engine.qualified("ring_q"), engine.qualified("ring_q_overflow")
    cursor.execute(f"SELECT slot FROM {table} WHERE slot = {number % 4} FOR UPDATE")
    cursor.fetchall()
    cursor.execute(
        f"INSERT INTO {overflow} (message_id, enqueued_at, payload) VALUES ({number}, {now}, 'x')"
    )
    return engine


def _kill_blocked_client(target, what: str, locker) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT, target.dsn, target.engine_schema or "-", what],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)  # it has taken its number and waits for the slot's lock
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    locker.conn.rollback()
    locker.close()
    time.sleep(1.0)  # the server finishes the orphaned statement and rolls it back


@pytest.mark.parametrize("label", LABELS)
def test_killed_popper_leaves_an_orphan_that_blocks_pushes(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    first = _first(label)
    messages.push(engine, spec, [b"a", b"b"])
    _kill_blocked_client(target, "pop", _lock_slot(target, first % 4))
    assert [m.payload for m in messages.pop(engine, spec)] == [b"b"]
    messages.push(engine, spec, [b"c", b"d"])
    with pytest.raises(QueueFull):
        messages.push(engine, spec, [b"e"])  # 3 messages in 4 slots, yet refused
    ring = diag.inspect(engine, spec)["ring"]
    assert (ring["orphan_id"], ring["orphan_slot"]) == (first, first % 4)
    report = diag.inspect(engine, spec)
    fix = next(f for f in report["findings"] if f["code"] == "ring_orphan")["fix"]
    assert re.fullmatch(
        r"qadmin repair ring_q --older-than ([0-9]+) --dry-run, then qadmin repair ring_q "
        r"--older-than \1 --yes \(by hand: .*\)",
        fix,
    )
    assert fix.endswith(f"(by hand: {report['ring']['orphan_fix']})")
    engine.run([report["ring"]["orphan_fix"]])  # the SQL the finding prints, as printed
    assert [m.payload for m in messages.pop(engine, spec, 10)] == [b"a", b"c", b"d"]
    messages.push(engine, spec, [b"e"])
    assert [m.payload for m in messages.pop(engine, spec)] == [b"e"]
    assert ring_part.measure(engine, spec).state.orphan_id is None
    engine.close()


@pytest.mark.parametrize("label", LABELS)
def test_killed_pusher_leaves_a_missing_number_that_stops_pops(
    label, request, tmp_path, monkeypatch
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    first = _first(label)
    _kill_blocked_client(target, "push", _block_push(target))
    messages.push(engine, spec, [b"x"])
    with pytest.raises(QueueEmpty) as stuck:
        messages.pop(engine, spec)  # stuck at the number the dead pusher took
    # not "empty" (a tester's pop said so while messages waited): where it stopped, and repair
    said = str(stuck.value)
    assert f"pops stop at number {first}" in said and "repair ring_q --dry-run" in said, said
    report = diag.inspect(engine, spec, ring_stall=(None, 0))
    assert report["ring"]["missing_id"] == first
    assert any(f["code"] == "ring_push_hole" for f in report["findings"])
    engine.run([report["ring"]["hole_fix"]])  # the SQL the finding prints, as printed
    assert [m.payload for m in messages.pop(engine, spec)] == [b"x"]
    engine.close()


@pytest.mark.parametrize("label", LABELS)
def test_repair_gets_both_stalls_moving_and_loses_nothing(label, request, tmp_path):
    import json

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    first = _first(label)
    messages.push(engine, spec, [b"a", b"b"])
    _kill_blocked_client(target, "pop", _lock_slot(target, first % 4))  # orphan: a
    messages.push(engine, spec, [b"c", b"d"])
    _kill_blocked_client(target, "push", _lock_slot(target, (first + 4) % 4))  # refused: full
    cli_args = [*target.cli_args(), "--format", "json"]
    dry = json.loads(invoke("repair", "ring_q", "--dry-run", *cli_args).stdout)
    assert dry["park"] == [first] and dry["dry_run"] is True
    assert [m.payload for m in messages.pop(engine, spec, 10)] == [b"b", b"c", b"d"]
    done = invoke("repair", "ring_q", "--yes", "--older-than", "0", *cli_args)
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["park"] == [first]
    assert [m.payload for m in messages.pop(engine, spec)] == [b"a"]
    # now a pusher dies after taking its number: pops stop there until repair skips it
    _kill_blocked_client(target, "push", _block_push(target))
    messages.push(engine, spec, [b"e"])
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)
    fixed = json.loads(invoke("repair", "ring_q", "--yes", "--older-than", "0", *cli_args).stdout)
    assert fixed["skip"] == [{"id": first + 4, "action": "voided"}]
    assert [m.payload for m in messages.pop(engine, spec)] == [b"e"]
    now = "clock_timestamp()" if label == "postgresql" else "UTC_TIMESTAMP(6)"
    engine.run(
        [
            f"INSERT INTO {engine.qualified('ring_q_pending')} (message_id, taken_at) "
            f"VALUES (999, {now})"
        ]
    )  # a parked number whose message never comes
    stale = json.loads(invoke("repair", "ring_q", "--yes", "--older-than", "0", *cli_args).stdout)
    assert stale["void"] == [999]
    assert ring_part.measure(engine, spec).state.parked == 0
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_ring_table_does_not_grow_under_churn(label, request, tmp_path):
    """Slots are reused in place. On PostgreSQL that needs the cleanup horizon free, which the
    shared server never has (an unrelated transaction is always open): a private server."""
    if label == "postgresql":
        dsn = request.getfixturevalue("quiet_pg")
        admin = psycopg.connect(dsn, autocommit=True)
        admin.execute("CREATE SCHEMA IF NOT EXISTS ring_churn")
        admin.close()
        target = Target("postgresql", dsn, "ring_churn")
    else:
        target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 500, False))

    def table_size() -> int:
        facts = size.measure(engine, spec).facts
        return int(facts.table_bytes or facts.file_bytes or 0)

    for _ in range(5):  # one lap, so every slot has held a message once
        messages.push(engine, spec, [b"p" * 100] * 100)
        messages.pop(engine, spec, 100)
    _analyze(engine, label)
    settled = table_size()
    for _ in range(100):
        messages.push(engine, spec, [b"p" * 100] * 100)
        messages.pop(engine, spec, 100)
    _analyze(engine, label)
    assert table_size() <= settled * 1.5 + 65536, (settled, table_size())
    if label == "postgresql":
        engine.close()  # flush this backend's counters
        engine = target.engine()
        stats = _until_hot(engine, target.schema)
        assert stats["n_tup_hot_upd"] >= 0.9 * stats["n_tup_upd"] > 0, stats
    engine.close()


def _analyze(engine, label: str) -> None:
    """Sizes come from the catalog (no lock on the table), as of the last ANALYZE."""
    if label == "mariadb":
        engine.run([f"ANALYZE TABLE {engine.qualified('ring_q')}"])
    elif label == "postgresql":
        engine.run([f"ANALYZE {engine.qualified('ring_q')}"])


def _until_hot(engine, schema: str) -> dict:
    deadline = time.monotonic() + 15
    while True:
        row = engine.query(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
            "WHERE schemaname = :schema AND relname = 'ring_q'",
            {"schema": schema},
        )[0]
        if row["n_tup_upd"] >= 20_000 or time.monotonic() > deadline:
            return row
        time.sleep(0.2)


@pytest.mark.parametrize("label", LABELS)
def test_purge_empties_a_ring_stopped_at_a_missing_number(label, request, tmp_path):
    """Purge deletes what its dry run counted even behind a killed pusher's number, and the
    ring works afterwards (draining through pop stopped at the hole and deleted nothing)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    _kill_blocked_client(target, "push", _block_push(target))
    messages.push(engine, spec, [b"x", b"y"])
    # The dry run's count is pushes minus pops (cheap), so it includes the missing number.
    assert queues.purge_plan(engine, spec).messages == 3
    assert queues.purge(engine, spec).messages == 2
    assert queues.purge_plan(engine, spec).messages == 0
    with pytest.raises(QueueEmpty):
        messages.pop(engine, spec)
    messages.push(engine, spec, [b"a", b"b", b"c", b"d"])  # all four slots free again
    assert [m.payload for m in messages.pop(engine, spec, 10)] == [b"a", b"b", b"c", b"d"]
    engine.close()


def test_check_reports_a_push_hole_as_critical_with_no_threshold_of_its_own(request, tmp_path):
    """Behaviour 1 of issue 14: check used to say OK (oldest_age=0s) while pops stopped at a
    dead pusher's number; it now reflects the finding, with inspect's own limit."""

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    _kill_blocked_client(target, "push", _block_push(target))
    messages.push(engine, spec, [b"x"])
    time.sleep(1.2)
    args = ["ring_q", "--crit-ring-stall", "1s", "--sample", "0", *target.cli_args()]
    checked = invoke("check", *args)
    assert checked.exit_code == 2, checked.output
    assert checked.stdout.startswith("QADMIN CRITICAL - ring_q: ")
    assert "ring_push_hole: pops stop at sequence number" in checked.stdout
    as_json = invoke("check", *args, "--format", "json")
    document = __import__("json").loads(as_json.stdout)
    assert document["code"] == 2 and document["status"] == "CRITICAL"
    assert {"severity": "critical", "code": "ring_push_hole"}.items() <= next(
        f for f in document["findings"] if f["code"] == "ring_push_hole"
    ).items()
    inspected = invoke("inspect", *args, "--format", "json")
    report = __import__("json").loads(inspected.stdout)
    assert inspected.exit_code == 0 and report["ring"]["hole_fix"]
    assert any(f["code"] == "ring_push_hole" for f in report["findings"])
    engine.run([report["ring"]["hole_fix"]])
    assert [m.payload for m in messages.pop(engine, spec)] == [b"x"]
    healthy = invoke("check", *args)
    assert healthy.exit_code == 0, healthy.output
    assert diag.inspect(engine, spec)["ring"]["hole_fix"] is None, "no hole: no fix printed"
    engine.close()


def _cli_json(target, *args: str) -> tuple[int, dict]:
    import json

    result = invoke(*args, *target.cli_args(), "--format", "json")
    return result.exit_code, json.loads(result.stdout.splitlines()[0])


@pytest.mark.parametrize("label", LABELS)
def test_messages_behind_a_push_hole_give_the_oldest_age(label, request, tmp_path):
    """The tester's first case: pops stop at a dead pusher's number while two messages wait
    behind it; oldest_age used to be null (check made it 0 and said OK)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    _kill_blocked_client(target, "push", _block_push(target))
    messages.push(engine, spec, [b"x", b"y"])
    time.sleep(1.2)
    code, checked = _cli_json(target, "check", "ring_q", "--warn-oldest-age", "1s", "--sample", "0")
    assert code >= 1 and checked["metrics"]["oldest_age"] >= 1, checked
    assert any(p.startswith("oldest_age ") for p in checked["problems"]), checked
    code, report = _cli_json(target, "inspect", "ring_q")
    assert code == 0 and report["size"]["oldest_age_s"] >= 1
    code, row = _cli_json(target, "tail", "ring_q", "--count", "1", "--interval", "0.2")
    assert code == 0 and row["oldest_age_s"] >= 1
    # repair's default waits 60 s for a hole: its dry run says why it leaves this one alone
    # (it showed nothing, as if the ring were well)
    code, dry = _cli_json(target, "repair", "ring_q", "--dry-run")
    first = _first(label)
    assert code == 0 and dry["skip"] is None and f"number {first} is missing" in dry["note"], dry
    assert "--older-than 60 s" in dry["note"]
    engine.close()


@pytest.mark.parametrize("label", LABELS)
def test_an_orphan_is_reported_before_the_ring_laps_onto_its_slot(label, request, tmp_path):
    """The tester's second case: a popper dies, later pops and pushes go on, the orphan's slot
    is not yet the one the next push needs: it is raised once older than the ring-stall limit,
    as repair's plan already sees it."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    first = _first(label)
    messages.push(engine, spec, [b"a", b"b"])
    _kill_blocked_client(target, "pop", _lock_slot(target, first % 4))
    assert [m.payload for m in messages.pop(engine, spec)] == [b"b"]
    messages.push(engine, spec, [b"c"])
    code, calm = _cli_json(target, "check", "ring_q", "--sample", "0")
    # younger than the default limit (30 s): it may be a pop in flight (the server may have
    # other findings of its own: other tests share it)
    assert not any(f["code"] == "ring_orphan" for f in calm["findings"]), calm
    args = ("ring_q", "--crit-ring-stall", "1s", "--sample", "0")
    code, checked = _cli_json(target, "check", *args)
    assert code == 2 and checked["status"] == "CRITICAL", checked
    found = next(f for f in checked["findings"] if f["code"] == "ring_orphan")
    assert found["severity"] == "critical" and f"message {first} in slot" in found["message"]
    code, report = _cli_json(target, "inspect", *args)
    assert code == 0 and report["ring"]["orphan_id"] == first
    assert report["ring"]["orphan_blocks_push"] is False
    assert any(f["code"] == "ring_orphan" for f in report["findings"])
    code, row = _cli_json(target, "tail", "ring_q", "--count", "1", "--interval", "0.2")
    assert code == 0 and row["ring_orphan_age_s"] >= 1
    code, dry = _cli_json(target, "repair", "ring_q", "--dry-run")
    assert code == 0 and dry["park"] == [first]
    engine.close()


def test_a_live_pop_in_an_open_transaction_is_not_an_orphan(request, tmp_path):
    """PostgreSQL skips a slot whose old version a live transaction is updating: a consumer
    holding its pop open past the ring-stall limit is not reported as a dead one."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    messages.push(engine, spec, [b"a", b"b"])
    with psycopg.connect(target.dsn) as consumer:
        popped = consumer.execute(f"SELECT payload FROM {engine.qualified('ring_q_pop')}(1)")
        assert [bytes(r[0]) for r in popped.fetchall()] == [b"a"]
        time.sleep(1.2)
        _, checked = _cli_json(
            target, "check", "ring_q", "--crit-ring-stall", "1s", "--sample", "0"
        )
        assert not any(f["code"] == "ring_orphan" for f in checked["findings"]), checked
        consumer.rollback()
    engine.close()


def test_repair_never_parks_a_message_a_live_pop_holds(request, tmp_path):
    """A tester's repair while a consumer's pop was open parked its number: once the pop
    committed the ring was empty, yet inspect said depth 1 (exact), check --crit-depth 1 was
    CRITICAL and a push of two into a ring of two was refused as full, until a later repair
    voided the number. repair leaves a pop in flight alone, as ring_state does."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 2, False))
    messages.push(engine, spec, [b"one"])
    with psycopg.connect(target.dsn) as consumer:
        popped = consumer.execute(f"SELECT payload FROM {engine.qualified('ring_q_pop')}(1)")
        assert [bytes(r[0]) for r in popped.fetchall()] == [b"one"]
        code, planned = _cli_json(target, "repair", "ring_q", "--dry-run")
        assert code == 0 and planned["park"] == [], planned
        code, done = _cli_json(target, "repair", "ring_q", "--yes")
        assert code == 0 and done["park"] == [], done
        consumer.commit()
    code, report = _cli_json(target, "inspect", "ring_q", "--sample", "0")
    assert report["size"]["depth"] == 0, report["size"]
    messages.push(engine, spec, [b"a", b"b"])  # the ring's whole capacity
    engine.close()


def _pg_pop_then_die(target, pop: str) -> list[tuple]:
    """An application's pop in its own transaction on PostgreSQL; the session then ends with
    no COMMIT: the server rolls the pop back, the pop sequence stays moved."""
    from tests.engines.incidents import connect

    popper = connect(target)
    popper.autocommit = False
    taken = popper.execute(f"SELECT payload FROM {pop}(1)").fetchall()
    popper.close()
    return taken


def _my_pop_then_die(target, pop: str) -> list[tuple]:
    """The same on MySQL/MariaDB: a CALL inside BEGIN at READ COMMITTED, then gone."""
    from tests.engines.incidents import connect, execute

    popper = connect(target)
    execute(popper, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    execute(popper, "BEGIN")
    taken = execute(popper, f"CALL {pop}(1)")
    popper.close()
    return taken


@pytest.mark.parametrize(
    ("label", "pop_then_die"), [("postgresql", _pg_pop_then_die), ("mariadb", _my_pop_then_die)]
)
def test_an_orphan_in_the_overflow_table_is_reported_and_repaired(
    label, pop_then_die, request, tmp_path
):
    """A message the push put in the overflow table (its slot was held), popped by a client
    that died before committing: its number passed, it is in no slot. inspect and check name
    it as an orphan in the overflow table (they said nothing: only repair's plan saw it), and
    repair gives it back, nothing lost."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("ring_q", "ring", 4, False))
    first = _first(label)
    locker = _lock_slot(target, first % 4)
    messages.push(engine, spec, [b"spilled"])
    locker.conn.rollback()
    locker.close()
    taken = pop_then_die(target, engine.qualified("ring_q_pop"))
    assert [bytes(r[-1]) for r in taken] == [b"spilled"]
    args = ("ring_q", "--crit-ring-stall", "1s", "--sample", "0")
    time.sleep(1.1)
    code, checked = _cli_json(target, "check", *args)
    assert code == 2 and checked["status"] == "CRITICAL", checked
    found = next(f for f in checked["findings"] if f["code"] == "ring_orphan")
    assert f"message {first} in the overflow table" in found["message"], found
    code, report = _cli_json(target, "inspect", *args)
    assert report["ring"]["orphan_id"] == first and report["ring"]["overflow"] == 1
    assert report["ring"]["orphan_blocks_push"] is False
    code, dry = _cli_json(target, "repair", "ring_q", "--older-than", "1", "--dry-run")
    assert code == 0 and dry["park"] == [first], dry
    code, done = _cli_json(target, "repair", "ring_q", "--older-than", "1", "--yes")
    assert code == 0, done
    assert [m.payload for m in messages.pop(engine, spec, 10)] == [b"spilled"]
    assert ring_part.measure(engine, spec).state.orphan_id is None
    engine.close()
