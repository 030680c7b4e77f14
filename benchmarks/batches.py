"""Batches against the commit floor, and push --lines against one INSERT ... SELECT.

Part 1 (``floor``): one session committing a one-row INSERT per transaction, for ``--seconds``:
the server's durable commit rate, which bounds every one-transaction-per-batch path.

Part 2 (``kinds``): per kind, one session alternating a batch push of ``--batch`` messages (one
statement, one transaction) and a pop of ``--batch`` (one statement, one transaction), through
qadmin's own push/pop, for ``--seconds``. msg/s is messages popped / elapsed; each message costs
two commits' share (its push batch and its pop batch), so the ceiling is floor × batch / 2.

Part 3 (``lines``): ``qadmin push QUEUE --lines --file F`` of ``--lines`` lines (a fifo), the
whole CLI process timed; the same lines through ``messages.push`` in process (the push_many
calls alone); against one INSERT ... SELECT of as many generated rows.

    .venv/bin/python benchmarks/batches.py [--part floor,kinds,lines] [--seconds 10]
        [--batch 50] [--lines 100000] [--engines postgresql,mariadb]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from pathlib import Path

from places import place

from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import QueueEmpty, QueueFull
from qadmin.ops import messages, queues

# (label, kind, capacity, watermark). A claim queue is left out: its acks go one message per
# call (there is no batch ack routine), so its loop would not be a batch path.
KINDS = [
    ("heap", "heap", None, False),
    ("fifo", "fifo", None, False),
    ("fifo --watermark", "fifo", None, True),
    ("lifo", "lifo", None, False),
    ("pending", "pending", None, False),
    ("capped", "capped", 100_000, False),
    ("ring", "ring", 100_000, False),
]


def _open(dsn: str, schema: str | None) -> Engine:
    return open_engine(dsn, schema, Timeouts(lock_ms=30_000, statement_ms=600_000))


def commit_floor(engine_name: str, seconds: float) -> float:
    dsn, schema, drop = place(engine_name)
    try:
        engine = _open(dsn, schema)
        table = engine.qualified("floor_t")
        engine.run([f"CREATE TABLE {table} (id bigint)"])
        done = 0
        stop = time.monotonic() + seconds
        start = time.monotonic()
        while time.monotonic() < stop:
            engine.run([f"INSERT INTO {table} (id) VALUES (1)"])
            done += 1
        rate = done / (time.monotonic() - start)
        engine.close()
        return rate
    finally:
        drop()


def kind_batches(
    engine_name: str, kind: str, capacity: int | None, watermark: bool, batch: int, seconds: float
) -> float:
    dsn, schema, drop = place(engine_name)
    try:
        engine = _open(dsn, schema)
        spec = queues.create(engine, queues.make_spec("bq", kind, capacity, False, watermark))
        payloads = [b"x" * 300] * batch
        popped = 0
        start = time.monotonic()
        stop = start + seconds
        while time.monotonic() < stop:
            with suppress(QueueFull):
                messages.push(engine, spec, payloads)
            with suppress(QueueEmpty):
                popped += len(messages.pop(engine, spec, batch))
        rate = popped / (time.monotonic() - start)
        engine.close()
        return rate
    finally:
        drop()


def push_lines(engine_name: str, lines: int) -> tuple[float, float, float]:
    """Seconds for ``qadmin push --lines`` of ``lines`` lines, for the same lines pushed in
    process (``messages.push``: push_many in chunks, without the CLI's start-up and output), and
    for one INSERT ... SELECT."""
    dsn, schema, drop = place(engine_name)
    try:
        engine = _open(dsn, schema)
        queues.create(engine, queues.make_spec("lq", "fifo", None, False))
        queues.create(engine, queues.make_spec("sq", "fifo", None, False))
        inproc = queues.create(engine, queues.make_spec("pq", "fifo", None, False))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "lines.txt"
            path.write_bytes(b"".join(b"line-%d\n" % n for n in range(lines)))
            args = ["--dsn", dsn] + (["--schema", schema] if schema else [])
            cmd = [sys.executable, "-m", "qadmin", "push", "lq", "--lines", "--file", str(path)]
            start = time.monotonic()
            subprocess.run([*cmd, *args, "--format", "csv"], check=True, stdout=subprocess.DEVNULL)
            cli_s = time.monotonic() - start
        payloads = [b"line-%d" % n for n in range(lines)]
        start = time.monotonic()
        messages.push(engine, inproc, payloads)
        inproc_s = time.monotonic() - start
        table = engine.qualified("sq")
        if engine_name == "postgresql":
            insert = (
                f"INSERT INTO {table} (payload) SELECT convert_to('line-' || g, 'UTF8') "
                f"FROM generate_series(0, {lines - 1}) AS g"
            )
        else:
            insert = (
                f"INSERT INTO {table} (enqueued_at, payload) SELECT UTC_TIMESTAMP(6), "
                f"CONCAT('line-', seq) FROM seq_0_to_{lines - 1}"
            )
        start = time.monotonic()
        engine.run([insert])
        one_s = time.monotonic() - start
        engine.close()
        return cli_s, inproc_s, one_s
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="floor,kinds,lines")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--engines", default="postgresql,mariadb")
    args = parser.parse_args()
    parts = args.part.split(",")
    if unknown := set(parts) - {"floor", "kinds", "lines"}:
        parser.error(f"unknown --part {', '.join(sorted(unknown))}: choose from floor,kinds,lines")
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    for engine in args.engines.split(","):
        floor = None
        if "floor" in parts or "kinds" in parts:
            floor = commit_floor(engine, args.seconds)
            print(f"{engine}: single-session commit floor {floor:,.0f} commits/s")
        if "kinds" in parts and floor:
            ceiling = floor * args.batch / 2
            print(
                f"| {engine} kind | msg/s, batches of {args.batch} | of floor × batch "
                "(the issue's measure) | of floor × batch / 2 |"
            )
            print("|---|---|---|---|")
            for label, kind, capacity, watermark in KINDS:
                rate = kind_batches(engine, kind, capacity, watermark, args.batch, args.seconds)
                print(
                    f"| {label} | {rate:,.0f} | {rate / (floor * args.batch):.0%} "
                    f"| {rate / ceiling:.0%} |"
                )
        if "lines" in parts:
            cli_s, inproc_s, one_s = push_lines(engine, args.lines)
            print(
                f"{engine}: push --lines of {args.lines:,} lines {cli_s:.2f} s "
                f"({args.lines / cli_s:,.0f} msg/s, whole CLI process); in process "
                f"{inproc_s:.2f} s ({args.lines / inproc_s:,.0f} msg/s); one INSERT ... SELECT "
                f"{one_s:.2f} s ({cli_s / one_s:.1f}×)"
            )


if __name__ == "__main__":
    main()
