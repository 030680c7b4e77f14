"""A hand-built queue table read through a declared profile, on the three live engines.

The table keeps its finished rows (status new / working / done / error, claimed_at, worker,
attempts, last_error). A worker process claims a row and is SIGKILLed: its claim stays, and
inspect, check, size, claims, tail and requeue must see it as the table's own columns say,
while another session holds a row lock (PostgreSQL, MariaDB) or a read snapshot (SQLite).
A PostgreSQL table of 200,000 finished rows proves the bounded path: exact through an index,
an estimate that says so without one, never a sequential scan of the table.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import sqlite3
import subprocess
import sys
import time
from typing import Any

import psycopg
import pytest

from qadmin.diagnostics import run
from qadmin.diagnostics.entries import claims as claims_part
from qadmin.diagnostics.entries import rates
from qadmin.diagnostics.model import Options
from qadmin.engines import Timeouts, open_engine
from qadmin.profiles.resolve import resolve
from tests.conftest import MY_HOST, PG_ADMIN, Target, make_target
from tests.helpers import invoke, invoke_on

ENGINES = ("sqlite", "postgresql", "mariadb")

DDL = {
    "sqlite": [
        "CREATE TABLE {t} (id INTEGER PRIMARY KEY, status TEXT NOT NULL DEFAULT 'new', "
        "created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, claimed_at TIMESTAMP, "
        "worker TEXT, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, body TEXT)",
        "CREATE INDEX {i} ON {b} (status, created_at)",
    ],
    "postgresql": [
        "CREATE TABLE {t} (id bigserial PRIMARY KEY, status text NOT NULL DEFAULT 'new', "
        "created_at timestamptz NOT NULL DEFAULT now(), claimed_at timestamptz, worker text, "
        "attempts int NOT NULL DEFAULT 0, last_error text, body text)",
        "CREATE INDEX {i} ON {t} (status, created_at)",
    ],
    "mariadb": [
        "CREATE TABLE {t} (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
        "status VARCHAR(16) NOT NULL DEFAULT 'new', "
        "created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), "
        "claimed_at TIMESTAMP(6) NULL, worker VARCHAR(64), attempts INT NOT NULL DEFAULT 0, "
        "last_error TEXT, body TEXT, INDEX {i} (status, created_at))",
    ],
}

# The worker: claims the oldest new row in its own committed transaction, says so, and works
# for ever (until the test kills it).
WORKER = {
    "sqlite": """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
row = c.execute("SELECT id FROM jobs WHERE status = 'new' ORDER BY id LIMIT 1").fetchone()
c.execute("UPDATE jobs SET status = 'working', claimed_at = datetime('now'), "
          "worker = 'worker-1', attempts = attempts + 1 WHERE id = ?", row)
c.execute("COMMIT")
print(row[0], flush=True)
time.sleep(600)
""",
    "postgresql": """
import psycopg, sys, time
c = psycopg.connect(sys.argv[1], autocommit=True)
c.execute("SET search_path TO " + sys.argv[2])
row = c.execute("UPDATE jobs SET status = 'working', claimed_at = now(), worker = 'worker-1', "
                "attempts = attempts + 1 WHERE id = (SELECT id FROM jobs WHERE status = 'new' "
                "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id").fetchone()
print(row[0], flush=True)
time.sleep(600)
""",
    "mariadb": """
import pymysql, sys, time
c = pymysql.connect(host=sys.argv[1], user="root", database=sys.argv[2], autocommit=False)
cur = c.cursor()
cur.execute("SELECT id FROM jobs WHERE status = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")
row = cur.fetchone()
cur.execute("UPDATE jobs SET status = 'working', claimed_at = CURRENT_TIMESTAMP(6), "
            "worker = 'worker-1', attempts = attempts + 1 WHERE id = %s", row)
c.commit()
print(row[0], flush=True)
time.sleep(600)
""",
}

CONFIG = """
[tables.jobs]
table = "{table}"
state_column = "status"
pending = ["new"]
claimed = ["working"]
done = ["done"]
failed = ["error"]
time_column = "created_at"
claimed_at_column = "claimed_at"
worker_column = "worker"
attempts_column = "attempts"
error_column = "last_error"
"""


def _worker_args(target: Target, label: str) -> list[str]:
    if label == "sqlite":
        return [target.dsn.removeprefix("sqlite:///")]
    if label == "postgresql":
        return [PG_ADMIN, f'"{target.schema}"']
    return [MY_HOST, str(target.schema)]


def _killed_worker(target: Target, label: str) -> int:
    """A worker that claimed a row and was SIGKILLed mid-job: the id of its row."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER[label], *_worker_args(target, label)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        claimed = int(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return claimed


class Holder:
    """Another session: a row lock on a waiting row (PostgreSQL, MariaDB) or an open read
    snapshot (SQLite), held while qadmin reads the table."""

    def __init__(self, target: Target, label: str) -> None:
        self.engine = target.engine()
        self.label = label
        conn = self.engine.conn
        cursor = conn.cursor()
        table = self.engine.qualified("jobs")
        if label == "sqlite":
            conn.isolation_level = None
            cursor.execute("BEGIN")
            cursor.execute(f"SELECT count(*) FROM {table}")
        else:
            if label == "postgresql":
                cursor.execute("BEGIN")
            sql = f"SELECT id FROM {table} WHERE status = 'new' ORDER BY id DESC LIMIT 1 FOR UPDATE"
            cursor.execute(sql)
        cursor.fetchall()
        self.cursor = cursor

    def release(self) -> None:
        self.engine.conn.rollback()
        self.engine.close()


_HOUR_AGO = {
    "postgresql": "now() - interval '1 hour'",
    "mariadb": "NOW() - INTERVAL 1 HOUR",
    "mysql8": "NOW() - INTERVAL 1 HOUR",
}


def _cli(*args: str) -> Any:
    return invoke(*args)


