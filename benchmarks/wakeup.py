"""pop --wait wake-up latency through the CLI: from a push's commit to the payload on the
waiting ``qadmin pop --wait 30 --raw``'s stdout; and what a waiting pop costs in CPU.

Each trial starts ``qadmin pop`` as a process on an empty fifo and lets it settle into its wait
(1.5 s: its start-up is not measured), then pushes one message from this process (its own
connection) and notes when the push returned, i.e. after its commit. The figure is the time the
payload's bytes arrived on the waiter's stdout minus that, p50 and max over ``--trials``. On
PostgreSQL the floor is a bare LISTEN/NOTIFY client measured the same way: a thread blocked in
psycopg's ``notifies()``, woken by a one-statement transaction that NOTIFYs (the listener can
hear it before the sender's commit returns: a figure near 0 or below). MariaDB and SQLite have
no notification: pop --wait probes the queue's head every 5 ms (docs/performance.md).

The waiting CPU: ``qadmin pop --wait 10`` on an empty queue, its user + system CPU (os.wait4)
minus the same command's with ``--wait 0``, over the 10 s: the share of one core a waiting
consumer costs on the client (the server answers the same probes).

    .venv/bin/python benchmarks/wakeup.py [--trials 20] [--engines postgresql,mariadb,sqlite]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
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


def _qadmin(dsn: str, schema: str | None, *args: str) -> list[str]:
    where = ["--dsn", dsn] + (["--schema", schema] if schema else [])
    code = "from qadmin.launch import main; main()"
    return [sys.executable, "-c", code, *where, *args]


def qadmin_wakeups(engine_name: str, trials: int) -> list[float]:
    dsn, schema, drop = place(engine_name)
    try:
        pusher = open_engine(dsn, schema)
        queues.create(pusher, queues.make_spec("wq", "fifo", None, False))
        spec = catalog.get(pusher, "wq")
        samples = []
        for _ in range(trials):
            argv = _qadmin(dsn, schema, "pop", "wq", "--wait", "30", "--raw")
            waiter = subprocess.Popen(argv, stdout=subprocess.PIPE)
            time.sleep(1.5)  # started, connected, found the queue empty and waiting
            assert waiter.poll() is None, "the waiter ended before the push"
            messages.push(pusher, spec, [b"wake"])
            committed = time.perf_counter()
            assert waiter.stdout is not None
            os.read(waiter.stdout.fileno(), 4)  # the payload's first bytes arrive
            samples.append(time.perf_counter() - committed)
            waiter.wait()
        pusher.close()
        return samples
    finally:
        drop()


def waiting_cpu(engine_name: str, seconds: float = 10.0) -> float:
    """The share of one core a ``pop --wait`` costs while its queue stays empty."""
    dsn, schema, drop = place(engine_name)
    try:
        pusher = open_engine(dsn, schema)
        queues.create(pusher, queues.make_spec("wq", "fifo", None, False))
        pusher.close()

        def cpu(wait: float) -> float:
            argv = _qadmin(dsn, schema, "pop", "wq", "--wait", f"{wait:g}")
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, _, usage = os.wait4(proc.pid, 0)
            return float(usage.ru_utime + usage.ru_stime)

        base = statistics.median(cpu(0) for _ in range(3))
        return (cpu(seconds) - base) / seconds
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
    print("| push commit → payload out | trials | p50 ms | max ms |")
    print("|---|---|---|---|")
    for engine in args.engines.split(","):
        if engine == "postgresql":
            print(_summary("bare LISTEN/NOTIFY client (floor)", bare_notify(args.trials)))
        samples = qadmin_wakeups(engine, args.trials)
        print(_summary(f"qadmin pop --wait (CLI), {engine}", samples), flush=True)
    print("\n| engine | waiting pop's CPU, share of one core (client) |\n|---|---|")
    for engine in args.engines.split(","):
        print(f"| {engine} | {waiting_cpu(engine):.1%} |", flush=True)
    print(f"\nload average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
