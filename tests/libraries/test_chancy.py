"""chancy, live: its producer, a worker per named queue (the ``orders`` one SIGKILLed mid-job,
the ``mailers`` one alive and busy), jobs scheduled an hour ahead and a retry an hour ahead;
qadmin against chancy's own counts, what its fetch would take now, and the jobs its Recovery
plugin would give back (chancy_workers.last_seen)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
import pytest

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    STALE_AFTER,
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

APP = "tests.libraries.apps.chancy_app"


def _states(dsn: str) -> dict[tuple[str, str], int]:
    return pg_counts(dsn, "SELECT queue, state, count(*) FROM chancy_jobs GROUP BY 1, 2")


def _running(dsn: str, queue: str) -> str:
    with psycopg.connect(dsn) as conn:
        [(job,)] = conn.execute(
            "SELECT id::text FROM chancy_jobs WHERE queue = %s AND state = 'running'", (queue,)
        ).fetchall()
    return str(job)


def test_chancy(
    pg_own_database: str,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsn = pg_own_database
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    from tests.libraries.apps import chancy_app as lib

    asyncio.run(lib.setup())
    orders = processes.python(APP, "worker", "orders")
    processes.python(APP, "worker", "mailers")
    wait_until(
        "chancy's workers to finish, fail into a retry and take both blocking jobs",
        lambda: (
            _states(dsn).get(("orders", "succeeded")) == 3
            and _states(dsn).get(("orders", "retrying")) == 1
            and _states(dsn).get(("orders", "running")) == 1
            and _states(dsn).get(("mailers", "running")) == 1
        ),
        timeout=60,
    )
    stuck, running = _running(dsn, "orders"), _running(dsn, "mailers")
    processes.kill(orders)
    # The killed worker was seen a moment ago: under chancy's 90 s floor it is alive.
    assert qadmin_json("claims", "chancy_jobs", "--dsn", dsn, "--stale-after", "1") == []
    # Time passes past chancy's heartbeat_timeout; the live worker keeps beating.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE chancy_workers SET last_seen = last_seen - interval '3 min'"
            " WHERE worker_id = (SELECT taken_by FROM chancy_jobs WHERE id::text = %s)",
            (stuck,),
        )
        # The jobs an hour ahead were enqueued an hour ago (as for a two-hour delay): the
        # oldest waiting age is the oldest due job's, never theirs.
        conn.execute(
            "UPDATE chancy_jobs SET created_at = created_at - interval '1 hour'"
            " WHERE state = 'pending' AND scheduled_at > now()"
        )
    own = asyncio.run(lib.own_view())
    assert own["stuck"] == [stuck]
    counts, due = own["counts"], own["due"]
    assert counts["orders"] == {"pending": 3, "retrying": 1, "running": 1, "succeeded": 3}
    assert counts["mailers"] == {"pending": 3, "running": 1}
    assert due == {"orders": 2, "mailers": 2}

    assert detected_library(dsn, "chancy_jobs", "public") == "chancy"
    # explain plans the library's dequeue (its waiting state, in its dequeue order).
    planned = qadmin(
        "explain", "chancy_jobs", "--dsn", dsn, "--queue", "orders", "--format", "json"
    )
    assert planned.exit_code in (0, 1), (planned.stdout, planned.stderr)
    assert 'ORDER BY "priority" DESC, "id", "created_at"' in json.loads(planned.stdout)["statement"]
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM chancy_jobs",
        "SELECT id FROM chancy_jobs WHERE queue = 'mailers' AND state = 'pending'"
        " LIMIT 1 FOR UPDATE",
    ):
        conn_args = ["--dsn", dsn, "--stale-after", STALE_AFTER]
        report = qadmin_json("inspect", "chancy_jobs", *conn_args)
        assert report["profile"]["library"] == "chancy"
        size = report["size"]
        assert size["depth"] == due["orders"] + due["mailers"]
        assert size["scheduled"] == 2  # one 'pending' job an hour ahead on each queue
        assert size["retrying"] == 1
        assert 0 <= size["oldest_age_s"] < 600
        for queue in ("orders", "mailers"):
            entry = queue_entry(report, queue, "chancy_jobs", *conn_args)
            assert entry["depth"] == due[queue]
            assert entry["scheduled"] == 1
            assert entry["retrying"] == counts[queue].get("retrying", 0)
            assert entry["running"] == counts[queue]["running"]
            assert entry["failed"] == counts[queue].get("failed", 0)
            assert 0 <= entry["oldest_age_s"] < 600
        lines = status_lines(dsn, "chancy_jobs", "--stale-after", STALE_AFTER)
        assert sorted(lines) == ["mailers", "orders"]
        for queue in ("orders", "mailers"):
            assert lines[queue]["what"] == "chancy"
            assert lines[queue]["depth"] == due[queue]
            assert lines[queue]["scheduled"] == 1
            assert lines[queue]["running"] == counts[queue]["running"]
        assert (lines["orders"]["stale"], lines["mailers"]["stale"]) == (1, 0)
        assert queue_entry(report, "orders", "chancy_jobs", *conn_args)["stale"] == 1
        assert queue_entry(report, "mailers", "chancy_jobs", *conn_args)["stale"] == 0

        claims = report["claims"]
        entry = stale_entry(claims, stuck)
        assert entry["worker_alive"] is False, entry
        assert [str(c["id"]) for c in claims["stale"]] == [stuck]
        assert claims["claimed"] == 2
        for queue, depth, stale in (("orders", 2, [stuck]), ("mailers", 2, [])):
            sized = qadmin_json("size", "chancy_jobs", "--dsn", dsn, "--queue", queue)
            assert sized["depth"] == depth
            listed = qadmin_json("claims", "chancy_jobs", *conn_args, "--queue", queue)
            assert [str(c["id"]) for c in listed] == stale
        # tail's one sample per named queue carries the same depth.
        depths = due
        for queue in ("orders", "mailers"):
            tail = ["tail", "chancy_jobs", "--dsn", dsn, "--queue", queue, "--count", "1"]
            sample = qadmin(*tail, "--format", "json")
            assert sample.exit_code == 0, sample.stderr
            assert json.loads(sample.stdout.strip().splitlines()[0])["depth"] == depths[queue]
        checked = qadmin("check", "chancy_jobs", *conn_args)
        assert checked.exit_code == 1, checked.stdout
        assert f"chancy job {stuck} has been running" in checked.stdout, checked.stdout
        assert "its worker's last heartbeat is 3 min old" in checked.stdout, checked.stdout
        assert running not in checked.stdout
        # chancy's Recovery plugin gives stalled jobs back itself: requeue refuses.
        dry = qadmin("requeue", "chancy_jobs", *conn_args, "--dry-run")
        assert dry.exit_code == 2, (dry.stdout, dry.stderr)
        assert "chancy" in dry.stderr
