"""pg-boss 10, live (Node.js): its send, its worker (killed mid-job), and qadmin against
pg-boss's own getQueueSize, getJobById and state counts. pg-boss's maintenance fails an
expired 'active' job and retries it itself, so qadmin's requeue refuses, and a worker running
that maintenance completes the job."""

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
    wait_until,
)


def test_pg_boss(
    pg_own_database: str, processes: Processes, block_file: Path, node_modules: Path
) -> None:
    dsn = pg_own_database
    node = NodeScript.of("pgboss.js", dsn, block_file, node_modules)
    stuck = node("setup")["stuck"]
    worker = processes.start(node.command("worker"), node.env)
    own: dict[str, Any] = {}

    def settled() -> bool:
        own.update(node("view", stuck))
        states = {"completed": 3, "failed": 2, "active": 1, "created": 5, "retry": 1}
        return bool(own["states"] == states)

    wait_until("pg-boss's worker to complete, fail and start the sleepy job", settled)
    processes.kill(worker)
    assert own["stuck_state"] == "active"
    queues = own["queues"]
    # getQueueSize counts the job an hour ahead too; its fetch would take 3 now.
    assert queues["idle"]["size"] == 4 and queues["idle"]["due"] == 3
    view = LibraryView(
        waiting=queues["idle"]["due"], states=own["states"], stuck=stuck, liveness=False
    )

    assert detected_library(dsn, "job", "pgboss") == "pg-boss"
    conn = ["--dsn", dsn, "--schema", "pgboss"]
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM pgboss.job",
        "SELECT id FROM pgboss.job WHERE name = 'idle' LIMIT 1 FOR UPDATE",
    ):
        wait_until("the claim to be older than 2 s", lambda: _started_s(dsn, stuck) > 2.5)
        stale_conn = [*conn, "--stale-after", "2s"]
        report = qadmin_json("inspect", "job", *stale_conn)
        assert report["size"]["scheduled"] == 2
        assert report["size"]["retrying"] == 1
        for queue, stale in (("work", 1), ("idle", 0)):
            mine = queues[queue]
            entry = queue_entry(report, queue, "job", *stale_conn)
            assert entry["depth"] == mine["due"], (entry, mine)
            assert entry["scheduled"] == mine["ahead"], (entry, mine)
            assert entry["retrying"] == mine["retry"], (entry, mine)
            assert entry["running"] == mine["active"], (entry, mine)
            assert entry["failed"] == mine["failed"], (entry, mine)
            assert entry["stale"] == stale, entry
        assert (queues["work"]["ahead"], queues["work"]["retry"]) == (1, 1)
        check_qadmin(conn, "job", "pg-boss", view, releasable=False)

    # pg-boss's own recovery: its maintenance fails the expired job and retries it.
    os.unlink(block_file)
    processes.start(node.command("worker", "recover"), node.env)

    def recovered() -> bool:
        own.update(node("view", stuck))
        return own["stuck_state"] == "completed"

    wait_until("pg-boss's maintenance to retry the job and its worker to complete it", recovered)


def _started_s(dsn: str, job_id: str) -> float:
    sql = "SELECT extract(epoch FROM now() - started_on) FROM pgboss.job WHERE id = %s"
    return pg_age_s(dsn, sql, job_id)
