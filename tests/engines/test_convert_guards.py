"""convert refuses what it would break, names it in one line (exit 2), and its dry run says
the same and exits 2 too: rows that are not waiting messages (unless a --state-column filter
says which are), foreign keys, triggers, views and routines that use the table, and qadmin's
own tables. Nothing is changed by a refusal."""

from __future__ import annotations

import json

import pytest

from qadmin import catalog
from qadmin.ops import messages, queues
from tests.conftest import make_target
from tests.helpers import drain_payloads, invoke_on

LABELS = ["sqlite", "postgresql", "mariadb"]
SERIAL = {
    "sqlite": "integer PRIMARY KEY",
    "postgresql": "bigserial PRIMARY KEY",
    "mariadb": "BIGINT AUTO_INCREMENT PRIMARY KEY",
}


def _cli(target, *args: str):
    result = invoke_on(target, *args)
    assert "Traceback" not in result.stderr
    return result


def _convert(target, name: str, *extra: str):
    return _cli(target, "convert", name, "--to", "ring", "--capacity", "64", *extra)


def _refused_both_ways(target, name: str, *extra: str) -> str:
    """The dry run and the convert fail with the same single line, exit 2; the line."""
    dry = _convert(target, name, *extra, "--dry-run", "--format", "json")
    real = _convert(target, name, *extra, "--yes")
    assert (dry.exit_code, real.exit_code) == (2, 2), (dry.stderr, real.stderr)
    if dry.stdout:  # a plan could be made: it lists the refusal too
        assert json.loads(dry.stdout)["refused"]
    lines = real.stderr.strip().splitlines()
    assert len(lines) == 1 and dry.stderr.strip() == lines[0]
    assert lines[0].startswith(f"qadmin: error: refusing to convert {name}: ")
    return lines[0]


def _count(engine, table: str) -> int:
    return int(engine.query(f"SELECT count(*) AS n FROM {engine.qualified(table)}")[0]["n"])


