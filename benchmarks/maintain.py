"""What ``qadmin maintain --yes`` gives back on a bloated queue, while producers and consumers run.

Per engine, in a place of its own (places.py; PostgreSQL: a database of its own): a fifo queue
gets MESSAGES 200-byte messages pushed and all but BACKLOG popped (on PostgreSQL while a
REPEATABLE READ snapshot is held, then released, as after a long report, and with autovacuum
off on the table so that only maintain cleans it; on SQLite the empty file is set to
auto_vacuum = INCREMENTAL first, else only a blocking VACUUM could give pages back, which
maintain refuses).
Before and after maintain: the table's and its indexes' bytes, and the dequeue's head
read (the dequeue statement's read of the first message: ``peek 1``) as the median of 50 runs,
plus on PostgreSQL the buffers EXPLAIN (ANALYZE, BUFFERS) counts for it. maintain runs as a
process (``qadmin maintain bloat_q --yes --format json``), twice (the second pass sees the
statistics the first gathered: PostgreSQL's index bloat estimate needs them), while one
producer and one consumer thread push and pop 10 messages at a time; their slowest call and
an exactly-once audit of their ids are printed too.

    .venv/bin/python benchmarks/maintain.py [--messages N] [--backlog N]
        [--engines postgresql,mariadb,sqlite]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from places import place

from qadmin import catalog
from qadmin.engines import Engine, open_engine
from qadmin.errors import QueueEmpty
from qadmin.kinds import QueueSpec
from qadmin.ops import messages, queues

QADMIN = str(Path(sys.executable).parent / "qadmin")


def _pop(engine: Engine, spec: QueueSpec, count: int) -> list[messages.Message]:
    try:
        return messages.pop(engine, spec, count)
    except QueueEmpty:
        return []


def bloat(engine: Engine, dsn: str, spec: QueueSpec, total: int, backlog: int) -> None:
    holder = None
    if engine.name == "postgresql":
        import psycopg

        engine.run([f"ALTER TABLE {engine.qualified(spec.name)} SET (autovacuum_enabled = off)"])
        holder = psycopg.connect(dsn)
        holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1").fetchone()
    for _ in range(0, total, 5000):
        messages.push(engine, spec, [b"b" * 200] * 5000)
    left = total
    while left > backlog:
        left -= len(_pop(engine, spec, min(1000, left - backlog)))
    if holder is not None:
        holder.rollback()
        holder.close()


def sizes(engine: Engine, spec: QueueSpec) -> dict[str, Any]:
    """Bytes of the table and its indexes as the engine measures them (exact, not estimated)."""
    table = engine.qualified(spec.name)
    if engine.name == "postgresql":
        row = engine.query(
            f"SELECT pg_table_size('{table}') AS t, pg_indexes_size('{table}') AS i"
        )[0]
        return {"table_bytes": int(row["t"]), "index_bytes": int(row["i"])}
    if engine.name == "sqlite":
        row = engine.query(
            "SELECT p.page_count * s.page_size AS f, l.freelist_count * s.page_size AS free "
            "FROM pragma_page_count() AS p, pragma_page_size() AS s, pragma_freelist_count() AS l"
        )[0]
        return {"file_bytes": int(row["f"]), "free_bytes": int(row["free"])}
    # DATA_LENGTH is InnoDB's statistic, refreshed in the background: refresh it now (maintain's
    # proposal reads the same statistic)
    engine.run([f"ANALYZE TABLE {table}"])
    row = engine.diagnostic("size", {"schema": engine.schema, "table": spec.name})[0]
    return {k: int(row[k] or 0) for k in ("table_bytes", "index_bytes", "free_bytes")}


def head_read(engine: Engine, spec: QueueSpec) -> dict[str, Any]:
    times = []
    for _ in range(50):
        start = time.perf_counter()
        messages.peek(engine, spec, 1)
        times.append((time.perf_counter() - start) * 1000)
    out: dict[str, Any] = {"head_read_ms": round(statistics.median(times), 3)}
    if engine.name == "postgresql":
        plan = engine.query(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM "
            f"{engine.qualified(spec.name)} ORDER BY id LIMIT 1"
        )[0]
        top = plan["QUERY PLAN".lower()][0]["Plan"]
        out["head_buffers"] = int(top.get("Shared Hit Blocks", 0)) + int(
            top.get("Shared Read Blocks", 0)
        )
    return out


class Traffic:
    """One producer and one consumer thread, each on its own connection."""

    def __init__(self, dsn: str, schema: str | None, spec: QueueSpec) -> None:
        self.dsn, self.schema, self.spec = dsn, schema, spec
        self.pushed: list[int] = []
        self.popped: list[int] = []
        self.slowest = 0.0
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.loop, args=(w,)) for w in ("push", "pop")]

    def loop(self, what: str) -> None:
        engine = open_engine(self.dsn, self.schema)
        while not self.stop.is_set():
            start = time.monotonic()
            if what == "push":
                rows = messages.push(engine, self.spec, [b"t" * 200] * 10)
                self.pushed.extend(int(r.id) for r in rows)
            else:
                self.popped.extend(int(r.id) for r in _pop(engine, self.spec, 10))
            self.slowest = max(self.slowest, time.monotonic() - start)
            time.sleep(0.005)
        engine.close()


def _pg_database() -> tuple[str, str | None, Any]:
    """PostgreSQL in a database of its own: VACUUM's horizon counts only snapshots in the same
    database, and the shared ``test`` database has other sessions' open."""
    import uuid

    import psycopg
    from places import PG

    name = "bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")

    def drop() -> None:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")

    return PG.rsplit("/", 1)[0] + "/" + name, "public", drop


