"""Oban for Python (PyPI ``oban``), live: its producer, a worker per named queue (the
``orders`` one SIGKILLed mid-job, the ``mailers`` one alive and busy), jobs scheduled an hour
ahead, a retry an hour ahead and a 'suspended' job; qadmin against Oban's own counts
(Query.count_jobs) and the executing jobs whose producer its refresher pruned. Oban writes
naive UTC times; qadmin reads them under a session time zone of Asia/Tokyo."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psycopg

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    STALE_AFTER,
    app_json,
    detected_library,
    pg_counts,
    pg_trouble,
    qadmin,
    qadmin_json,
    queue_entry,
    stale_entry,
    status_lines,
    wait_until,
)

APP = "tests.libraries.apps.oban_app"


def _app(python: str, env: dict[str, str], *args: str) -> Any:
    return app_json(APP, *args, python=python, env=env)


def _states(dsn: str) -> dict[tuple[str, str], int]:
    return pg_counts(dsn, "SELECT queue, state::text, count(*) FROM oban_jobs GROUP BY 1, 2")


def _job(dsn: str, queue: str, state: str) -> int:
    with psycopg.connect(dsn) as conn:
        [(job,)] = conn.execute(
            "SELECT id FROM oban_jobs WHERE queue = %s AND state = %s", (queue, state)
        ).fetchall()
    return int(job)


def test_oban(
    pg_own_database: str,
    processes: Processes,
    block_file: Path,
    oban_python: str,
) -> None:
    dsn = pg_own_database
    env = {"LIB_DSN": dsn, "LIB_BLOCK": str(block_file)}
    full_env = {**os.environ, **env}
    _app(oban_python, full_env, "setup")
    orders = processes.start([oban_python, "-m", APP, "worker", "orders"], env)
    processes.start([oban_python, "-m", APP, "worker", "mailers"], env)
    wait_until(
        "Oban's workers to finish, fail into a retry and take both blocking jobs",
        lambda: (
            _states(dsn).get(("orders", "completed")) == 3
            and _states(dsn).get(("orders", "retryable")) == 1
            and _states(dsn).get(("orders", "executing")) == 1
            and _states(dsn).get(("mailers", "executing")) == 1
        ),
    )
    stuck = _job(dsn, "orders", "executing")
    running = _job(dsn, "mailers", "executing")
    processes.kill(orders)
    # The killed producer beat a moment ago: under Oban's 60 s floor it is still alive.
    assert qadmin_json("claims", "oban_jobs", "--dsn", dsn, "--stale-after", "1") == []
    # Time passes past the refresher's 60 s; the live producer keeps beating.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE oban_producers SET updated_at = updated_at - interval '2 min'"
            " WHERE uuid::text = (SELECT attempted_by[2] FROM oban_jobs WHERE id = %s)",
            (stuck,),
        )
        # The jobs an hour ahead were enqueued an hour ago (as for a two-hour delay): the
        # oldest waiting age is the oldest due job's, never theirs.
        conn.execute(
            "UPDATE oban_jobs SET inserted_at = inserted_at - interval '1 hour'"
            " WHERE state = 'scheduled'"
        )
        # Oban always writes UTC; a session in Tokyo must not read its times 9 h off.
        conn.execute(f"ALTER DATABASE \"{dsn.rsplit('/', 1)[1]}\" SET timezone = 'Asia/Tokyo'")
    own = _app(oban_python, full_env, "view")
    assert own["orphaned"] == [stuck]  # Oban pruned the dead producer; its job is orphaned
    counts = own["counts"]
    assert counts["orders"] == {
        "available": 2,
        "scheduled": 1,
        "retryable": 1,
        "executing": 1,
        "completed": 3,
    }
    assert counts["mailers"] == {"available": 2, "scheduled": 1, "executing": 1, "suspended": 1}

    assert detected_library(dsn, "oban_jobs", "public") == "oban"
    # explain plans the library's dequeue (its waiting state, in its dequeue order).
    planned = qadmin("explain", "oban_jobs", "--dsn", dsn, "--queue", "orders", "--format", "json")
    assert planned.exit_code in (0, 1), (planned.stdout, planned.stderr)
    assert 'ORDER BY "priority", "scheduled_at", "id"' in json.loads(planned.stdout)["statement"]
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM oban_jobs",
        "SELECT id FROM oban_jobs WHERE queue = 'mailers' AND state = 'available'"
        " LIMIT 1 FOR UPDATE",
    ):
        conn_args = ["--dsn", dsn, "--stale-after", STALE_AFTER]
        report = qadmin_json("inspect", "oban_jobs", *conn_args)
        assert report["profile"]["library"] == "oban"
        size = report["size"]
        # Depth is what Oban would run now: 'available' (scheduled and retryable wait an hour).
        assert size["depth"] == counts["orders"]["available"] + counts["mailers"]["available"]
        assert size["scheduled"] == 2
        assert size["retrying"] == 1
        assert 0 <= size["oldest_age_s"] < 600
        for queue in ("orders", "mailers"):
            entry = queue_entry(report, queue, "oban_jobs", *conn_args)
            mine = counts[queue]
            assert entry["depth"] == mine["available"]
            assert entry["scheduled"] == mine["scheduled"]
            assert entry["retrying"] == mine.get("retryable", 0)
            assert entry["running"] == mine["executing"]
            assert entry["failed"] == mine.get("discarded", 0)
            assert 0 <= entry["oldest_age_s"] < 600
        # qadmin status: one line per named queue, the same figures.
        lines = status_lines(dsn, "oban_jobs", "--stale-after", STALE_AFTER)
        assert sorted(lines) == ["mailers", "orders"]
        for queue in ("orders", "mailers"):
            assert lines[queue]["what"] == "oban"
            assert lines[queue]["depth"] == counts[queue]["available"]
            assert lines[queue]["scheduled"] == counts[queue]["scheduled"]
            assert lines[queue]["running"] == counts[queue]["executing"]
        assert (lines["orders"]["stale"], lines["mailers"]["stale"]) == (1, 0)
        assert queue_entry(report, "orders", "oban_jobs", *conn_args)["stale"] == 1
        assert queue_entry(report, "mailers", "oban_jobs", *conn_args)["stale"] == 0

        # Only the dead worker's job is stale; the live worker's long job is not.
        claims = report["claims"]
        entry = stale_entry(claims, stuck)
        assert entry["worker_alive"] is False, entry
        assert 0 <= entry["claimed_for_s"] < 600, entry  # naive UTC read as UTC
        assert [str(c["id"]) for c in claims["stale"]] == [str(stuck)]
        assert claims["claimed"] == 2
        for queue, depth, stale in (("orders", 2, [stuck]), ("mailers", 2, [])):
            sized = qadmin_json("size", "oban_jobs", "--dsn", dsn, "--queue", queue)
            assert sized["depth"] == depth
            listed = qadmin_json("claims", "oban_jobs", *conn_args, "--queue", queue)
            assert [int(c["id"]) for c in listed] == stale
        # tail's one sample per named queue carries the same depth.
        depths = {q: counts[q]["available"] for q in ("orders", "mailers")}
        for queue in ("orders", "mailers"):
            tail = ["tail", "oban_jobs", "--dsn", dsn, "--queue", queue, "--count", "1"]
            sample = qadmin(*tail, "--format", "json")
            assert sample.exit_code == 0, sample.stderr
            assert json.loads(sample.stdout.strip().splitlines()[0])["depth"] == depths[queue]
        checked = qadmin("check", "oban_jobs", *conn_args)
        assert checked.exit_code == 1, checked.stdout
        assert f"oban job {stuck} has been executing" in checked.stdout, checked.stdout
        # Oban's refresher pruned its producer (view): no heartbeat is left to name.
        assert "its worker has no heartbeat left" in checked.stdout, checked.stdout
        assert f"oban job {running} " not in checked.stdout
        calm = qadmin("check", "oban_jobs", *conn_args, "--queue", "mailers")
        assert calm.exit_code == 0, calm.stdout
        # Oban's Lifeline rescues orphans itself: requeue refuses and says so.
        dry = qadmin("requeue", "oban_jobs", *conn_args, "--dry-run")
        assert dry.exit_code == 2, (dry.stdout, dry.stderr)
        assert "oban" in dry.stderr