def _json(*args: str) -> Any:
    result = _cli(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("label", ENGINES)
def test_a_hand_built_table_through_a_declared_profile(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table, bare = engine.qualified("jobs"), engine.quote_ident("jobs")
    for statement in DDL[label]:
        engine.run([statement.format(t=table, b=bare, i=engine.quote_ident("jobs_status_idx"))])
    insert = f"INSERT INTO {table} (status, body) VALUES (:status, 'secret body')"
    engine.run_batch([insert], [{"status": "done"}] * 50 + [{"status": "error"}] * 2)
    engine.run_batch([insert], [{"status": "cancelled"}])
    engine.run_batch([insert], [{"status": "new"}] * 3)
    engine.close()
    if label == "sqlite":  # the app's own choice for concurrent workers: qadmin never makes it
        app = sqlite3.connect(target.dsn.removeprefix("sqlite:///"))
        app.execute("PRAGMA journal_mode = WAL")
        app.close()
    config = tmp_path / "qadmin.toml"
    schema = "main" if label == "sqlite" else target.schema
    config.write_text(CONFIG.format(table=f"{schema}.jobs"))
    conn = [*target.cli_args(), "--config", str(config)]

    stuck = _killed_worker(target, label)
    holder = Holder(target, label)
    try:
        report = _json("inspect", "jobs", "--sample", "0", "--stale-after", "1", *conn)
        deadline = time.monotonic() + 30
        while not report["claims"]["stale"] and time.monotonic() < deadline:
            time.sleep(0.3)  # the claim is a second old only after a second
            report = _json("inspect", "jobs", "--sample", "0", "--stale-after", "1", *conn)
        size = report["size"]
        assert report["profile"]["source"] == "declared"
        assert (size["depth"], size["depth_exact"]) == (2, True), "waiting rows only"
        assert (size["claimed"], size["done"], size["failed"]) == (1, 50, 2)
        by_state = {s["state"]: (s["group"], s["rows"]) for s in size["states"]}
        assert by_state["done"] == ("done", 50) and by_state["cancelled"] == ("other", 1)
        assert size["oldest_age_s"] is not None
        [claim] = report["claims"]["stale"]
        assert (claim["id"], claim["worker"], claim["attempts"]) == (stuck, "worker-1", 1)
        finding = next(f for f in report["findings"] if f["code"] == "stale_claims")
        assert finding["message"].startswith(f"message {stuck} has been working for")
        assert "secret body" not in json.dumps(report)

        checked = _cli("check", "jobs", "--sample", "0", "--stale-after", "1", *conn)
        assert checked.exit_code == 1 and "stale_claims" in checked.stdout, checked.output
        assert _json("size", "jobs", *conn)["depth"] == 2
        [listed] = _json("claims", "jobs", "--stale-after", "1", *conn)
        assert listed["id"] == stuck and listed["state"] == "working"
        line = json.loads(_cli("tail", "jobs", "--count", "1", "--format", "json", *conn).stdout)
        assert (line["depth"], line["claimed"], line["stale_claims"]) == (2, 1, 0)
        [dry] = _json("requeue", "jobs", "--stale-after", "1", "--dry-run", *conn)
        assert dry["id"] == stuck
        released = _json("requeue", "jobs", "--stale-after", "1", "--yes", *conn)
        assert released == [{"id": stuck, "outcome": "requeued"}]
    finally:
        holder.release()
    after = _json("size", "jobs", *conn)
    assert (after["depth"], after["claimed"]) == (3, 0), "the claim was given back"
    engine = target.engine()
    row = engine.query(
        f"SELECT status, claimed_at, worker FROM {table} WHERE id = :id", {"id": stuck}
    )
    assert row == [{"status": "new", "claimed_at": None, "worker": None}]
    # A row a live worker finished since it was listed is not released: the UPDATE checks.
    done_id = engine.query(f"SELECT min(id) AS id FROM {table} WHERE status = 'done'")[0]["id"]
    resolved = resolve(engine, "jobs", {"jobs": {"table": f"{schema}.jobs", **_declared()}}, {})
    ctx = run.context(engine, resolved, Options(stale_after_s=0))
    assert claims_part.requeue_profile(ctx, [done_id]).done == []
    if label != "sqlite":
        # A stale claim whose row a worker holds locked (its ack in progress) is passed when
        # its lock is not granted in time, not the whole requeue failed (exit 8).
        engine.run(
            [
                f"UPDATE {table} SET status = 'working', claimed_at = {_HOUR_AGO[label]} "
                "WHERE id = :id"
            ],
            {"id": stuck},
        )
        busy = target.engine()
        with busy.transaction() as execute:
            execute(f"UPDATE {table} SET worker = 'acking' WHERE id = :id", {"id": stuck})
            quick = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=300))
            ctx = run.context(quick, resolved, Options(stale_after_s=1))
            assert claims_part.requeue_profile(ctx, [stuck]) == claims_part.Released([], [stuck])
            quick.close()
        busy.close()
    # Rates: the order key's high-water mark counts what entered, the waiting rows' growth
    # what left (two samples, as tail takes them).
    before = rates.sample_profile(ctx)
    engine.run_batch([insert], [{"status": "new"}] * 5)
    between = rates.between(before, rates.sample_profile(ctx), None)
    assert (between.enqueued, between.dequeued, between.depth_change) == (5, 0, 5)
    assert between.enqueue_source == "order key high-water mark"
    engine.close()


def _declared() -> dict[str, Any]:
    import tomllib

    return {
        k: v
        for k, v in tomllib.loads(CONFIG.format(table="x"))["tables"]["jobs"].items()
        if k != "table"
    }


def test_unfit_columns_and_keys_are_one_line_exit_2(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f'CREATE TABLE "{target.schema}"."JobQueue" (message_id uuid PRIMARY KEY, '
            "n int, body text, payload jsonb, at timestamptz)"
        )
        admin.execute(
            f'INSERT INTO "{target.schema}"."JobQueue" '
            "VALUES (gen_random_uuid(), 1, 'b', '{}', now())"
        )
    name = f'"{target.schema}"."JobQueue"'
    conn = ["--dsn", PG_ADMIN]
    report = _json("inspect", name, "--sample", "0", *conn)
    assert report["profile"]["table"] == "JobQueue" and report["size"]["depth"] == 1
    assert report["profile"]["order_by"] is None, "a uuid key is no order"
    cases = {
        ("--order-by", "nosuchcol"): "no column 'nosuchcol'",
        ("--order-by", "message_id"): "a uuid is random",
        ("--order-by", "body"): "text sorts by spelling",
        ("--order-by", "payload"): "json",
        ("--time-column", "n"): "not a timestamp",
        ("--time-column", "body"): "not a timestamp",
        ("--state-column", "n"): "waiting values",
        ("--pending", "new"): "needs a state column",
    }
    for args, why in cases.items():
        for command in ("inspect", "size", "claims", "tail"):
            result = _cli(command, name, *args, *conn)
            assert result.exit_code == 2, (command, args, result.output)
            assert why in result.stderr and len(result.stderr.strip().splitlines()) == 1
            assert "internal error" not in result.output and "'b'" not in result.output
    config = tmp_path / "bad.toml"
    config.write_text(f'[tables.q]\ntable = "{target.schema}.JobQueue"\ncolour = "red"\n')
    result = _cli("size", "q", *conn, "--config", str(config))
    assert result.exit_code == 2 and "unknown key 'colour'" in result.stderr
    refused = _cli("requeue", name, "--yes", *conn)
    assert refused.exit_code == 2 and "no claims" in refused.stderr


