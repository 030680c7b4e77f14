"""Does inspect's work on the server grow with the queue? Time it at two queue sizes.

Builds a fifo queue of N rows (bulk INSERT ... SELECT, not qadmin pushes, to keep set-up short)
on PostgreSQL and MariaDB, runs ``diagnose.inspect`` several times and prints the median wall
time per size and the ratio large/small. Run:

    .venv/bin/python benchmarks/inspect_scaling.py [--small 1000] [--large 1000000] [--runs 7]

Each run makes its own schema / database and drops it afterwards.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from places import PG

from qadmin.diagnostics import run as diagnose
from qadmin.diagnostics.entries import size
from qadmin.engines import Engine, open_engine
from qadmin.ops import queues

MY = "mysql://root@127.0.0.1:3306/"


def fill_postgres(engine: Engine, rows: int) -> None:
    table = engine.qualified("bench_q")
    engine.run(
        [
            f"INSERT INTO {table} (payload) SELECT convert_to(repeat('x', 100), 'UTF8') "
            f"FROM generate_series(1, {rows})",
            f"ANALYZE {table}",
        ]
    )


def fill_mysql(engine: Engine, rows: int) -> None:
    table = engine.qualified("bench_q")
    batch = min(rows, 100_000)
    for _ in range(rows // batch):
        engine.run(
            [
                "SET SESSION cte_max_recursion_depth = 1000000"
                if engine.dialect == "mysql"
                else "SET SESSION max_recursive_iterations = 1000000",
                f"INSERT INTO {table} (enqueued_at, payload) "
                f"WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
                f"WHERE n < {batch}) SELECT UTC_TIMESTAMP(6), REPEAT('x', 100) FROM s",
            ]
        )
    engine.run([f"ANALYZE TABLE {table}"])


def measure(engine: Engine, rows: int, fill, runs: int) -> float:
    spec = queues.create(engine, queues.make_spec("bench_q", "fifo", None, False))
    fill(engine, rows)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = diagnose.inspect(engine, spec)
        times.append(time.perf_counter() - started)
    queues.drop(engine, spec)
    part = report.part(size.ENTRY)
    assert part is not None
    print(
        f"    {rows:>9,} rows: median {statistics.median(times) * 1000:7.1f} ms "
        f"(depth {part.depth:,}, exact={part.depth_exact})"
    )
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    name = "qb_" + uuid.uuid4().hex[:8]
    import psycopg
    import pymysql

    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{name}"')
        try:
            print("PostgreSQL")
            engine = open_engine(PG, name)
            small = measure(engine, args.small, fill_postgres, args.runs)
            large = measure(engine, args.large, fill_postgres, args.runs)
            print(f"    ratio large/small: {large / small:.2f}")
            engine.close()
        finally:
            admin.execute(f'DROP SCHEMA "{name}" CASCADE')
    admin_my = pymysql.connect(host="127.0.0.1", user="root", password="", autocommit=True)
    with admin_my.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
        try:
            print("MariaDB")
            engine = open_engine(MY + name)
            small = measure(engine, args.small, fill_mysql, args.runs)
            large = measure(engine, args.large, fill_mysql, args.runs)
            print(f"    ratio large/small: {large / small:.2f}")
            engine.close()
        finally:
            cur.execute(f"DROP DATABASE `{name}`")


if __name__ == "__main__":
    main()
