"""Objects are owned: drop, a failed or killed create, convert and load touch only the objects
the catalog records as the queue's, and create refuses a name whose objects would collide."""

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
from qadmin.errors import QadminError, UsageError
from qadmin.kinds import QueueSpec
from qadmin.ops import convert as convert_ops
from qadmin.ops import messages, queues
from qadmin.pipeline import load
from tests.conftest import make_target
from tests.helpers import invoke_on

WITH_DATA = ["sqlite", "postgresql", "mariadb", "mysql8"]


@pytest.fixture
def engine(target):
    eng = target.engine()
    yield eng
    eng.close()


def names(engine) -> set[str]:
    """Every object in the schema that is not qadmin's catalog (or SQLite's own)."""
    return {
        n for _, n in catalog.schema_objects(engine, "") if not n.startswith(("qadmin_", "sqlite_"))
    }


def works(engine, name: str) -> None:
    spec = catalog.get(engine, name)
    messages.push(engine, spec, [b"still here"])
    assert [m.payload for m in messages.pop(engine, spec)] == [b"still here"]


def one_line_refusal(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert "\n" not in line and line.startswith("qadmin: error:"), result.stderr
    for word in words:
        assert word in line


def old_create(engine, spec: QueueSpec) -> None:
    """What an earlier qadmin did: the kind's create section and a catalog row, no checks."""
    catalog.ensure(engine)
    for statement in engine.hooks.section(spec, "create"):
        engine.run([statement])
    catalog.record(engine, spec)


def make_legacy(engine) -> None:
    """Turn the catalog back into one made before qadmin recorded objects."""
    engine.run([f"DROP TABLE {engine.qualified(catalog.OBJECTS_TABLE)}"])


def test_drop_leaves_queues_named_like_its_staging_tables(engine, target):
    queues.create(engine, queues.make_spec("a", "fifo", None, False))
    for name in ("a_stage", "a_loaded"):
        old_create(engine, queues.make_spec(name, "fifo", None, False))
    make_legacy(engine)
    assert invoke_on(target, "drop", "a", "--yes").exit_code == 0
    assert catalog.find(engine, "a") is None
    for name in ("a_stage", "a_loaded"):
        works(engine, name)
        assert ("table", name) in catalog.owned(engine, catalog.get(engine, name))
    assert "a" not in names(engine) and "a_pop" not in names(engine)
    assert invoke_on(target, "drop", "a_stage", "--yes").exit_code == 0
    works(engine, "a_loaded")


def test_upgrade_never_gives_a_queue_a_table_merely_named_like_its_staging(engine, target):
    """An upgrade cannot tell load's staging table from a user's table called <q>_stage: it
    leaves both unowned, so drop never takes them."""
    old_create(engine, queues.make_spec("a", "fifo", None, False))
    engine.run([f"CREATE TABLE {engine.qualified('a_stage')} (userdata varchar(20))"])
    engine.run([f"INSERT INTO {engine.qualified('a_stage')} (userdata) VALUES ('precious')"])
    make_legacy(engine)
    catalog.ensure(engine)
    assert ("table", "a_stage") not in catalog.owned(engine, catalog.get(engine, "a"))
    assert invoke_on(target, "drop", "a", "--yes").exit_code == 0
    rows = engine.query(f"SELECT userdata FROM {engine.qualified('a_stage')}")
    assert [r["userdata"] for r in rows] == ["precious"]


def test_upgrade_gives_each_old_queue_its_own_objects(engine):
    old_create(engine, queues.make_spec("u", "ring", 8, False))
    old_create(engine, queues.make_spec("u_ctl2", "fifo", None, False))
    make_legacy(engine)
    catalog.ensure(engine)  # what any writing command does first
    ring = {n for _, n in catalog.owned(engine, catalog.get(engine, "u"))}
    assert "u" in ring and "u_ctl" in ring and "u_overflow" in ring
    assert not ring & {"u_ctl2", "u_ctl2_push", "u_ctl2_pop"}
    queues.drop(engine, catalog.get(engine, "u"))
    works(engine, "u_ctl2")


def test_a_refused_ring_create_leaves_the_queue_named_like_its_control_table(engine, target):
    queues.create(engine, queues.make_spec("z_ctl", "fifo", None, False))
    before = names(engine)
    result = invoke_on(target, "create", "z", "--kind", "ring", "--capacity", "10")
    one_line_refusal(result, "z_ctl")
    works(engine, "z_ctl")
    assert names(engine) == before
    assert catalog.find(engine, "z") is None


def test_a_refused_watermark_create_leaves_the_queue_named_like_its_watermark(engine, target):
    queues.create(engine, queues.make_spec("b_wm", "fifo", None, False))
    before = names(engine)
    one_line_refusal(invoke_on(target, "create", "b", "--kind", "fifo", "--watermark"), "b_wm")
    works(engine, "b_wm")
    assert names(engine) == before


@pytest.mark.parametrize("label", ["sqlite", "postgresql"])
def test_a_create_that_fails_late_drops_only_what_it_made(label, request, tmp_path):
    """Another session creates ``z_ctl`` while the ring's create runs (after its checks): the
    ring's CREATE TABLE z_ctl fails, and the clean-up leaves the other session's table."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    catalog.ensure(engine)
    other = target.engine()
    hold = other.transaction()
    execute = hold.__enter__()
    if label == "sqlite":
        execute("SELECT 1")  # the write lock comes with the CREATE
    execute(f"CREATE TABLE {other.qualified('z_ctl')} (mine integer)")
    failure: list[BaseException] = []

    def create() -> None:
        with target.engine() as eng:
            try:
                queues.create(eng, queues.make_spec("z", "ring", 10, False))
            except QadminError as exc:
                failure.append(exc)

    worker = threading.Thread(target=create)
    worker.start()
    # SQLite: the create's first write waits on the other's lock, so its catalog row cannot
    # appear before that commits; a second is ample for it to get there.
    deadline = time.monotonic() + (1 if label == "sqlite" else 20)
    while catalog.find(engine, "z") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the create is past its checks, waiting for the other session
    hold.__exit__(None, None, None)  # commit z_ctl
    worker.join(60)
    other.close()
    assert failure, "the create should have failed on z_ctl"
    assert names(engine) == {"z_ctl"}
    assert catalog.find(engine, "z") is None
    engine.run([f"INSERT INTO {engine.qualified('z_ctl')} (mine) VALUES (1)"])
    engine.close()


def _hand_made(target, engine, kind: str, name: str) -> str:
    q = engine.qualified(name)
    if kind == "table":
        return f"CREATE TABLE {q} (x integer)"
    if kind == "view":
        return f"CREATE VIEW {q} AS SELECT 1 AS x"
    if kind == "sequence":
        return f"CREATE SEQUENCE {q}"
    if target.label == "postgresql":
        return f"CREATE FUNCTION {q}() RETURNS integer LANGUAGE sql AS 'SELECT 1'"
    return f"CREATE PROCEDURE {q}() SELECT 1"


@pytest.mark.parametrize(
    ("kind", "taken", "queue_kind"),
    [
        ("table", "c_push_seq", "fifo"),  # a later convert --to ring would need it
        ("table", "c_stage", "fifo"),  # load's staging, made on demand
        ("view", "c_wm", "claim"),
        ("sequence", "c_seq", "capped"),
        ("routine", "c_pop", "fifo"),
    ],
)
def test_create_refuses_a_name_whose_objects_would_collide(engine, target, kind, taken, queue_kind):
    if kind == "sequence" and target.label in ("sqlite", "mysql8"):
        pytest.skip("no sequences")
    if kind == "routine" and target.label == "sqlite":
        pytest.skip("no routines")
    engine.run([_hand_made(target, engine, kind, taken)])
    before = names(engine)
    args = ["--capacity", "10"] if queue_kind == "capped" else []
    result = invoke_on(target, "create", "c", "--kind", queue_kind, *args)
    one_line_refusal(result, taken, "exists")
    assert names(engine) == before


def test_names_only_another_kind_would_use_are_free(engine, target):
    """PostgreSQL names fifo q's identity sequence q_id_seq: a fifo q_id never needs it."""
    queues.create(engine, queues.make_spec("q", "fifo", None, False))
    assert invoke_on(target, "create", "q_id", "--kind", "fifo").exit_code == 0
    works(engine, "q_id")
    works(engine, "q")


def test_create_refuses_names_another_queue_owns_or_would_derive(engine, target):
    queues.create(engine, queues.make_spec("d", "fifo", None, False))
    one_line_refusal(invoke_on(target, "create", "d_loaded", "--kind", "fifo"), "queue d")
    one_line_refusal(invoke_on(target, "create", "d__ring", "--kind", "fifo"), "queue d")
    queues.create(engine, queues.make_spec("e_overflow", "fifo", None, False))
    one_line_refusal(invoke_on(target, "create", "e", "--kind", "fifo"), "e_overflow")
    one_line_refusal(invoke_on(target, "create", "d", "--kind", "fifo"), "already exists")
    assert invoke_on(target, "create", "d_other", "--kind", "fifo").exit_code == 0


@pytest.mark.parametrize("label", WITH_DATA)
def test_load_refuses_staging_tables_it_does_not_own(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("l", "fifo", None, False))
    path = tmp_path / "in.jsonl"
    path.write_text('{"k": "1", "payload": "p"}\n')
    engine.run([f"CREATE TABLE {engine.qualified('l_stage')} (mine integer)"])
    with pytest.raises(UsageError, match="l_stage"):
        load.load_python(engine, spec, path, "jsonl", None, replace_stage=True)
    engine.run([f"INSERT INTO {engine.qualified('l_stage')} (mine) VALUES (1)"])
    engine.run([f"DROP TABLE {engine.qualified('l_stage')}"])
    engine.run([f"CREATE TABLE {engine.qualified('l_loaded')} (mine integer)"])
    with pytest.raises(UsageError, match="l_loaded"):
        load.load_python(engine, spec, path, "jsonl", "k")
    engine.run([f"INSERT INTO {engine.qualified('l_loaded')} (mine) VALUES (1)"])
    engine.run([f"DROP TABLE {engine.qualified('l_loaded')}"])
    assert load.load_python(engine, spec, path, "jsonl", "k")["loaded"] == 1
    assert ("table", "l_loaded") in catalog.owned(engine, spec)
    queues.drop(engine, spec)
    assert names(engine) == set()
    engine.close()


# -- a create killed part-way ------------------------------------------------------------

# Slots per engine so that filling the ring takes a couple of seconds here.
BIG = {"sqlite": 4_000_000, "postgresql": 1_000_000, "mariadb": 1_000_000}


def _kill_create(target, engine, sig: signal.Signals = signal.SIGKILL) -> int:
    """Signal ``qadmin create big --kind ring`` once its objects exist (it is filling the
    slots by then), polling the schema rather than sleeping blindly; its exit code."""
    args = ["create", "big", "--kind", "ring", "--capacity", str(BIG[target.label])]
    child = subprocess.Popen(
        [sys.executable, "-m", "qadmin", *args, *target.cli_args()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    deadline = time.monotonic() + 60
    try:
        while not {"big", "big_ctl", "big_overflow"} <= names(engine):
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        child.send_signal(sig)
        child.wait(60)
    assert child.returncode != 0, "the create finished before it was signalled"
    return child.returncode


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
@pytest.mark.parametrize("then", ["create", "drop"])
def test_a_killed_create_is_finished_by_create_or_removed_by_drop(label, then, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("bigx", "fifo", None, False))  # a bystander
    before = names(engine)
    assert _kill_create(target, engine) == -signal.SIGKILL
    listed = json.loads(invoke_on(target, "list", "--format", "json").stdout)
    assert {q["name"]: q["state"] for q in listed} == {"big": "creating", "bigx": "ready"}
    inspected = json.loads(invoke_on(target, "inspect", "big", "--format", "json").stdout)
    assert inspected["state"] == "creating" and "qadmin drop big" in inspected["note"]
    one_line_refusal(invoke_on(target, "push", "big", "x"), "still being created", "create")
    if then == "create":
        capacity = str(BIG[label])
        done = invoke_on(target, "create", "big", "--kind", "ring", "--capacity", capacity)
        assert done.exit_code == 0, done.stderr
        works(engine, "big")
        assert catalog.get(engine, "big").state == "ready"
    dropped = invoke_on(target, "drop", "big", "--yes")
    assert dropped.exit_code == 0, dropped.stderr
    assert names(engine) == before
    assert catalog.find(engine, "big") is None
    works(engine, "bigx")
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_ctrl_c_during_create_leaves_nothing(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    catalog.ensure(engine)
    assert _kill_create(target, engine, signal.SIGINT) == 130  # "qadmin: interrupted"
    assert names(engine) == set()
    assert catalog.find(engine, "big") is None
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_convert_records_the_ring_so_drop_leaves_nothing(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("cvx", "fifo", None, False))  # a bystander
    before = names(engine)
    spec = queues.create(engine, queues.make_spec("cv", "fifo", None, False))
    path = tmp_path / "in.jsonl"
    path.write_text('{"k": "1", "payload": "p"}\n')
    load.load_python(engine, spec, path, "jsonl", "k")
    convert_ops.convert(engine, convert_ops.source(engine, "cv"), 16)
    ring = catalog.get(engine, "cv")
    recorded = {n for _, n in catalog.owned(engine, ring)}
    assert {"cv", "cv_ctl", "cv_overflow", "cv_loaded"} <= recorded
    made = {n for k, n in catalog.schema_objects(engine, "cv") if k != "index"} - before
    assert recorded >= made, "every table, sequence and routine of cv is recorded"
    assert [m.payload for m in messages.pop(engine, ring)] == [b"p"]
    queues.drop(engine, ring)
    assert names(engine) == before
    works(engine, "cvx")
    engine.close()


class _Stop(Exception):
    pass


def test_drop_after_an_interrupted_mariadb_convert_removes_what_it_staged(request, tmp_path):
    """The staged switch records its gate and the ring it builds beside the queue before
    making them, so a drop of the queue it was interrupted on leaves nothing behind."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("cvx", "fifo", None, False))
    before = names(engine)
    queues.create(engine, queues.make_spec("cv", "fifo", None, False))

    def stop(step: str) -> None:
        if step == "gate":
            raise _Stop

    with pytest.raises(_Stop):
        convert_ops.convert(engine, convert_ops.source(engine, "cv"), 16, on_step=stop)
    assert {"cv__gate", "cv__ring", "cv_ctl", "cv_push_seq"} <= names(engine)
    queues.drop(engine, catalog.get(engine, "cv"))
    assert names(engine) == before
    engine.close()


def test_drop_after_a_mariadb_convert_stopped_after_its_switch_leaves_nothing(request, tmp_path):
    """Past the switch the renamed table is the ring's to drop in its clean-up; a convert
    stopped before that clean-up leaves it recorded, so drop removes it and create works."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    before = names(engine)
    spec = queues.create(engine, queues.make_spec("k", "fifo", None, False))
    messages.push(engine, spec, [b"m"] * 30)

    def stop(step: str) -> None:
        if step == "finish":
            raise _Stop

    with pytest.raises(_Stop):
        convert_ops.convert(engine, convert_ops.source(engine, "k"), 64, on_step=stop)
    assert "k_before_ring" in names(engine)
    queues.drop(engine, catalog.get(engine, "k"))
    assert names(engine) == before
    queues.create(engine, queues.make_spec("k", "fifo", None, False))
    engine.close()


def test_drop_refuses_what_depends_on_the_queue_and_drops_nothing(request, tmp_path):
    """PostgreSQL: a view over the queue table made the drop fail after its functions were
    gone (applications' push failed, the table and catalog entry stayed, check said OK).
    Now the dependent is named and nothing is dropped; one the check cannot see (a
    BEGIN ATOMIC function reading the table) rolls the whole drop back."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, False))
    table = engine.qualified("q")
    engine.run([f"CREATE VIEW {engine.qualified('q_view')} AS SELECT id FROM {table}"])
    result = invoke_on(target, "drop", "q", "--yes")
    assert result.exit_code == 1, result.output
    line = result.stderr.strip()
    assert "\n" not in line and "view" in line and "q_view" in line, line
    assert "nothing was dropped" in line
    works(engine, "q")
    engine.run([f"DROP VIEW {engine.qualified('q_view')}"])
    engine.run(
        [
            f"CREATE FUNCTION {engine.qualified('q_count')}() RETURNS bigint LANGUAGE sql "
            f"BEGIN ATOMIC SELECT count(*) FROM {table}; END"
        ]
    )
    result = invoke_on(target, "drop", "q", "--yes")
    assert result.exit_code == 1, result.output
    works(engine, "q")  # its routines, table and catalog entry: all still there
    assert catalog.get(engine, "q") == spec
    engine.run([f"DROP FUNCTION {engine.qualified('q_count')}()"])
    assert invoke_on(target, "drop", "q", "--yes").exit_code == 0
    assert catalog.find(engine, "q") is None and "q" not in names(engine)
    engine.close()


def test_drop_refuses_a_foreign_key_to_the_queue_on_mariadb(request, tmp_path):
    """MariaDB has no transactional DDL: another table's foreign key to the queue is found
    before anything is dropped, and the drop refused naming it."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("q", "fifo", None, False))
    engine.run(
        [
            f"CREATE TABLE {engine.qualified('q_ref')} (id BIGINT PRIMARY KEY, qid BIGINT, "
            f"FOREIGN KEY (qid) REFERENCES {engine.qualified('q')} (id))"
        ]
    )
    result = invoke_on(target, "drop", "q", "--yes")
    assert result.exit_code == 1, result.output
    assert "foreign key" in result.stderr and "q_ref" in result.stderr, result.stderr
    works(engine, "q")
    engine.run([f"DROP TABLE {engine.qualified('q_ref')}"])
    assert invoke_on(target, "drop", "q", "--yes").exit_code == 0
    assert catalog.find(engine, "q") is None
    engine.close()


def test_a_half_dropped_queue_is_a_finding_and_drop_finishes_it(request, tmp_path):
    """MariaDB drops one object at a time: a drop whose DROP TABLE timed out behind a reader's
    metadata lock, after the routines went, left a queue whose push fails while check said
    OK. Now its entry says so (CRITICAL, whatever the role may see), and the drop it prints
    finishes the job."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, False))
    messages.push(engine, spec, [b"a"])
    reader = target.engine()
    cursor = reader.conn.cursor()
    cursor.execute("BEGIN")
    cursor.execute(f"SELECT count(*) FROM {reader.qualified('q')}")  # its metadata lock
    try:
        result = invoke_on(target, "drop", "q", "--yes", "--lock-timeout", "1000")
        assert result.exit_code != 0, result.output
    finally:
        reader._rollback()
        reader.close()
    result = invoke_on(target, "check", "q")
    assert result.exit_code == 2 and "objects_missing" in result.stdout, result.stdout
    found = json.loads(invoke_on(target, "inspect", "q", "--format", "json").stdout)
    fix = next(f["fix"] for f in found["findings"] if f["code"] == "objects_missing")
    assert "drop q --yes" in fix, fix
    assert invoke_on(target, "drop", "q", "--yes").exit_code == 0
    assert catalog.find(engine, "q") is None and "q" not in names(engine)
    engine.close()


@pytest.mark.parametrize(
    ("label", "kind", "capacity"),
    [("postgresql", "fifo", None), ("mariadb", "claim", None), ("postgresql", "ring", 8)],
)
def test_a_routine_dropped_by_hand_is_found_and_made_again(
    label, kind, capacity, request, tmp_path
):
    """A tester dropped a queue's pop routine: every consumer failed while check and status
    said OK. Now check is CRITICAL naming it (objects_missing), repair --dry-run lists it,
    repair --yes makes it again from the queue's template, and the messages are all there."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("gone_q", kind, capacity, False))
    messages.push(engine, spec, [b"a", b"b"])
    # the pop routine as the catalog records it (a function or a procedure, by engine),
    # dropped by hand with the statement drop itself would run
    [pop] = [obj for obj in catalog.owned(engine, spec) if obj[1] == "gone_q_pop"]
    engine.run(catalog.drop_statements(engine, [pop]))
    kind_word = pop[0]

    def as_json(*args: str) -> tuple[int, dict]:
        result = invoke_on(target, *args, "--format", "json")
        return result.exit_code, json.loads(result.stdout)

    code, checked = as_json("check", "gone_q", "--sample", "0")
    assert code == 2, checked
    found = next(f for f in checked["findings"] if f["code"] == "objects_missing")
    assert f"{kind_word} gone_q_pop of queue gone_q is missing" in found["message"], found
    code, report = as_json("inspect", "gone_q", "--sample", "0")
    fix = next(f for f in report["findings"] if f["code"] == "objects_missing")["fix"]
    assert " repair gone_q --dry-run lists " in fix and fix.endswith(" repair gone_q --yes"), fix
    code, dry = as_json("repair", "gone_q", "--dry-run")
    assert code == 0 and dry["restore"] == [f"{kind_word} gone_q_pop"], dry
    code, done = as_json("repair", "gone_q", "--yes")
    assert code == 0 and done["restore"] == [f"{kind_word} gone_q_pop"], done
    code, checked = as_json("check", "gone_q", "--sample", "0")
    assert not any(f["code"] == "objects_missing" for f in checked["findings"]), checked
    got = messages.pop(engine, catalog.get(engine, "gone_q"), 5)
    assert [m.payload for m in got] == [b"a", b"b"]
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_a_table_dropped_by_hand_is_found_and_drop_removes_the_rest(label, request, tmp_path):
    """A ring's overflow table dropped by hand: status left the queue out (its read said
    "no such table", read as a queue dropped while status ran) and inspect failed whole with
    the raw error. Now the queue is CRITICAL objects_missing in status, check and inspect
    (every other part still read), and the printed fix's drop runs and leaves nothing."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("lost_q", "ring", 8, False))
    messages.push(engine, spec, [b"a"])
    [overflow] = [obj for obj in catalog.owned(engine, spec) if obj[1] == "lost_q_overflow"]
    engine.run(catalog.drop_statements(engine, [overflow]))

    def as_json(*args: str) -> tuple[int, dict]:
        result = invoke_on(target, *args, "--format", "json")
        return result.exit_code, json.loads(result.stdout)

    code, status = as_json("status")
    [line] = [line for line in status["lines"] if line["table"] == "lost_q"]
    assert (code, line["status"]) == (2, "CRITICAL"), status
    assert line["worst"].startswith("objects_missing: table lost_q_overflow"), line
    code, checked = as_json("check", "lost_q", "--sample", "0")
    assert code == 2 and any(f["code"] == "objects_missing" for f in checked["findings"])
    code, report = as_json("inspect", "lost_q", "--sample", "0")
    skipped = [n["note"] for n in report["notes"] if "see objects_missing" in n["note"]]
    assert code == 0 and skipped and report["objects"]["missing"], report
    fix = next(f for f in report["findings"] if f["code"] == "objects_missing")["fix"]
    assert " drop lost_q --dry-run " in fix and " drop lost_q --yes " in fix, fix
    # repair cannot make a table again: one line saying so and what to do (a tester's got
    # the raw "relation does not exist", exit 5, from --dry-run and --yes alike)
    for how in ("--dry-run", "--yes"):
        refused = invoke_on(target, "repair", "lost_q", how)
        assert refused.exit_code == 5 and len(refused.stderr.splitlines()) == 1, refused.output
        assert "table lost_q_overflow of queue lost_q is missing" in refused.stderr
        assert "repair makes only routines again" in refused.stderr
    code, dry = as_json("drop", "lost_q", "--dry-run")
    assert code == 0 and dry["messages"] is None, dry
    code, done = as_json("drop", "lost_q", "--yes")
    assert code == 0, done
    assert catalog.find(engine, "lost_q") is None
    assert not [o for o in names(engine) if o.startswith("lost_q")]
    engine.close()
