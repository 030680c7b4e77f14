"""MariaDB batch pops against a plain DELETE ... RETURNING, in one run (issue 30, goal 2).

Part 1 (``pops``): per kind (fifo, lifo, ring, claim, pending), a pop of ``--batch`` messages
timed three ways, round by round so the machine's load falls on all alike: the queue's routine
called as an application calls it (``CALL q_pop(50)`` on a plain autocommit pymysql connection,
its result sets counted), qadmin's own path (``messages.pop_delivering``, what ``qadmin pop -n
50`` runs, delivering to nothing), and the floor: a plain ``DELETE FROM t ORDER BY id LIMIT 50
RETURNING id, enqueued_at, payload`` (autocommit) on a table of a fifo's shape. Every table
holds ``--depth`` messages of 300 bytes; each round pushes ``--batch`` (untimed) and pops as
many. The median of ``--rounds`` rounds, and its ratio to the DELETE's median.

Part 2 (``loop``): a ring against a fifo, one session alternating a batch push of ``--batch``
(``messages.push``) and a pop of ``--batch`` (``messages.pop``), the two kinds taking turns in
slices of ``--seconds`` / 4 so drift falls on both; msg/s is messages popped / time in the loop,
with the push and pop time apart.

Part 3 (``lines``): ``qadmin push Q --lines --file F`` of ``--lines`` lines into a fifo, the
whole CLI process timed.

    .venv/bin/python benchmarks/mariadb_pops.py [--part pops,loop,lines] [--rounds 200]
        [--batch 50] [--depth 1000] [--seconds 20] [--lines 100000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import pymysql
from places import place

from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import QueueEmpty, QueueFull
from qadmin.kinds import QueueSpec
from qadmin.ops import messages, queues

KINDS = [("fifo", None), ("lifo", None), ("ring", 100_000), ("claim", None), ("pending", None)]
PAYLOAD = b"x" * 300


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _open(dsn: str) -> Engine:
    return open_engine(dsn, None, Timeouts(lock_ms=30_000, statement_ms=600_000))


def _raw(dsn: str) -> Any:
    """A plain application connection: autocommit, as a consumer calling the routine."""
    database = dsn.rsplit("/", 1)[1]
    return pymysql.connect(
        host="127.0.0.1",
        user="root",
        database=database,
        autocommit=True,
        client_flag=pymysql.constants.CLIENT.MULTI_RESULTS,
    )


def _call(cursor: Any, sql: str, args: tuple[Any, ...]) -> tuple[int, int]:
    """Run ``sql``; (rows, result sets) over all its result sets."""
    cursor.execute(sql, args)
    rows = sets = 0
    while True:
        if cursor.description:
            rows += len(cursor.fetchall())
            sets += 1
        if not cursor.nextset():
            return rows, sets


def pops(batch: int, depth: int, rounds: int) -> None:
    dsn, _, drop = place("mariadb")
    try:
        engine = _open(dsn)
        raw = _raw(dsn)
        cur = raw.cursor()
        specs: dict[str, tuple[QueueSpec, QueueSpec]] = {}
        for kind, capacity in KINDS:
            pair = tuple(
                queues.create(engine, queues.make_spec(f"{kind}_{way}", kind, capacity, False))
                for way in ("call", "qadmin")
            )
            for spec in pair:
                messages.push(engine, spec, [PAYLOAD] * depth)
            specs[kind] = pair  # type: ignore[assignment]
        cur.execute(
            "CREATE TABLE plain_t (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
            "enqueued_at DATETIME(6) NOT NULL, payload LONGBLOB NOT NULL) ENGINE=InnoDB"
        )
        fill = (
            "INSERT INTO plain_t (enqueued_at, payload) SELECT UTC_TIMESTAMP(6), %s FROM seq_1_to_"
        )
        cur.execute(fill + str(depth), (PAYLOAD,))
        plain_sql = (
            f"DELETE FROM plain_t ORDER BY id LIMIT {batch} RETURNING id, enqueued_at, payload"
        )

        timings: dict[str, list[float]] = {"plain DELETE … RETURNING": []}
        sets_seen: dict[str, set[int]] = {"plain DELETE … RETURNING": set()}
        steps: list[tuple[str, Callable[[], None], Callable[[], tuple[int, int]]]] = []

        def add(label: str, push: Callable[[], None], pop: Callable[[], tuple[int, int]]) -> None:
            timings[label] = []
            sets_seen[label] = set()
            steps.append((label, push, pop))

        steps.append(
            (
                "plain DELETE … RETURNING",
                lambda: cur.execute(fill + str(batch), (PAYLOAD,)),
                lambda: _call(cur, plain_sql, ()),
            )
        )
        for kind, _capacity in KINDS:
            call_spec, q_spec = specs[kind]
            # CALL `db`.`q_pop`(:count[, :worker])
            routine = engine.hooks.section(call_spec, "pop")[0]
            name = routine.split("(")[0].removeprefix("CALL ").strip()
            args: tuple[Any, ...] = (batch, "bench") if call_spec.info.claims else (batch,)
            marks = ", ".join(["%s"] * len(args))

            def push_to(spec: QueueSpec = call_spec) -> None:
                messages.push(engine, spec, [PAYLOAD] * batch)

            def call_pop(
                sql: str = f"CALL {name}({marks})", a: tuple[Any, ...] = args
            ) -> tuple[int, int]:
                return _call(cur, sql, a)

            def qadmin_push(spec: QueueSpec = q_spec) -> None:
                messages.push(engine, spec, [PAYLOAD] * batch)

            def qadmin_pop(spec: QueueSpec = q_spec) -> tuple[int, int]:
                got = messages.pop_delivering(engine, spec, batch, len)
                return len(got.rows), 0

            add(f"{kind}: CALL (application)", push_to, call_pop)
            add(f"{kind}: qadmin pop -n {batch} path", qadmin_push, qadmin_pop)

        for _ in range(rounds):
            for label, push, pop in steps:
                push()
                start = time.perf_counter()
                rows, sets = pop()
                timings[label].append(time.perf_counter() - start)
                if rows != batch:
                    raise SystemExit(f"{label}: popped {rows}, not {batch}")
                sets_seen[label].add(sets)
        floor = statistics.median(timings["plain DELETE … RETURNING"])
        print(
            f"| pop of {batch} (depth {depth}, {rounds} rounds) | result sets | median ms "
            "| mean ms | × plain DELETE … RETURNING |"
        )
        print("|---|---|---|---|---|")
        for label, values in timings.items():
            median = statistics.median(values)
            sets = ", ".join(str(s) for s in sorted(sets_seen[label])) or "—"
            if "qadmin pop" in label:
                sets = "(read by qadmin)"
            print(
                f"| {label} | {sets} | {median * 1000:.2f} | {statistics.mean(values) * 1000:.2f} "
                f"| {median / floor:.2f}× |"
            )
        raw.close()
        engine.close()
    finally:
        drop()


def loop(batch: int, seconds: float) -> None:
    dsn, _, drop = place("mariadb")
    try:
        engine = _open(dsn)
        specs = {
            "fifo": queues.create(engine, queues.make_spec("lf", "fifo", None, False)),
            "ring": queues.create(engine, queues.make_spec("lr", "ring", 100_000, False)),
        }
        payloads = [PAYLOAD] * batch
        popped = dict.fromkeys(specs, 0)
        push_s = dict.fromkeys(specs, 0.0)
        pop_s = dict.fromkeys(specs, 0.0)
        for _ in range(4):
            for label, spec in specs.items():
                stop = time.monotonic() + seconds / 8
                while time.monotonic() < stop:
                    start = time.perf_counter()
                    with suppress(QueueFull):
                        messages.push(engine, spec, payloads)
                    middle = time.perf_counter()
                    with suppress(QueueEmpty):
                        popped[label] += len(messages.pop(engine, spec, batch))
                    push_s[label] += middle - start
                    pop_s[label] += time.perf_counter() - middle
        print(
            f"| batches of {batch}, {seconds:g} s per kind | msg/s (push + pop) "
            "| push msg/s | pop msg/s |"
        )
        print("|---|---|---|---|")
        rates = {}
        for label in specs:
            rates[label] = popped[label] / (push_s[label] + pop_s[label])
            print(
                f"| {label} | {rates[label]:,.0f} | {popped[label] / push_s[label]:,.0f} "
                f"| {popped[label] / pop_s[label]:,.0f} |"
            )
        print(f"ring / fifo: {rates['ring'] / rates['fifo']:.2f}×")
        engine.close()
    finally:
        drop()


def lines(count: int) -> None:
    dsn, _, drop = place("mariadb")
    try:
        engine = _open(dsn)
        queues.create(engine, queues.make_spec("lq", "fifo", None, False))
        engine.close()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "lines.txt"
            path.write_bytes(b"".join(b"line-%d\n" % n for n in range(count)))
            cmd = [sys.executable, "-m", "qadmin", "push", "lq", "--lines", "--file", str(path)]
            start = time.monotonic()
            subprocess.run(
                [*cmd, "--dsn", dsn, "--format", "csv"], check=True, stdout=subprocess.DEVNULL
            )
            took = time.monotonic() - start
        print(
            f"push --lines of {count:,} lines: {took:.2f} s ({count / took:,.0f} msg/s, "
            "whole CLI process)"
        )
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", default="pops,loop,lines")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    parts = args.part.split(",")
    if unknown := set(parts) - {"pops", "loop", "lines"}:
        parser.error(f"unknown --part {', '.join(sorted(unknown))}: choose from pops,loop,lines")
    print(f"load average at start: {_load()}")
    if "pops" in parts:
        pops(args.batch, args.depth, args.rounds)
        print(f"load average: {_load()}")
    if "loop" in parts:
        loop(args.batch, args.seconds)
        print(f"load average: {_load()}")
    if "lines" in parts:
        lines(args.lines)
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    main()
