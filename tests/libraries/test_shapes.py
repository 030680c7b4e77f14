"""The libraries qadmin recognises without running them (River, Oban, Solid Queue, GoodJob,
Que, Delayed::Job, Hangfire): tables of each one's documented shape (the columns the profile
reads, written from the library's migrations), rows in each state, and detection plus
inspect/check/requeue through the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from qadmin.profiles.detect import detect
from qadmin.profiles.shape import Column, TableShape
from tests.conftest import MY_HOST, PG_ADMIN
from tests.libraries.scenario import (
    STALE_AFTER,
    detected_library,
    qadmin,
    qadmin_json,
    stale_entry,
    state_rows,
)

AGO = {  # ten minutes ago, as each engine writes it (UTC, as Rails and Oban store it)
    "postgresql": "timezone('UTC', now()) - interval '10 minutes'",
    "mariadb": "UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE",
    "sqlite": "datetime('now', '-10 minutes')",
}
NOW = {
    "postgresql": "timezone('UTC', now())",
    "mariadb": "UTC_TIMESTAMP(6)",
    "sqlite": "datetime('now')",
}
LATER = {
    "postgresql": "timezone('UTC', now()) + interval '1 hour'",
    "mariadb": "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR",
    "sqlite": "datetime('now', '+1 hour')",
}


@dataclass(frozen=True)
class Case:
    library: str
    table: str
    ddl: tuple[str, ...]  # ``{ago}``/``{now}``/``{later}``: the engine's time expressions
    depth: int
    states: dict[str, int]
    stale: tuple[str, ...] = ()  # ids of the claims that must be stale
    releasable: bool = False
    engines: tuple[str, ...] = ("postgresql",)
    extra: dict[str, str] = field(default_factory=dict)


RIVER = Case(
    "river",
    "river_job",
    (
        "CREATE TYPE river_job_state AS ENUM ('available', 'cancelled', 'completed', "
        "'discarded', 'pending', 'retryable', 'running', 'scheduled')",
        "CREATE TABLE river_job (id bigserial PRIMARY KEY, "
        "state river_job_state NOT NULL DEFAULT 'available', "
        "attempt smallint NOT NULL DEFAULT 0, max_attempts smallint NOT NULL DEFAULT 25, "
        "attempted_at timestamptz, created_at timestamptz NOT NULL DEFAULT now(), "
        "finalized_at timestamptz, scheduled_at timestamptz NOT NULL DEFAULT now(), "
        "priority smallint NOT NULL DEFAULT 1, args jsonb NOT NULL DEFAULT '{{}}', "
        "attempted_by text[], errors jsonb[], kind text NOT NULL, "
        "metadata jsonb NOT NULL DEFAULT '{{}}', queue text NOT NULL DEFAULT 'default', "
        "tags varchar(255)[] NOT NULL DEFAULT '{{}}')",
        "INSERT INTO river_job (kind, state) VALUES ('a', 'available'), ('a', 'available'), "
        "('a', 'retryable'), ('a', 'completed'), ('a', 'completed'), ('a', 'discarded')",
        "INSERT INTO river_job (id, kind, state, attempt, attempted_at) "
        "VALUES (100, 'a', 'running', 1, now() - interval '10 minutes')",
    ),
    depth=3,
    states={"available": 2, "retryable": 1, "running": 1, "completed": 2, "discarded": 1},
    stale=("100",),
)
OBAN = Case(
    "oban",
    "oban_jobs",
    (
        "CREATE TYPE oban_job_state AS ENUM ('available', 'scheduled', 'executing', "
        "'retryable', 'completed', 'discarded', 'cancelled')",
        "CREATE TABLE oban_jobs (id bigserial PRIMARY KEY, "
        "state oban_job_state NOT NULL DEFAULT 'available', queue text NOT NULL DEFAULT "
        "'default', worker text NOT NULL, args jsonb NOT NULL DEFAULT '{{}}', "
        "errors jsonb[] NOT NULL DEFAULT '{{}}', attempt integer NOT NULL DEFAULT 0, "
        "max_attempts integer NOT NULL DEFAULT 20, "
        "inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()), "
        "scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()), "
        "attempted_at timestamp, completed_at timestamp, attempted_by text[], "
        "discarded_at timestamp, priority integer NOT NULL DEFAULT 0, "
        "tags varchar(255)[] DEFAULT '{{}}', meta jsonb DEFAULT '{{}}', cancelled_at timestamp)",
        "INSERT INTO oban_jobs (worker, state) VALUES ('W', 'available'), ('W', 'scheduled'), "
        "('W', 'completed'), ('W', 'discarded'), ('W', 'cancelled')",
        "INSERT INTO oban_jobs (id, worker, state, attempt, attempted_at) "
        "VALUES (100, 'W', 'executing', 1, {ago})",
    ),
    depth=2,
    states={"available": 1, "scheduled": 1, "executing": 1, "completed": 1, "discarded": 1}
    | {"cancelled": 1},
    stale=("100",),
)
SOLID_READY = Case(
    "solid-queue",
    "solid_queue_ready_executions",
    (
        "CREATE TABLE solid_queue_ready_executions (id {serial}, job_id bigint NOT NULL, "
        "queue_name varchar(255) NOT NULL, priority integer NOT NULL DEFAULT 0, "
        "created_at {ts} NOT NULL)",
        "INSERT INTO solid_queue_ready_executions (job_id, queue_name, created_at) "
        "VALUES (1, 'default', {ago}), (2, 'default', {now})",
    ),
    depth=2,
    states={},
    engines=("postgresql", "mariadb", "sqlite"),
)
# Jobs scheduled for later: depth is only the one whose time has come (its dispatcher has yet
# to move it to the ready executions); the two an hour ahead are scheduled.
SOLID_SCHEDULED = Case(
    "solid-queue",
    "solid_queue_scheduled_executions",
    (
        "CREATE TABLE solid_queue_scheduled_executions (id {serial}, job_id bigint NOT NULL, "
        "queue_name varchar(255) NOT NULL, priority integer NOT NULL DEFAULT 0, "
        "scheduled_at {ts} NOT NULL, created_at {ts} NOT NULL)",
        "INSERT INTO solid_queue_scheduled_executions (job_id, queue_name, scheduled_at, "
        "created_at) VALUES (1, 'default', {ago}, {ago}), (2, 'default', {later}, {ago}), "
        "(3, 'mail', {later}, {ago})",
    ),
    depth=1,
    states={},
    engines=("postgresql", "mariadb", "sqlite"),
)
SOLID_CLAIMED = Case(
    "solid-queue",
    "solid_queue_claimed_executions",
    (
        "CREATE TABLE solid_queue_processes (id {serial}, kind varchar(255) NOT NULL, "
        "last_heartbeat_at {ts} NOT NULL, supervisor_id bigint, pid integer NOT NULL, "
        "hostname varchar(255), metadata text, created_at {ts} NOT NULL, "
        "name varchar(255) NOT NULL)",
        "CREATE TABLE solid_queue_claimed_executions (id {serial}, job_id bigint NOT NULL, "
        "process_id bigint, created_at {ts} NOT NULL)",
        "INSERT INTO solid_queue_processes (id, kind, last_heartbeat_at, pid, created_at, name)"
        " VALUES (7, 'Worker', {ago}, 4242, {ago}, 'worker-dead')",
        "INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at) "
        "VALUES (31, 7, {ago})",
    ),
    depth=0,
    states={"claimed": 1},
    stale=("31",),
    engines=("postgresql", "mariadb", "sqlite"),
)
GOOD_JOB = Case(
    "good_job",
    "good_jobs",
    (
        "CREATE TABLE good_job_processes (id uuid PRIMARY KEY, created_at timestamp NOT NULL, "
        "updated_at timestamp NOT NULL, state jsonb, lock_type smallint)",
        "CREATE TABLE good_jobs (id uuid PRIMARY KEY, queue_name text, priority integer, "
        "serialized_params jsonb, scheduled_at timestamp, performed_at timestamp, "
        "finished_at timestamp, error text, created_at timestamp NOT NULL, "
        "updated_at timestamp NOT NULL, active_job_id uuid, concurrency_key text, "
        "cron_key text, retried_good_job_id uuid, cron_at timestamp, batch_id uuid, "
        "batch_callback_id uuid, is_discrete boolean, executions_count integer, "
        "job_class text, error_event smallint, labels text[], locked_by_id uuid, "
        "locked_at timestamp)",
        "INSERT INTO good_job_processes VALUES "
        "('00000000-0000-0000-0000-0000000000aa', {ago}, {ago}, '{{}}', 1)",
        "INSERT INTO good_jobs (id, created_at, updated_at, scheduled_at, performed_at, "
        "finished_at, error, locked_by_id, locked_at) VALUES "
        "('00000000-0000-0000-0000-000000000001', {ago}, {ago}, {ago}, NULL, NULL, NULL, "
        "NULL, NULL), "
        "('00000000-0000-0000-0000-000000000002', {now}, {now}, NULL, NULL, NULL, NULL, "
        "NULL, NULL), "
        "('00000000-0000-0000-0000-000000000003', {now}, {now}, {later}, NULL, NULL, NULL, "
        "NULL, NULL), "
        "('00000000-0000-0000-0000-000000000004', {ago}, {ago}, {ago}, {ago}, NULL, NULL, "
        "'00000000-0000-0000-0000-0000000000aa', {ago}), "
        "('00000000-0000-0000-0000-000000000005', {ago}, {now}, {ago}, {ago}, {now}, NULL, "
        "NULL, NULL), "
        "('00000000-0000-0000-0000-000000000006', {ago}, {now}, {ago}, {ago}, {now}, 'boom', "
        "NULL, NULL)",
    ),
    depth=2,  # the job scheduled for later waits, but is not due: counted as scheduled
    states={"queued": 2, "scheduled": 1, "running": 1, "succeeded": 1, "discarded": 1},
    stale=("00000000-0000-0000-0000-000000000004",),
)
QUE = Case(
    "que",
    "que_jobs",
    (
        "CREATE TABLE que_jobs (id bigserial PRIMARY KEY, priority smallint NOT NULL "
        "DEFAULT 100, run_at timestamptz NOT NULL DEFAULT now(), job_class text NOT NULL, "
        "error_count integer NOT NULL DEFAULT 0, last_error_message text, "
        "queue text NOT NULL DEFAULT 'default', last_error_backtrace text, "
        "finished_at timestamptz, expired_at timestamptz, args jsonb NOT NULL DEFAULT '[]', "
        "data jsonb NOT NULL DEFAULT '{{}}', job_schema_version integer NOT NULL DEFAULT 1, "
        "kwargs jsonb NOT NULL DEFAULT '{{}}')",
        "INSERT INTO que_jobs (job_class, finished_at, expired_at, error_count) VALUES "
        "('J', NULL, NULL, 0), ('J', NULL, NULL, 2), ('J', now(), NULL, 0), "
        "('J', NULL, now(), 15)",
    ),
    depth=2,
    states={"ready": 2, "finished": 1, "expired": 1},
)
DELAYED_JOB = Case(
    "delayed_job",
    "delayed_jobs",
    (
        "CREATE TABLE delayed_jobs (id {serial}, priority integer NOT NULL DEFAULT 0, "
        "attempts integer NOT NULL DEFAULT 0, handler text NOT NULL, last_error text, "
        "run_at {ts}, locked_at {ts}, failed_at {ts}, locked_by varchar(255), "
        "queue varchar(255), created_at {ts}, updated_at {ts})",
        "INSERT INTO delayed_jobs (handler, run_at, created_at, updated_at) VALUES "
        "('h', {ago}, {ago}, {ago}), ('h', {now}, {now}, {now})",
        "INSERT INTO delayed_jobs (id, handler, run_at, created_at, updated_at, locked_at, "
        "locked_by, attempts) VALUES (100, 'h', {ago}, {ago}, {ago}, {ago}, "
        "'host:dead pid:4242', 1)",
        "INSERT INTO delayed_jobs (handler, run_at, created_at, updated_at, failed_at, "
        "attempts, last_error) VALUES ('h', {ago}, {ago}, {ago}, {now}, 25, 'boom')",
    ),
    depth=2,
    states={"waiting": 2, "locked": 1, "failed": 1},
    stale=("100",),
    releasable=True,
    engines=("postgresql", "mariadb", "sqlite"),
)
HANGFIRE_JOB = Case(
    "hangfire",
    "job",
    (
        "CREATE TABLE job (id bigserial PRIMARY KEY, stateid bigint, statename text, "
        "invocationdata jsonb NOT NULL DEFAULT '{{}}', arguments jsonb NOT NULL DEFAULT "
        "'[]', createdat timestamp NOT NULL, expireat timestamp, "
        "updatecount integer NOT NULL DEFAULT 0)",
        "INSERT INTO job (statename, createdat) VALUES ('Enqueued', {ago}), "
        "('Enqueued', {now}), ('Scheduled', {now}), ('Processing', {ago}), "
        "('Succeeded', {ago}), ('Failed', {ago})",
    ),
    depth=3,
    states={"Enqueued": 2, "Scheduled": 1, "Processing": 1, "Succeeded": 1, "Failed": 1},
)
HANGFIRE_QUEUE = Case(
    "hangfire",
    "jobqueue",
    (
        "CREATE TABLE jobqueue (id bigserial PRIMARY KEY, jobid bigint NOT NULL, "
        "queue text NOT NULL, fetchedat timestamp, updatecount integer NOT NULL DEFAULT 0)",
        "INSERT INTO jobqueue (jobid, queue, fetchedat) VALUES (1, 'default', NULL), "
        "(2, 'default', NULL), (4, 'default', {ago})",
    ),
    depth=2,
    states={"enqueued": 2, "fetched": 1},
    stale=("4",),
)
CASES = (
    RIVER,
    OBAN,
    SOLID_READY,
    SOLID_SCHEDULED,
    SOLID_CLAIMED,
    GOOD_JOB,
    QUE,
    DELAYED_JOB,
    HANGFIRE_JOB,
    HANGFIRE_QUEUE,
)
TYPES = {
    "postgresql": {"serial": "bigserial PRIMARY KEY", "ts": "timestamp"},
    "mariadb": {"serial": "bigint AUTO_INCREMENT PRIMARY KEY", "ts": "datetime(6)"},
    "sqlite": {"serial": "integer PRIMARY KEY AUTOINCREMENT", "ts": "datetime"},
}


def _statements(case: Case, engine: str) -> list[str]:
    words = {
        **TYPES[engine],
        "ago": AGO[engine],
        "now": NOW[engine],
        "later": LATER.get(engine, ""),
    }
    return [stmt.format(**words) for stmt in case.ddl]


def _place(engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    """A fresh schema/database with the case's tables: (DSN, schema)."""
    if engine == "postgresql":
        return PG_ADMIN, request.getfixturevalue("pg_schema")
    if engine == "mariadb":
        return f"mysql://root@{MY_HOST}:3306/{request.getfixturevalue('my_database')}", None
    return f"sqlite:///{tmp_path / 'shapes.db'}", None


