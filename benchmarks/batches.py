"""Batches against the commit floor, and push --lines against one INSERT ... SELECT.

Part 1 (``floor``): one session committing a one-row INSERT per transaction, for ``--seconds``:
the server's durable commit rate, which bounds every one-transaction-per-batch path.

Part 2 (``kinds``): per kind, one session alternating a batch push of ``--batch`` messages (one
statement, one transaction) and a pop of ``--batch`` (one statement, one transaction), through
qadmin's own push/pop, for ``--seconds`` in all: the kinds take ``--rounds`` turns, so the
server's drift over the run (InnoDB's purge backlog) does not fall on the kinds run last.
msg/s is messages popped / elapsed; each message costs two commits' share (its push batch and
its pop batch), so the ceiling is floor × batch / 2. Push and pop are also timed alone
(messages / the seconds spent in that call, its commit included), and the ring's batches are
printed as a ratio to the naive fifo's: push, pop and round trip.

Part 3 (``lines``): ``qadmin push QUEUE --lines --file F`` of ``--lines`` lines (a fifo), the
whole CLI process timed; the same lines through ``messages.push`` in process (the push_many
calls alone); against one INSERT ... SELECT of as many generated rows. On PostgreSQL also PGMQ's
``send_batch`` of the same lines (PGMQ installed from its PyPI package's SQL, in a database of
its own: places.py), in chunks of qadmin's size, and push --lines / send_batch as a ratio.
An engine's peers are the ``peers`` of ``push_lines``: one more is one more entry there.

    .venv/bin/python benchmarks/batches.py [--part floor,kinds,lines] [--seconds 10]
        [--batch 50] [--rounds 5] [--lines 100000] [--engines postgresql,mariadb]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from places import install_pgmq, pg_database, place

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


@dataclass
class Rates:
    """msg/s of one kind's loop: the round trip (popped / elapsed), and push and pop each
    alone (messages / the seconds spent in that call)."""

    round_trip: float
    push: float
    pop: float


class KindLoop:
    """One kind's loop of a batch push then a batch pop, run in slices: the kinds take turns
    (``kind_batches``), so what the server accumulates over the run (InnoDB's purge backlog, a
    growing history list) weighs on every kind alike, not on the ones run last."""

    def __init__(
        self, engine_name: str, kind: str, capacity: int | None, watermark: bool, batch: int
    ) -> None:
        dsn, schema, self.drop = place(engine_name)
        self.engine = _open(dsn, schema)
        self.spec = queues.create(
            self.engine, queues.make_spec("bq", kind, capacity, False, watermark)
        )
        self.payloads, self.batch = [b"x" * 300] * batch, batch
        self.pushed = self.popped = 0
        self.push_s = self.pop_s = self.elapsed = 0.0

    def run(self, seconds: float) -> None:
        start = time.monotonic()
        stop = start + seconds
        while time.monotonic() < stop:
            began = time.perf_counter()
            with suppress(QueueFull):
                self.pushed += len(messages.push(self.engine, self.spec, self.payloads))
            middle = time.perf_counter()
            with suppress(QueueEmpty):
                self.popped += len(messages.pop(self.engine, self.spec, self.batch))
            self.push_s += middle - began
            self.pop_s += time.perf_counter() - middle
        self.elapsed += time.monotonic() - start

    def rates(self) -> Rates:
        return Rates(
            self.popped / self.elapsed, self.pushed / self.push_s, self.popped / self.pop_s
        )

    def close(self) -> None:
        self.engine.close()
        self.drop()


def kind_batches(engine_name: str, batch: int, seconds: float, rounds: int) -> dict[str, Rates]:
    """Each kind's rates over ``seconds`` of its loop, in ``rounds`` turns of the kinds."""
    loops: dict[str, KindLoop] = {}
    try:
        for label, kind, capacity, watermark in KINDS:
            loops[label] = KindLoop(engine_name, kind, capacity, watermark, batch)
        for _ in range(rounds):
            for loop in loops.values():
                loop.run(seconds / rounds)
        return {label: loop.rates() for label, loop in loops.items()}
    finally:
        for loop in loops.values():
            loop.close()