def run(engine_name: str, total: int, backlog: int) -> dict[str, Any]:
    dsn, schema, drop = _pg_database() if engine_name == "postgresql" else place(engine_name)
    try:
        engine = open_engine(dsn, schema)
        if engine.name == "sqlite":  # set on the empty file: no VACUUM needed to switch
            engine.run_outside_transaction("PRAGMA auto_vacuum = INCREMENTAL")
        spec = queues.create(engine, queues.make_spec("bloat_q", "fifo", None, False))
        bloat(engine, dsn, spec, total, backlog)
        spec = catalog.get(engine, "bloat_q")
        before = {**sizes(engine, spec), **head_read(engine, spec)}
        args = [QADMIN, "maintain", "bloat_q", "--yes", "--format", "json", "--dsn", dsn]
        args += ["--schema", schema] if schema else []
        traffic = Traffic(dsn, schema, spec)
        for thread in traffic.threads:
            thread.start()
        passes = []
        for _ in range(2):
            start = time.monotonic()
            done = subprocess.run(args, capture_output=True, text=True, timeout=600)
            report = json.loads(done.stdout) if done.stdout.strip() else {"actions": []}
            actions = [f"{a['action']} {a['target']}: {a['status']}" for a in report["actions"]]
            passes.append(
                {
                    "exit": done.returncode,
                    "s": round(time.monotonic() - start, 2),
                    "actions": actions,
                }
            )
        traffic.stop.set()
        for thread in traffic.threads:
            thread.join()
        while rest := _pop(engine, spec, 1000):
            traffic.popped.extend(int(r.id) for r in rest)
        after = {**sizes(engine, spec), **head_read(engine, spec)}
        pushed = set(traffic.pushed)
        exactly_once = len(traffic.popped) - len(set(traffic.popped)) == 0 and pushed <= set(
            traffic.popped
        )
        engine.close()
        return {
            "engine": engine_name,
            "before": before,
            "after": after,
            "passes": passes,
            "traffic": {
                "pushed": len(pushed),
                "slowest_call_s": round(traffic.slowest, 3),
                "exactly_once": exactly_once,
            },
        }
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--backlog", type=int, default=1000)
    parser.add_argument("--engines", default="postgresql,mariadb,sqlite")
    ns = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average: {load}, cores: {os.cpu_count()}")
    for name in ns.engines.split(","):
        result = run(name, ns.messages, ns.backlog)
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
