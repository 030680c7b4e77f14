"""Diagnostics against conditions created for real: held snapshots, lock waits, killed
consumers, churn, missing privileges."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from qadmin.diagnostics.entries import claims, fragmentation, rates
from qadmin.engines import Timeouts, open_engine
from qadmin.ops import messages, queues
from tests.conftest import MY_HOST, PG_ADMIN, Target, make_target
from tests.engines import diag
from tests.engines.holding import finish, hold_pop
from tests.helpers import invoke, invoke_on


def _target(label, request, tmp_path):
    return make_target(label, request, tmp_path)


def _make(engine, name, kind, strict=False, capacity=None):
    return queues.create(engine, queues.make_spec(name, kind, capacity, strict))


def _session_id(engine) -> str:
    sql = (
        "SELECT pg_backend_pid() AS s"
        if engine.name == "postgresql"
        else "SELECT CONNECTION_ID() AS s"
    )
    return str(engine.query(sql)[0]["s"])


def _until(probe, timeout_s: float = 15.0):
    """Poll until probe() is truthy: statistics and lock views lag the events they show."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = probe()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def test_postgres_dead_rows_held_by_a_snapshot_name_the_holder(request, tmp_path, monkeypatch):
    import psycopg

    target = _target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "ghost_q", "fifo")
    messages.push(engine, spec, [b"x" * 100] * 3000)
    holder = psycopg.connect(PG_ADMIN, autocommit=False)
    try:
        holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        holder.execute(f'SELECT count(*) FROM "{target.schema}".ghost_q').fetchone()
        holder_pid = str(holder.info.backend_pid)
        popper = target.engine()
        while True:
            try:
                messages.pop(popper, spec, 1000)
            except Exception:
                break
        popper.close()  # a backend flushes its statistics when it exits
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'VACUUM "{target.schema}".ghost_q')
        report = _until(
            lambda: (
                (r := diag.inspect(engine, spec, snapshot_age=(0, None)))
                and (r["ghosts"]["table"].get("dead_rows") or 0) >= 2000
                and r
            )
        )
        assert report, "dead rows never showed up"
        holders = {h["holder"]: h for h in report["ghosts"]["holders"]}
        assert holder_pid in holders
        finding = next(f for f in report["findings"] if f["code"] == "dead_rows")
        # The oldest snapshot is named: ours, or another session's older one on a shared server.
        named = next(
            h
            for h in holders.values()
            if f"{h['holder_kind']} {h['holder']} holds a snapshot" in finding["message"]
        )
        assert float(named["xact_age_s"]) >= float(holders[holder_pid]["xact_age_s"])
        assert f"pg_terminate_backend({named['holder']})" in finding["fix"]
        # No command adds a watermark to a queue created without one: none is suggested.
        assert "watermark" not in finding["fix"]
    finally:
        holder.rollback()
        holder.close()
    engine.close()


def test_postgres_another_databases_transaction_is_named_only_through_a_snapshot_here(
    pg_own_database,
):
    """PostgreSQL keeps one horizon per database: a transaction open in another database holds
    back vacuum here only through a snapshot taken here while it ran. With none here and no
    traffic it is not named (the DBA would end an innocent session); with one, it is, as that
    snapshot's root."""
    import psycopg

    engine = Target("postgresql", pg_own_database, "public").engine()
    spec = _make(engine, "hq", "fifo")

    def holders() -> set[str]:
        return {h["holder"] for h in diag.inspect(engine, spec)["ghosts"]["holders"]}

    with psycopg.connect(PG_ADMIN) as other:  # database test: not this one
        other.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        other_pid = str(other.execute("SELECT pg_backend_pid()").fetchone()[0])
        other.execute("SELECT txid_current()")  # a transaction id, kept open
        time.sleep(1.1)  # this database's last statements (the queue's creation) a second old
        assert other_pid not in holders()
        with psycopg.connect(pg_own_database) as here:
            here.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            here_pid = str(here.execute("SELECT pg_backend_pid()").fetchone()[0])
            assert {other_pid, here_pid} <= holders()  # the snapshot and its root
            here.rollback()
        time.sleep(1.1)
        assert other_pid not in holders()
        other.rollback()
    engine.close()


