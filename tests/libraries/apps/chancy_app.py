"""chancy's own app for tests/libraries/test_chancy.py: ``python -m`` this module with
``worker QUEUE`` runs chancy's worker on one named queue (a heartbeat every second, no
recovery plugin, so qadmin must tell the dead worker's job itself) until killed."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from chancy import Chancy, Job, Queue, Worker, job
from chancy.plugins.recovery import Recovery
from chancy.plugins.retry import RetryPlugin
from psycopg.rows import dict_row

QUEUES = ("orders", "mailers")


def app() -> Chancy:
    # No default plugins (its Recovery would give the dead worker's job back on its own);
    # the Retry plugin makes a failed job wait for its backoff.
    return Chancy(os.environ["LIB_DSN"], no_default_plugins=True, plugins=[RetryPlugin()])


@job()
def ok(n: int = 0) -> int:
    return n


@job()
def boom() -> None:
    raise ValueError("boom on purpose")


@job()
def sleepy() -> None:
    while Path(os.environ["LIB_BLOCK"]).exists():
        time.sleep(0.1)


async def setup() -> None:
    """chancy's schema, both queues, and on each: a blocking job, two jobs behind it and one
    an hour ahead; on ``orders`` also three quick jobs and one failing into a retry an hour
    ahead (its backoff)."""
    later = datetime.now(tz=UTC) + timedelta(hours=1)
    async with app() as chancy:
        await chancy.migrate()
        for name in QUEUES:
            # A queue is worked only by the worker tagged with its name.
            await chancy.declare(
                Queue(
                    name=name,
                    concurrency=1,
                    tags={f"^{name}$"},
                    executor="chancy.executors.thread.ThreadedExecutor",
                    polling_interval=1,
                )
            )
        jobs: list[Job] = [ok.job.with_kwargs(n=n).with_queue("orders") for n in range(3)]
        retry = {
            "retry_settings": {"backoff": 3600, "backoff_limit": 7200, "backoff_jitter": [0, 1]}
        }
        jobs.append(boom.job.with_queue("orders").with_max_attempts(3).with_meta(retry))
        for name in QUEUES:
            jobs.append(sleepy.job.with_queue(name))
            jobs += [ok.job.with_kwargs(n=10 + n).with_queue(name) for n in range(2)]
            jobs.append(ok.job.with_queue(name).with_scheduled_at(later))
        for one in jobs:
            await chancy.push(one)
            await asyncio.sleep(0.002)  # ids (uuid7) and created_at in push order


async def run_worker(queue: str) -> None:
    async with app() as chancy:
        worker = Worker(
            chancy,
            heartbeat_poll_interval=1,
            heartbeat_timeout=90,
            queue_change_poll_interval=1,
            register_signal_handlers=False,
            tags={queue},
        )
        async with worker:
            await asyncio.Event().wait()


async def own_view() -> dict[str, Any]:
    """chancy's own view: its counts per queue and state, and the jobs its Recovery plugin
    would give back (run in a transaction that is rolled back: nothing changes)."""
    async with app() as chancy, chancy.pool.connection() as conn:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute("SELECT queue, state, count(*) AS n FROM chancy_jobs GROUP BY 1, 2")
            counts: dict[str, dict[str, int]] = {}
            for row in await cur.fetchall():
                counts.setdefault(row["queue"], {})[row["state"]] = int(row["n"])
            # What its fetch would take now (Worker.fetch_jobs' WHERE clause).
            await cur.execute(
                "SELECT queue, count(*) AS n FROM chancy_jobs"
                " WHERE (state = 'pending' OR state = 'retrying')"
                " AND attempts < max_attempts"
                " AND (scheduled_at IS NULL OR scheduled_at <= NOW()) GROUP BY 1"
            )
            due = {row["queue"]: int(row["n"]) for row in await cur.fetchall()}
            running = "SELECT id::text AS id FROM chancy_jobs WHERE state = 'running'"
            await cur.execute(running)
            before = {r["id"] for r in await cur.fetchall()}
            # chancy's own rule: a worker unseen for heartbeat_timeout (its default, 90 s).
            await Recovery.recover(SimpleNamespace(heartbeat_timeout=90), chancy, cur)
            await cur.execute(running)
            after = {r["id"] for r in await cur.fetchall()}
        await conn.rollback()
    return {"counts": counts, "due": due, "stuck": sorted(before - after)}


if __name__ == "__main__" and sys.argv[1] == "worker":
    asyncio.run(run_worker(sys.argv[2]))
