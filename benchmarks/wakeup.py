"""pop --wait wake-up latency: from a push's commit to the waiting pop's return.

A waiter thread (its own connection) runs qadmin's pop with a 30 s wait on an empty fifo; after
a random 0.2-0.6 s the main thread pushes one message (its own connection) and notes when the
push returned, i.e. after its commit. The figure is the waiter's return time minus that, p50 and
max over ``--trials``. On PostgreSQL the floor is a bare LISTEN/NOTIFY client measured the same
way: a thread blocked in psycopg's ``notifies()``, woken by a one-statement transaction that
NOTIFYs (the listener can hear it before the sender's commit returns: a figure near 0 or
below). MariaDB and SQLite have no notification: their pop --wait polls (docs/performance.md).

    .venv/bin/python benchmarks/wakeup.py [--trials 20] [--engines postgresql,mariadb,sqlite]
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
import uuid

from places import PG, place

from qadmin import catalog
from qadmin.engines import open_engine
from qadmin.ops import messages, queues


def _summary(label: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    return f"| {label} | {len(ms)} | {statistics.median(ms):.2f} | {ms[-1]:.2f} |"


def qadmin_wakeups(engine_name: str, trials: int) -> list[float]:
    dsn, schema, drop = place(engine_name)
    try:
        pusher = open_engine(dsn, schema)
        queues.create(pusher, queues.make_spec("wq", "fifo", None, False))
        waiter = open_engine(dsn, schema)
        spec = catalog.get(waiter, "wq")
        samples = []
        for _ in range(trials):
            returned: list[float] = []

            def wait(returned: list[float] = returned) -> None:
                messages.pop(waiter, spec, 1, wait_s=30)
                returned.append(time.perf_counter())

            thread = threading.Thread(target=wait)
            thread.start()
            time.sleep(random.uniform(0.2, 0.6))
            messages.push(pusher, spec, [b"wake"])
            committed = time.perf_counter()
            thread.join()
            samples.append(returned[0] - committed)
        pusher.close()
        waiter.close()
        return samples
    finally:
        drop()


def bare_notify(trials: int) -> list[float]:
    import psycopg

    channel = "bench_" + uuid.uuid4().hex[:8]
    listener = psycopg.connect(PG, autocommit=True)
    sender = psycopg.connect(PG, autocommit=True)
    listener.execute(f"LISTEN {channel}")
    samples = []
    for _ in range(trials):
        returned: list[float] = []

        def wait(returned: list[float] = returned) -> None:
            for _ in listener.notifies(timeout=30, stop_after=1):
                returned.append(time.perf_counter())

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(random.uniform(0.2, 0.6))
        sender.execute(f"NOTIFY {channel}")
        committed = time.perf_counter()
        thread.join()
        samples.append(returned[0] - committed)
    listener.close()
    sender.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--engines", default="postgresql,mariadb,sqlite")
    args = parser.parse_args()
    print("| push commit → pop return | trials | p50 ms | max ms |")
    print("|---|---|---|---|")
    for engine in args.engines.split(","):
        if engine == "postgresql":
            print(_summary("bare LISTEN/NOTIFY client (floor)", bare_notify(args.trials)))
        print(_summary(f"qadmin pop --wait, {engine}", qadmin_wakeups(engine, args.trials)))


if __name__ == "__main__":
    main()
