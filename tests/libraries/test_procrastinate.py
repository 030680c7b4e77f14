"""procrastinate 3.x, live: its producer, its worker (killed mid-job), and qadmin against
procrastinate's own counts (JobManager.list_queues) and stalled jobs (get_stalled_jobs)."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_counts,
    pg_trouble,
    qadmin,
    qadmin_json,
    queue_entry,
    wait_until,
)

APP = "tests.libraries.apps.procrastinate_app"


def _statuses(dsn: str) -> dict[str, int]:
    return pg_counts(dsn, "SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1")


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
        lib.retried.defer()
        stuck = lib.sleepy.defer()
        for _ in range(3):
            lib.later.defer()
        # An hour ahead, on each named queue: scheduled, not waiting.
        lib.ok.configure(schedule_in={"hours": 1}).defer(n=99)
        lib.later.configure(schedule_in={"hours": 1}).defer()

    worker = processes.python(APP, "worker")
    wait_until(
        "procrastinate's worker to finish, fail and take the sleepy job",
        lambda: (
            _statuses(dsn).get("succeeded") == 3
            and _statuses(dsn).get("failed") == 2
            and _statuses(dsn).get("doing") == 1
            and _retried(dsn) == 1
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
        # Per named queue, qadmin against procrastinate's own jobs (list_jobs): due 'todo'
        # jobs are depth; those ahead are scheduled, or retrying when attempted before.
        conn = ["--dsn", dsn, "--stale-after", "1"]
        report = qadmin_json("inspect", "procrastinate_jobs", *conn)
        assert report["size"]["scheduled"] == 2
        assert report["size"]["retrying"] == 1
        for queue, stale in (("work", 1), ("idle", 0)):
            entry = queue_entry(report, queue, "procrastinate_jobs", *conn)
            mine = own["queues"][queue]  # type: ignore[index]
            assert entry["depth"] == mine["due"], (queue, entry, mine)
            assert entry["scheduled"] == mine["scheduled"], (queue, entry, mine)
            assert entry["retrying"] == mine["retrying"], (queue, entry, mine)
            assert entry["running"] == mine["doing"], (queue, entry, mine)
            assert entry["failed"] == mine["failed"], (queue, entry, mine)
            assert entry["stale"] == stale, (queue, entry)
        assert own["queues"]["work"] == {  # type: ignore[index]
            "due": 0,
            "scheduled": 1,
            "retrying": 1,
            "doing": 1,
            "failed": 2,
        }
        assert own["queues"]["idle"]["due"] == 3  # type: ignore[index]
        check_qadmin(["--dsn", dsn], "procrastinate_jobs", "procrastinate", view, releasable=True)

    # The stalled job is waiting again (beside 3 idle, 2 an hour ahead and the retry).
    assert _statuses(dsn).get("todo") == 7
    os.unlink(block_file)
    processes.python(APP, "worker")
    wait_until(
        "procrastinate's worker to run the requeued job",
        lambda: _statuses(dsn).get("succeeded") == 4,
    )


def _retried(dsn: str) -> int:
    """How many times the 'retried' job has run (procrastinate's attempts)."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT attempts FROM procrastinate_jobs WHERE task_name = 'retried'"
        ).fetchall()
    return int(rows[0][0]) if rows else 0


async def _own_view(app: Any) -> dict[str, object]:
    """procrastinate's own answers: its stalled jobs (by worker heartbeat, 2 s), its due
    'todo' count on the queue nobody works, and per named queue its jobs (list_jobs) read as
    due now, scheduled ahead, retrying ahead (attempted before), doing and failed."""
    async with app.open_async():
        stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=2)
        per_queue: dict[str, dict[str, int]] = {}
        now = datetime.now(tz=UTC)
        for queue in ("work", "idle"):
            jobs = list(await app.job_manager.list_jobs_async(queue=queue))
            todo = [j for j in jobs if j.status == "todo"]
            ahead = [j for j in todo if j.scheduled_at is not None and j.scheduled_at > now]
            per_queue[queue] = {
                "due": len(todo) - len(ahead),
                "scheduled": sum(1 for j in ahead if not j.attempts),
                "retrying": sum(1 for j in ahead if j.attempts),
                "doing": sum(1 for j in jobs if j.status == "doing"),
                "failed": sum(1 for j in jobs if j.status == "failed"),
            }
    return {
        "stalled": [job.id for job in stalled],
        "idle_todo": per_queue["idle"]["due"],
        "queues": per_queue,
    }
