"""graphile-worker 0.16, live (Node.js): its addJob, its worker (killed mid-job), and qadmin
against graphile-worker's own jobs view. Completed jobs are deleted and permanently failed ones
kept; its force_unlock_workers() also unlocks the job's named queue, so qadmin's requeue
refuses, and the job runs to completion after graphile-worker's own unlock."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    LibraryView,
    NodeScript,
    check_qadmin,
    detected_library,
    pg_age_s,
    pg_trouble,
    qadmin_json,
    queue_entry,
    state_rows,
    wait_until,
)


def test_graphile_worker(
    pg_own_database: str, processes: Processes, block_file: Path, node_modules: Path
) -> None:
    dsn = pg_own_database
    node = NodeScript.of("graphile.js", dsn, block_file, node_modules)
    stuck = node("setup")["stuck"]
    worker = processes.start(node.command("worker"), node.env)
    own: dict[str, Any] = {}

    def settled() -> bool:
        own.update(node("view"))
        return (own["locked"], own["failed"], own["waiting"]) == (1, 2, 5)

    wait_until("graphile-worker to run, fail and lock the sleepy job", settled)
    processes.kill(worker)
    assert own["locked_ids"] == [str(stuck)]
    queues = own["queues"]
    # Waiting: 3 due on 'mailers', one ahead on each queue.
    assert (queues["mailers"]["due"], queues["mailers"]["ahead"]) == (3, 1)
    assert (queues["orders"]["due"], queues["orders"]["ahead"]) == (0, 1)
    view = LibraryView(
        waiting=queues["mailers"]["due"] + queues["orders"]["due"],
        states={"waiting": own["waiting"], "locked": own["locked"], "failed": own["failed"]},
        stuck=stuck,
        liveness=False,  # locked_by names the worker; graphile-worker keeps no heartbeat
    )

    assert detected_library(dsn, "_private_jobs", "graphile_worker") == "graphile-worker"
    conn = ["--dsn", dsn, "--schema", "graphile_worker"]
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM graphile_worker._private_jobs",
        "SELECT id FROM graphile_worker._private_jobs WHERE locked_at IS NULL"
        " AND attempts = 0 LIMIT 1 FOR UPDATE",
    ):
        wait_until("the lock to be older than 2 s", lambda: _locked_s(dsn, stuck) > 2.5)
        check_qadmin(conn, "_private_jobs", "graphile-worker", view, releasable=False)
    # graphile-worker's documented view reads as the table does (locked and failed rows are
    # not waiting).
    seen = qadmin_json("size", "jobs", *conn)
    assert seen["depth"] == view.waiting and state_rows(seen) == view.states
    assert seen["scheduled"] == 2
    # Per named queue: the view carries queue_name (the table only its job_queue_id).
    stale_conn = [*conn, "--stale-after", "2s"]
    report = qadmin_json("inspect", "jobs", *stale_conn)
    for queue, stale in (("orders", 1), ("mailers", 0)):
        mine = queues[queue]
        entry = queue_entry(report, queue, "jobs", *stale_conn)
        assert entry["depth"] == mine["due"], (entry, mine)
        assert entry["scheduled"] == mine["ahead"], (entry, mine)
        assert entry["running"] == mine["locked"], (entry, mine)
        assert entry["failed"] == mine["failed"], (entry, mine)
        assert entry["stale"] == stale, entry

    # What qadmin's refusal points to: graphile-worker's own unlock, then a worker finishes it.
    node("unlock", own["locked_by"])
    os.unlink(block_file)
    processes.start(node.command("worker"), node.env)

    def finished() -> bool:
        own.update(node("view"))
        return (own["locked"], own["failed"], own["total"]) == (0, 2, 7)

    wait_until("graphile-worker to run the unlocked job to completion", finished)


def _locked_s(dsn: str, job_id: object) -> float:
    sql = "SELECT extract(epoch FROM now() - locked_at) FROM graphile_worker._private_jobs"
    return pg_age_s(dsn, sql + " WHERE id = %s", int(str(job_id)))