def _plans(engine: Any, resolved: Any) -> str:
    """The plans of the statements size runs (the count and the oldest waiting row)."""
    from qadmin.profiles.query import COUNT_LIMIT, Reader

    reader = Reader(engine, resolved.profile, resolved.shape)
    where, params = reader.where(resolved.profile.pending)
    texts = []
    for section, names in (("count", {}), ("oldest_min", {"time_col": "created_at"})):
        words = {
            "filter": where,
            "age": reader.age("oldest_at"),
            "instant": reader.instant("oldest_at"),
        }
        statement = engine.hooks.render_text(
            reader._file().statements(section)[-1], {"table": "jobs", **names}, words
        )  # the query itself (oldest_min's first statement is its planner setting)
        rows = engine.query("EXPLAIN " + statement, {**params, "limit": COUNT_LIMIT})
        texts.append("\n".join(str(next(iter(r.values()))) for r in rows))
    return "\n".join(texts)


def _seq_scans_of_counting(engine: Any, resolved: Any) -> int:
    """Sequential scans of the table while each state is counted, by the server's own
    counter (this session's counters flushed on demand before reading it: PostgreSQL 15)."""
    from qadmin.profiles.query import Reader

    def scans() -> int:
        engine.run(["SELECT pg_stat_force_next_flush()"])  # flushed when the session idles
        rows = engine.query(
            "SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = :s AND relname = 'jobs'",
            {"s": engine.schema},
        )
        return int(rows[0]["seq_scan"])

    before = scans()
    reader = Reader(engine, resolved.profile, resolved.shape)
    for values in (resolved.profile.pending, resolved.profile.done):
        reader.count_state(values)
    return scans() - before


@pytest.mark.parametrize("indexed", [True, False])
def test_a_big_table_keeping_finished_rows_is_never_scanned(indexed, request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, status text NOT NULL, "
            "created_at timestamptz NOT NULL)"
        )
        admin.execute(
            f"INSERT INTO {table} (status, created_at) SELECT 'done', now() - interval '2 hours' "
            "FROM generate_series(1, 200000)"
        )
        admin.execute(
            f"INSERT INTO {table} (status, created_at) VALUES "
            "('new', now() - interval '10 minutes'), ('new', now() - interval '1 minute'), "
            "('new', now())"
        )
        if indexed:
            admin.execute(f"CREATE INDEX ON {table} (status, created_at)")
        admin.execute(f"ANALYZE {table}")
    given = ["--state-column", "status", "--pending", "new", "--done", "done"]
    size = _json(
        "size", f"{target.schema}.jobs", "--time-column", "created_at", *given, "--dsn", PG_ADMIN
    )
    engine = target.engine()
    resolved = resolve(
        engine,
        "jobs",
        {},
        {
            "state_column": "status",
            "pending": ["new"],
            "done": ["done"],
            "time_column": "created_at",
        },
    )
    if indexed:
        assert (size["depth"], size["depth_exact"], size["depth_source"]) == (3, True, None)
        assert 500 < size["oldest_age_s"] < 1200
        done = next(s for s in size["states"] if s["state"] == "done")
        assert done["rows"] >= 100_001 and done["exact"] is False, (
            "a bounded count, then an estimate"
        )
        assert "Seq Scan" not in _plans(engine, resolved)
        # The majority state comes from the planner's estimate: no count scans the table.
        assert _seq_scans_of_counting(engine, resolved) == 0
    else:
        assert size["depth_exact"] is False and "estimate" in size["depth_source"]
        assert size["depth"] is not None and size["depth"] < 1000
        assert size["oldest_age_s"] is None
        table = f'"{target.schema}"."jobs"'
        index = f'"jobs_status_created_at_idx" ON {table} ("status", "created_at")'
        assert any(n.endswith(index) for n in size["notes"]), size["notes"]
        # Claims the profile promises but no index lets qadmin read: never a silent OK.
        claiming = [f"{target.schema}.jobs", *given, "--claimed", "working", "--dsn", PG_ADMIN]
        checked = _cli("check", *claiming, "--sample", "0", "--warn-stale-claims", "1")
        # UNKNOWN: the threshold given was not judged (it outranks claims_unread's WARNING)
        assert checked.exit_code == 3, checked.output
        assert "claims not read: an index would make it cheap: CREATE INDEX" in checked.stdout
        assert "stale_claims not evaluable: claims not read" in checked.stdout
        listed = _cli("claims", *claiming, "--format", "json")
        assert (listed.exit_code, json.loads(listed.stdout)) == (1, [])
        assert "claims not read" in listed.stderr
        # the fix printed runs as printed, and then the claims are read
        report = _json("inspect", *claiming, "--sample", "0")
        [unread] = [f for f in report["findings"] if f["code"] == "claims_unread"]
        assert unread["fix"] == f'CREATE INDEX "jobs_status_idx" ON {table} ("status")', unread
        engine.run([unread["fix"]])
        read = _json("inspect", *claiming, "--sample", "0")
        assert not any(f["code"] == "claims_unread" for f in read["findings"]), read
    engine.close()


