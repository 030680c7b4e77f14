"""explain: the plan of the real dequeue's head, made slow for real. Dead rows held behind the
head by an open REPEATABLE READ snapshot (PostgreSQL: the pages read grow), a dropped index
(the plan sorts: the misfit finding and the index to create), an INVALID index an interrupted
REINDEX CONCURRENTLY left, a procrastinate-shaped table read in the library's order, and the
plan on MariaDB and SQLite."""

from __future__ import annotations

import json
import threading
import time

import psycopg
import pymysql
import pytest

from qadmin.diagnostics import run
from qadmin.diagnostics.entries import plan as explain_ops
from qadmin.diagnostics.model import BlockedPart, Options
from qadmin.engines import open_engine
from qadmin.engines.base import Timeouts
from qadmin.errors import StatementTimeout
from qadmin.ops import messages, queues
from qadmin.profiles.resolve import resolve
from tests.conftest import MY_HOST, PG_ADMIN, make_target
from tests.helpers import invoke, invoke_on, make_queue


def _explain(target, name: str) -> explain_ops.Explain:
    engine = target.engine()
    try:
        resolved = resolve(engine, name, {}, {})
        return explain_ops.explain(run.context(engine, resolved, Options()))
    finally:
        engine.close()


def _codes(result: explain_ops.Explain) -> dict[str, str]:
    return {f.code: f.fix for f in result.findings}


def _without_waiting(fix: str) -> str:
    """The printed fix as the test runs it: without CONCURRENTLY, which waits for every older
    transaction in the database (other tests' on a shared server), the same index otherwise."""
    assert "CREATE INDEX CONCURRENTLY " in fix
    return fix.replace("CREATE INDEX CONCURRENTLY ", "CREATE INDEX ")


