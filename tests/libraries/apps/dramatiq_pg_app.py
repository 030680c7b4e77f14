"""dramatiq-pg's own app for tests/libraries/test_dramatiq_pg.py: ``python -m`` this module
with ``worker QUEUE`` runs dramatiq's worker (one thread) on one named queue of dramatiq-pg's
broker until killed. Its table is dramatiq.queue; a message delayed with ``delay`` waits in
the queue ``<name>.DQ`` with its eta (epoch ms) in the message's options."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import dramatiq
from dramatiq.middleware import default_middleware
from dramatiq_pg import PostgresBroker

# dramatiq's default middleware less Prometheus (its metrics fail in a worker thread here).
MIDDLEWARE = [m() for m in default_middleware if m.__name__ != "Prometheus"]
broker = PostgresBroker(url=os.environ["LIB_DSN"], results=False, middleware=MIDDLEWARE)
dramatiq.set_broker(broker)


def _ok(n: int = 0) -> int:
    return n


def _boom() -> None:
    raise ValueError("boom on purpose")


def _sleepy() -> None:
    while Path(os.environ["LIB_BLOCK"]).exists():
        time.sleep(0.1)


# An actor belongs to one named queue: the same functions, once per queue. max_retries=0:
# a failure is rejected at once (a retry would wait in the delay queue).
ACTORS = {
    (queue, fn.__name__.strip("_")): dramatiq.actor(
        fn, actor_name=f"{fn.__name__.strip('_')}_{queue}", queue_name=queue, max_retries=0
    )
    for queue in ("orders", "mailers")
    for fn in (_ok, _boom, _sleepy)
}


def setup() -> None:
    """dramatiq-pg's schema; on each of ``orders`` and ``mailers``: a blocking job, two jobs
    behind it and one delayed an hour; on ``orders`` also three quick jobs and one that fails
    (rejected: its retry would go through the delay queue)."""
    from dramatiq_pg.schema import generate_init_sql

    with broker.pool.getconn() as conn:
        with conn.cursor() as curs:
            curs.execute(generate_init_sql())
        conn.commit()
    for n in range(3):
        ACTORS["orders", "ok"].send(n)
    ACTORS["orders", "boom"].send()
    for queue in ("orders", "mailers"):
        ACTORS[queue, "sleepy"].send()
        time.sleep(0.01)  # its mtime (the enqueue time) before those behind it
        for n in range(2):
            ACTORS[queue, "ok"].send(10 + n)
        ACTORS[queue, "ok"].send_with_options(args=(99,), delay=3600 * 1000)


if __name__ == "__main__" and sys.argv[1] == "worker":
    from dramatiq import Worker

    broker.declare_queue(sys.argv[2])
    worker = Worker(broker, queues={sys.argv[2]}, worker_threads=1, worker_timeout=200)
    worker.queue_prefetch = 1  # one message consumed at a time: the one it runs
    worker.start()
    while True:
        time.sleep(1)
