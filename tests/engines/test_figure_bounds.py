"""check never says OK while the true figure is over its threshold (docs/diagnostics.md,
"Exact, floor or estimate"), where the figure is a planner's estimate from stale statistics,
a probe's count, or a part status and check --all read apart from check Q.

Statistics are kept stale on the test's own table (autovacuum_enabled = off), never by
relying on the server's autovacuum being off.
"""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest

from qadmin.diagnostics import registry, run
from qadmin.diagnostics.entries import ghosts
from qadmin.diagnostics.model import Options
from qadmin.ops import messages, status
from qadmin.profiles.resolve import Resolved, from_spec
from tests.conftest import PG_ADMIN, make_target
from tests.engines import incidents
from tests.helpers import drain, invoke, make_queue


def _check(*args: str) -> dict[str, Any]:
    result = invoke("check", *args, "--format", "json")
    assert result.exit_code in (0, 1, 2, 3), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["code"] == result.exit_code
    return data


@pytest.mark.parametrize("indexed", [False, True])
def test_a_stale_planner_estimate_is_never_ok_against_a_threshold(indexed, request, tmp_path):
    """Tester's find: 60,000 rows analyzed (10 % ready), 120,000 more ready pushed since: the
    planner's estimate read ~18,000 for 126,000 waiting, and check said OK under
    --warn-depth 50000 --crit-depth 100000 (with an index on (status, id) too)."""
    target = make_target("postgresql", request, tmp_path)
    table = f'"{target.schema}".jobs2'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, status text NOT NULL, "
            "created timestamptz DEFAULT now(), body text) WITH (autovacuum_enabled = off)"
        )
        if indexed:
            admin.execute(f"CREATE INDEX ON {table} (status, id)")
        admin.execute(
            f"INSERT INTO {table} (status) SELECT CASE WHEN g % 10 = 0 THEN 'ready' ELSE "
            "'done' END FROM generate_series(1, 60000) AS g"
        )
        admin.execute(f"ANALYZE {table}")
        admin.execute(
            f"INSERT INTO {table} (status) SELECT 'ready' FROM generate_series(1, 120000)"
        )
    given = [
        *("jobs2", "--schema", target.schema, "--dsn", PG_ADMIN, "--sample", "0"),
        *("--state-column", "status", "--pending", "ready", "--time-column", "created"),
    ]
    checked = _check(*given, "--warn-depth", "50000", "--crit-depth", "100000")
    line = checked["line"]
    assert checked["status"] != "OK", line
    # the truth (126,000) may lie over both: neither is judged met
    assert "depth not evaluable" in line and "100000 is within that" in line, line
    assert "depth ~" in line or "depth=" in line
    assert "depth_estimated=1" in line or "depth_floor=1" in line
    if indexed:
        # counted through the index up to 10,001: a floor over 5000 trips it
        tripped = _check(*given, "--warn-depth", "5000", "--crit-depth", "10000")
        assert tripped["status"] == "CRITICAL", tripped["line"]
        assert any(p.startswith("depth ") for p in tripped["problems"]), tripped["line"]
        assert (
            "depth ~" in tripped["line"] and "(at least 10001 counted) >= 10000" in tripped["line"]
        )
    else:
        # no index: nothing was counted; no threshold under the table's rows is judged
        small = _check(*given, "--warn-depth", "5000")
        assert small["status"] != "OK" and "depth not evaluable" in small["line"], small["line"]
        # a threshold over every row the table may hold is met
        huge = _check(*given, "--warn-depth", "100000000")
        assert "depth not evaluable" not in huge["line"], huge["line"]


def test_a_probes_count_is_at_least_what_it_counted(request, tmp_path):
    """Tester's find (MariaDB): behind 6,000 popped rows a held snapshot keeps, 500 waiting
    were counted by the probe, yet check --crit-depth 400 said "depth not evaluable:
    estimate ~500 ... puts the truth at 333 to 1000": the rows counted are there, whatever
    the estimate's error, so 500 >= 400 is CRITICAL."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "mg")
    holder = target.engine()
    holder.conn.cursor().execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    try:
        for _ in range(6):
            messages.push(engine, spec, [b"x" * 100] * 1000)
        drain(engine, spec, 500)
        messages.push(engine, spec, [b"y" * 100] * 500)
        checked = _check("mg", *target.cli_args(), "--sample", "0", "--crit-depth", "400")
        line = checked["line"]
        assert checked["metrics"]["depth"] == 500, line
        assert "depth " in line and ">= 400" in line, line
        assert checked["status"] == "CRITICAL", line
        assert "depth not evaluable" not in line, line
    finally:
        holder.conn.rollback()
        holder.close()
        engine.close()


def _codes(problems: list[str]) -> set[str]:
    """The finding codes among check's problems (``code: message``), thresholds apart."""
    return {p.split(":", 1)[0] for p in problems if ": " in p and " " not in p.split(":", 1)[0]}