def test_a_workers_heartbeat_table_says_which_claims_are_dead(request, tmp_path):
    """A library-style profile (as qadmin.profiles.libraries gives them): claims by state,
    liveness from a workers table's heartbeats, findings in the library's words; tail and
    collect take the table too."""
    import pyarrow.parquet as pq

    from qadmin.profiles.model import Heartbeat, Profile, Release
    from qadmin.profiles.resolve import Resolved, check
    from qadmin.profiles.shape import read_shape

    target = make_target("postgresql", request, tmp_path)
    schema = f'"{target.schema}"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f"CREATE TABLE {schema}.workers (id int PRIMARY KEY, last_beat timestamptz)")
        admin.execute(
            f"CREATE TABLE {schema}.tasks (id bigint PRIMARY KEY, status text NOT NULL, "
            f"worker_id int REFERENCES {schema}.workers, attempts int NOT NULL DEFAULT 1)"
        )
        admin.execute(
            f"INSERT INTO {schema}.workers VALUES (1, now() - interval '10 minutes'), (2, now()), "
            "(3, now() - interval '5 seconds')"
        )
        # 113: its worker's row was pruned (worker_id set NULL, as procrastinate's FK does):
        # dead. 114: its worker beat 5 s ago, under the library's floor: alive.
        admin.execute(
            f"INSERT INTO {schema}.tasks VALUES (109, 'doing', 1, 1), (110, 'doing', 2, 1), "
            "(111, 'todo', NULL, 0), (112, 'succeeded', NULL, 1), (113, 'doing', NULL, 1), "
            "(114, 'doing', 3, 1)"
        )
    engine = target.engine()
    shape = read_shape(engine, "tasks")
    assert shape is not None
    profile = Profile(
        name="tasks",
        table="tasks",
        schema=target.schema,
        source="detected",
        library="testlib",
        noun="job",
        id_column="id",
        order_by="id",
        state_column="status",
        pending=("todo",),
        claimed=("doing",),
        done=("succeeded",),
        heartbeat=Heartbeat("workers", "worker_id", "id", "last_beat"),
        heartbeat_floor_s=30,
        attempts_column="attempts",
    )
    resolved = Resolved(check(profile, shape, "postgresql"), None, shape)
    # --stale-after 1 s: worker 3 (beat 5 s ago) is under the 30 s floor, so still alive.
    report = run.inspect_resolved(engine, resolved, Options(stale_after_s=1, sample_s=0))
    data = report.to_json_dict()
    assert (data["size"]["depth"], data["size"]["claimed"], data["size"]["done"]) == (1, 4, 1)
    dead, pruned = data["claims"]["stale"]
    assert (pruned["id"], pruned["worker_alive"], pruned["heartbeat_age_s"]) == (113, False, None)
    assert (dead["id"], dead["worker_alive"]) == (109, False)
    assert 500 < dead["heartbeat_age_s"] < 1200
    finding = next(f for f in report.findings if f.code == "stale_claims")
    assert finding.message.startswith("testlib job 109 has been doing since an unknown time;")
    assert "its worker's last heartbeat is 10 min old" in finding.message
    assert "testlib" in finding.fix, "no requeue without a Release: the library's own tooling"
    assert data["profile"]["heartbeat"]["table"] == "workers"
    # Given a Release, only the dead worker's job goes back: the UPDATE asks the workers table
    # again, so the live worker's job 110 stays claimed whatever was listed.
    releasing = dataclasses.replace(resolved.profile, release=Release("todo", ("worker_id",)))
    ctx = run.context(engine, Resolved(releasing, None, shape), Options(stale_after_s=1))
    assert claims_part.requeue_profile(ctx, [109, 110, 112, 113, 114]).done == [109, 113]
    rows = engine.query(f"SELECT id, status, worker_id FROM {schema}.tasks ORDER BY id")
    assert [(r["status"], r["worker_id"]) for r in rows[:2]] == [("todo", None), ("doing", 2)]
    assert [r["status"] for r in rows[4:]] == ["todo", "doing"]
    engine.close()
    conn = ["--dsn", PG_ADMIN, "--schema", target.schema]
    wrote = _cli("collect", "tasks", "--to", str(tmp_path / "history"), *conn)
    assert wrote.exit_code == 0, wrote.output
    [file] = (tmp_path / "history").rglob("*.parquet")
    row = pq.read_table(file).to_pylist()[0]
    assert (row["queue"], row["kind"], row["depth"]) == ("tasks", "table", 6)


def test_convert_moves_only_a_declared_profiles_waiting_rows(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, status text NOT NULL, "
            "created_at timestamptz NOT NULL DEFAULT now(), body text)"
        )
        admin.execute(
            f"INSERT INTO {table} (status, body) SELECT s, 'b' FROM unnest("
            "ARRAY['new', 'new', 'done', 'done', 'done', 'retry']) AS s"
        )
    config = tmp_path / "qadmin.toml"
    declared = '[tables.jobs]\ntable = "{t}.jobs"\nstate_column = "status"\npending = [{p}]\n'
    config.write_text(declared.format(t=target.schema, p='"new"'))
    conn = ["--dsn", PG_ADMIN, "--config", str(config)]
    args = ["convert", "jobs", "--to", "ring", "--capacity", "16", "--payload-column", "body"]
    args += ["--dry-run", *conn]
    plan = _json(*args)
    assert plan["messages"] == 2 and not plan["refused"], plan
    config.write_text(declared.format(t=target.schema, p='"new", "retry"'))
    refused = _cli(*args)
    assert refused.exit_code == 2 and "waiting rows are not one value" in refused.stderr