@pytest.mark.parametrize("label", LABELS)
def test_kombu_like_table_is_refused_unless_told_which_rows_wait(label, request, tmp_path):
    """kombu keeps delivered messages with visible = 0: converting every row re-delivered
    them (seen on main, whose dry run said "fits yes")."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("kombu_message")
    engine.run(
        [
            f"CREATE TABLE {table} (id {SERIAL[label]}, visible boolean NOT NULL, "
            "timestamp timestamp NULL, payload text NOT NULL, version smallint NOT NULL)"
        ]
    )
    rows = [(False, "done1"), (True, "wait1"), (False, "done2"), (True, "wait2"), (True, "wait3")]
    values = ", ".join(f"({'TRUE' if v else 'FALSE'}, '{p}', 1)" for v, p in rows)
    engine.run([f"INSERT INTO {table} (visible, payload, version) VALUES {values}"])
    mapping = ("--payload-column", "payload", "--time-column", "timestamp")
    line = _refused_both_ways(target, "kombu_message", *mapping)
    assert "column visible looks like a row state" in line
    assert "--state-column visible --waiting VALUE" in line
    assert _count(engine, "kombu_message") == 5  # untouched
    assert [q.name for q in catalog.all_queues(engine)] == []
    flt = (*mapping, "--state-column", "visible", "--waiting", "1")
    dry = _convert(target, "kombu_message", *flt, "--dry-run", "--format", "json")
    assert dry.exit_code == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert (plan["messages"], plan["rows_left"], plan["refused"]) == (3, 2, [])
    done = _convert(target, "kombu_message", *flt, "--yes", "--format", "json")
    assert done.exit_code == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["messages"], result["rows_left"]) == (3, 2)
    assert drain_payloads(engine, "kombu_message", 10) == [b"wait1", b"wait2", b"wait3"]
    assert _count(engine, "kombu_message_before_ring") == 5  # the rest stay where they were


def _blocker_sql(label: str, blocker: str, engine) -> list[str]:
    jobs, other = engine.qualified("jobs"), engine.qualified("job_refs")
    key = SERIAL[label].split()[0].replace("bigserial", "bigint")
    # SQLite's REFERENCES takes a bare table name.
    target = (
        {"jobs": jobs, "other": other}
        if label != "sqlite"
        else {"jobs": "jobs", "other": "job_refs"}
    )
    if blocker == "view":
        return [f"CREATE VIEW {engine.qualified('jobs_view')} AS SELECT job_id, body FROM {jobs}"]
    if blocker == "foreign key to":
        return [f"CREATE TABLE {other} (job_id {key} REFERENCES {target['jobs']} (job_id))"]
    if blocker == "foreign key from":
        return [
            f"CREATE TABLE {other} (ref_id {SERIAL[label]})",
            f"ALTER TABLE {jobs} ADD COLUMN ref_id {key} NULL "
            f"REFERENCES {target['other']} (ref_id)",
        ]
    if blocker == "trigger":
        return {
            "sqlite": [
                f"CREATE TRIGGER {engine.qualified('jobs_audit')} AFTER INSERT ON jobs "
                "BEGIN SELECT 1; END"
            ],
            "postgresql": [
                f"CREATE FUNCTION {engine.qualified('jobs_audit_fn')}() RETURNS trigger "
                "LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
                f"CREATE TRIGGER jobs_audit BEFORE INSERT ON {jobs} FOR EACH ROW "
                f"EXECUTE FUNCTION {engine.qualified('jobs_audit_fn')}()",
            ],
            "mariadb": [
                f"CREATE TRIGGER {engine.qualified('jobs_audit')} BEFORE INSERT ON {jobs} "
                "FOR EACH ROW SET NEW.body = NEW.body"
            ],
        }[label]
    assert blocker == "routine"
    return {
        "postgresql": [
            f"CREATE FUNCTION {engine.qualified('jobs_count')}() RETURNS bigint "
            "LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) FROM jobs); END $$"
        ],
        "mariadb": [
            f"CREATE PROCEDURE {engine.qualified('jobs_count')}() SELECT count(*) FROM jobs"
        ],
    }[label]


NAMED = {
    "view": "view ",
    "foreign key to": "foreign key ",
    "foreign key from": "foreign key ",
    "trigger": "trigger jobs_audit",
    "routine": "routine jobs_count",
}


@pytest.mark.parametrize("blocker", list(NAMED))
@pytest.mark.parametrize("label", LABELS)
def test_hand_built_table_that_others_use_is_refused(label, blocker, request, tmp_path):
    if blocker == "routine" and label == "sqlite":
        pytest.skip("SQLite has no routines")
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    jobs = engine.qualified("jobs")
    engine.run([f"CREATE TABLE {jobs} (job_id {SERIAL[label]}, body text NOT NULL)"])
    engine.run([f"INSERT INTO {jobs} (body) VALUES ('x'), ('y')"])
    clean = _convert(target, "jobs", "--payload-column", "body", "--dry-run", "--format", "json")
    assert clean.exit_code == 0 and json.loads(clean.stdout)["refused"] == []
    for statement in _blocker_sql(label, blocker, engine):
        engine.run([statement])
    line = _refused_both_ways(target, "jobs", "--payload-column", "body")
    assert NAMED[blocker] in line and "use" in line and "the table" in line
    if blocker.startswith("foreign key"):
        assert "job_refs" in line
    if blocker == "view":
        assert "jobs_view" in line
    assert _count(engine, "jobs") == 2 and not engine.table_exists("jobs_before_ring")


@pytest.mark.parametrize("label", LABELS)
def test_qadmin_queue_with_a_view_on_it_is_refused(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("conv_q", "fifo", None, False))
    messages.push(engine, spec, [b"a", b"b"])
    assert _convert(target, "conv_q", "--dry-run").exit_code == 0  # its own routines are fine
    view, table = engine.qualified("conv_q_recent"), engine.qualified("conv_q")
    engine.run([f"CREATE VIEW {view} AS SELECT id FROM {table}"])
    assert "view " in _refused_both_ways(target, "conv_q")
    assert catalog.get(engine, "conv_q").kind.value == "fifo"
    assert drain_payloads(engine, "conv_q", 10) == [b"a", b"b"]


@pytest.mark.parametrize("label", LABELS)
def test_qadmin_internal_tables_are_refused(label, request, tmp_path):
    """Seen on main: `convert r_overflow` turned another ring's internal table into a ring."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    ring = queues.create(engine, queues.make_spec("r", "ring", 4, False))
    messages.push(engine, ring, [b"keep"])
    line = _refused_both_ways(target, "r_overflow", "--payload-column", "payload")
    assert line.endswith("it belongs to qadmin's ring queue r")
    line = _refused_both_ways(target, "qadmin_queues", "--payload-column", "name")
    assert line.endswith("it is qadmin's own table")
    assert engine.table_exists("r_overflow")
    assert [(q.name, q.kind.value) for q in catalog.all_queues(engine)] == [("r", "ring")]
    assert drain_payloads(engine, "r", 10) == [b"keep"]


