"""Oban for Python's own app for tests/libraries/test_oban.py. Oban needs Python 3.12, so
this module runs under the interpreter of .cache/oban-py312 (tests/libraries/conftest.py
builds it) and never imports qadmin: ``python -m`` this module with

- ``setup``: installs Oban's schema and enqueues on two named queues, ``orders`` and
  ``mailers``: on each a job that blocks while LIB_BLOCK exists, jobs behind it, one
  scheduled an hour ahead; on ``orders`` three quick jobs and one that fails into a retry an
  hour ahead; one ``mailers`` job is put in 'suspended' (Oban Pro's workflows leave jobs
  there; Oban for Python installs the state but never sets it itself);
- ``worker QUEUE``: Oban's own worker on one queue (concurrency 1, its producer beating in
  oban_producers every second), until killed;
- ``doomed N``: installs Oban's schema and enqueues N jobs on queue ``doomed`` whose one
  attempt fails (Oban discards them), printing their ids; ``retry ID``: Oban's own
  retry_job of one job (tests/libraries/test_dead_jobs.py);
- ``view``: prints Oban's own view as a JSON line: its counts per queue and state
  (Query.count_jobs), and the executing jobs whose producer Oban's refresher has pruned
  (cleanup_expired_producers at its default max_age, 60 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from oban import Oban, worker

STATES = [
    "available",
    "scheduled",
    "suspended",
    "executing",
    "retryable",
    "completed",
    "discarded",
    "cancelled",
]


@worker(queue="orders")
class Ok:
    async def process(self, job: Any) -> None:
        return None


@worker(queue="orders", max_attempts=3)
class Boom:
    async def process(self, job: Any) -> None:
        raise ValueError("boom on purpose")

    def backoff(self, job: Any) -> int:
        return 3600  # its retry waits an hour: 'retryable', not yet due


@worker(queue="orders")
class Sleepy:
    async def process(self, job: Any) -> None:
        while Path(os.environ["LIB_BLOCK"]).exists():
            await asyncio.sleep(0.1)


@worker(queue="doomed", max_attempts=1)
class Doomed:
    async def process(self, job: Any) -> None:
        raise ValueError(f"doomed on purpose {job.args['n']}")


async def _pool() -> Any:
    return await Oban.create_pool(os.environ["LIB_DSN"], min_size=1, max_size=4)


async def setup() -> None:
    pool = await _pool()
    try:
        oban = Oban(pool=pool)
        await oban._query.install()  # before it starts: its stager reads oban_jobs
        async with oban:
            later = timedelta(hours=1)
            for n in range(3):
                await oban.enqueue(Ok.new({"n": n}))
            await oban.enqueue(Boom.new({}))
            await oban.enqueue(Sleepy.new({}))
            for n in range(2):
                await oban.enqueue(Ok.new({"behind": n}))
            await oban.enqueue(Ok.new({"later": 1}, scheduled_in=later))
            await oban.enqueue(Sleepy.new({}, queue="mailers"))
            for n in range(2):
                await oban.enqueue(Ok.new({"behind": n}, queue="mailers"))
            await oban.enqueue(Ok.new({"later": 1}, queue="mailers", scheduled_in=later))
            held = await oban.enqueue(Ok.new({"held": 1}, queue="mailers"))
        async with pool.connection() as conn:
            await conn.execute("UPDATE oban_jobs SET state = 'suspended' WHERE id = %s", (held.id,))
    finally:
        await pool.close()


async def run_worker(queue: str) -> None:
    pool = await _pool()
    oban = Oban(
        pool=pool,
        queues={queue: 1},
        refresher={"interval": 1.0},
        # No rescue while the test runs: qadmin must tell the dead worker's job itself.
        lifeline={"interval": 3600.0, "rescue_after": 3600.0},
        stager={"interval": 0.2},
    )
    await oban.start()
    await asyncio.Event().wait()


async def doomed(count: int) -> list[int]:
    pool = await _pool()
    try:
        oban = Oban(pool=pool)
        await oban._query.install()
        return [int((await oban.enqueue(Doomed.new({"n": n}))).id) for n in range(count)]
    finally:
        await pool.close()


async def retry(job_id: int) -> None:
    pool = await _pool()
    try:
        await Oban(pool=pool).retry_job(job_id)
    finally:
        await pool.close()


async def view() -> dict[str, Any]:
    pool = await _pool()
    try:
        oban = Oban(pool=pool)
        counts = await oban._query.count_jobs(STATES)
        await oban._query.cleanup_expired_producers(60.0)
        async with pool.connection() as conn:
            rows = await conn.execute(
                "SELECT j.id FROM oban_jobs j WHERE j.state = 'executing' AND NOT EXISTS"
                " (SELECT 1 FROM oban_producers p WHERE p.uuid::text = j.attempted_by[2])"
                " ORDER BY j.id"
            )
            orphaned = [int(r[0]) for r in await rows.fetchall()]
        by_queue: dict[str, dict[str, int]] = {}
        for state, queue, n in counts:
            by_queue.setdefault(queue, {})[state] = int(n)
        return {"counts": by_queue, "orphaned": orphaned}
    finally:
        await pool.close()


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "setup":
        asyncio.run(setup())
    elif command == "worker":
        asyncio.run(run_worker(sys.argv[2]))
    elif command == "doomed":
        print(json.dumps(asyncio.run(doomed(int(sys.argv[2])))))
    elif command == "retry":
        asyncio.run(retry(int(sys.argv[2])))
    elif command == "view":
        print(json.dumps(asyncio.run(view())))