@pytest.mark.parametrize("label", ("postgresql", "mariadb"))
def test_a_claim_whose_session_lives_is_kept_only_with_skip_live(label, request, tmp_path):
    """A claim held 30 min by a session that is still connected is a finding that says so;
    requeue --skip-live leaves it and its UPDATE asks the server again (a race cannot
    release it), while a plain requeue releases it too (a pooled connection outlives its
    worker). --stale-after below 1 s is refused."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("held")
    ago = "now() - interval '30 minutes'" if label == "postgresql" else "NOW() - INTERVAL 30 MINUTE"
    live = target.engine()  # the claiming session: connected for the whole test
    pid = live.query(
        "SELECT pg_backend_pid() AS p" if label == "postgresql" else "SELECT CONNECTION_ID() AS p"
    )[0]["p"]
    engine.run(
        [f"CREATE TABLE {table} (id int PRIMARY KEY, st varchar(8), ca timestamp NULL, sess int)"]
    )
    engine.run(
        [
            f"INSERT INTO {table} VALUES (1, 'run', {ago}, :pid), (2, 'run', {ago}, 999999), "
            "(3, 'new', NULL, NULL)"
        ],
        {"pid": int(pid)},
    )
    engine.close()
    opts = ["--state-column", "st", "--pending", "new", "--claimed", "run"]
    opts += ["--claimed-at-column", "ca", "--session-column", "sess", *target.cli_args()]
    try:
        listed = {c["id"]: c for c in _json("claims", "held", "--stale-after", "5m", *opts)}
        assert (listed[1]["session_alive"], listed[2]["session_alive"]) == (True, False)
        checked = _cli("check", "held", "--stale-after", "5m", "--sample", "0", *opts)
        assert checked.exit_code == 1, checked.output
        finding = next(
            f
            for f in _json("inspect", "held", "--sample", "0", "--stale-after", "5m", *opts)[
                "findings"
            ]
            if f["code"] == "stale_claims"
        )
        assert f"session {pid} is still connected" in finding["message"]
        skip = ["--stale-after", "5m", "--skip-live"]
        assert [c["id"] for c in _json("requeue", "held", *skip, "--dry-run", *opts)] == [2]
        assert sorted(
            c["id"] for c in _json("requeue", "held", "--stale-after", "5m", "--dry-run", *opts)
        ) == [1, 2]
        released = _cli("requeue", "held", *skip, "--yes", "--format", "json", *opts)
        assert json.loads(released.stdout) == [{"id": 2, "outcome": "requeued"}]
        assert "1 stale claims skipped (ids 1)" in released.stderr
        refused = _cli("requeue", "held", "--stale-after", "0", "--yes", *opts)
        assert refused.exit_code == 2 and "below 1 s" in refused.stderr
        # A race: the row listed stale while its session lives is still refused by the UPDATE.
        engine = target.engine()
        resolved = resolve(
            engine,
            "held",
            {},
            {
                "state_column": "st",
                "pending": ("new",),
                "claimed": ("run",),
                "claimed_at_column": "ca",
                "session_column": "sess",
            },
        )
        ctx = run.context(engine, resolved, Options(stale_after_s=300))
        assert claims_part.requeue_profile(ctx, [1], skip_live=True).done == []
        assert claims_part.requeue_profile(ctx, [1]).done == [1]
        engine.close()
    finally:
        live.close()


KOMBU_DDL = {
    "sqlite": "CREATE TABLE {t} (id INTEGER PRIMARY KEY, visible BOOLEAN, "
    "timestamp DATETIME, payload TEXT NOT NULL, version SMALLINT NOT NULL, queue_id INTEGER)",
    "mariadb": "CREATE TABLE {t} (id INT AUTO_INCREMENT PRIMARY KEY, visible BOOL, "
    "timestamp DATETIME, payload TEXT NOT NULL, version SMALLINT NOT NULL, queue_id INT)",
    "postgresql": "CREATE TABLE {t} (id serial PRIMARY KEY, visible boolean, "
    "timestamp timestamp, payload text NOT NULL, version smallint NOT NULL, queue_id integer)",
}
# kombu's kombu_queue: the names of the queues kombu_message.queue_id keys.
KOMBU_QUEUES = "CREATE TABLE {t} (id integer PRIMARY KEY, name varchar(200) UNIQUE)"


@pytest.mark.parametrize("label", ("sqlite", "postgresql"))
def test_a_kombu_queue_is_named_by_its_name_or_its_id(label, request, tmp_path):
    """kombu_message.queue_id is kombu_queue's id: --queue takes the queue's name (as kombu
    names it) or the id, and status, metrics, size and inspect show the name."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table, names = engine.qualified("kombu_message"), engine.qualified("kombu_queue")
    engine.run(
        [
            KOMBU_DDL[label].format(t=table),
            KOMBU_QUEUES.format(t=names),
            f"INSERT INTO {names} (id, name) VALUES (1, 'work'), (2, 'idle'), (3, '7')",
        ]
    )
    insert = f"INSERT INTO {table} (visible, payload, version, queue_id) VALUES (:v, :p, 1, :q)"
    rows = [("a", 1), ("b", 1), ("c", 2), ("d", 3), ("e", 3), ("f", 3)]
    engine.run_batch([insert], [{"v": True, "p": p, "q": q} for p, q in rows])
    engine.close()
    where = target.cli_args()
    by_name = _json("size", "kombu_message", "--queue", "work", *where)
    assert by_name["queue"] == "kombu_message[work]" and by_name["depth"] == 2
    by_id = _json("size", "kombu_message", "--queue", "2", *where)
    assert by_id["queue"] == "kombu_message[idle]" and by_id["depth"] == 1
    # A name that looks like an id is the name first: queue "7" is id 3.
    assert _json("size", "kombu_message", "--queue", "7", *where)["depth"] == 3
    unknown = _cli("size", "kombu_message", "--queue", "nope", *where)
    assert unknown.exit_code == 2 and "no queue named 'nope' in kombu_queue" in unknown.stderr
    inspected = _json("inspect", "kombu_message", "--sample", "0", *where)
    depths = {q["queue"]: q["depth"] for q in inspected["named_queues"]["queues"]}
    assert depths == {"work": 2, "idle": 1, "7": 3}
    # status reads the whole server (its exit is the worst of every queue: others' too).
    listed = json.loads(_cli("status", *where, "--format", "json").stdout)["lines"]
    status = [s for s in listed if s["table"] == "kombu_message" and s["queue"]]
    status = [s for s in status if s["schema"] in (target.schema, "main")]
    assert {s["queue"]: s["depth"] for s in status} == {"work": 2, "idle": 1, "7": 3}
    assert {s["name"].rsplit("[", 1)[1] for s in status} == {"work]", "idle]", "7]"}
    scraped = _cli("metrics", *where)
    assert scraped.exit_code == 0, scraped.output
    depth = [x for x in scraped.stdout.splitlines() if x.startswith("qadmin_queue_depth{")]
    depth = [x for x in depth if 'table="kombu_message"' in x]
    depth = [x for x in depth if f'schema="{target.schema or "main"}"' in x]
    assert any('queue="work"' in x and x.endswith(" 2.0") for x in depth), depth
    assert not any('queue="1"' in x for x in depth), depth