def test_status_and_check_all_judge_what_check_judges(request, tmp_path):
    """Tester's find: with 9,000 dead rows a snapshot holds, check ghost_q was CRITICAL
    (dead_rows, snapshot_held) while status and check --all said OK: they read only the
    cheap parts. check --all is the Nagios entry for the whole server: its line for a queue,
    and status's, say what check NAME says."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "ghost_q")
    # A queue with no dead rows, judged from the same one reading of the snapshot holders
    # (status reads the server-wide parts once per run): what check clean_q says, too.
    make_queue(engine, "clean_q", count=3)
    holder = psycopg.connect(PG_ADMIN, autocommit=True)
    try:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute(f"SELECT count(*) FROM {engine.qualified(spec.name)}")
        for _ in range(9):
            messages.push(engine, spec, [b"g" * 100] * 1000)
        drain(engine, spec, 1000)
        engine.run(["SELECT pg_stat_force_next_flush()"])  # the pops' dead rows, counted now
        engine.run(["SELECT 1"])
        checked = _check("ghost_q", *target.cli_args(), "--sample", "0")
        assert "dead_rows" in _codes(checked["problems"]), checked["line"]
        clean = _check("clean_q", *target.cli_args(), "--sample", "0")
        assert "dead_rows" not in _codes(clean["problems"]), clean["line"]
        shown = json.loads(invoke("status", "--dsn", PG_ADMIN, "--format", "json").stdout)["lines"]
        result = invoke("check", "--all", "--dsn", PG_ADMIN, "--format", "json")
        every = json.loads(result.stdout)
        for queue, alone in (("ghost_q", checked), ("clean_q", clean)):
            name = f"{target.schema}.{queue}"
            line = next(x for x in shown if x["name"] == name)
            assert line["status"] == alone["status"], line
            mine = next(x for x in every["lines"] if x["name"] == name)
            assert mine["status"] == alone["status"], mine
            assert _codes(mine["problems"]) == _codes(alone["problems"]), (mine, alone)
        assert result.exit_code >= checked["code"] or checked["code"] == 3
    finally:
        holder.close()
        engine.close()


def test_a_run_over_many_queues_reads_the_snapshot_holders_once(request, tmp_path):
    """The horizon's holders are the same for every queue of the database: status, check
    --all and a scrape read them once (the entry declares the file server-wide), and every
    queue's ghosts part judges that one reading, as check NAME judges its own."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    specs = [make_queue(engine, name, count=2) for name in ("h_one", "h_two")]
    holder = psycopg.connect(PG_ADMIN, autocommit=True)
    try:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1")
        shared = registry.server_reads()
        parts = []
        for spec in specs:
            resolved = Resolved(from_spec(spec, engine.schema), spec)
            report = run.inspect_resolved(engine, resolved, Options(), status.PARTS, shared)
            parts.append(report.part(ghosts.ENTRY))
        assert "horizon" in shared.files and set(shared.rows) == shared.files  # each once
        first, second = parts
        assert first is not None and second is not None
        assert first.horizon_read and first.holders, "the open snapshot, at least, holds"
        assert first.holders == second.holders
        alone = run.inspect(engine, specs[0]).part(ghosts.ENTRY)
        assert alone is not None and alone.horizon_read  # check NAME reads its own
    finally:
        holder.close()
        engine.close()


def test_a_lock_wait_status_reads_once_per_run_is_judged_as_check_judges_it(request, tmp_path):
    """status and check --all read the server's waiting lock requests once per run, and a
    queue's own lock waits only while some request waits: a queue a session waits on (a
    DELETE behind another session's SHARE lock) has the lock_wait check NAME finds, and a
    queue nobody waits on none."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "lw_q", count=2)
    make_queue(engine, "calm_q", count=2)
    table = engine.qualified(spec.name)
    holder = incidents.connect(target)
    incidents.execute(holder, "BEGIN")
    incidents.execute(holder, f"LOCK TABLE {table} IN SHARE MODE")
    limit = ("--warn-lock-wait", "1s")
    try:
        with incidents.waiting(target, [f"DELETE FROM {table} WHERE false"]):
            time.sleep(1.5)
            alone = {q: _check(q, *target.cli_args(), "--sample", "0", *limit) for q in QUEUES}
            assert "lock_wait" in _codes(alone["lw_q"]["problems"]), alone["lw_q"]["line"]
            assert "lock_wait" not in _codes(alone["calm_q"]["problems"]), alone["calm_q"]
            result = invoke("check", "--all", "--dsn", PG_ADMIN, "--format", "json", *limit)
            every = {x["name"]: x for x in json.loads(result.stdout)["lines"]}
            shown = json.loads(
                invoke("status", "--dsn", PG_ADMIN, "--format", "json", *limit).stdout
            )["lines"]
            for queue in QUEUES:
                name = f"{target.schema}.{queue}"
                mine = every[name]
                assert _codes(mine["problems"]) == _codes(alone[queue]["problems"]), mine
                assert mine["status"] == alone[queue]["status"], mine
                line = next(x for x in shown if x["name"] == name)
                assert line["status"] == alone[queue]["status"], line
    finally:
        incidents.execute(holder, "ROLLBACK")
        holder.close()
        engine.close()


QUEUES = ("lw_q", "calm_q")
