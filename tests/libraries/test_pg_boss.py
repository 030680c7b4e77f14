"""pg-boss 10, live (Node.js): its send, its worker (killed mid-job), and qadmin against
pg-boss's own getQueueSize, getJobById and state counts. pg-boss's maintenance fails an
expired 'active' job and retries it itself, so qadmin's requeue refuses, and a worker running
that maintenance completes the job."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.libraries.conftest import NODE_DIR, Processes
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_trouble,
    wait_until,
)

SCRIPT = str(NODE_DIR / "pgboss.js")


def _node(env: dict[str, str], *args: str) -> Any:
    out = subprocess.run(
        ["node", SCRIPT, *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pg_boss(
    pg_own_database: str, processes: Processes, block_file: Path, node_modules: Path
) -> None:
    dsn = pg_own_database
    env = {
        **os.environ,
        "LIB_DSN": dsn,
        "LIB_BLOCK": str(block_file),
        "NODE_PATH": str(node_modules),
    }
    stuck = _node(env, "setup")["stuck"]
    worker = processes.start(["node", SCRIPT, "worker"], env)
    own: dict[str, Any] = {}

    def settled() -> bool:
        own.update(_node(env, "view", stuck))
        return own["states"] == {"completed": 3, "failed": 2, "active": 1, "created": 3}

    wait_until("pg-boss's worker to complete, fail and start the sleepy job", settled)
    processes.kill(worker)
    assert own["stuck_state"] == "active"
    view = LibraryView(waiting=own["waiting"], states=own["states"], stuck=stuck, liveness=False)
    assert view.waiting == 3

    assert detected_library(dsn, "job", "pgboss") == "pg-boss"
    conn = ["--dsn", dsn, "--schema", "pgboss"]
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM pgboss.job",
        "SELECT id FROM pgboss.job WHERE name = 'idle' LIMIT 1 FOR UPDATE",
    ):
        wait_until("the claim to be older than 2 s", lambda: _started_s(dsn, stuck) > 2.5)
        check_qadmin(conn, "job", "pg-boss", view, releasable=False)

    # pg-boss's own recovery: its maintenance fails the expired job and retries it.
    os.unlink(block_file)
    processes.start(["node", SCRIPT, "worker", "recover"], env)

    def recovered() -> bool:
        own.update(_node(env, "view", stuck))
        return own["stuck_state"] == "completed"

    wait_until("pg-boss's maintenance to retry the job and its worker to complete it", recovered)


def _started_s(dsn: str, job_id: str) -> float:
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT extract(epoch FROM now() - started_on) FROM pgboss.job WHERE id = %s",
            (job_id,),
        ).fetchone()
    return float(row[0]) if row else 0.0