@pytest.mark.parametrize("label", ("sqlite", "mariadb"))
def test_convert_of_a_kombu_table_moves_its_visible_rows(label, request, tmp_path):
    """kombu's ``visible`` is a boolean: convert binds the waiting value as one (bound as
    the text 'True', MariaDB read 0 and moved the delivered rows; SQLite matched none)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("kombu_message")
    engine.run([KOMBU_DDL[label].format(t=table)])
    insert = f"INSERT INTO {table} (visible, payload, version) VALUES (:v, :p, 1)"
    rows = [{"v": True, "p": f"wait{i}"} for i in range(3)]
    gone = [{"v": False, "p": "gone1"}, {"v": False, "p": "gone2"}, {"v": None, "p": "odd"}]
    engine.run_batch([insert], [*rows, *gone])
    engine.close()
    # Read as kombu's table: boolean states as true/false, a NULL state as null; no claims.
    size = _json("size", "kombu_message", *target.cli_args())
    states = {(s["state"], s["group"]): s["rows"] for s in size["states"]}
    assert states == {("true", "pending"): 3, ("false", "done"): 2, (None, "other"): 1}
    claims = _cli("claims", "kombu_message", *target.cli_args())
    assert claims.exit_code == 2 and "kombu keeps no claims in its table" in claims.stderr
    args = ["convert", "kombu_message", "--to", "ring", "--capacity", "16"]
    args += ["--payload-column", "payload", *target.cli_args()]
    plan = _json(*args, "--dry-run")
    assert plan["messages"] == 3 and not plan["refused"], plan
    # --library as on the read-only commands: read as a plain table, visible is a row state.
    plain = _cli(*args, "--dry-run", "--library", "none")
    assert plain.exit_code == 2 and "looks like a row state" in plain.stderr, plain.output
    done = _cli(*args, "--yes", "--format", "json")
    assert done.exit_code == 0, done.output
    popped = _cli("pop", "kombu_message", "--count", "10", "--format", "json", *target.cli_args())
    assert popped.exit_code == 0, popped.output
    assert "wait0" in popped.stdout and "wait2" in popped.stdout
    assert "gone1" not in popped.stdout


def test_sqlite_times_kept_as_unix_epoch_numbers(request, tmp_path):
    """A SQLite table keeping times as INTEGER or REAL epoch seconds: ages and instants are
    read from them (no internal error, no silent null)."""
    target = make_target("sqlite", request, tmp_path)
    engine = target.engine()
    table = engine.qualified("epoch")
    engine.run(
        [
            f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, st INTEGER, t INTEGER, ca REAL)",
            f"INSERT INTO {table} VALUES (1, 1, CAST(strftime('%s', 'now') AS INTEGER) - 600, "
            "CAST(strftime('%s', 'now') AS REAL) - 1200.5), "
            f"(2, 0, CAST(strftime('%s', 'now') AS INTEGER) - 300, NULL)",
        ]
    )
    engine.close()
    opts = ["--state-column", "st", "--pending", "0", "--claimed", "1", *target.cli_args()]
    opts += ["--claimed-at-column", "ca", "--time-column", "t"]
    [claim] = _json("claims", "epoch", *opts)
    assert 1100 < claim["claimed_for_s"] < 1400
    assert claim["processing_started_at"].startswith("20")
    size = _json("inspect", "epoch", "--sample", "0", *opts)["size"]
    assert 250 < size["oldest_age_s"] < 400 and size["oldest_enqueued_at"].endswith("Z")


def test_one_off_options_and_refusals_on_a_declared_table(request, tmp_path):
    """--library must name a known library; a state column given on the command line drops
    the declared values of the old one; requeue = false is named; watermark refuses a table
    that is not a qadmin queue in one line, exit 2."""
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, status text NOT NULL, "
            "flag int NOT NULL DEFAULT 0, claimed_at timestamptz)"
        )
        admin.execute(f"INSERT INTO {table} (status, flag) VALUES ('new', 0), ('working', 1)")
    config = tmp_path / "qadmin.toml"
    config.write_text(
        f'[tables.jobs]\ntable = "{target.schema}.jobs"\nstate_column = "status"\n'
        'pending = ["new"]\nclaimed = ["working"]\nclaimed_at_column = "claimed_at"\n'
        'requeue = false\n[tables.broken]\ncolour = "red"\n'
    )
    conn = ["--dsn", PG_ADMIN, "--config", str(config)]
    # A bad entry is named only when used; collect still writes the good names' figures.
    broken = _cli("size", "broken", *conn)
    assert broken.exit_code == 2 and "[tables.broken]: unknown key 'colour'" in broken.stderr
    history = tmp_path / "history"
    collected = _cli("collect", "jobs", "broken", "--to", str(history), *conn)
    assert collected.exit_code == 1 and "broken" in collected.stderr, collected.output
    assert len(list(history.rglob("*.parquet"))) == 1
    unknown = _cli("size", "jobs", "--library", "nosuchlib", *conn)
    assert unknown.exit_code == 2 and "unknown library nosuchlib (known: " in unknown.stderr
    other = _json("size", "jobs", "--state-column", "flag", "--pending", "0", *conn)
    assert (other["depth"], other["claimed"]) == (1, None), "the declared 'working' is dropped"
    refused = _cli("requeue", "jobs", "--stale-after", "5m", "--yes", *conn)
    assert refused.exit_code == 2 and "requeue = false in [tables.jobs]" in refused.stderr
    mark = _cli("watermark", "jobs", *conn)
    assert mark.exit_code == 2, mark.output
    assert "jobs is a table qadmin did not create; watermarks are" in mark.stderr


def test_a_partitioned_table_sums_its_partitions(request, tmp_path):
    """pg-boss's job table is partitioned: the parent has no pages or rows of its own, so
    the size and row estimate are its partitions' (never 0 rows and -8192 bytes)."""
    target = make_target("postgresql", request, tmp_path)
    schema = f'"{target.schema}"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {schema}.job (id bigint, name text, PRIMARY KEY (name, id)) "
            "PARTITION BY LIST (name)"
        )
        for n, part in enumerate(("a", "b")):
            admin.execute(
                f"CREATE TABLE {schema}.job_{part} PARTITION OF {schema}.job "
                f"FOR VALUES IN ('{part}')"
            )
            admin.execute(
                f"INSERT INTO {schema}.job SELECT g, '{part}' "
                f"FROM generate_series(1, {600 + n}) AS g"
            )
        # The inserts' counters are flushed before ANALYZE sets them (else counted twice).
        admin.execute("SELECT pg_stat_force_next_flush()")
        admin.execute("SELECT 1")
        admin.execute(f"ANALYZE {schema}.job")
    size = _json("size", "job", "--order-by", "id", "--dsn", PG_ADMIN, "--schema", target.schema)
    assert size["depth"] == 1201
    assert size["estimated_rows"] == 1201 and size["table_bytes"] > 0, size