def test_mariadb_consistent_snapshot_is_named_as_the_oldest_transaction(request, tmp_path):
    target = _target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "ghost_q", "fifo")
    messages.push(engine, spec, [b"x"] * 500)
    holder = target.engine()
    holder_id = _session_id(holder)
    try:
        cur = holder.conn.cursor()
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute(f"SELECT count(*) FROM `{target.schema}`.ghost_q")
        cur.fetchall()
        messages.pop(engine, spec, 500)
        report = diag.inspect(engine, spec)
        holders = report["ghosts"]["holders"]
        # The oldest ten transactions of the server are listed, oldest first: ours unless ten
        # sessions of a shared server have held one open longer.
        assert holder_id in {h["holder"] for h in holders} or len(holders) == 10
        ages = [float(h["xact_age_s"]) for h in holders]
        assert ages == sorted(ages, reverse=True)
        assert report["ghosts"]["table"]["history_list_length"] >= 0
        assert report["ghosts"]["table"]["history_list_scope"] == "server-wide"
    finally:
        holder.conn.rollback()
        holder.close()
    engine.close()


def test_sqlite_churn_leaves_free_pages(request, tmp_path):
    target = _target("sqlite", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "churn_q", "fifo")
    messages.push(engine, spec, [b"y" * 2000] * 3000)
    messages.pop(engine, spec, 3000)
    report = diag.inspect(engine, spec)
    assert report["ghosts"]["table"]["free_pages"] > 1000
    assert report["size"]["depth"] == 0


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_blocked_dequeue_shows_waiter_blocker_and_wait_time(label, request, tmp_path):
    target = _target(label, request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "lock_q", "fifo", strict=True)
    messages.push(engine, spec, [b"a", b"b"])
    holder, _, holder_id = hold_pop(target, spec)
    waiter = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=20_000))
    waiter_id = _session_id(waiter)
    got: list = []
    thread = threading.Thread(target=lambda: got.extend(messages.pop(waiter, spec)))
    thread.start()
    waits = _until(lambda: diag.lock_waits(engine, spec))
    assert waits, "the blocked pop never showed up as a lock wait"
    assert waits[0]["waiter"] == waiter_id and waits[0]["blocker"] == holder_id
    time.sleep(1.1)
    assert float(diag.lock_waits(engine, spec)[0]["wait_s"]) >= 1.0
    report = diag.inspect(engine, spec, lock_wait=(0, 30))  # any wait: the default warns at 5 s
    assert any(f["code"] == "lock_wait" for f in report["findings"])
    finish(holder, commit=True)
    thread.join(timeout=30)
    assert [m.payload for m in got] == [b"b"]
    for eng in (holder, waiter, engine):
        eng.close()