@pytest.mark.parametrize("label", LABELS)
def test_dry_run_of_a_backlog_too_big_exits_2_like_the_convert(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("conv_q", "fifo", None, False))
    messages.push(engine, spec, [b"a", b"b", b"c"])
    args = ("convert", "conv_q", "--to", "ring", "--capacity", "2")
    dry = _cli(target, *args, "--dry-run", "--format", "json")
    real = _cli(target, *args, "--yes")
    assert (dry.exit_code, real.exit_code) == (2, 2)
    assert json.loads(dry.stdout)["fits"] is False
    assert (
        dry.stderr.strip()
        == real.stderr.strip()
        == (
            "qadmin: error: refusing to convert conv_q: its backlog of 3 messages does not fit a "
            "ring of 2 (choose a larger --capacity)"
        )
    )


KILLABLE_KOMBU = """
import sys, time
from qadmin.engines import Timeouts, open_engine
from qadmin.ops import convert
engine = open_engine(sys.argv[1], None, Timeouts())
def step(name):
    print(name, flush=True)
    if name == sys.argv[2]:
        time.sleep(600)  # until the test's SIGKILL
src = convert.source(engine, 'kombu_message', payload_cols=('payload',), state_col='visible',
                     waiting='1')
convert.convert(engine, src, 64, on_step=step)
"""


@pytest.mark.parametrize("victim", ["measure_backup", "copy"])
def test_kombu_like_convert_killed_after_the_rename_resumes_with_its_filter(
    victim, request, tmp_path
):
    """MariaDB: killed once the table is renamed, a re-run without the filter is refused (the
    renamed table still has its state column), and with it moves only the waiting rows."""
    import os
    import signal
    import subprocess
    import sys

    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified("kombu_message")
    engine.run(
        [
            f"CREATE TABLE {table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, visible BOOLEAN NOT "
            "NULL, payload TEXT NOT NULL)",
            f"INSERT INTO {table} (visible, payload) VALUES (0, 'done'), (1, 'w1'), (1, 'w2')",
        ]
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_KOMBU, target.dsn, victim],
        stdout=subprocess.PIPE,
        text=True,
    )
    while (line := proc.stdout.readline().strip()) != victim:
        assert line, f"convert ended before step {victim}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert engine.table_exists("kombu_message_before_ring")
    for working in ("kombu_message__gate", "kombu_message_overflow", "kombu_message_before_ring"):
        line = _refused_both_ways(target, working, "--payload-column", "payload")
        assert line.endswith(
            "it belongs to the convert of kombu_message under way (run that convert again)"
        )
    line = _refused_both_ways(target, "kombu_message", "--payload-column", "payload")
    assert "column visible looks like a row state" in line
    flt = ("--payload-column", "payload", "--state-column", "visible", "--waiting", "1")
    done = _convert(target, "kombu_message", *flt, "--yes", "--format", "json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["rows_left"] == 1
    assert drain_payloads(engine, "kombu_message", 10) == [b"w1", b"w2"]
    assert _count(engine, "kombu_message_before_ring") == 3


def test_interrupted_convert_refused_on_rerun_puts_the_queue_back(request, tmp_path):
    """MariaDB: killed once gated, then a view is made on the queue: the re-run refuses it and
    undoes the prepared ring and the gate; the queue is the plain fifo it was."""
    import os
    import signal
    import subprocess
    import sys

    from tests.engines.test_resize_convert import KILLABLE, _schema_objects

    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("conv_q", "fifo", None, False))
    messages.push(engine, spec, [b"a", b"b"])
    before = _schema_objects(engine, "conv_q")
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, target.dsn, "-", "lock"], stdout=subprocess.PIPE, text=True
    )
    while (line := proc.stdout.readline().strip()) != "lock":
        assert line, "convert ended before it gated the queue"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert "conv_q__gate" in _schema_objects(engine, "conv_q")
    view, table = engine.qualified("conv_q_recent"), engine.qualified("conv_q")
    engine.run([f"CREATE VIEW {view} AS SELECT id FROM {table}"])
    real = _cli(target, "convert", "conv_q", "--to", "ring", "--capacity", "1000", "--yes")
    assert real.exit_code == 2 and "view conv_q_recent" in real.stderr
    assert _schema_objects(engine, "conv_q") == before | {"conv_q_recent"}
    assert drain_payloads(engine, "conv_q", 10) == [b"a", b"b"]


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_convert_refuses_when_a_name_the_ring_needs_is_taken(label, request, tmp_path):
    """A user's table called <q>_ctl: refused before anything changes, and the queue keeps
    working (on PostgreSQL its gated routines used to call themselves without end)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("c", "fifo", None, False))
    messages.push(engine, spec, [b"m1"])
    engine.run([f"CREATE TABLE {engine.qualified('c_ctl')} (note varchar(20))"])
    for extra in (["--dry-run"], ["--yes"]):
        result = invoke_on(target, "convert", "c", "--to", "ring", "--capacity", "10", *extra)
        assert result.exit_code == 2, result.output
        assert "c_ctl" in result.stderr and "\n" not in result.stderr.strip()
    messages.push(engine, spec, [b"m2"])
    assert [m.payload for m in messages.pop(engine, spec, 5)] == [b"m1", b"m2"]
    engine.close()


def test_a_users_table_named_like_the_gate_is_not_a_convert_under_way(request, tmp_path):
    """MariaDB: a table called <q>__gate that qadmin did not record is refused as a name the
    convert needs, never resumed from or dropped."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("g", "fifo", None, False))
    messages.push(engine, spec, [b"m1", b"m2"])
    gate = engine.qualified("g__gate")
    engine.run([f"CREATE TABLE {gate} (one INT PRIMARY KEY, switched INT, important TEXT)"])
    engine.run([f"INSERT INTO {gate} VALUES (1, 0, 'user data')"])
    for extra in ("--dry-run", "--yes"):
        result = _cli(target, "convert", "g", "--to", "ring", "--capacity", "10", extra)
        assert result.exit_code == 2, result.output
        assert "g__gate" in result.stderr
    assert engine.query(f"SELECT important FROM {gate}")[0]["important"] == "user data"
    assert [m.payload for m in messages.pop(engine, spec, 5)] == [b"m1", b"m2"]
    engine.close()