def test_state_values_the_column_cannot_hold_are_one_line(request, tmp_path):
    """An enum label that does not exist, a number on a text column (from the config), true
    on a text column: one line, exit 2, before any SQL; a number from the config on a text
    column is read as its text."""
    target = make_target("postgresql", request, tmp_path)
    schema = f'"{target.schema}"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f"CREATE TYPE {schema}.st AS ENUM ('todo', 'doing', 'done')")
        admin.execute(
            f"CREATE TABLE {schema}.ej (id bigint PRIMARY KEY, status {schema}.st, code text)"
        )
        admin.execute(f"INSERT INTO {schema}.ej VALUES (1, 'todo', '1'), (2, 'done', '2')")
    conn = ["--dsn", PG_ADMIN, "--schema", target.schema]
    for command in ("size", "inspect", "claims"):
        bad = _cli(command, "ej", "--state-column", "status", "--pending", "nosuch", *conn)
        assert bad.exit_code == 2, (command, bad.output)
        assert "not one of the enum's labels (todo, doing, done)" in bad.stderr
    config = tmp_path / "qadmin.toml"
    config.write_text(
        f'[tables.codes]\ntable = "{target.schema}.ej"\nstate_column = "code"\npending = [1]\n'
    )
    assert _json("size", "codes", "--config", str(config), *conn)["depth"] == 1
    config.write_text(
        f'[tables.codes]\ntable = "{target.schema}.ej"\nstate_column = "code"\npending = [true]\n'
    )
    bad = _cli("size", "codes", "--config", str(config), *conn)
    assert bad.exit_code == 2 and "the column holds text" in bad.stderr


def test_a_naive_timestamp_is_read_in_the_sessions_time_zone(pg_own_database):
    """A `timestamp without time zone` written in a New York session's local time: the
    instants printed are the true UTC ones (ages were always right)."""
    from datetime import UTC, datetime

    dsn = pg_own_database
    with psycopg.connect(dsn, autocommit=True) as admin:
        name = admin.execute("SELECT current_database()").fetchone()[0]
        admin.execute(f"ALTER DATABASE \"{name}\" SET TimeZone = 'America/New_York'")
    with psycopg.connect(dsn, autocommit=True) as app:
        app.execute("CREATE TABLE naive (id int PRIMARY KEY, st text, t timestamp, ca timestamp)")
        app.execute(
            "INSERT INTO naive VALUES (1, 'new', localtimestamp - interval '10 minutes', NULL), "
            "(2, 'run', localtimestamp, localtimestamp - interval '20 minutes')"
        )
    opts = ["--state-column", "st", "--pending", "new", "--claimed", "run", "--dsn", dsn]
    opts += ["--time-column", "t", "--claimed-at-column", "ca"]
    now = datetime.now(UTC)

    def ago(text: str) -> float:
        return (now - datetime.fromisoformat(text.replace("Z", "+00:00"))).total_seconds()

    size = _json("size", "naive", *opts)
    assert 500 < ago(size["oldest_enqueued_at"]) < 700, size
    [claim] = _json("claims", "naive", "--stale-after", "60", *opts)
    assert 1100 < ago(claim["processing_started_at"]) < 1300, claim


def test_a_quoted_schema_the_catalog_has(request, tmp_path):
    """--schema '"Mixed-Sch"' reads a schema no bare identifier spells, as a quoted NAME does."""
    target = make_target("postgresql", request, tmp_path)
    mixed = f"{target.schema}-Mixed"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{mixed}"')
        try:
            admin.execute(f'CREATE TABLE "{mixed}".jobs (id int PRIMARY KEY)')
            admin.execute(f'INSERT INTO "{mixed}".jobs VALUES (1), (2)')
            size = _json("size", "jobs", "--dsn", PG_ADMIN, "--schema", f'"{mixed}"')
            assert size["depth"] == 2
            # status (and check --all, metrics) take it too: a tester's said it did not exist
            queue = ["--dsn", PG_ADMIN, "--schema", f'"{mixed}"']
            assert invoke("create", "oq", "--kind", "fifo", *queue).exit_code == 0
            listed = invoke("status", "--format", "json", *queue)
            assert listed.exit_code == 0, listed.output
            assert [r["name"] for r in json.loads(listed.stdout)["lines"]] == [f"{mixed}.oq"]
        finally:
            admin.execute(f'DROP SCHEMA "{mixed}" CASCADE')


def test_mariadb_counts_no_majority_state(request, tmp_path):
    """MariaDB: a state the index statistics put at 10,000 rows or more is counted only up
    to 10,001 index entries (Handler_read_next), then shown as their estimate with what was
    counted as its floor; a full count would read ~100,000 (or every entry)."""
    from qadmin.profiles.query import SMALL_STATE, Reader

    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified("jobs")
    engine.run(
        [
            f"CREATE TABLE {table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, status VARCHAR(8), "
            "created_at DATETIME(6), INDEX (status, created_at))",
            f"INSERT INTO {table} (status, created_at) SELECT 'done', NOW() FROM seq_1_to_200000",
            f"INSERT INTO {table} (status, created_at) VALUES ('new', NOW()), ('new', NOW())",
            f"ANALYZE TABLE {table}",
        ]
    )
    resolved = resolve(
        engine, "jobs", {}, {"state_column": "status", "pending": ["new"], "done": ["done"]}
    )
    reader = Reader(engine, resolved.profile, resolved.shape)

    def reads() -> int:
        rows = engine.query("SHOW SESSION STATUS LIKE 'Handler_read_next'")
        return int(rows[0]["value"])

    before = reads()
    done, waiting = reader.count_state(("done",)), reader.count_state(("new",))
    assert reads() - before < SMALL_STATE + 1000
    assert (waiting.rows, waiting.exact) == (2, True)
    assert done.exact is False and done.rows is not None and done.rows > 10_000
    assert done.seen == SMALL_STATE + 1  # the truth is at least what was counted
    engine.close()