@dataclass
class Lines:
    """Seconds for the same lines: ``qadmin push --lines`` (the whole CLI process), the same
    pushed in process (``messages.push``: push_many in chunks, without the CLI's start-up and
    output), one INSERT ... SELECT, and the peers' batch sends (``peers``: label -> seconds)."""

    cli_s: float
    inproc_s: float
    one_s: float
    peers: dict[str, float]


def push_lines(engine_name: str, lines: int) -> Lines:
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
    finally:
        drop()
    peers = {}
    if engine_name == "postgresql":
        peers["PGMQ send_batch"] = pgmq_send_batch(lines)
    return Lines(cli_s, inproc_s, one_s, peers)


def pgmq_send_batch(lines: int) -> float:
    """Seconds for PGMQ's ``send_batch`` of the same lines (each a JSON string: PGMQ's messages
    are jsonb), in chunks of qadmin's own ``PUSH_CHUNK``, each one call and one transaction,
    from the same process with the same driver: what qadmin's in-process push does."""
    import psycopg

    with pg_database() as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        install_pgmq(conn, "lines")
        bodies = [json.dumps(f"line-{n}") for n in range(lines)]
        start = time.monotonic()
        for at in range(0, lines, messages.PUSH_CHUNK):
            chunk = bodies[at : at + messages.PUSH_CHUNK]
            conn.execute("SELECT count(*) FROM pgmq.send_batch('lines', %s::jsonb[])", [chunk])
        took = time.monotonic() - start
        sent = conn.execute("SELECT count(*) FROM pgmq.q_lines").fetchone()
        if sent is None or sent[0] != lines:
            raise SystemExit(f"PGMQ send_batch stored {sent} messages, not {lines}")
        return took


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="floor,kinds,lines")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument(
        "--rounds", type=int, default=5, help="turns the kinds take, each --seconds / rounds"
    )
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
                f"| {engine} kind | msg/s, batches of {args.batch} (round trip) | push alone "
                "| pop alone | of floor × batch (the issue's measure) | of floor × batch / 2 |"
            )
            print("|---|---|---|---|---|---|")
            rates = kind_batches(engine, args.batch, args.seconds, args.rounds)
            for label, got in rates.items():
                print(
                    f"| {label} | {got.round_trip:,.0f} | {got.push:,.0f} | {got.pop:,.0f} "
                    f"| {got.round_trip / (floor * args.batch):.0%} "
                    f"| {got.round_trip / ceiling:.0%} |"
                )
            ring, naive = rates["ring"], rates["fifo"]
            print(
                f"{engine}: ring batch / naive (fifo) batch of {args.batch}: push "
                f"{_ratio(ring.push, naive.push)}, pop {_ratio(ring.pop, naive.pop)}, "
                f"round trip {_ratio(ring.round_trip, naive.round_trip)} (goal: ≥ 1 each)"
            )
        if "lines" in parts:
            got_lines = push_lines(engine, args.lines)
            cli_rate = args.lines / got_lines.cli_s
            inproc_rate = args.lines / got_lines.inproc_s
            print(
                f"{engine}: push --lines of {args.lines:,} lines {got_lines.cli_s:.2f} s "
                f"({cli_rate:,.0f} msg/s, whole CLI process); in process "
                f"{got_lines.inproc_s:.2f} s ({inproc_rate:,.0f} msg/s); one INSERT ... SELECT "
                f"{got_lines.one_s:.2f} s ({got_lines.cli_s / got_lines.one_s:.1f}×)"
            )
            for peer, seconds in got_lines.peers.items():
                peer_rate = args.lines / seconds
                print(
                    f"{engine}: {peer} of the same {args.lines:,} lines {seconds:.2f} s "
                    f"({peer_rate:,.0f} msg/s); push --lines / {peer}: "
                    f"{_ratio(cli_rate, peer_rate)} whole CLI process (goal: ≥ 0.50×), "
                    f"{_ratio(inproc_rate, peer_rate)} in process"
                )


if __name__ == "__main__":
    main()