def test_postgresql_dead_rows_behind_the_head_grow_the_pages_read(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    spec = make_queue(target.engine(), "dead_q", "fifo", count=5001, close=True)
    before = _explain(target, "dead_q")
    assert (before.access, before.index, before.analyzed) == ("seek", "dead_q_pkey", True)
    assert before.rows_returned == 1 and before.buffers is not None and before.buffers < 20
    assert "dequeue_dead_entries" not in _codes(before)
    # An open REPEATABLE READ snapshot keeps every row popped from now on: dead, not removable.
    with psycopg.connect(PG_ADMIN, autocommit=True) as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1").fetchall()
        engine = target.engine()
        messages.pop(engine, spec, 5000)
        engine.close()
        after = _explain(target, "dead_q")
        holder.execute("ROLLBACK")
    assert after.index == "dead_q_pkey" and after.rows_returned == 1
    assert after.buffers is not None and after.buffers >= explain_ops.DEAD_BUFFERS
    assert after.buffers > 5 * before.buffers
    fix = _codes(after)["dequeue_dead_entries"]
    assert fix.startswith("qadmin ghosts dead_q") and "VACUUM" in fix
    # never analyzed although thousands of rows went in
    assert _codes(after)["stale_statistics"].startswith("ANALYZE")


def test_postgresql_a_missing_index_makes_the_plan_sort(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    make_queue(target.engine(), "due_q", "pending", count=1200, close=True)
    assert "dequeue_index_misfit" not in _codes(_explain(target, "due_q"))
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP INDEX "{target.schema}".due_q_pop_idx')
        admin.execute(f'ANALYZE "{target.schema}".due_q')
    result = _explain(target, "due_q")
    assert result.sorts and result.access == "scan"
    finding = next(f for f in result.findings if f.code == "dequeue_index_misfit")
    assert finding.severity == "warning" and "sorts the waiting rows" in finding.message
    expected = f'CREATE INDEX CONCURRENTLY "due_q_pop_idx" ON "{target.schema}"."due_q"'
    assert finding.fix == f"{expected} (due_at, id)"
    # inspect --deep raises the plan's finding too; a plain inspect does not run the plan
    inspect = ["inspect", "due_q", "--sample", "0", "--format", "json", *target.cli_args()]
    deep = json.loads(invoke(*inspect, "--deep").stdout)
    assert deep["explain"]["sorts"] and deep["explain"]["plan"] is None
    assert [f["fix"] for f in deep["findings"] if f["code"] == "dequeue_index_misfit"] == [
        finding.fix
    ]
    assert json.loads(invoke(*inspect).stdout)["explain"] is None
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(_without_waiting(finding.fix))
    healed = _explain(target, "due_q")
    assert (healed.access, healed.index, healed.sorts) == ("seek", "due_q_pop_idx", False)
    assert "dequeue_index_misfit" not in _codes(healed)


def test_postgresql_a_leftover_invalid_index_is_reported(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    make_queue(target.engine(), "inv_q", "claim", close=True)
    engine = target.engine()
    spec = queues.QueueSpec("inv_q", queues.Kind.CLAIM)
    messages.push(engine, spec, [b"same", b"same"])
    engine.close()
    table = f'"{target.schema}".inv_q'
    with (
        psycopg.connect(PG_ADMIN, autocommit=True) as admin,
        pytest.raises(psycopg.errors.UniqueViolation),
    ):  # the name an interrupted REINDEX CONCURRENTLY gives its new copy
        admin.execute(f"CREATE UNIQUE INDEX CONCURRENTLY inv_q_pay_ccnew ON {table} (payload)")
    result = _explain(target, "inv_q")
    assert [i.index_name for i in result.invalid_indexes] == ["inv_q_pay_ccnew"]
    finding = next(f for f in result.findings if f.code == "invalid_index")
    assert "interrupted REINDEX CONCURRENTLY" in finding.message
    assert finding.fix.startswith(f'DROP INDEX CONCURRENTLY "{target.schema}"."inv_q_pay_ccnew"')
    assert result.index == "inv_q_pop_idx"  # the dequeue still seeks through a valid one


PROCRASTINATE = (
    "CREATE TYPE {s}.procrastinate_job_status AS ENUM ('todo', 'doing', 'succeeded', "
    "'failed', 'cancelled', 'aborted')",
    "CREATE TABLE {s}.procrastinate_jobs (id bigserial PRIMARY KEY, queue_name text NOT NULL, "
    "task_name text NOT NULL, priority integer NOT NULL DEFAULT 0, lock text, "
    "queueing_lock text, args jsonb NOT NULL DEFAULT '{{}}', "
    "status {s}.procrastinate_job_status NOT NULL DEFAULT 'todo', scheduled_at timestamptz, "
    "attempts integer NOT NULL DEFAULT 0, abort_requested boolean NOT NULL DEFAULT false, "
    "worker_id bigint)",
    "INSERT INTO {s}.procrastinate_jobs (queue_name, task_name, status, priority) "
    "SELECT 'q', 't', 'succeeded', 0 FROM generate_series(1, 3000)",
    "INSERT INTO {s}.procrastinate_jobs (queue_name, task_name, status, priority) "
    "VALUES ('q', 't', 'todo', 0), ('q', 't', 'todo', 5), ('q', 't', 'doing', 9)",
    "ANALYZE {s}.procrastinate_jobs",
)


def test_a_procrastinate_table_is_explained_in_the_librarys_order(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    schema = f'"{target.schema}"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        for statement in PROCRASTINATE:
            admin.execute(statement.format(s=schema))
    result = _explain(target, "procrastinate_jobs")
    assert 'ORDER BY "priority" DESC, "id" LIMIT 1' in result.statement
    assert result.analyzed and result.sorts and result.rows_returned == 1
    fix = _codes(result)["dequeue_index_misfit"]
    assert fix == (
        f'CREATE INDEX CONCURRENTLY "procrastinate_jobs_head" ON {schema}."procrastinate_jobs" '
        """("priority" DESC, "id") WHERE "status" = 'todo'"""
    )
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(_without_waiting(fix))
        admin.execute(f"ANALYZE {schema}.procrastinate_jobs")
    healed = _explain(target, "procrastinate_jobs")
    assert (healed.index, healed.sorts) == ("procrastinate_jobs_head", False)
    assert not _codes(healed)


def test_mariadb_plans_and_runs_the_head(request, tmp_path):
    target = make_target("mariadb", request, tmp_path)
    spec = make_queue(target.engine(), "my_q", "fifo", count=5001, close=True)
    make_queue(target.engine(), "my_due", "pending", count=20, close=True)
    fifo = _explain(target, "my_q")
    assert fifo.analyzed and fifo.index == "PRIMARY" and not fifo.sorts
    assert fifo.buffers is not None and fifo.buffers < explain_ops.DEAD_BUFFERS
    assert not _codes(fifo)
    # A consistent snapshot held open keeps InnoDB from purging the popped rows' records.
    with pymysql.connect(host=MY_HOST, user="root", database=target.schema) as holder:
        holder.cursor().execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        engine = target.engine()
        messages.pop(engine, spec, 5000)
        engine.close()
        held = _explain(target, "my_q")
        holder.rollback()
    assert held.buffers is not None and held.buffers >= explain_ops.DEAD_BUFFERS
    assert _codes(held)["dequeue_dead_entries"].startswith("qadmin ghosts my_q")
    [walk] = [f.message for f in held.findings if f.code == "dequeue_dead_entries"]
    returned = "(rows returned unknown)" if held.rows_returned is None else "to return 1 row"
    assert f"took {held.buffers} page accesses {returned}: dead entries" in walk, walk
    with pymysql.connect(host=MY_HOST, user="root", database=target.schema) as admin:
        admin.cursor().execute("ALTER TABLE my_due DROP INDEX my_due_pop_idx")
    due = _explain(target, "my_due")
    assert due.sorts and due.rows_examined == 20
    fix = _codes(due)["dequeue_index_misfit"]
    assert fix == (
        f"ALTER TABLE `{target.schema}`.`my_due` ADD INDEX `my_due_pop_idx` (due_at, id), "
        "ALGORITHM=INPLACE, LOCK=NONE"
    )


def test_mysql8_templates_plan_without_running(request, tmp_path):
    """The MySQL 8 path (EXPLAIN FORMAT=JSON, estimates), as far as a MariaDB server runs it."""
    target = make_target("mysql8", request, tmp_path)
    make_queue(target.engine(), "m8_q", "claim", count=5, close=True)
    result = _explain(target, "m8_q")
    assert not result.analyzed and result.index == "m8_q_pop_idx" and not result.sorts
    assert any("not run" in n for n in result.notes)


def test_sqlite_plan_and_findings_through_the_cli(tmp_path, request):
    target = make_target("sqlite", request, tmp_path)
    make_queue(target.engine(), "lite_q", "claim", count=5, close=True)
    make_queue(target.engine(), "lite_due", "pending", count=5, close=True)
    out = invoke_on(target, "explain", "lite_q", "--format", "json")
    assert out.exit_code == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["access"], data["index"], data["sorts"]) == ("index walk", "lite_q_pop_idx", False)
    assert data["findings"] == [] and data["plan"]
    engine = target.engine()
    engine.run(['DROP INDEX "lite_due_pop_idx"'])
    engine.close()
    plain = invoke_on(target, "explain", "lite_due", "--format", "plain")
    assert plain.exit_code == 0, plain.stderr
    assert "dequeue_index_misfit" in plain.stdout and "USE TEMP B-TREE FOR ORDER BY" in plain.stdout
    assert 'CREATE INDEX "main"."lite_due_pop_idx" ON "lite_due" (due_at, id)' in plain.stdout
    missing = invoke_on(target, "explain", "nosuch")
    assert missing.exit_code == 5 and missing.stderr.count("\n") == 1


def _cli_explain(target, *args: str) -> tuple[int, dict, str]:
    out = invoke_on(target, "explain", *args, "--format", "json")
    return out.exit_code, json.loads(out.stdout) if out.stdout else {}, out.stderr


HAND_BUILT = ("--state-column", "State", "--pending", "new", "--order-by", "Created")


def test_postgresql_a_head_that_would_scan_a_big_table_is_only_planned(request, tmp_path):
    """No full scan: 60,000 waiting rows and no index on the order: the estimate says scan and
    sort, so the head is not run, and the misfit names the index; with it, the head runs."""
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}"."Jobs"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f'CREATE TABLE {table} (id bigint PRIMARY KEY, "State" text, "Created" timestamptz, '
            "pad text)"
        )
        admin.execute(
            f"INSERT INTO {table} SELECT i, 'new', now() - i * interval '1 s', repeat('x', 200) "
            "FROM generate_series(1, 60000) AS i"
        )
        admin.execute(f"ANALYZE {table}")
    code, data, err = _cli_explain(target, "Jobs", *HAND_BUILT)
    assert code == 0, err
    assert data["analyzed"] is False and data["execution_ms"] is None
    assert data["sorts"] and data["access"] == "scan"
    assert data["estimated_cost"] > explain_ops.RUN_COST
    assert any("the head was not run" in n["note"] for n in data["notes"])
    fix = next(f["fix"] for f in data["findings"] if f["code"] == "dequeue_index_misfit")
    assert fix.startswith('CREATE INDEX CONCURRENTLY "Jobs_head" ON') and '("Created")' in fix
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(_without_waiting(fix))
    code, data, err = _cli_explain(target, "Jobs", *HAND_BUILT)
    assert code == 0, err
    assert data["analyzed"] and data["index"] == "Jobs_head" and not data["sorts"]
    assert data["rows_returned"] == 1


def test_mariadb_a_head_that_would_scan_a_big_table_is_only_planned(request, tmp_path):
    target = make_target("mariadb", request, tmp_path)
    with pymysql.connect(host=MY_HOST, user="root", database=target.schema) as admin:
        cursor = admin.cursor()
        cursor.execute("CREATE TABLE jobs (id bigint PRIMARY KEY, state text, created datetime)")
        cursor.execute(
            "INSERT INTO jobs SELECT seq, 'new', now() - INTERVAL seq SECOND FROM seq_1_to_20000"
        )
        cursor.execute("ANALYZE TABLE jobs")
        admin.commit()
    args = ("--state-column", "state", "--pending", "new", "--order-by", "created")
    code, data, err = _cli_explain(target, "jobs", *args)
    assert code == 0, err
    assert data["analyzed"] is False and data["sorts"] and data["access"] == "scan"
    assert any("the head was not run" in n["note"] for n in data["notes"])
    assert "dequeue_index_misfit" in [f["code"] for f in data["findings"]]


def test_a_statement_timeout_is_reported_as_one_not_as_a_lock(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = open_engine(PG_ADMIN, target.schema, Timeouts(statement_ms=100))
    try:
        with pytest.raises(StatementTimeout, match="statement cancelled after 100 ms"):
            engine.run(["SELECT pg_sleep(2)"], write=False)
    finally:
        engine.close()
    note = BlockedPart("explain skipped: cancelled", "", None, True, True).note
    assert "statement timeout" in note and "blocked by" not in note


def test_postgresql_a_lock_held_on_the_queue_names_its_holder_within_a_second(request, tmp_path):
    """explain waits the part's 1 s, not the connection's 5 s, and says who holds the lock."""
    target = make_target("postgresql", request, tmp_path)
    make_queue(target.engine(), "bq", "fifo", count=10, close=True)
    with psycopg.connect(PG_ADMIN) as holder:
        holder.execute(f'LOCK TABLE "{target.schema}".bq IN ACCESS EXCLUSIVE MODE')
        pid = holder.info.backend_pid
        started = time.monotonic()
        code, data, err = _cli_explain(target, "bq")
        took = time.monotonic() - started
        holder.rollback()
    assert code == 0, err
    assert took < 4, took
    finding = next(f for f in data["findings"] if f["code"] == "part_blocked")
    assert (
        f"session {pid}" in finding["message"] and f"pg_terminate_backend({pid})" in finding["fix"]
    )
    assert any("explain skipped" in n["note"] for n in data["notes"])


def test_an_existing_index_that_fits_is_named_not_created_again(request, tmp_path):
    """procrastinate's own priority index fits the head; on a small table the planner sorts
    anyway: the finding names that index and advises ANALYZE, not a duplicate."""
    target = make_target("postgresql", request, tmp_path)
    schema = f'"{target.schema}"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        for statement in PROCRASTINATE[:2]:
            admin.execute(statement.format(s=schema))
        admin.execute(
            f"INSERT INTO {schema}.procrastinate_jobs (queue_name, task_name, status) "
            "SELECT 'q', 't', CAST(CASE WHEN i % 10 = 0 THEN 'todo' ELSE 'succeeded' END AS "
            f"{schema}.procrastinate_job_status) FROM generate_series(1, 40) AS i"
        )
        admin.execute(
            f"CREATE INDEX procrastinate_jobs_priority_idx_v1 ON {schema}.procrastinate_jobs "
            "(priority DESC, id ASC) WHERE (status = 'todo'::"
            f"{schema}.procrastinate_job_status)"
        )
        admin.execute(f"ANALYZE {schema}.procrastinate_jobs")
    result = _explain(target, "procrastinate_jobs")
    assert result.sorts and result.fitting_index == "procrastinate_jobs_priority_idx_v1"
    finding = next(f for f in result.findings if f.code == "dequeue_index_misfit")
    assert "procrastinate_jobs_priority_idx_v1" in finding.message
    assert "chose not to use it" in finding.message
    assert finding.fix.startswith(f"ANALYZE {schema}") and "CREATE INDEX" not in finding.fix


def test_a_walk_past_thousands_of_claimed_rows_is_called_a_walk(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".mf'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {table} (id bigint PRIMARY KEY, state text) "
            "WITH (autovacuum_enabled = false)"
        )
        admin.execute(f"INSERT INTO {table} SELECT i, 'new' FROM generate_series(1, 3001) AS i")
        admin.execute(f"ANALYZE {table}")  # every row waiting: the planner walks the key
        admin.execute(f"UPDATE {table} SET state = 'claimed' WHERE id <= 3000")
    args = ["mf", "--state-column", "state", "--pending", "new", "--order-by", "id"]
    out = invoke_on(target, "explain", *args, "--format", "plain")
    assert out.exit_code == 0, out.stderr
    assert "index walk on mf_pkey (3001 rows walked" in out.stdout
    assert "seek on mf_pkey" not in out.stdout


def test_mariadb_an_alter_queued_on_the_queue_is_given_up_on_within_a_second(request, tmp_path):
    """A metadata lock queued behind an open transaction: explain waits 1 s, not 5, and says
    it was blocked (the holder is a guess on MariaDB without metadata_lock_info)."""
    target = make_target("mariadb", request, tmp_path)
    make_queue(target.engine(), "mq", "fifo", count=10, close=True)

    def connect() -> pymysql.Connection:
        return pymysql.connect(host=MY_HOST, user="root", database=target.schema)

    with connect() as reader, connect() as alterer:
        reader.cursor().execute("START TRANSACTION")
        reader.cursor().execute("SELECT count(*) FROM mq")
        alter = threading.Thread(
            target=alterer.cursor().execute, args=("ALTER TABLE mq ADD COLUMN extra int",)
        )
        alter.start()
        time.sleep(0.3)  # the ALTER is queued for the exclusive metadata lock
        started = time.monotonic()
        code, data, err = _cli_explain(target, "mq")
        took = time.monotonic() - started
        reader.rollback()
        alter.join()
    assert code == 0, err
    assert took < 4, took
    assert "part_blocked" in [f["code"] for f in data["findings"]]


def test_explain_inside_inspect_deep_gives_back_the_parts_lock_limit(request, tmp_path):
    """explain's plan sets a part's lock limit inside inspect's own part: leaving it restores
    the outer part's 1 s, not the connection's 5 s, for the rest of that part."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    try:
        with engine.lock_timeout(1000):
            with engine.lock_timeout(300):
                assert engine.query("SHOW lock_timeout")[0]["lock_timeout"] == "300ms"
            assert engine.query("SHOW lock_timeout")[0]["lock_timeout"] == "1s"
        assert engine.query("SHOW lock_timeout")[0]["lock_timeout"] == "5s"
    finally:
        engine.close()