DJANGO_TASKS_DDL = {
    "sqlite": "CREATE TABLE {t} (id char(32) PRIMARY KEY, status varchar(10) NOT NULL, "
    "enqueued_at datetime NOT NULL, started_at datetime, finished_at datetime, "
    "args_kwargs text NOT NULL DEFAULT '{{}}', priority integer NOT NULL DEFAULT 0, "
    "task_path text NOT NULL DEFAULT 'app.t', worker_ids text NOT NULL DEFAULT '[]', "
    "queue_name varchar(32) NOT NULL, backend_name varchar(32) NOT NULL DEFAULT 'default', "
    "run_after datetime, return_value text, exception_class_path text NOT NULL DEFAULT '', "
    "traceback text NOT NULL DEFAULT '')",
    "postgresql": "CREATE TABLE {t} (id uuid PRIMARY KEY, status varchar(10) NOT NULL, "
    "enqueued_at timestamptz NOT NULL, started_at timestamptz, finished_at timestamptz, "
    "args_kwargs jsonb NOT NULL DEFAULT '{{}}', priority integer NOT NULL DEFAULT 0, "
    "task_path text NOT NULL DEFAULT 'app.t', worker_ids jsonb NOT NULL DEFAULT '[]', "
    "queue_name varchar(32) NOT NULL, backend_name varchar(32) NOT NULL DEFAULT 'default', "
    "run_after timestamptz, return_value jsonb, exception_class_path text NOT NULL DEFAULT '', "
    "traceback text NOT NULL DEFAULT '')",
}
# Minutes ago as each engine's SQL, and django-tasks' "run now" sentinel.
AGO = {
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', 'now', '-{m} minutes')",
    "postgresql": "now() - interval '{m} minutes'",
}
SENTINEL = {"sqlite": "'9999-01-01 00:00:00'", "postgresql": "'9999-01-01 00:00:00+00'"}


@pytest.mark.parametrize("label", ("sqlite", "postgresql"))
def test_a_django_tasks_task_waits_from_its_run_after(label, request, tmp_path):
    """django-tasks' oldest age ran from enqueued_at: a task enqueued 3 h ago to run 30 min
    ago has waited 30 min, not 3 h. It runs from run_after when one was set and is later than
    the enqueue; from enqueued_at for the sentinel (9999-01-01, "run now"), a NULL (older
    versions) or a run_after before the enqueue."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("django_tasks_database_dbtaskresult")
    ago = AGO[label]
    engine.run([DJANGO_TASKS_DDL[label].format(t=table)])
    tasks = [  # queue, enqueued (minutes ago), run_after (minutes ago, or the sentinel/NULL)
        ("mixed", 180, 30),  # due 30 min ago (was read as waiting 180 min)
        ("mixed", 60, None),  # the sentinel: due since its enqueue, 60 min
        ("scheduled", 120, 20),  # due 20 min ago (was 120)
        ("early", 40, 120),  # a run_after before the enqueue: due since the enqueue, 40 min
        ("unset", 50, "null"),  # no run_after at all: 50 min
    ]
    for n, (queue, enqueued, after) in enumerate(tasks):
        run_after = (
            SENTINEL[label] if after is None else "NULL" if after == "null" else ago.format(m=after)
        )
        engine.run(
            [
                f"INSERT INTO {table} (id, status, enqueued_at, queue_name, run_after) VALUES "
                f"('{n:032x}', 'READY', {ago.format(m=enqueued)}, '{queue}', {run_after})"
            ]
        )
    engine.close()
    expected = {"mixed": 60, "scheduled": 20, "early": 40, "unset": 50}
    for queue, minutes in expected.items():
        size = _json(
            "size", "django_tasks_database_dbtaskresult", "--queue", queue, *target.cli_args()
        )
        assert size["depth"] == (2 if queue == "mixed" else 1), size
        assert abs(size["oldest_age_s"] - 60 * minutes) < 120, (queue, size)


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_tables_failed_jobs_are_judged_by_the_dead_thresholds(label, request, tmp_path):
    """status showed a table's 2 failed jobs in its dead column and said OK under --crit-dead
    1, and check said "dead does not apply to a hand-built table": the failed jobs are now
    the dead figure check judges, as status and metrics show it."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("fj")
    engine.run([f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, status VARCHAR(10) NOT NULL)"])
    engine.run([f"INSERT INTO {table} VALUES (1, 'new'), (2, 'error'), (3, 'error')"])
    given = ["--state-column", "status", "--pending", "new", "--failed", "error"]
    result = invoke_on(target, "check", "fj", *given, "--crit-dead", "1", "--sample", "0")
    assert result.exit_code == 2, result.stdout
    assert result.stdout.startswith("QADMIN CRITICAL - fj: dead 2 >= 1"), result.stdout
    calm = invoke_on(target, "check", "fj", *given, "--crit-dead", "5", "--sample", "0")
    assert calm.stdout.startswith("QADMIN WARNING - fj: dead 2 >= 1"), calm.stdout  # warn: 1
    engine.close()


def test_requeue_past_the_listing_says_to_run_again(tmp_path):
    """A tester's 5,667 stale claims in a declared table: requeue --yes printed "1000
    requeued, 0 dead" and exit 0 with 4,667 left; the run says its listing stopped there and
    that running it again releases the rest."""
    path = tmp_path / "jobs.db"
    app = sqlite3.connect(path)
    app.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT NOT NULL, claimed_at TEXT)")
    app.executemany(
        "INSERT INTO jobs (status, claimed_at) VALUES ('working', '2026-01-01 00:00:00')",
        [()] * 1_200,
    )
    app.commit()
    app.close()
    config = tmp_path / "qadmin.toml"
    config.write_text(
        '[tables.jobs]\nstate_column = "status"\npending = ["new"]\nclaimed = ["working"]\n'
        'claimed_at_column = "claimed_at"\n'
    )
    conn = ["--dsn", f"sqlite:///{path}", "--config", str(config)]
    first = _cli("requeue", "jobs", "--stale-after", "60", "--yes", *conn)
    assert first.exit_code == 0, first.output
    assert "run requeue again to release them" in first.stderr, first.stderr
    second = _cli("requeue", "jobs", "--stale-after", "60", "--yes", *conn)
    assert second.exit_code == 0 and "run requeue again" not in second.stderr, second.stderr
    assert _json("size", "jobs", *conn)["depth"] == 1_200
