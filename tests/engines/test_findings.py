"""Findings that must be true, created for real on PostgreSQL: statistics never gathered,
autovacuum switched off, dead rows in a queue that keeps rows, and an inspect during a lock
incident that still answers, naming the session that holds the lock."""

from __future__ import annotations

import json
import time

import psycopg

from qadmin.diagnostics.entries import maintenance
from qadmin.ops import messages, queues
from tests.conftest import PG_ADMIN, make_target
from tests.engines import diag
from tests.helpers import invoke, invoke_on


def _until(probe, timeout_s: float = 15.0):
    """Statistics lag the events they count: poll."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = probe()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.3)


def _codes(report: dict) -> dict[str, dict]:
    return {f["code"]: f for f in report["findings"]}


def test_statistics_never_gathered_are_a_finding_not_a_zero_bloat(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f"CREATE TABLE {table} (id bigserial PRIMARY KEY, body text)")
        admin.execute(f"INSERT INTO {table} (body) SELECT 'x' FROM generate_series(1, 3000)")
    args = ["inspect", "jobs", "--table", "--sample", "0", "--format", "json", *target.cli_args()]

    def inspected():
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        return report if "stale_statistics" in _codes(report) else None

    report = _until(inspected)
    assert report, "a table of 3000 rows never analyzed was not flagged"
    finding = _codes(report)["stale_statistics"]
    assert finding["severity"] == "warning" and finding["fix"].startswith("ANALYZE ")
    pkey = next(i for i in report["fragmentation"]["indexes"] if i["index_name"] == "jobs_pkey")
    assert pkey["bloat_pct"] is None, "no estimate rather than a made-up 0.0"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f"ANALYZE {table}")
    after = json.loads(invoke(*args).stdout)
    assert "stale_statistics" not in _codes(after)


def test_a_young_queue_waits_for_statistics_only_where_the_server_gathers_them(
    request, tmp_path, monkeypatch
):
    """Autovacuum is off on this server: nothing will analyze a new queue, so its missing
    statistics are a finding at once; where autovacuum is on, a queue younger than
    STATS_GRACE_S is left that long (the rule's own inputs, as the SQL returns them)."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    assert engine.query("SHOW autovacuum")[0]["autovacuum"] == "off"
    spec = queues.create(engine, queues.make_spec("young_q", "fifo", None, False))
    messages.push(engine, spec, [b"y"] * 1500)
    engine.close()
    engine = target.engine()  # the pushing backend flushed its counters on close
    assert _until(lambda: "stale_statistics" in _codes(diag.inspect(engine, spec)))
    engine.close()
    facts = maintenance.MaintenanceFacts.of
    gathering = {"autovacuum_server": True, "autovacuum_table_off": False}
    assert maintenance._server_gathers(facts(gathering))
    assert not maintenance._server_gathers(facts({**gathering, "autovacuum_table_off": True}))
    assert maintenance._server_gathers(facts({"auto_recalc_server": 1, "auto_recalc_table_off": 0}))
    assert not maintenance._server_gathers(
        facts({"auto_recalc_server": 1, "auto_recalc_table_off": 1})
    )


def test_autovacuum_switched_off_on_the_queue_table_is_a_finding(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("vac_q", "fifo", None, False))
    assert "autovacuum_off" not in _codes(diag.inspect(engine, spec))
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'ALTER TABLE "{target.schema}".vac_q SET (autovacuum_enabled = false)')
    finding = _codes(diag.inspect(engine, spec))["autovacuum_off"]
    assert finding["severity"] == "warning"
    assert finding["fix"] == f'ALTER TABLE "{target.schema}"."vac_q" RESET (autovacuum_enabled)'
    checked = invoke_on(target, "check", "vac_q", "--sample", "0")
    assert checked.exit_code == 1 and "autovacuum_off" in checked.stdout
    engine.close()


def test_dead_rows_are_found_in_a_queue_that_keeps_rows(request, tmp_path):
    """2,000 dead beside 3,000 live: not 10x the live rows, still 40 % of the table."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("keep_q", "fifo", None, False))
    worker = target.engine()  # a backend flushes its counters when it exits
    messages.push(worker, spec, [b"k" * 20] * 5000)
    messages.pop(worker, spec, 1000)
    messages.pop(worker, spec, 1000)
    worker.close()

    def flagged():
        report = diag.inspect(engine, spec)
        finding = _codes(report).get("dead_rows")
        return finding if finding and "% of the table's rows" in finding["message"] else None

    finding = _until(flagged)
    assert finding, "dead rows in a queue that keeps rows were not flagged"
    assert finding["message"].startswith("2000 dead rows, 40 % of the table's rows")
    engine.close()


def test_inspect_during_an_exclusive_lock_answers_and_names_the_holder(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("held_q", "fifo", None, False))
    messages.push(engine, spec, [b"h"] * 3)
    engine.close()
    holder = psycopg.connect(PG_ADMIN, autocommit=False)
    try:
        holder.execute(f'LOCK TABLE "{target.schema}".held_q IN ACCESS EXCLUSIVE MODE')
        pid = str(holder.info.backend_pid)
        started = time.monotonic()
        result = invoke_on(target, "inspect", "held_q", "--sample", "0", "--format", "json")
        took = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    blocked = [f for f in report["findings"] if f["code"] == "part_blocked"]
    assert blocked and all(f"session {pid}" in f["message"] for f in blocked), blocked
    assert f"pg_terminate_backend({pid})" in blocked[0]["fix"]
    assert report["size"]["blocked_by"].startswith(f"session {pid}")
    assert report["locks"]["waits"] == [] and "holders" in report["ghosts"]
    assert took < 20
