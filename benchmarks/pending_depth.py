"""What a pending queue's depth read costs: the due messages and the scheduled ones, each a
bounded walk of the (due_at, id) index (sql/queues/postgresql/pending.sql ``due`` and
``scheduled``). Prints size.measure's figures and time, and the buffers PostgreSQL's plan of
each section touched: bounded by the 10,001-row limit, whatever the queue holds.

    PYTHONPATH=src python benchmarks/pending_depth.py [--dsn DSN] [--later 200000] [--due 50000]
"""

from __future__ import annotations

import argparse
import time

from qadmin.diagnostics.entries import size
from qadmin.engines import open_engine
from qadmin.ops import queues

SCHEMA = "bench_pending_depth"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--later", type=int, default=200_000)
    parser.add_argument("--due", type=int, default=50_000)
    args = parser.parse_args()
    admin = open_engine(args.dsn)
    admin.run([f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE', f'CREATE SCHEMA "{SCHEMA}"'])
    engine = open_engine(args.dsn, SCHEMA)
    try:
        spec = queues.create(engine, queues.make_spec("pb", "pending", None, False))
        table = engine.qualified("pb")
        rows = "'x'::bytea FROM generate_series(1, :n)"
        later = f"INSERT INTO {table} (due_at, payload) SELECT now() + interval '1 hour', {rows}"
        due = f"INSERT INTO {table} (due_at, payload) SELECT now() - interval '10 min', {rows}"
        engine.run([later], {"n": args.later})
        engine.run([due], {"n": args.due})
        engine.run_outside_transaction(f"ANALYZE {table}")
        for _ in range(3):
            started = time.perf_counter()
            part = size.measure(engine, spec)
            ms = (time.perf_counter() - started) * 1000
            print(
                f"measure: depth {part.depth} ({part.depth_quality}), scheduled "
                f"{part.scheduled}, oldest {part.oldest_age_s} s, {ms:.0f} ms"
            )
        for section in ("due", "scheduled"):
            statements = engine.hooks.section(spec, section)
            explain = "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF) " + statements[-1]
            with engine.transaction() as execute:
                for statement in statements[:-1]:
                    execute(statement)
                plan = [next(iter(r.values())) for r in execute(explain, {"limit": 10_001})]
            buffers = next(line.strip() for line in plan if "Buffers" in line)
            cond = next(line.strip() for line in plan if "Cond" in line or "Filter" in line)
            print(f"{section}: {buffers}; {cond}")
    finally:
        engine.close()
        admin.run([f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE'])
        admin.close()


if __name__ == "__main__":
    main()
