"""procrastinate 3.x, live: its producer, its worker (killed mid-job), and qadmin against
procrastinate's own counts (JobManager.list_queues) and stalled jobs (get_stalled_jobs)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_trouble,
    qadmin,
    qadmin_json,
    wait_until,
)

APP = "tests.libraries.apps.procrastinate_app"


def _statuses(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1"
        ).fetchall()
    return {status: int(n) for status, n in rows}


def test_procrastinate(
    pg_own_database: str,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsn = pg_own_database
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    from tests.libraries.apps import procrastinate_app as lib

    with lib.app.open():
        lib.app.schema_manager.apply_schema()
        for n in range(3):
            lib.ok.defer(n=n)
        lib.boom.defer()
        lib.boom.defer()
        stuck = lib.sleepy.defer()
        for _ in range(3):
            lib.later.defer()

    worker = processes.python(APP, "worker")
    wait_until(
        "procrastinate's worker to finish, fail and take the sleepy job",
        lambda: (
            _statuses(dsn).get("succeeded") == 3
            and _statuses(dsn).get("failed") == 2
            and _statuses(dsn).get("doing") == 1
        ),
    )
    processes.kill(worker)
    # Its heartbeat stops: procrastinate itself calls the job stalled after 2 s.
    own: dict[str, object] = {}

    def own_stalled() -> bool:
        own.update(asyncio.run(_own_view(lib.app)))
        return own["stalled"] == [stuck]

    wait_until("procrastinate to see its job stalled", own_stalled)
    # The killed worker beat a moment ago: under procrastinate's 30 s floor qadmin still
    # calls it alive, whatever --stale-after says.
    assert qadmin_json("claims", "procrastinate_jobs", "--dsn", dsn, "--stale-after", "1") == []
    # Time passes, and procrastinate prunes the dead worker (as a new worker does at start):
    # its job stays 'doing' with worker_id NULL, and is still a dead worker's claim.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 min'")
        conn.execute("SELECT procrastinate_prune_stalled_workers_v1(10)")
        [(worker,)] = conn.execute(
            "SELECT worker_id FROM procrastinate_jobs WHERE id = %s", (stuck,)
        ).fetchall()
    assert worker is None
    own.update(asyncio.run(_own_view(lib.app)))
    assert own["stalled"] == [stuck]
    # The claim's time is its 'started' event: the finding says how long.
    checked = qadmin("check", "procrastinate_jobs", "--dsn", dsn, "--stale-after", "1")
    assert f"procrastinate job {stuck} has been doing for " in checked.stdout, checked.stdout
    view = LibraryView(
        waiting=int(own["idle_todo"]),  # type: ignore[call-overload]
        states=_statuses(dsn),
        stuck=stuck,
        has_enqueue_time=False,
    )
    assert view.waiting == 3

    assert detected_library(dsn, "procrastinate_jobs", "public") == "procrastinate"
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM procrastinate_jobs",
        "SELECT id FROM procrastinate_jobs WHERE queue_name = 'idle' LIMIT 1 FOR UPDATE",
    ):
        check_qadmin(["--dsn", dsn], "procrastinate_jobs", "procrastinate", view, releasable=True)

    assert _statuses(dsn).get("todo") == 4  # the stalled job is waiting again
    os.unlink(block_file)
    processes.python(APP, "worker")
    wait_until(
        "procrastinate's worker to run the requeued job",
        lambda: _statuses(dsn).get("succeeded") == 4,
    )


async def _own_view(app: Any) -> dict[str, object]:
    """procrastinate's own answers: its stalled jobs (by worker heartbeat, 2 s) and its
    waiting count on the queue nobody works."""
    async with app.open_async():
        stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=2)
        queues = await app.job_manager.list_queues_async(queue="idle")
    return {"stalled": [job.id for job in stalled], "idle_todo": queues[0]["todo"]}