def _create(engine: str, dsn: str, schema: str | None, statements: list[str]) -> None:
    if engine == "postgresql":
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{schema}"')
            for stmt in statements:
                conn.execute(stmt.encode())
    elif engine == "mariadb":
        import pymysql

        database = dsn.rsplit("/", 1)[1]
        with (
            pymysql.connect(
                host=MY_HOST, user="root", password="", database=database, autocommit=True
            ) as conn,
            conn.cursor() as cur,
        ):
            for stmt in statements:
                cur.execute(stmt)
    else:
        import sqlite3

        conn = sqlite3.connect(dsn.removeprefix("sqlite:///"))
        with conn:
            for stmt in statements:
                conn.execute(stmt)
        conn.close()


PARAMS = [
    pytest.param(case, engine, id=f"{case.library}-{case.table}-{engine}")
    for case in CASES
    for engine in case.engines
]


@pytest.mark.parametrize(("case", "engine"), PARAMS)
def test_shape_is_detected(
    case: Case, engine: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    dsn, schema = _place(engine, request, tmp_path)
    _create(engine, dsn, schema, _statements(case, engine))
    assert detected_library(dsn, case.table, schema) == case.library


@pytest.mark.parametrize(("case", "engine"), PARAMS)
def test_shape_through_the_cli(
    case: Case, engine: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    dsn, schema = _place(engine, request, tmp_path)
    _create(engine, dsn, schema, _statements(case, engine))
    conn = ["--dsn", dsn, *(["--schema", schema] if schema else [])]
    report = qadmin_json("inspect", case.table, *conn, "--stale-after", STALE_AFTER)
    assert report["profile"]["library"] == case.library
    assert report["size"]["depth"] == case.depth
    if case is SOLID_SCHEDULED:
        assert report["size"]["scheduled"] == 2
        queues = {q["queue"]: q for q in report["named_queues"]["queues"]}
        assert (queues["default"]["depth"], queues["default"]["scheduled"]) == (1, 1)
        assert (queues["mail"]["depth"], queues["mail"]["scheduled"]) == (0, 1)
    if case.states:
        assert state_rows(report["size"]) == case.states
    for row_id in case.stale:
        stale_entry(report["claims"], row_id)
    assert len(report["claims"]["stale"]) == len(case.stale)

    checked = qadmin("check", case.table, *conn, "--stale-after", STALE_AFTER)
    # A shared server may add server-wide warnings (InnoDB's history list, another session's
    # old snapshot): the table's own verdict is whether stale_claims is raised.
    assert ("stale_claims:" in checked.stdout) == bool(case.stale), checked.stdout
    assert checked.exit_code == 1 if case.stale else checked.exit_code in (0, 1), checked.stdout

    if not case.stale:
        return
    requeue = [*conn, "--stale-after", STALE_AFTER]
    if not case.releasable:
        refused = qadmin("requeue", case.table, *requeue, "--yes")
        assert refused.exit_code == 2 and case.library in refused.stderr
        return
    dry = qadmin("requeue", case.table, *requeue, "--dry-run")
    assert dry.exit_code == 0 and all(row_id in dry.stdout for row_id in case.stale)
    assert qadmin("requeue", case.table, *requeue, "--yes").exit_code == 0
    after = qadmin_json("inspect", case.table, *conn, "--stale-after", STALE_AFTER)
    assert after["size"]["depth"] == case.depth + len(case.stale)
    assert after["claims"]["stale"] == []


def test_hangfire_on_sql_server_is_recognised_with_its_pascal_case_columns() -> None:
    """No SQL Server here: the shape is the catalog's answer for HangFire.Job, as read_shape
    would return it."""
    names = ("Id", "StateId", "StateName", "InvocationData", "Arguments", "CreatedAt")
    shape = TableShape(
        schema="HangFire",
        table="Job",
        columns=tuple(Column(n, "nvarchar", "text", True, None) for n in names),
        indexes=(),
    )
    profile = detect(shape, "mssql")
    assert profile is not None and profile.library == "hangfire"
    assert (profile.state_column, profile.time_column) == ("StateName", "CreatedAt")
