"""The long operations a DBA waits on: ring create, convert of a backlog, resize.

Per engine, in a fresh schema (PostgreSQL) or database (MariaDB):
- ``create --kind ring --capacity SLOTS``, timed through qadmin's own create, against one bare
  INSERT of as many slot rows into a table of the same shape (the floor);
- ``convert`` of a fifo holding MESSAGES 300-byte messages (filled by one INSERT ... SELECT, not
  timed) to a ring of as many slots, against one CREATE TABLE ... AS SELECT of the same rows
  (the floor: writing the backlog once, timed just before the convert);
- ``resize`` of that ring (still full) to twice its capacity.

Smoke sizes by default; ``--full`` is the issue's: 5,000,000 slots, 1,000,000 messages. Each
operation is printed with its floor and the ratio (issue 30's goals: convert <= 3x its floor,
ring create <= 1.5x its floor), and ``/proc/loadavg`` before and after.

    .venv/bin/python benchmarks/long_ops.py [--full] [--slots N] [--messages N]
        [--engines postgresql,mariadb] [--no-resize]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from places import place

from qadmin import catalog
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.ops import convert, queues, resize


def _open(dsn: str, schema: str | None) -> Engine:
    return open_engine(dsn, schema, Timeouts(lock_ms=60_000, statement_ms=3_600_000))


def _timed(work: Callable[[], object]) -> float:
    start = time.monotonic()
    work()
    return time.monotonic() - start


def ring_create(engine_name: str, slots: int) -> tuple[float, float]:
    dsn, schema, drop = place(engine_name)
    try:
        engine = _open(dsn, schema)
        spec = queues.make_spec("big_ring", "ring", slots, False)
        create_s = _timed(lambda: queues.create(engine, spec))
        bare = engine.qualified("bare_slots")
        if engine_name == "postgresql":
            engine.run(
                [
                    f"CREATE TABLE {bare} (slot integer PRIMARY KEY, message_id bigint, "
                    "enqueued_at timestamptz, reference_count smallint NOT NULL DEFAULT 0, "
                    "payload bytea) WITH (fillfactor = 70)"
                ]
            )
            insert = f"INSERT INTO {bare} (slot) SELECT generate_series(0, {slots - 1})"
        else:
            engine.run(
                [
                    f"CREATE TABLE {bare} (slot INT NOT NULL PRIMARY KEY, message_id BIGINT, "
                    "enqueued_at DATETIME(6), reference_count SMALLINT NOT NULL DEFAULT 0, "
                    "payload LONGBLOB) ENGINE=InnoDB"
                ]
            )
            insert = f"INSERT INTO {bare} (slot) SELECT seq FROM seq_0_to_{slots - 1}"
        bare_s = _timed(lambda: engine.run([insert]))
        engine.close()
        return create_s, bare_s
    finally:
        drop()


def convert_and_resize(
    engine_name: str, count: int, with_resize: bool = True
) -> tuple[float, float, float | None]:
    dsn, schema, drop = place(engine_name)
    try:
        engine = _open(dsn, schema)
        queues.create(engine, queues.make_spec("backlog", "fifo", None, False))
        table = engine.qualified("backlog")
        if engine_name == "postgresql":
            fill = (
                f"INSERT INTO {table} (payload) SELECT convert_to(rpad(g::text, 300, '.'), "
                f"'UTF8') FROM generate_series(1, {count}) AS g"
            )
        else:
            fill = (
                f"INSERT INTO {table} (enqueued_at, payload) SELECT UTC_TIMESTAMP(6), "
                f"RPAD(seq, 300, '.') FROM seq_1_to_{count}"
            )
        engine.run([fill])
        copy = engine.qualified("floor_copy")
        ctas = f"CREATE TABLE {copy} AS SELECT id, enqueued_at, payload FROM {table}"
        if engine_name != "postgresql":
            ctas = (
                f"CREATE TABLE {copy} ENGINE=InnoDB AS SELECT id, enqueued_at, payload FROM {table}"
            )
        floor_s = _timed(lambda: engine.run([ctas]))
        engine.run([f"DROP TABLE {copy}"])
        convert_s = _timed(
            lambda: convert.convert(engine, convert.source(engine, "backlog"), count)
        )
        spec = catalog.get(engine, "backlog")
        resize_s = _timed(lambda: resize.resize(engine, spec, 2 * count)) if with_resize else None
        engine.close()
        return convert_s, floor_s, resize_s
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="5,000,000 slots, 1,000,000 messages")
    parser.add_argument("--slots", type=int, default=None)
    parser.add_argument("--messages", type=int, default=None)
    parser.add_argument("--engines", default="postgresql,mariadb")
    parser.add_argument("--no-resize", action="store_true", help="skip the resize (the longest)")
    args = parser.parse_args()
    slots = args.slots or (5_000_000 if args.full else 500_000)
    count = args.messages or (1_000_000 if args.full else 100_000)
    print(f"load before: {_load()}")
    print("| engine | operation | seconds | floor / note |")
    print("|---|---|---|---|")
    for engine in args.engines.split(","):
        create_s, bare_s = ring_create(engine, slots)
        print(
            f"| {engine} | create --kind ring --capacity {slots:,} | {create_s:.2f} | "
            f"bare INSERT of the slots {bare_s:.2f} s ({create_s / bare_s:.1f}×) |"
        )
        convert_s, floor_s, resize_s = convert_and_resize(engine, count, not args.no_resize)
        print(
            f"| {engine} | convert of {count:,} messages to a ring | {convert_s:.2f} | "
            f"CREATE TABLE AS of the backlog {floor_s:.2f} s ({convert_s / floor_s:.1f}×) |"
        )
        if resize_s is not None:
            print(f"| {engine} | resize of that full ring to {2 * count:,} | {resize_s:.2f} | |")
    print(f"load after: {_load()}")


def _load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().strip()


if __name__ == "__main__":
    main()
