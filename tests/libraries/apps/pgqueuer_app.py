"""pgqueuer's own queue manager for tests/libraries/test_pgqueuer.py: ``python -m`` this
module with ``worker`` runs it (failed jobs held, 2 s heartbeat timeout); the test calls
``enqueue`` and ``own_view`` for pgqueuer's producer and its own counts."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
from pgqueuer import PsycopgDriver, QueueManager
from pgqueuer.models import Job
from pgqueuer.queries import Queries


async def _queries() -> tuple[psycopg.AsyncConnection[Any], Queries]:
    conn = await psycopg.AsyncConnection.connect(os.environ["LIB_DSN"], autocommit=True)
    return conn, Queries(PsycopgDriver(conn))


async def install_and_enqueue() -> None:
    conn, queries = await _queries()
    async with conn:
        await queries.install()
        await queries.enqueue(["ok"] * 3, [b"1", b"2", b"3"], [0] * 3)
        await queries.enqueue(["boom"] * 2, [None, None], [0] * 2)
        await queries.enqueue("sleepy", None)
        await queries.enqueue(["later"] * 3, [None] * 3, [0] * 3)
        # An hour ahead, on two entrypoints (pgqueuer's named queues): scheduled, not waiting.
        hour = timedelta(hours=1)
        await queries.enqueue(["later", "ok"], [None, None], [0, 0], [hour, hour])


async def own_view() -> dict[str, Any]:
    """pgqueuer's own answers: its queue size per status and its stale jobs (2 s)."""
    conn, queries = await _queries()
    async with conn:
        sizes = await queries.queue_size()
        stale = await queries.stale_jobs(timedelta(seconds=2))
    counts: dict[str, int] = {}
    for row in sizes:
        counts[row.status] = counts.get(row.status, 0) + row.count
    queued: dict[str, int] = {}
    for row in sizes:
        if row.status == "queued":
            queued[row.entrypoint] = queued.get(row.entrypoint, 0) + row.count
    return {"counts": counts, "stale": [int(job.id) for job in stale], "queued": queued}


async def work() -> None:
    conn, queries = await _queries()
    qm = QueueManager(queries)

    @qm.entrypoint("ok")
    async def ok(job: Job) -> None:
        return None

    @qm.entrypoint("boom", on_failure="hold")
    async def boom(job: Job) -> None:
        raise ValueError("boom on purpose")

    @qm.entrypoint("sleepy")
    async def sleepy(job: Job) -> None:
        while Path(os.environ["LIB_BLOCK"]).exists():
            await asyncio.sleep(0.1)

    async with conn:
        await qm.run(
            dequeue_timeout=timedelta(seconds=0.5),
            batch_size=1,
            heartbeat_timeout=timedelta(seconds=2),
        )


if __name__ == "__main__" and sys.argv[1:] == ["worker"]:
    asyncio.run(work())
