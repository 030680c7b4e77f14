"""procrastinate's own app for tests/libraries/test_procrastinate.py: ``python -m`` this
module with ``worker`` runs procrastinate's worker with a fast heartbeat."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import procrastinate

app = procrastinate.App(
    connector=procrastinate.PsycopgConnector(conninfo=os.environ["LIB_DSN"]),
)


@app.task(queue="work", name="ok")
def ok(n: int) -> int:
    return n


@app.task(queue="work", name="boom")
def boom() -> None:
    raise ValueError("boom on purpose")


@app.task(
    queue="work",
    name="retried",
    retry=procrastinate.RetryStrategy(max_attempts=2, wait=3600),
)
def retried() -> None:
    """Fails once: procrastinate puts it back to 'todo' an hour ahead (attempts 1)."""
    raise ValueError("retried on purpose")


@app.task(queue="work", name="sleepy")
def sleepy() -> None:
    while Path(os.environ["LIB_BLOCK"]).exists():
        time.sleep(0.1)


@app.task(queue="idle", name="later")
def later() -> None:
    """Nobody listens on queue 'idle': these jobs stay waiting."""


if __name__ == "__main__" and sys.argv[1:] == ["worker"]:
    app.run_worker(
        queues=["work"],
        concurrency=1,
        update_heartbeat_interval=0.5,
        stalled_worker_timeout=1.0,
        fetch_job_polling_interval=0.2,
        install_signal_handlers=False,
    )
