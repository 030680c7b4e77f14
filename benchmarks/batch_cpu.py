"""The server's CPU per batch call on PostgreSQL: what a loaded machine does not blur.

A fifo and a ring (100,000 slots), fresh, in a schema of their own; one psycopg session each
calls the queue's ``push_many`` of ``--batch`` 300-byte payloads then its ``pop(--batch)``,
alternating, in autocommit, ``--calls`` times. Printed per call: the backend's CPU time (from
``/proc/<pid>/schedstat``: the server must run on this machine) minimum and median, and wall
median. The minimum is the least disturbed call; wall time includes the commit.

    PYTHONPATH=src .venv/bin/python benchmarks/batch_cpu.py [--batch 50] [--calls 300]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from places import place

from qadmin.engines import open_engine
from qadmin.ops import queues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    import psycopg

    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    dsn, schema, drop = place("postgresql")
    try:
        engine = open_engine(dsn, schema)
        queues.create(engine, queues.make_spec("f", "fifo", None, False))
        queues.create(engine, queues.make_spec("r", "ring", 100_000, False))
        engine.close()
        kinds = {"fifo": "f", "ring": "r"}
        conns = {
            k: psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}")
            for k in kinds
        }
        pids = {k: c.execute("SELECT pg_backend_pid()").fetchone()[0] for k, c in conns.items()}
        cpu: dict[str, dict[str, list[float]]] = {k: {"push": [], "pop": []} for k in kinds}
        wall: dict[str, dict[str, list[float]]] = {k: {"push": [], "pop": []} for k in kinds}
        payloads = [b"x" * 300] * args.batch

        def used(kind: str) -> int:
            return int(Path(f"/proc/{pids[kind]}/schedstat").read_text().split()[0])

        for _ in range(args.calls):
            for kind, q in kinds.items():
                conn = conns[kind]
                for op, sql, params in (
                    ("push", f"SELECT * FROM {q}_push_many(%s)", [payloads]),
                    ("pop", f"SELECT * FROM {q}_pop(%s)", [args.batch]),
                ):
                    before, began = used(kind), time.perf_counter()
                    rows = conn.execute(sql, params).fetchall()
                    wall[kind][op].append((time.perf_counter() - began) * 1e3)
                    cpu[kind][op].append((used(kind) - before) / 1e3)
                    if len(rows) != args.batch:
                        raise SystemExit(f"{kind} {op} returned {len(rows)} rows")
        print(f"| batch of {args.batch} | server CPU µs min / median | wall ms median |")
        print("|---|---|---|")
        for kind in kinds:
            for op in ("push", "pop"):
                got = cpu[kind][op]
                print(
                    f"| {kind} {op} | {min(got):,.0f} / {statistics.median(got):,.0f} "
                    f"| {statistics.median(wall[kind][op]):.2f} |"
                )
        for conn in conns.values():
            conn.close()
    finally:
        drop()


if __name__ == "__main__":
    main()