PG_ONLY = {
    "partition": (
        [
            "CREATE TABLE {s}.jobs_all (job_id bigint NOT NULL, body text NOT NULL) "
            "PARTITION BY HASH (job_id)",
            "CREATE TABLE {s}.jobs PARTITION OF {s}.jobs_all "
            "FOR VALUES WITH (MODULUS 1, REMAINDER 0)",
        ],
        "parent table",
    ),
    "child": (
        [
            "CREATE TABLE {s}.jobs (job_id bigserial PRIMARY KEY, body text NOT NULL)",
            "CREATE TABLE {s}.jobs_old () INHERITS ({s}.jobs)",
        ],
        "child table",
    ),
    "row-level security": (
        [
            "CREATE TABLE {s}.jobs (job_id bigserial PRIMARY KEY, body text NOT NULL)",
            "ALTER TABLE {s}.jobs ENABLE ROW LEVEL SECURITY",
        ],
        "row-level security",
    ),
}


@pytest.mark.parametrize("shape", list(PG_ONLY))
def test_postgres_partitions_inheritance_and_row_security_are_refused(shape, request, tmp_path):
    """A convert would leave rows visible through a parent, read a child's rows into the ring
    and leave them there, or drop the table's policies."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    statements, named = PG_ONLY[shape]
    for statement in statements:
        engine.run([statement.format(s=engine.quote_ident(target.schema or ""))])
    engine.run([f"INSERT INTO {engine.qualified('jobs')} (job_id, body) VALUES (1, 'x')"])
    line = _refused_both_ways(target, "jobs", "--payload-column", "body", "--id-column", "job_id")
    assert named in line
    assert _count(engine, "jobs") == 1 and not engine.table_exists("jobs_before_ring")
    engine.close()


def test_mariadb_event_that_names_the_table_is_refused(request, tmp_path):
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    jobs = engine.qualified("jobs")
    engine.run([f"CREATE TABLE {jobs} (job_id {SERIAL['mariadb']}, body text NOT NULL)"])
    engine.run([f"INSERT INTO {jobs} (body) VALUES ('x')"])
    engine.run(
        [
            f"CREATE EVENT {engine.qualified('jobs_prune')} ON SCHEDULE EVERY 1 DAY "
            "DISABLE DO DELETE FROM jobs WHERE job_id < 0"
        ]
    )
    line = _refused_both_ways(target, "jobs", "--payload-column", "body")
    assert "event jobs_prune" in line
    engine.close()
