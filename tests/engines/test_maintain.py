"""maintain on a bloated queue, for real: --dry-run proposes and changes nothing; --yes runs
while a producer and a consumer keep going (every id popped exactly once, neither held up for
long); a leftover invalid index is dropped concurrently; a lock held elsewhere makes the DDL
step skip after the short lock wait instead of hanging."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from typing import Any

import psycopg
import pymysql
import pytest

from qadmin import catalog
from qadmin.errors import EXIT_ERROR, EXIT_INCOMPLETE, EXIT_LOCK_TIMEOUT, EXIT_USAGE, QueueEmpty
from qadmin.kinds import QueueSpec
from qadmin.ops import messages, queues
from tests.conftest import MY_HOST, PG_ADMIN, Target, make_target
from tests.helpers import invoke, invoke_on, run_qadmin

# The longest a single push or pop may take while maintain runs: the DDL lock wait (1 s, the
# default) plus a margin for a shared 2-core machine.
SLOW_CALL_S = 3.0


class Traffic:
    """A producer and a consumer, each on its own connection, pushing and popping small
    batches until stopped; every id pushed and popped is kept, with the slowest call."""

    def __init__(self, target: Target, spec: QueueSpec) -> None:
        self.target, self.spec = target, spec
        self.pushed: list[int] = []
        self.popped: list[int] = []
        self.slowest = 0.0
        self.pids: list[int] = []  # PostgreSQL: the backends of the producer and consumer
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._loop, args=(w,)) for w in ("push", "pop")]

    def __enter__(self) -> Traffic:
        for thread in self._threads:
            thread.start()
        time.sleep(0.3)  # both are under way before maintain starts
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _loop(self, what: str) -> None:
        engine = self.target.engine()
        if self.target.label == "postgresql":
            self.pids.append(int(engine.query("SELECT pg_backend_pid() AS pid")[0]["pid"]))
        try:
            while not self._stop.is_set():
                start = time.monotonic()
                if what == "push":
                    rows = messages.push(engine, self.spec, [b"t" * 100] * 10)
                    self.pushed.extend(int(r.id) for r in rows)
                else:
                    rows = _pop(engine, self.spec, 10)
                    self.popped.extend(int(r.id) for r in rows)
                self.slowest = max(self.slowest, time.monotonic() - start)
                time.sleep(0.005)
        except BaseException as exc:  # reported by check()
            self.errors.append(exc)
        finally:
            engine.close()

    def check(self, engine: Any) -> None:
        """Nothing lost, nothing twice, nobody held up for long."""
        assert not self.errors, self.errors
        while rest := _pop(engine, self.spec, 1000):
            self.popped.extend(int(r.id) for r in rest)
        assert len(self.pushed) > 20
        assert sorted(self.popped) == sorted(self.pushed)
        assert self.slowest < SLOW_CALL_S, self.slowest


def _pop(engine: Any, spec: QueueSpec, count: int) -> list[messages.Message]:
    try:
        return messages.pop(engine, spec, count)
    except QueueEmpty:
        return []


def _churn(engine: Any, spec: QueueSpec, rows: int, payload: bytes) -> None:
    for _ in range(0, rows, 1000):
        messages.push(engine, spec, [payload] * 1000)
    while _pop(engine, spec, 1000):
        pass


def _maintain(target: Target, name: str, *args: str) -> Any:
    return invoke_on(target, "maintain", name, *args)


def _actions(result: Any) -> dict[str, str]:
    return {a["action"]: a["status"] for a in json.loads(result.stdout)["actions"]}


def _until(check: Any, timeout_s: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (got := check()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return got


def _true_root(own_dsn: str) -> int:
    """The session that holds back the horizon of the database ``own_dsn`` at its root, read
    straight from pg_stat_activity: the oldest xid any session of that database holds back
    (its snapshot's xmin, or its own xid), and then the session, in any database, whose own
    transaction that xid is; the holding session itself when that transaction has ended."""
    with psycopg.connect(own_dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, backend_xmin::text, backend_xid::text, "
            "coalesce(age(backend_xmin), 0), coalesce(age(backend_xid), 0), "
            "datname = current_database() FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL "
            "OR backend_xid IS NOT NULL)"
        ).fetchall()
    own = [r for r in rows if r[5]]
    assert own, "no session of the database holds a snapshot"
    pid, xmin, xid, xmin_age, xid_age, _ = max(own, key=lambda r: max(r[3], r[4]))
    held = xmin if xmin_age >= xid_age else xid
    return next((r[0] for r in rows if r[2] == held), pid)


def _roots() -> set[int]:
    """Sessions holding a transaction id (any database): each can pin a horizon at its root."""
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE backend_xid IS NOT NULL")
        return {int(r[0]) for r in rows}


def test_postgres_vacuum_names_the_snapshot_that_keeps_its_dead_rows(pg_own_database):
    """In a database of its own (no other session's snapshot counts for its tables): the bloat
    is made while a snapshot is held. While it stays open the dry run names it, and the VACUUM
    that runs anyway says it kept the rows and who holds them (exit 10); once it ends, the
    next maintain removes them, under traffic, each action's lock on stderr before it runs."""
    target = Target("postgresql", pg_own_database, "public")
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("mq", "fifo", None, False))
    messages.push(engine, spec, [b"same", b"same"])
    with psycopg.connect(pg_own_database, autocommit=True) as admin:
        admin.execute("ALTER TABLE mq SET (autovacuum_enabled = false)")  # no race with it
        with pytest.raises(psycopg.errors.UniqueViolation):
            admin.execute("CREATE UNIQUE INDEX CONCURRENTLY mq_payload_ccnew ON mq (payload)")
    holder = psycopg.connect(pg_own_database)
    holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    held_at = time.monotonic()
    pid = holder.execute("SELECT pg_backend_pid()").fetchone()[0]  # a snapshot, no table lock
    _churn(engine, spec, 12_000, b"p" * 100)
    engine.close()  # a backend flushes its counters as it exits
    time.sleep(max(0.0, 1.2 - (time.monotonic() - held_at)))  # named from 1 s old

    def dead_rows() -> int:
        with psycopg.connect(pg_own_database) as conn:
            row = conn.execute("SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'mq'")
            return int(row.fetchone()[0])

    assert _until(lambda: dead_rows() >= 12_000)
    planned = json.loads(_maintain(target, "mq", "--dry-run", "--format", "json").stdout)
    assert {a["action"]: a["status"] for a in planned["actions"]} == {
        "drop_invalid": "proposed",
        "autovacuum": "proposed",
        "vacuum": "proposed",
    }
    vacuum = next(a for a in planned["actions"] if a["action"] == "vacuum")
    # The horizon's root comes first: the snapshot's xmin is the oldest transaction running
    # anywhere on the server (conftest's unrelated one in another database, or another
    # session's), then this snapshot, pinned to it and open for over a second.
    root = _true_root(pg_own_database)
    assert f"; the horizon is held by pid {root} (" in vacuum["why"]
    assert "VACUUM keeps every row that died after that began" in vacuum["why"]
    assert f"pid {pid} (postgres in database " in vacuum["why"]
    sql = _maintain(target, "mq", "--dry-run", "--format", "plain").stdout
    assert 'DROP INDEX CONCURRENTLY IF EXISTS "public"."mq_payload_ccnew";' in sql
    assert 'VACUUM (ANALYZE, TRUNCATE false) "public"."mq";' in sql
    assert "lock: SHARE UPDATE EXCLUSIVE" in sql
    told = _maintain(target, "mq", "--dry-run", "--allow-blocking", "--format", "plain").stdout
    assert 'VACUUM (ANALYZE) "public"."mq";' in told  # the truncation kept, and said so:
    assert "then ACCESS EXCLUSIVE to cut empty pages off the end of the file" in told
    assert _maintain(target, "mq").exit_code == EXIT_USAGE  # no --yes off a terminal
    assert dead_rows() >= 12_000  # the dry run and the refusal changed nothing

    ran = _maintain(target, "mq", "--yes", "--format", "json")
    assert ran.exit_code == EXIT_INCOMPLETE, ran.output
    statuses = _actions(ran)
    assert statuses["drop_invalid"] == statuses["autovacuum"] == "done"
    root = _true_root(pg_own_database)
    assert re.fullmatch(
        rf"done, [0-9,]+ dead rows kept: held by pid {root} \(.*",
        statuses["vacuum"],
    )
    assert f"pid {pid} (postgres in database " in statuses["vacuum"]
    assert "vacuum done, " in ran.stderr.splitlines()[-1]
    said = ran.stderr.splitlines()
    assert said[0].startswith('running: DROP INDEX CONCURRENTLY IF EXISTS "public"')
    assert said[1].startswith('running: ALTER TABLE "public"."mq" SET (autovacuum_vacuum_scale')
    assert said[2] == (
        'running: VACUUM (ANALYZE, TRUNCATE false) "public"."mq" (SHARE UPDATE EXCLUSIVE on '
        "the table: does not block reads or writes (pushes, pops))"
    )
    holder.close()

    engine = target.engine()
    with Traffic(target, spec) as traffic:
        ran = _maintain(target, "mq", "--yes", "--format", "json")
    traffic.check(engine)
    # The traffic's short snapshots pin the horizon to the oldest transaction running
    # anywhere on the server (conftest's unrelated one in another database, or another
    # session's): the status names that root, never the producer or consumer that merely was
    # active (neither holds a transaction for a second); exit 10.
    status = _actions(ran)["vacuum"]
    if status != "done":
        assert ran.exit_code == EXIT_INCOMPLETE, ran.output
        held = re.fullmatch(r"done, [0-9,]+ dead rows kept: held by pid ([0-9]+) .*", status)
        assert held and int(held[1]) not in traffic.pids, status
        assert int(held[1]) in _roots(), status
    # Once the traffic has stopped nothing in this database pins the horizon: the next run's
    # VACUUM removes what was kept (nothing left to propose when the one above removed all).
    final = _actions(_maintain(target, "mq", "--yes", "--format", "json"))
    assert final == {"vacuum": "done"} or (status == "done" and final == {}), (status, final)
    with psycopg.connect(pg_own_database) as conn:
        indexes = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'mq'")
        assert [r[0] for r in indexes] == ["mq_pkey"]
        row = conn.execute(
            "SELECT c.reloptions, s.last_vacuum FROM pg_class c "
            "JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = 'mq'"
        ).fetchone()
    assert "autovacuum_vacuum_scale_factor=0" in row[0] and row[1] is not None
    with psycopg.connect(pg_own_database, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        counted = conn.execute("SELECT dead_tuple_count FROM pgstattuple('mq')").fetchone()[0]
    assert counted < 2000  # counted, not the statistics' estimate: the churned rows are gone
    engine.close()


def test_postgres_ddl_is_skipped_not_queued_behind_a_held_lock(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("cq", "claim", None, False))
    planned = _maintain(target, "cq", "--dry-run", "--format", "json")
    fillfactor = next(
        a for a in json.loads(planned.stdout)["actions"] if a["action"] == "fillfactor"
    )
    assert fillfactor["note"] == "applies to pages written from now on, not to existing ones"
    table = f'"{target.schema}".cq'
    with psycopg.connect(target.dsn) as holder:
        holder.execute(f"LOCK TABLE {table} IN SHARE UPDATE EXCLUSIVE MODE")
        start = time.monotonic()
        ran = _maintain(target, "cq", "--yes", "--ddl-lock-timeout", "300ms", "--format", "json")
        assert time.monotonic() - start < 10
        assert ran.exit_code == EXIT_LOCK_TIMEOUT, ran.output
        assert _actions(ran)["fillfactor"] == "skipped: lock not granted in 300 ms"
        assert messages.push(engine, spec, [b"still flowing"])  # the queue never waited
        holder.rollback()
    with psycopg.connect(target.dsn) as conn:
        options = conn.execute(f"SELECT reloptions FROM pg_class WHERE oid = '{table}'::regclass")
        assert options.fetchone()[0] is None
    engine.close()


def test_mariadb_rebuild_runs_in_place_under_traffic_and_skips_behind_a_held_lock(
    request, tmp_path
):
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("mq", "fifo", None, False))
    _churn(engine, spec, 6000, b"m" * 1000)

    def proposed() -> dict[str, str] | None:
        actions = _actions(_maintain(target, "mq", "--dry-run", "--format", "json"))
        return actions if "rebuild" in actions else None  # InnoDB's statistics catch up

    assert _until(proposed) == {"rebuild": "proposed", "analyze": "proposed"}
    sql = _maintain(target, "mq", "--dry-run", "--format", "plain").stdout
    assert f"ALTER TABLE `{target.schema}`.`mq` FORCE, ALGORITHM=INPLACE, LOCK=NONE;" in sql
    holder = pymysql.connect(host=MY_HOST, user="root", database=target.schema)
    with holder, holder.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute("SELECT COUNT(*) FROM mq")  # its metadata lock stays until it ends
        ran = _maintain(target, "mq", "--yes", "--format", "json")
        assert ran.exit_code == EXIT_LOCK_TIMEOUT, ran.output
        assert _actions(ran) == {
            "rebuild": "skipped: lock not granted in 1000 ms",
            "analyze": "skipped: it follows the rebuild, skipped",
        }
        holder.rollback()
    with Traffic(target, spec) as traffic:
        ran = _maintain(target, "mq", "--yes", "--format", "json")
    traffic.check(engine)
    assert ran.exit_code == 0, ran.output
    assert _actions(ran) == {"rebuild": "done", "analyze": "done"}
    size = engine.diagnostic("size", {"schema": target.schema, "table": "mq"})[0]
    assert int(size["table_bytes"]) < 1024 * 1024
    engine.close()


def test_mariadb_refuses_a_copying_rebuild_of_a_fulltext_table(request, tmp_path):
    """A hand-built table (no qadmin queue) with a FULLTEXT index cannot be rebuilt online:
    the rebuild is refused with the reason, and --allow-blocking runs OPTIMIZE instead."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    engine.run(
        [
            "CREATE TABLE jobs (id BIGINT AUTO_INCREMENT PRIMARY KEY, body TEXT, "
            "FULLTEXT (body)) ENGINE=InnoDB",
            "INSERT INTO jobs (body) SELECT REPEAT('b', 2000) FROM "
            "(SELECT seq FROM seq_1_to_3000) AS s",
            "DELETE FROM jobs",
        ]
    )

    def refused() -> str | None:
        actions = _actions(_maintain(target, "jobs", "--dry-run", "--format", "json"))
        return actions.get("optimize")

    status = _until(refused)
    assert status == "refused: its lock blocks the queue (--allow-blocking runs it)"
    plan = json.loads(_maintain(target, "jobs", "--dry-run", "--format", "json").stdout)
    assert "FULLTEXT" in plan["actions"][0]["why"]
    ran = _maintain(target, "jobs", "--yes", "--allow-blocking", "--format", "json")
    assert ran.exit_code == 0, ran.output
    assert _actions(ran)["optimize"] == "done"
    engine.close()


def test_sqlite_refuses_vacuum_unless_told_and_goes_incremental(request, tmp_path):
    target = make_target("sqlite", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("sq", "fifo", None, False))
    _churn(engine, spec, 3000, b"s" * 900)
    planned = _maintain(target, "sq", "--dry-run", "--format", "json")
    assert _actions(planned) == {
        "vacuum": "refused: its lock blocks the queue (--allow-blocking runs it)",
        "optimize": "proposed",
    }
    with Traffic(target, spec) as traffic:
        ran = _maintain(target, "sq", "--yes", "--format", "json")
    traffic.check(engine)
    assert ran.exit_code == EXIT_INCOMPLETE and _actions(ran)["optimize"] == "done"
    assert ran.stderr.splitlines() == [
        "running: PRAGMA optimize (the database's write lock while it runs ANALYZE on the "
        "tables that need it (usually none: milliseconds))",
        "qadmin: error: maintain sq: vacuum refused: its lock blocks the queue "
        "(--allow-blocking runs it)",
    ]

    def free_pages() -> int:
        return int(engine.query("SELECT freelist_count AS f FROM pragma_freelist_count()")[0]["f"])

    assert free_pages() > 500  # the refused VACUUM did not run
    ran = _maintain(target, "sq", "--yes", "--allow-blocking", "--format", "json")
    assert ran.exit_code == 0 and _actions(ran)["vacuum"] == "done" and free_pages() == 0
    _churn(engine, spec, 3000, b"s" * 900)
    churned = free_pages()
    with Traffic(target, spec) as traffic:
        ran = _maintain(target, "sq", "--yes", "--format", "json")
    traffic.check(engine)
    assert _actions(ran) == {"incremental_vacuum": "done", "optimize": "done"}
    # the free pages went back to the file; the traffic's pops after it may free a few
    assert churned > 500 and free_pages() < churned // 10, (churned, free_pages())
    engine.close()


def test_maintain_refuses_a_ddl_lock_wait_above_the_lock_timeout(request, tmp_path):
    target = make_target("sqlite", request, tmp_path)
    queues.create(target.engine(), queues.make_spec("sq", "fifo", None, False))
    args = ("--yes", "--lock-timeout", "500", "--format", "json")
    refused = _maintain(target, "sq", *args, "--ddl-lock-timeout", "2s")
    assert refused.exit_code == EXIT_USAGE and refused.stdout == ""
    assert refused.stderr == (
        "qadmin: error: --ddl-lock-timeout 2000 ms is above --lock-timeout 500 ms: raise "
        "--lock-timeout too, or wait less\n"
    )
    assert _maintain(target, "sq", *args).exit_code == 0  # the default wait fits under it


def test_maintain_lists_the_actions_and_their_locks_before_asking_on_a_terminal(request, tmp_path):
    """On a terminal the confirmation shows what would run and the lock each takes; a
    name typed wrong runs nothing."""
    target = make_target("sqlite", request, tmp_path)
    queues.create(target.engine(), queues.make_spec("sq", "fifo", None, False))
    main, tty = os.openpty()
    os.write(main, b"wrong\n")
    with open(tty, "rb") as stdin:
        asked = subprocess.run(
            [sys.executable, "-m", "qadmin", "maintain", "sq", *target.cli_args()],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    os.close(main)
    assert asked.returncode == EXIT_USAGE and asked.stdout == ""
    assert asked.stderr.splitlines()[:2] == [
        "maintain sq will run, in order:",
        "  optimize database: the database's write lock while it runs ANALYZE on the tables "
        "that need it (usually none: milliseconds)",
    ]
    assert "Type its name to confirm" in asked.stderr and "running:" not in asked.stderr


def test_maintain_names_a_missing_queue(request, tmp_path):
    target = make_target("sqlite", request, tmp_path)
    queues.create(target.engine(), queues.make_spec("other", "fifo", None, False))
    result = _maintain(target, "nope", "--dry-run")
    assert result.exit_code == 5 and "nope" in result.stderr


def test_postgres_reindex_concurrently_and_the_leftover_of_a_failed_one(pg_own_database):
    """A bloated primary key is rebuilt with REINDEX CONCURRENTLY; when an open transaction
    holds the table the rebuild gives up at the lock wait, its INVALID _ccnew copy stays (its
    drop, tried in the same run, waits for the same transaction): the reindex failed, saying
    so, and the next run drops it and rebuilds."""
    target = Target("postgresql", pg_own_database, "public")
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("rq", "fifo", None, False))
    engine.close()
    with psycopg.connect(pg_own_database, autocommit=True) as admin:
        # 50,000 messages through the queue in two statements (the routines one by one would
        # take the test's time): the primary key keeps their pages
        admin.execute("INSERT INTO rq (payload) SELECT 'r' FROM generate_series(1, 50000)")
        admin.execute("DELETE FROM rq")
        admin.execute("VACUUM ANALYZE rq")  # as autovacuum would: the estimate needs statistics
    planned = json.loads(_maintain(target, "rq", "--dry-run", "--format", "json").stdout)
    reindex = next(a for a in planned["actions"] if a["action"] == "reindex")
    assert reindex["target"] == "rq_pkey" and "bloat" in reindex["why"]
    with psycopg.connect(pg_own_database) as holder:
        holder.execute("INSERT INTO rq (payload) VALUES ('held')")  # ROW EXCLUSIVE, kept open
        ran = _maintain(target, "rq", "--yes", "--ddl-lock-timeout", "300", "--format", "json")
        assert ran.exit_code == EXIT_ERROR, ran.output  # it changed the table: not "skipped"
        assert _actions(ran)["reindex"] == (
            "failed: left invalid index rq_pkey_ccnew (skipped: lock not granted in 300 ms); "
            "the next maintain drops it"
        )
        holder.rollback()
    leftover = json.loads(_maintain(target, "rq", "--dry-run", "--format", "json").stdout)
    assert [a["target"] for a in leftover["actions"] if a["action"] == "drop_invalid"] == [
        "rq_pkey_ccnew"
    ]
    with Traffic(target, spec) as traffic:
        ran = _maintain(target, "rq", "--yes", "--format", "json")
    engine = target.engine()
    traffic.check(engine)
    assert ran.exit_code == 0, ran.output
    assert _actions(ran)["drop_invalid"] == "done" and _actions(ran)["reindex"] == "done"
    with psycopg.connect(pg_own_database) as conn:
        rows = conn.execute(
            "SELECT c.relname, c.relpages FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'rq'::regclass"
        ).fetchall()
    assert [r[0] for r in rows] == ["rq_pkey"] and rows[0][1] < 100
    engine.close()


def test_postgres_ghosts_check_and_maintain_name_the_idle_transaction_in_another_database(
    pg_own_database,
):
    """A producer and a consumer run in the queue's database while a session idles in a
    transaction in ANOTHER database: every snapshot they take is pinned to its xid, so it holds
    the horizon here. ghosts, check and maintain name that root (a session holding a
    transaction id, in another database), never the producer or consumer that merely was
    active. (On a shared server an older such transaction may be the root: conftest keeps one
    open; then that one is named.)"""
    target = Target("postgresql", pg_own_database, "public")
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("xq", "fifo", None, False))
    idle = psycopg.connect(PG_ADMIN)  # the database "test": another database
    idle.execute("SELECT pg_current_xact_id()")  # a transaction id, then idle in transaction
    try:
        with Traffic(target, spec) as traffic:
            time.sleep(1.2)  # past --warn-snapshot-age 1s
            args = ["--warn-snapshot-age", "1s", "--crit-snapshot-age", "1h", "--format", "json"]
            ghosts = invoke_on(target, "inspect", "xq", *args)
            checked = invoke_on(target, "check", "xq", *args)
            roots = _roots()
        traffic.check(engine)
        assert ghosts.exit_code == 0, ghosts.output
        report = json.loads(ghosts.stdout)
        assert report["ghosts"]["holders"], "nobody named as holding the horizon"
        first = report["ghosts"]["holders"][0]
        own = pg_own_database.rsplit("/", 1)[1]
        assert int(first["holder"]) in roots and int(first["holder"]) not in traffic.pids, first
        assert first["holder_kind"] == "backend" and first.get("database") not in (own, None)
        finding = next(f for f in report["findings"] if f["code"] == "snapshot_held")
        assert finding["message"].startswith(f"backend {first['holder']} has had a snapshot")
        assert f"pg_terminate_backend({first['holder']})" in finding["fix"]
        assert checked.exit_code in (1, 2), checked.output  # 2: dead rows held back too
        named = json.loads(checked.stdout)["findings"]
        held = next(f for f in named if f["code"] == "snapshot_held")
        assert held["message"].startswith(f"backend {first['holder']} has had a snapshot")
    finally:
        idle.close()
        engine.close()


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_maintain_proposes_the_analyze_that_stale_statistics_asks_for(label, request, tmp_path):
    """inspect warns stale_statistics: maintain --dry-run proposes the ANALYZE (it said
    "nothing to do"), --yes runs it, and the finding is gone."""
    from tests.engines.failure_states import stale_statistics

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    inspect = ["inspect", "mx_stats", "--sample", "0", "--format", "json", *target.cli_args()]

    def codes() -> set[str]:
        report = json.loads(invoke(*inspect).stdout)
        return {f["code"] for f in report["findings"]}

    with stale_statistics(target, engine) as queue:
        assert "stale_statistics" in codes()
        planned = _maintain(target, queue, "--dry-run", "--format", "json")
        assert _actions(planned)["analyze"] == "proposed", planned.output
        # the engine as ping, explain and inspect name it (MariaDB is not "mysql")
        assert json.loads(planned.stdout)["engine"] == label, planned.stdout
        analyze = next(a for a in json.loads(planned.stdout)["actions"] if a["action"] == "analyze")
        assert "\nANALYZE " in "\n" + analyze["statements"][0]
        ran = _maintain(target, queue, "--yes", "--format", "json")
        assert ran.exit_code == 0 and _actions(ran)["analyze"] == "done", ran.output
        assert _until(lambda: "stale_statistics" not in codes())
    engine.close()


def _drained_and_maintained(target: Target, kind: str, batches: int = 10) -> QueueSpec:
    """A queue drained, then maintained (VACUUM ANALYZE leaves reltuples 0: the statistics say
    empty, as after a real drain), then ``batches`` of 2,000 messages pushed."""
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("d_q", kind, None, False))
    messages.push(engine, spec, [b"x"] * 2000)
    queues.purge(engine, spec)  # drained (a claim queue's rows go at their ack)
    engine.close()  # its counters of the dead rows are flushed as the session ends
    result = invoke_on(target, "maintain", "d_q", "--yes")
    # done (0), or done with dead rows another session's snapshot keeps (a shared server)
    assert result.exit_code in (0, EXIT_INCOMPLETE) and "VACUUM" in result.output, result.output
    engine = target.engine()
    for _ in range(batches):
        messages.push(engine, spec, [b"y"] * 2000)
    engine.close()
    with psycopg.connect(PG_ADMIN) as app:
        table = f'"{target.schema}".d_q'
        reltuples = app.execute(f"SELECT reltuples FROM pg_class WHERE oid = '{table}'::regclass")
        assert reltuples.fetchone()[0] == 0, "the statistics say empty, as after a real drain"
    return spec


def _pop_one(target: Target) -> int:
    """How many rows an application's pop of one returns (rolled back: nothing taken)."""
    with psycopg.connect(PG_ADMIN) as app:
        popped = app.execute(f'SELECT id FROM "{target.schema}".d_q_pop(1)').fetchall()
        app.rollback()
    return len(popped)


@pytest.mark.parametrize("kind", ["fifo", "claim", "pending"])
def test_a_pop_after_maintain_on_a_drained_queue_reads_its_head_once(kind, request, tmp_path):
    """maintain's VACUUM ANALYZE of a drained queue leaves its statistics saying empty
    (reltuples 0). The pop routines picked their rows with ``id IN (SELECT ... FOR UPDATE
    SKIP LOCKED)``, then planned as a nested-loop semi join that ran the locking sub-select
    again for every row: a tester's pop of one message from 20,000 ran past the 30 s
    statement timeout while check said OK, and here a pop of one returned all 20,000. An
    application's pop of one now takes one, starting the table's index scans at most three
    times (the head picked once, then the rows taken), by the server's own counter."""
    target = make_target("postgresql", request, tmp_path)
    _drained_and_maintained(target, kind)
    table = f'"{target.schema}".d_q'
    with psycopg.connect(PG_ADMIN) as app:

        def index_scans() -> int:
            row = app.execute(
                f"SELECT idx_scan FROM pg_stat_xact_user_tables WHERE relid = '{table}'::regclass"
            ).fetchone()
            return int(row[0]) if row else 0

        before = index_scans()
        popped = app.execute(f'SELECT id FROM "{target.schema}".d_q_pop(1)').fetchall()
        assert len(popped) == 1
        assert index_scans() - before <= 3
        app.rollback()


def test_a_queue_with_the_old_pops_is_warned_of_and_repair_replaces_them(request, tmp_path):
    """A queue created before the fix above keeps its old routines (the catalog entry says
    which template revision made them). check warns routines_outdated, and its printed fix,
    run as printed, replaces every routine in one transaction: the pop of one that took all
    2,000 messages takes one, and check no longer warns."""
    target = make_target("postgresql", request, tmp_path)
    spec = _drained_and_maintained(target, "fifo", batches=1)  # the old pop is quadratic
    engine = target.engine()
    old = [
        re.sub(r"= ANY \(ARRAY\((.*?SKIP LOCKED)\)\)", r"IN (\1)", s, flags=re.S)
        for _, s in catalog.replacements(engine, spec)
    ]
    assert sum(" IN (" in s for s in old) == 1, "the old pick made again"
    engine.run(old)
    catalog.set_options(engine, dataclasses.replace(spec, options={"pausable": True}))
    engine.close()
    assert _pop_one(target) == 2_000, "the old routine takes every message"
    # 1, or 2 beside dead rows another session's snapshot keeps (a shared server)
    checked = invoke_on(target, "check", "d_q")
    assert checked.exit_code in (1, 2) and "routines_outdated" in checked.output, checked.output
    report = json.loads(invoke_on(target, "inspect", "d_q", "--format", "json").stdout)
    [finding] = [f for f in report["findings"] if f["code"] == "routines_outdated"]
    assert "can take every message" in finding["message"]
    planned = invoke_on(target, "repair", "d_q", "--dry-run", "--format", "json")
    assert json.loads(planned.stdout)["upgrade"] == ["d_q_push", "d_q_pop", "d_q_push_many"]
    assert "routines_outdated" in _codes(target, "d_q"), "--dry-run replaced nothing"
    fix = finding["fix"].split(", then ", 1)[1].split(" (", 1)[0]
    repaired = run_qadmin(*shlex.split(fix)[1:], *target.cli_args())
    assert repaired.returncode == 0, repaired.stderr
    assert _pop_one(target) == 1
    assert "routines_outdated" not in _codes(target, "d_q")


def _codes(target: Target, queue: str) -> set[str]:
    """The findings inspect reports for ``queue``."""
    report = json.loads(invoke_on(target, "inspect", queue, "--format", "json").stdout)
    return {f["code"] for f in report["findings"]}


def test_repair_keeps_what_changed_meanwhile_and_records_the_routines_it_adds(request, tmp_path):
    """Testers' upgrade cases. A pause and a max-attempts change made after repair read the
    entry survive it (repair wrote back options read before it waited: the pause undone,
    consumers consuming again); a routine the queue lacked (push_many, from a qadmin before
    it) is made and recorded, so drop removes it and the name can be created again; a
    revision edited by hand to no number reads as the oldest (status, check --all and metrics
    stopped with a TypeError), and repair writes it anew."""
    from qadmin.ops import repair as repair_ops

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("u_q", "claim", None, False, max_attempts=3))
    engine.run([f"DROP FUNCTION {engine.qualified('u_q_push_many')}"])
    catalog.disown(engine, spec, ("function", "u_q_push_many"))
    options = {k: v for k, v in spec.options.items() if k != "revision"}
    catalog.set_options(engine, dataclasses.replace(spec, options={**options, "revision": "x"}))
    listed = invoke_on(target, "status", "--format", "json")
    assert listed.exit_code == 1, listed.output
    [line] = json.loads(listed.stdout)["lines"]
    assert line["worst"].startswith("routines_outdated"), line
    stale = catalog.get(engine, "u_q")  # read before the pause and the change below
    assert invoke_on(target, "pause", "u_q", "--yes").exit_code == 0
    assert invoke_on(target, "alter", "u_q", "--max-attempts", "7").exit_code == 0
    done = repair_ops.repair(engine, stale, 60)
    assert "u_q_push_many" in done.upgrade, done
    after = catalog.get(engine, "u_q")
    assert after.paused_at is not None and after.max_attempts == 7 and after.revision == 2
    assert ("function", "u_q_push_many") in catalog.owned(engine, after)
    assert "routines_outdated" not in _codes(target, "u_q")
    assert invoke_on(target, "drop", "u_q", "--yes").exit_code == 0
    assert invoke_on(target, "create", "u_q", "--kind", "claim").exit_code == 0
    engine.close()


def test_repair_leaves_routines_whose_template_needs_objects_the_queue_lacks(request, tmp_path):
    """A watermarked queue from before its sequence copy (no w_q_wm_seq): today's routines
    read the sequence, so replacing them broke every pop while check said OK. repair replaces
    nothing and says why; check still warns routines_outdated; pops go on."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("w_q", "fifo", None, False, watermark=True))
    messages.push(engine, spec, [b"a", b"b"])
    # the sequence not the queue's (an older qadmin made none; this one stays so the
    # routines in place run): today's template needs it
    catalog.disown(engine, spec, ("sequence", "w_q_wm_seq"))
    options = {k: v for k, v in spec.options.items() if k != "revision"}
    catalog.set_options(engine, dataclasses.replace(spec, options=options))
    engine.close()
    planned = invoke_on(target, "repair", "w_q", "--dry-run", "--format", "json")
    plan = json.loads(planned.stdout)
    assert plan["upgrade"] == [] and "sequence w_q_wm_seq" in plan["note"], plan
    assert invoke_on(target, "repair", "w_q", "--yes").exit_code == 0
    assert "routines_outdated" in _codes(target, "w_q")
    popped = invoke_on(target, "pop", "w_q")
    assert popped.exit_code == 0, popped.output
