"""How long PostgreSQL's table counters take to show a delete, which bounds tail's dequeue rate.

A worker deletes rows; an observer polls pg_stat_user_tables.n_tup_del in fresh transactions
until the deletes show. Three worker behaviours: it stays busy (a transaction every 100 ms), it
goes idle, it disconnects. Run:

    .venv/bin/python benchmarks/pg_stats_lag.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid

import psycopg
from places import PG as DSN


def deleted(observer: psycopg.Connection, table: str) -> int:
    row = observer.execute(
        "SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = %s::regclass", (table,)
    ).fetchone()
    observer.commit()
    return int(row[0])


def lag(table: str, behaviour: str) -> float:
    observer = psycopg.connect(DSN)
    before = deleted(observer, table)
    worker = psycopg.connect(DSN, autocommit=True)
    worker.execute(f"INSERT INTO {table} SELECT g FROM generate_series(1, 100) g")
    stop = threading.Event()
    busy = None
    done_at = time.monotonic()
    worker.execute(f"DELETE FROM {table}")
    done_at = time.monotonic()
    if behaviour == "disconnect":
        worker.close()
    elif behaviour == "busy":

        def keep_busy() -> None:
            while not stop.is_set():
                worker.execute("SELECT 1")
                time.sleep(0.1)

        busy = threading.Thread(target=keep_busy)
        busy.start()
    while deleted(observer, table) < before + 100:
        time.sleep(0.02)
        if time.monotonic() - done_at > 30:
            break
    seen = time.monotonic() - done_at
    stop.set()
    if busy:
        busy.join()
    if not worker.closed:
        worker.close()
    observer.close()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = "qadmin_lag_" + uuid.uuid4().hex[:8]
    with psycopg.connect(DSN, autocommit=True) as admin:
        admin.execute(f"CREATE TABLE {table} (id int)")
        try:
            for behaviour in ("disconnect", "busy", "idle"):
                times = [lag(table, behaviour) for _ in range(args.repeat)]
                print(
                    f"worker {behaviour:10}: deletes visible after median "
                    f"{statistics.median(times):5.2f} s (max {max(times):5.2f} s)"
                )
        finally:
            admin.execute(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
