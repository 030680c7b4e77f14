"""Push+pop throughput of the queue designs, and the watermark article's ghost experiment.

Part 1: naive fifo, fifo with watermark, ring, and ring with batches (push and pop 50 per
transaction), with 1/1 and 2/2 producer/consumer processes, on PostgreSQL, MariaDB and
SQLite; once durable, once with the commit cost taken out (PostgreSQL synchronous_commit=off
for the benchmark sessions, MariaDB innodb_flush_log_at_trx_commit=2 for the run, SQLite
PRAGMA synchronous=OFF). Every client goes through qadmin's own push/pop (the routines the
queue installs). Messages/s is the number popped during the measured window, divided by it.

Part 2: with a snapshot held open by another connection (a REPEATABLE READ transaction that
has read something), fill the queue with N rows and dequeue them all one pop per transaction,
naive fifo vs watermark, N = 30,000 and 60,000; the figure is the 60k/30k time ratio (2.0 is
linear; the naive queue's dequeue walks every dead row left behind, so it grows faster).

    .venv/bin/python benchmarks/queue_throughput.py [--seconds 4] [--part throughput|ghosts|all]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from places import PG

from qadmin import catalog
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import LockTimeout, QueueEmpty, QueueFull
from qadmin.ops import messages, queues

MY = "mysql://root@127.0.0.1:3306/test"
BATCH = 50
RING_CAPACITY = 10_000
DESIGNS = {
    "naive fifo": ("fifo", None, False, 1),
    "fifo + watermark": ("fifo", None, True, 1),
    "ring": ("ring", RING_CAPACITY, False, 1),
    "ring, batches of 50": ("ring", RING_CAPACITY, False, BATCH),
}


def _engine(dsn: str, schema: str | None, fast: bool) -> Engine:
    engine = open_engine(dsn, schema, Timeouts(lock_ms=30_000, statement_ms=600_000))
    if fast and engine.name == "postgresql":
        engine.conn.execute("SET synchronous_commit = off")
        engine.conn.commit()
    if fast and engine.name == "sqlite":
        engine.conn.execute("PRAGMA synchronous = OFF")
    return engine


def _worker(
    role: str,
    dsn: str,
    schema: str | None,
    fast: bool,
    batch: int,
    window: tuple[float, float],
    out: Any,
) -> None:
    """Push or pop until the window closes; count what completed inside it."""
    engine = _engine(dsn, schema, fast)
    spec = catalog.get(engine, "bench_q")
    payloads = [b"x" * 100] * batch
    start, stop = window
    done = 0
    while (now := time.monotonic()) < stop:
        try:
            if role == "push":
                n = len(messages.push(engine, spec, payloads))
            else:
                n = len(messages.pop(engine, spec, batch))
        except QueueFull as exc:
            n = len(exc.pushed)
            time.sleep(0.001)
        except (QueueEmpty, LockTimeout):
            n = 0
            time.sleep(0.001)
        if now >= start:
            done += n
    out.put((role, done))
    engine.close()


def _setup_schema(label: str) -> tuple[str, str | None, Callable[[], None]]:
    """A fresh schema/database (or SQLite file) for one run, and how to remove it."""
    if label == "SQLite":
        path = Path(tempfile.mkdtemp()) / "bench.db"
        return f"sqlite:///{path}", None, lambda: path.unlink(missing_ok=True)
    name = "bench_" + uuid.uuid4().hex[:8]
    if label == "PostgreSQL":
        import psycopg

        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")

        def drop() -> None:
            with psycopg.connect(PG, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {name} CASCADE")

        return PG, name, drop
    import pymysql

    admin = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    admin.cursor().execute(f"CREATE DATABASE {name}")

    def drop_db() -> None:
        admin.cursor().execute(f"DROP DATABASE {name}")
        admin.close()

    return MY.replace("/test", f"/{name}"), None, drop_db


def throughput(label: str, design: str, pairs: int, fast: bool, seconds: float) -> float:
    kind, capacity, watermark, batch = DESIGNS[design]
    dsn, schema, drop = _setup_schema(label)
    try:
        engine = _engine(dsn, schema, fast)
        queues.create(engine, queues.make_spec("bench_q", kind, capacity, False, watermark))
        engine.close()
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        start = time.monotonic() + 4.0  # spawning and connecting, then a warm-up second
        window = (start, start + seconds)
        procs = [
            ctx.Process(target=_worker, args=(role, dsn, schema, fast, batch, window, out))
            for role in ("push", "pop")
            for _ in range(pairs)
        ]
        for proc in procs:
            proc.start()
        results = [out.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(timeout=60)
        return sum(n for role, n in results if role == "pop") / seconds
    finally:
        drop()


def _fast_mariadb(on: bool) -> None:
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    conn.cursor().execute(f"SET GLOBAL innodb_flush_log_at_trx_commit = {2 if on else 1}")
    conn.close()


ENGINES = ("PostgreSQL", "MariaDB", "SQLite")


def run_throughput(seconds: float, engines: list[str], modes: list[bool]) -> None:
    print(f"push+pop messages/s over {seconds:g} s windows (100-byte payloads)")
    for label in engines:
        for fast in modes:
            if label == "MariaDB":
                _fast_mariadb(fast)
            mode = "commit cost out" if fast else "durable"
            for pairs in (1, 2):
                cells = []
                for design in DESIGNS:
                    rate = throughput(label, design, pairs, fast, seconds)
                    cells.append(f"{design} {rate:9,.0f}")
                print(f"{label:10} {mode:15} {pairs}/{pairs}  " + "  ".join(cells), flush=True)
    _fast_mariadb(False)


def ghosts(label: str, watermark: bool, rows: int) -> float:
    dsn, schema, drop = _setup_schema(label)
    try:
        engine = _engine(dsn, schema, True)
        spec = queues.create(engine, queues.make_spec("ghost_q", "fifo", None, False, watermark))
        table = engine.qualified("ghost_q")
        holder = _engine(dsn, schema, False)
        cursor = holder.conn.cursor()
        if holder.name == "postgresql":
            cursor.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        else:
            cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cursor.execute(f"SELECT count(*) FROM {table}")
        cursor.fetchall()
        for start in range(0, rows, 5000):
            messages.push(engine, spec, [b"g" * 100] * min(5000, rows - start))
        began = time.perf_counter()
        taken = 0
        while True:
            try:
                taken += len(messages.pop(engine, spec, 1))
            except QueueEmpty:
                break
        elapsed = time.perf_counter() - began
        assert taken == rows, (taken, rows)
        holder.conn.rollback()
        holder.close()
        engine.close()
        return elapsed
    finally:
        drop()


def run_ghosts(engines: list[str]) -> None:
    print("dequeue all N rows, one pop per transaction, snapshot held open elsewhere")
    for label in [e for e in engines if e != "SQLite"]:
        for watermark in (False, True):
            t30 = ghosts(label, watermark, 30_000)
            t60 = ghosts(label, watermark, 60_000)
            design = "fifo + watermark" if watermark else "naive fifo"
            print(
                f"{label:10} {design:17} 30k {t30:7.1f} s  60k {t60:7.1f} s  "
                f"ratio {t60 / t30:4.2f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--part", choices=["throughput", "ghosts", "all"], default="all")
    parser.add_argument("--engine", choices=ENGINES, action="append", help="default: all")
    parser.add_argument(
        "--mode", choices=["durable", "fast"], action="append", help="default: both"
    )
    args = parser.parse_args()
    engines = args.engine or list(ENGINES)
    modes = [m == "fast" for m in args.mode or ["durable", "fast"]]
    if args.part in ("throughput", "all"):
        run_throughput(args.seconds, engines, modes)
    if args.part in ("ghosts", "all"):
        run_ghosts(engines)


if __name__ == "__main__":
    main()
