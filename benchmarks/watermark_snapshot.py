"""What a watermarked fifo's dequeue costs after many watermark advances under a held snapshot.

A fifo ``--watermark`` queue on PostgreSQL, another session holding a REPEATABLE READ snapshot
from the start (its xmin keeps every dead row version). The queue is filled and drained with
pops of 100 (one watermark advance each) until ``--advances`` advances have been made; at each
checkpoint, ``--samples`` single pops (one message each, autocommit, every 100th one advancing)
are run under EXPLAIN (ANALYZE, BUFFERS): the mean shared buffers and milliseconds per pop,
and the same for one call of the advance routine alone. Buffers are the figure that does not
depend on a busy machine. The queue's own routines are used (push, pop, advance).

    .venv/bin/python benchmarks/watermark_snapshot.py [--advances 3000] [--every 1000]
        [--samples 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

import psycopg
from places import place

QUEUE = "wmq"


def _explain(conn: psycopg.Connection[Any], sql: str) -> tuple[int, float]:
    """Shared buffers touched (hit + read) and milliseconds of one statement, run for real."""
    row = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}").fetchone()
    assert row is not None
    plan = (row[0] if isinstance(row[0], list) else json.loads(row[0]))[0]
    top = plan["Plan"]
    buffers = int(top.get("Shared Hit Blocks", 0)) + int(top.get("Shared Read Blocks", 0))
    return buffers, float(plan["Execution Time"])


def _fill(conn: psycopg.Connection[Any], count: int) -> None:
    conn.execute(
        f"SELECT count(*) FROM generate_series(1, %s) AS g, "
        f"LATERAL {QUEUE}_push(convert_to(lpad(g::text, 300, 'x'), 'UTF8')) AS p",
        [count],
    )


def measure(advances: int, every: int, samples: int) -> list[dict[str, Any]]:
    from qadmin.engines import open_engine
    from qadmin.ops import queues

    dsn, schema, drop = place("postgresql")
    try:
        engine = open_engine(dsn, schema)
        queues.create(engine, queues.make_spec(QUEUE, "fifo", None, False, watermark=True))
        engine.close()
        snapshot = psycopg.connect(dsn)
        snapshot.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        snapshot.execute("SELECT count(*) FROM pg_class").fetchone()
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute(f"SET search_path = {schema}")
        out: list[dict[str, Any]] = []
        done = 0
        while True:
            _fill(conn, samples)
            pops = [_explain(conn, f"SELECT * FROM {QUEUE}_pop(1)") for _ in range(samples)]
            advance = _explain(conn, f"SELECT * FROM {QUEUE}_wm_advance(NULL)")
            out.append(
                {
                    "advances": done,
                    "pop_buffers": statistics.mean(b for b, _ in pops),
                    "pop_ms": statistics.mean(ms for _, ms in pops),
                    "advance_buffers": advance[0],
                    "advance_ms": advance[1],
                }
            )
            if done >= advances:
                break
            step = min(every, advances - done)
            for _ in range(step):  # one advance per pop of 100
                _fill(conn, 100)
                conn.execute(f"SELECT count(*) FROM {QUEUE}_pop(100)")
            done += step
        snapshot.rollback()
        snapshot.close()
        conn.close()
        return out
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--advances", type=int, default=3000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    print(
        "| advances under the snapshot | pop: buffers | pop: ms | advance: buffers | advance: ms |"
    )
    print("|---|---|---|---|---|")
    for r in measure(args.advances, args.every, args.samples):
        print(
            f"| {r['advances']:,} | {r['pop_buffers']:.1f} | {r['pop_ms']:.3f} "
            f"| {r['advance_buffers']} | {r['advance_ms']:.3f} |"
        )


if __name__ == "__main__":
    main()