CONSUMER = """
import sys, time
from qadmin.engines import open_engine
from qadmin import catalog
from qadmin.ops import messages
engine = open_engine(sys.argv[1], None if sys.argv[2] == '-' else sys.argv[2])
messages.pop(engine, catalog.get(engine, 'claim_q'), worker='doomed')
print('claimed', flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_killed_consumer_claim_is_stale_and_requeue_releases_it(label, request, tmp_path):
    target = _target(label, request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "claim_q", "claim")
    messages.push(engine, spec, [b"job"])
    proc = subprocess.Popen(
        [sys.executable, "-c", CONSUMER, target.dsn, target.engine_schema or "-"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "claimed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with pytest.raises(Exception, match="empty"):
        messages.pop(engine, spec)
    part = _until(
        lambda: (
            (p := claims.measure(engine, spec, 0).to_json_dict())["stale"]
            and (label == "sqlite" or p["stale"][0]["session_alive"] is False)
            and p
        )
    )
    stale = part["stale"]
    assert [c["claimed_by"] for c in stale] == ["doomed"]
    if label != "sqlite":
        assert stale[0]["session_alive"] is False
    assert any(f["code"] == "stale_claims" for f in diag.inspect(engine, spec, 0)["findings"])
    assert claims.requeue(engine, spec, 3600).requeued == [], "fresh claims are not released"
    assert claims.requeue(engine, spec, 0).requeued == [stale[0]["id"]]
    second = messages.pop(engine, spec, worker="second")
    assert second[0].payload == b"job" and second[0].attempts == 2
    engine.close()


def test_check_returns_each_nagios_code(tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    invoke("create", "q", "--kind", "fifo", *db)
    invoke("push", "q", "a", "b", "c", *db)
    codes = {}
    for label, args in {
        "ok": ["--warn-depth", "10", "--crit-depth", "100"],
        "warning": ["--warn-depth", "2", "--crit-depth", "100"],
        "critical": ["--warn-depth", "1", "--crit-depth", "3"],
    }.items():
        result = invoke("check", "q", *args, *db)
        codes[label] = result.exit_code
        assert result.stdout.startswith(f"QADMIN {label.upper()} - q")
        assert "| depth=3;" in result.stdout
    assert codes == {"ok": 0, "warning": 1, "critical": 2}
    missing = invoke("check", "nosuch", "--format", "json", *db)
    assert missing.exit_code == 3
    assert '"status": "UNKNOWN"' in missing.stdout


@pytest.mark.parametrize(
    "kind,note",
    [
        ("fifo", "needs SELECT or USAGE on the queue's id sequence"),
        ("ring", "needs SELECT or USAGE on the ring's sequences"),
    ],
)
def test_postgres_role_without_monitoring_privileges_gets_notes_not_errors(
    kind, note, request, tmp_path
):
    import psycopg

    target = _target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "priv_q", kind, capacity=8 if kind == "ring" else None)
    messages.push(engine, spec, [b"a"])
    role = "qt_role_" + uuid.uuid4().hex[:8]
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'GRANT USAGE ON SCHEMA "{target.schema}" TO "{role}"')
        admin.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{target.schema}" TO "{role}"')
    holder = psycopg.connect(PG_ADMIN, autocommit=False)
    holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    holder.execute("SELECT 1").fetchone()
    try:
        dsn = PG_ADMIN.replace("postgres@", f"{role}@")
        result = invoke(
            "inspect", "priv_q", "--dsn", dsn, "--schema", target.schema, "--format", "json"
        )
        assert result.exit_code == 0, result.stderr
        assert "partial view: pg_read_all_stats" in result.stdout
        assert note in result.stdout
        check = invoke("check", "priv_q", "--dsn", dsn, "--schema", target.schema)
        if kind == "ring":  # a fill it may not read may be full: UNKNOWN, never a silent OK
            assert check.exit_code == 3 and "depth_unread" in check.stdout, check.stdout
            fixes = json.loads(result.stdout)["findings"]
            fix = next(f["fix"] for f in fixes if f["code"] == "depth_unread")
            # the role qadmin logged in as, filled in: the DBA runs it as printed, and then
            # the depth is read
            assert fix == (f'GRANT SELECT ON ALL SEQUENCES IN SCHEMA "{target.schema}" TO "{role}"')
            with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
                admin.execute(fix)
            again = invoke("check", "priv_q", "--dsn", dsn, "--schema", target.schema)
            assert "depth_unread" not in again.stdout, again.stdout
        else:
            assert check.exit_code in {0, 1, 2}, check.stdout
    finally:
        holder.rollback()
        holder.close()
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP OWNED BY "{role}"')
            admin.execute(f'DROP ROLE "{role}"')
        engine.close()


def test_mariadb_user_without_process_gets_a_note_naming_it(request, tmp_path):
    import pymysql

    target = _target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "priv_q", "fifo")
    user = "qt_user_" + uuid.uuid4().hex[:8]
    admin = pymysql.connect(host=MY_HOST, user="root", password="", autocommit=True)
    with admin.cursor() as cur:
        cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw-{user}'")
        cur.execute(f"GRANT SELECT ON `{target.schema}`.* TO '{user}'@'%'")
    try:
        dsn = f"mysql://{user}:pw-{user}@{MY_HOST}:3306/{target.schema}"
        result = invoke("inspect", spec.name, "--dsn", dsn, "--format", "json")
        assert result.exit_code == 0, result.stderr
        assert "horizon unavailable: needs PROCESS" in result.stdout
        assert "locks unavailable: needs PROCESS" in result.stdout
        assert f"pw-{user}" not in result.stdout + result.stderr
    finally:
        with admin.cursor() as cur:
            cur.execute(f"DROP USER '{user}'@'%'")
        admin.close()
        engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb", "mysql8"])
def test_rates_count_what_was_pushed_and_popped_between_samples(label, request, tmp_path):
    target = _target(label, request, tmp_path)
    engine = target.engine()
    for kind in ("fifo", "ring"):
        spec = queues.create(
            engine, queues.make_spec(f"rate_{kind}", kind, 1000 if kind == "ring" else None, False)
        )
        messages.push(engine, spec, [b"warm"] * 5)
        worker = target.engine()
        before = rates.sample(engine, spec)
        messages.push(worker, spec, [b"m"] * 50)
        messages.pop(worker, spec, 20)
        worker.close()  # a PostgreSQL backend flushes its counters when it exits
        counts_deletes = label == "postgresql" and kind != "ring"

        def flushed(spec=spec, before=before, counts_deletes=counts_deletes):
            now = rates.sample(engine, spec)
            done = not counts_deletes or (now.deleted or 0) - (before.deleted or 0) >= 20
            return now if done else None

        got = rates.between(before, _until(flushed), spec)
        assert (got.enqueued, got.dequeued) == (50, 20), got
    engine.close()


def test_postgres_index_bloat_after_churn_is_found_and_measured(pg_own_database, monkeypatch):
    """In a database of its own: VACUUM must really remove the churned rows, which a snapshot
    open in the same database (any other test's) would prevent."""
    import psycopg

    with psycopg.connect(pg_own_database, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    engine = open_engine(pg_own_database)
    spec = _make(engine, "churn_q", "fifo")
    for _ in range(6):
        messages.push(engine, spec, [b"z" * 50] * 10_000)
    for _ in range(59):
        messages.pop(engine, spec, 1000)
    with psycopg.connect(pg_own_database, autocommit=True) as admin:
        admin.execute("VACUUM ANALYZE churn_q")
    report = diag.inspect(engine, spec, deep=True)
    pkey = next(i for i in report["fragmentation"]["indexes"] if i["index_name"].endswith("pkey"))
    assert float(pkey["bloat_pct"]) > 50, pkey
    assert any(
        f["code"] == "index_bloat" and "REINDEX INDEX CONCURRENTLY" in f["fix"]
        for f in report["findings"]
    )
    measured = report["fragmentation"]["indexes_measured"]
    assert measured and float(measured[0]["free_pages_pct"]) > 50
    assert report["fragmentation"]["table_measured"][0]["dead_tuples_exact"] >= 0
    refused = fragmentation.measure(engine, spec.name, deep=True, max_pages=1).to_json_dict()
    assert any("--deep refused" in n for n in refused["notes"])
    assert "indexes_measured" not in refused
    engine.close()


def test_sqlite_deep_fragmentation_measures_unused_space(request, tmp_path):
    target = _target("sqlite", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "churn_q", "fifo")
    messages.push(engine, spec, [b"w" * 500] * 4000)

    def unused() -> float:
        part = fragmentation.measure(engine, spec.name, deep=True).to_json_dict()
        tree = next(r for r in part["indexes_measured"] if r["index_name"] == "churn_q")
        return float(tree["unused_pct"])

    fresh = unused()
    engine.run([f"DELETE FROM {engine.qualified('churn_q')} WHERE id % 4 <> 0"])
    assert unused() > fresh + 10
    engine.close()


def test_mariadb_index_statistics_are_reported(request, tmp_path):
    target = _target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "stats_q", "pending")
    messages.push(engine, spec, [b"p"] * 2000)
    engine.run([f"ANALYZE TABLE {engine.qualified('stats_q')}"])
    indexes = {r.index_name: r for r in fragmentation.measure(engine, spec.name).indexes}
    assert set(indexes) == {"PRIMARY", "stats_q_pop_idx"}
    assert all(int(r.pages or 0) >= 1 for r in indexes.values())
    engine.close()


HANDMADE = {
    "sqlite": "CREATE TABLE {t} (job_id INTEGER PRIMARY KEY, created TEXT NOT NULL, body TEXT)",
    "postgresql": "CREATE TABLE {t} (job_id bigserial PRIMARY KEY, created timestamptz NOT NULL, "
    "body text)",
    "mariadb": "CREATE TABLE {t} (job_id BIGINT AUTO_INCREMENT PRIMARY KEY, "
    "created DATETIME(6) NOT NULL, body TEXT)",
}


@pytest.mark.parametrize("label", sorted(HANDMADE))
def test_inspect_a_hand_built_queue_table(label, request, tmp_path):
    import json

    target = _target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("handmade")
    engine.run([HANDMADE[label].format(t=table)])
    now = datetime.now(UTC)
    insert = f"INSERT INTO {table} (created, body) VALUES (:created, :body)"
    engine.run([insert], {"created": engine.adapt_time(now - timedelta(minutes=5)), "body": "a"})
    engine.run([insert], {"created": engine.adapt_time(now), "body": "b"})
    args = [
        "inspect",
        "handmade",
        "--time-column",
        "created",
        "--format",
        "json",
        *target.cli_args(),
    ]
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["order_by"] == "job_id" and report["size"]["depth"] == 2
    assert 280 < report["size"]["oldest_age_s"] < 400
    assert any("hand-built" in n["note"] for n in report["not_covered"])
    bad = invoke_on(target, "inspect", "handmade", "--table", "--order-by", "x;drop")
    assert bad.exit_code == 2
    missing = invoke_on(target, "inspect", "nosuch", "--table")
    assert missing.exit_code == 5
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_inspect_on_a_terminal_reads_like_a_status_tool(label, request, tmp_path, monkeypatch):
    """Status line and findings first; a healthy queue's report fits one 80x24 screen."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = _make(engine, "status_q", "fifo")
    messages.push(engine, spec, [b"a", b"b"])
    engine.close()
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    args = ["inspect", "status_q", "--format", "table", "--sample", "0", *target.cli_args()]
    healthy = invoke(*args)
    assert healthy.exit_code == 0, healthy.output
    lines = healthy.output.rstrip("\n").splitlines()
    assert lines[0].startswith("qadmin inspect status_q: fifo queue")
    assert lines[1].startswith(("OK: ", "WARNING: ", "CRITICAL: ")) and "depth 2" in lines[1]
    assert max(len(line.rstrip()) for line in lines) <= 80, healthy.output
    # A shared server may raise server-wide findings (InnoDB's history list, another session's
    # old snapshot): they come first and in full; the queue's own report still fits 24 lines.
    found = json.loads(invoke(*args[:2], "--format", "json", *args[4:]).stdout)
    if found["findings"]:
        assert lines[3].strip().startswith(("findings", "┏", "severity")), healthy.output
    else:
        assert len(lines) <= 24, healthy.output
    assert "None" not in healthy.output
    deep = invoke(*args, "--warn-depth", "1", "--crit-depth", "5")
    assert deep.output.splitlines()[1].startswith("WARNING: depth 2 >= 1"), deep.output


def test_postgres_role_that_may_not_read_the_catalog_is_told_the_grant(request, tmp_path):
    """The server says only "permission denied for table qadmin_queues": the line adds the
    privilege and the table's full name, exit 7."""
    import psycopg

    target = _target("postgresql", request, tmp_path)
    engine = target.engine()
    _make(engine, "cat_q", "fifo")
    role = "qt_role_" + uuid.uuid4().hex[:8]
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'GRANT USAGE ON SCHEMA "{target.schema}" TO "{role}"')
    try:
        dsn = PG_ADMIN.replace("postgres@", f"{role}@")
        for argv in (["inspect", "cat_q"], ["list"]):
            result = invoke(*argv, "--dsn", dsn, "--schema", target.schema)
            assert result.exit_code == 7, result.stderr
            assert result.stderr.count("\n") == 1
            wanted = f'needs SELECT on "{target.schema}"."qadmin_queues"'
            assert wanted in result.stderr, result.stderr
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP OWNED BY "{role}"')
            admin.execute(f'DROP ROLE "{role}"')
        engine.close()
