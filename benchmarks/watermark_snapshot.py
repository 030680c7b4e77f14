"""What a dequeue (a ring's push too) costs as a held snapshot keeps old row versions: fifo or ring.

Another session holds a REPEATABLE READ snapshot from the start (its xmin keeps every dead row
version), on PostgreSQL. Buffers are the figure that does not depend on a busy machine; the
milliseconds are the load's. The queue's own routines are used.

``--kind watermark`` (the default): a fifo ``--watermark`` queue is filled and drained with pops
of 100 (one watermark advance each) until ``--advances`` advances have been made; at each
checkpoint, ``--samples`` single pops (one message each, autocommit, every 100th one advancing)
are run under EXPLAIN (ANALYZE, BUFFERS): the mean shared buffers and milliseconds per pop,
and the same for one call of the advance routine alone.

``--kind ring``: a ring of ``--slots`` slots (created with qadmin's own API) is driven round by
batches of ``--batch`` messages (one ``push_many`` call, then one ``pop`` call of as many, each
its own transaction); at each checkpoint of ``--laps`` (laps of the ring: messages pushed /
slots), ``--samples`` single pushes, then as many single pops (each one call of the ring's push
or pop routine, autocommit) are run under EXPLAIN (ANALYZE, BUFFERS): the mean shared buffers
and milliseconds per push and per pop (after one unmeasured push and pop that compile the
routines); before them, the same for a plain primary-key read (``SELECT * FROM ring WHERE
slot = ...``) of each slot those pops will use. The samples' messages count in the laps.
Also the slot table's total size (pg_total_relation_size: heap and primary key) and its
n_tup_upd and n_tup_hot_upd (pg_stat_user_tables, after pg_stat_force_next_flush()), with the
HOT share of the updates made since the previous checkpoint.

    .venv/bin/python benchmarks/watermark_snapshot.py [--advances 3000] [--every 1000]
        [--samples 200]
    .venv/bin/python benchmarks/watermark_snapshot.py --kind ring [--slots 100000]
        [--laps 0,0.5,1,1.5,2,3] [--batch 1000] [--samples 200]
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


RING = "rsq"


def _ring_stats(conn: psycopg.Connection[Any], schema: str) -> tuple[int, int, int]:
    """The slot table's total size in bytes, n_tup_upd and n_tup_hot_upd."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    row = conn.execute(
        "SELECT pg_total_relation_size(relid), n_tup_upd, n_tup_hot_upd "
        "FROM pg_stat_user_tables WHERE schemaname = %s AND relname = %s",
        [schema, RING],
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def measure_ring(slots: int, laps: list[float], batch: int, samples: int) -> list[dict[str, Any]]:
    from qadmin.engines import open_engine
    from qadmin.ops import queues

    dsn, schema, drop = place("postgresql")
    assert schema is not None
    try:
        engine = open_engine(dsn, schema)
        queues.create(engine, queues.make_spec(RING, "ring", slots, False))
        engine.close()
        snapshot = psycopg.connect(dsn)
        snapshot.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        snapshot.execute("SELECT count(*) FROM pg_class").fetchone()
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute(f"SET search_path = {schema}")
        payload = "convert_to(repeat('x', 300), 'UTF8')"
        many = (
            f"SELECT count(*) FROM {RING}_push_many("
            f"(SELECT array_agg({payload}) FROM generate_series(1, %s)))"
        )
        # one push and one pop first, so that no sample pays for compiling the routines
        conn.execute(f"SELECT * FROM {RING}_push({payload})")
        conn.execute(f"SELECT * FROM {RING}_pop(1)")
        out: list[dict[str, Any]] = []
        pushed = 1
        last_upd = last_hot = 0
        for lap in sorted(laps):
            target = round(lap * slots)
            while pushed < target:
                n = min(batch, target - pushed)
                row = conn.execute(many, [n]).fetchone()
                assert row is not None and row[0] == n, "the ring refused a push"
                row = conn.execute(f"SELECT count(*) FROM {RING}_pop(%s)", [n]).fetchone()
                assert row is not None and row[0] == n
                pushed += n
            size, upd, hot = _ring_stats(conn, schema)
            row = conn.execute(f"SELECT last_value + 1 FROM {RING}_pop_seq").fetchone()
            assert row is not None
            nxt = int(row[0])  # the pop sequence has been called (the warm-up pop)
            lookups = [
                _explain(conn, f"SELECT * FROM {RING} WHERE slot = {(nxt + i) % slots}")
                for i in range(samples)
            ]
            pushes = [
                _explain(conn, f"SELECT * FROM {RING}_push({payload})") for _ in range(samples)
            ]
            pops = [_explain(conn, f"SELECT * FROM {RING}_pop(1)") for _ in range(samples)]
            out.append(
                {
                    "laps": pushed / slots,
                    "push_buffers": statistics.mean(b for b, _ in pushes),
                    "push_ms": statistics.mean(ms for _, ms in pushes),
                    "pop_buffers": statistics.mean(b for b, _ in pops),
                    "pop_ms": statistics.mean(ms for _, ms in pops),
                    "lookup_buffers": statistics.mean(b for b, _ in lookups),
                    "size_mb": size / 1e6,
                    "n_tup_upd": upd,
                    "n_tup_hot_upd": hot,
                    "hot_share": (hot - last_hot) / (upd - last_upd) if upd > last_upd else None,
                }
            )
            last_upd, last_hot = upd, hot
            pushed += samples
        snapshot.rollback()
        snapshot.close()
        conn.close()
        return out
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("watermark", "ring"), default="watermark")
    parser.add_argument("--advances", type=int, default=3000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--slots", type=int, default=100_000)
    parser.add_argument("--laps", default="0,0.5,1,1.5,2,3")
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    if args.kind == "ring":
        laps = [float(x) for x in args.laps.split(",")]
        print(
            "| laps under the snapshot | push: buffers | push: ms | pop: buffers | pop: ms "
            "| one slot lookup: buffers | table + index MB | n_tup_upd | n_tup_hot_upd "
            "| HOT share since previous |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in measure_ring(args.slots, laps, args.batch, args.samples):
            share = "" if r["hot_share"] is None else f"{r['hot_share']:.0%}"
            print(
                f"| {r['laps']:.2f} | {r['push_buffers']:.1f} | {r['push_ms']:.3f} "
                f"| {r['pop_buffers']:.1f} | {r['pop_ms']:.3f} | {r['lookup_buffers']:.1f} "
                f"| {r['size_mb']:.1f} "
                f"| {r['n_tup_upd']:,} | {r['n_tup_hot_upd']:,} | {share} |",
                flush=True,
            )
        return
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
