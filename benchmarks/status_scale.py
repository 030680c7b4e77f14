"""How long `qadmin status` takes, and how many buffers it reads, on a server with many queues.

A PostgreSQL database of its own: --schemas schemas of --queues qadmin queues each (fifo,
claim, ring, pending, lifo in turn, a few messages each), plus an Oban and a River table of
--rows rows each (three named queues; most rows finished, 20,000 scheduled for tomorrow, a few
ready and running), with the libraries' own (state, queue, ...) indexes, analyzed. It prints:

- `status` through the CLI, as a DBA runs it (wall time of the process, median of --repeat);
- the same queues read in-process two ways side by side: status's parts (every part check
  reads but the rate sample, the server-wide ones read once for all the queues, as status
  reads them) and a full `inspect` of each (every part, no rate sample, each queue alone);
- status's own reading in process (finding included) on one connection and on two, alternated;
- the shared buffers each read touched (pg_stat_database blks_hit + blks_read of the bench
  database, which nothing else uses).

    .venv/bin/python benchmarks/status_scale.py --schemas 20 --queues 10 --rows 1000000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid

import psycopg
from psycopg.conninfo import make_conninfo

PG = os.environ.get("QADMIN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
KINDS = ("fifo", "claim", "ring", "pending", "lifo")

OBAN = """
CREATE TYPE lib.oban_job_state AS ENUM ('available', 'scheduled', 'executing', 'retryable',
  'completed', 'discarded', 'cancelled');
CREATE TABLE lib.oban_jobs (id bigserial PRIMARY KEY,
  state lib.oban_job_state NOT NULL DEFAULT 'available', queue text NOT NULL DEFAULT 'default',
  worker text NOT NULL, args jsonb NOT NULL DEFAULT '{}', errors jsonb[] NOT NULL DEFAULT '{}',
  attempt integer NOT NULL DEFAULT 0, max_attempts integer NOT NULL DEFAULT 20,
  inserted_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
  scheduled_at timestamp NOT NULL DEFAULT timezone('UTC', now()),
  attempted_at timestamp, completed_at timestamp, attempted_by text[], discarded_at timestamp,
  priority integer NOT NULL DEFAULT 0, tags varchar(255)[] DEFAULT '{}', meta jsonb DEFAULT '{}',
  cancelled_at timestamp);
CREATE INDEX ON lib.oban_jobs (state, queue, priority, scheduled_at, id);
"""
RIVER = """
CREATE TYPE lib.river_job_state AS ENUM ('available', 'cancelled', 'completed', 'discarded',
  'pending', 'retryable', 'running', 'scheduled');
CREATE TABLE lib.river_job (id bigserial PRIMARY KEY,
  state lib.river_job_state NOT NULL DEFAULT 'available', attempt smallint NOT NULL DEFAULT 0,
  max_attempts smallint NOT NULL DEFAULT 25, attempted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(), finalized_at timestamptz,
  scheduled_at timestamptz NOT NULL DEFAULT now(), priority smallint NOT NULL DEFAULT 1,
  args jsonb NOT NULL DEFAULT '{}', attempted_by text[], errors jsonb[], kind text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}', queue text NOT NULL DEFAULT 'default',
  tags varchar(255)[] NOT NULL DEFAULT '{}');
CREATE INDEX ON lib.river_job (state, queue, priority, scheduled_at, id);
"""


def _fill_library(conn: psycopg.Connection, table: str, rows: int, done: str, run: str) -> None:
    ts = "timezone('UTC', now())" if table == "oban_jobs" else "now()"
    worker = "worker" if table == "oban_jobs" else "kind"
    queues = "(ARRAY['mailers', 'default', 'reports'])[1 + mod(g, 3)]"
    bulk = rows - 20_000 - 20
    conn.execute(
        f"INSERT INTO lib.{table} (state, queue, {worker}, scheduled_at) "
        f"SELECT '{done}', {queues}, 'W', {ts} - interval '1 day' FROM generate_series(1, %s) g",
        (bulk,),
    )
    conn.execute(
        f"INSERT INTO lib.{table} (state, queue, {worker}, scheduled_at) "
        f"SELECT 'scheduled', {queues}, 'W', {ts} + interval '1 day' "
        "FROM generate_series(1, 20000) g"
    )
    conn.execute(
        f"INSERT INTO lib.{table} (state, queue, {worker}, scheduled_at) "
        f"SELECT 'available', {queues}, 'W', {ts} - interval '30 seconds' "
        "FROM generate_series(1, 15) g"
    )
    conn.execute(
        f"INSERT INTO lib.{table} (state, queue, {worker}, attempted_at) "
        f"SELECT '{run}', {queues}, 'W', {ts} - interval '2 minutes' FROM generate_series(1, 5) g"
    )
    conn.execute(f"ANALYZE lib.{table}")


def _buffers(dsn: str, database: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT blks_hit + blks_read FROM pg_stat_database WHERE datname = %s", (database,)
        ).fetchone()
    return int(row[0]) if row else 0


def setup(dsn: str, url: str, schemas: int, per_schema: int, rows: int) -> None:
    """The bench database (this script's and metrics_scale.py's): ``schemas`` schemas of
    ``per_schema`` qadmin queues, two messages each, and (``rows`` > 0) the Oban and River
    tables filled."""
    from qadmin.engines import open_engine
    from qadmin.kinds import Kind, QueueSpec
    from qadmin.ops import messages, queues

    for s in range(schemas):
        schema = f"app{s:02d}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        engine = open_engine(url, schema)
        for q in range(per_schema):
            kind = Kind(KINDS[q % len(KINDS)])
            capacity = 100 if kind is Kind.RING else None
            spec = queues.create(engine, QueueSpec(f"q{q:02d}", kind, capacity=capacity))
            messages.push(engine, spec, [b"x", b"y"])
        engine.close()
    if rows:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA lib")
            conn.execute(OBAN)
            conn.execute(RIVER)
            _fill_library(conn, "oban_jobs", rows, "completed", "executing")
            _fill_library(conn, "river_job", rows, "completed", "running")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--schemas", type=int, default=20)
    parser.add_argument("--queues", type=int, default=10, help="qadmin queues per schema")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per library table")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    database = "qadmin_bench_status_" + uuid.uuid4().hex[:6]
    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {database}")
    dsn = make_conninfo(PG, dbname=database)
    url = f"postgresql://postgres@127.0.0.1:5432/{database}"
    try:
        started = time.monotonic()
        setup(dsn, url, args.schemas, args.queues, args.rows)
        print(f"# set-up: {time.monotonic() - started:.1f} s")
        load = os.getloadavg()
        print(f"# machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}")
        print(
            f"# {args.schemas} schemas x {args.queues} qadmin queues, "
            f"oban_jobs and river_job of {args.rows:,} rows (3 named queues each)"
        )

        walls, reads, lines = [], [], 0
        for _ in range(args.repeat):
            before = _buffers(dsn, database)
            t0 = time.monotonic()
            out = subprocess.run(
                [sys.executable, "-m", "qadmin", "status", "--dsn", url, "--format", "json"],
                capture_output=True,
                text=True,
                check=False,
            )
            walls.append(time.monotonic() - t0)
            reads.append(_buffers(dsn, database) - before)
            lines = out.stdout.count('"name"')
            if out.returncode not in (0, 1, 2, 3):
                raise SystemExit(f"status failed: {out.stderr}")
        print(
            f"status (CLI process): {lines} lines, wall median {statistics.median(walls):.2f} s "
            f"(runs {', '.join(f'{w:.2f}' for w in walls)}), buffers median "
            f"{int(statistics.median(reads)):,}"
        )
        _side_by_side(url, dsn, database)
    finally:
        with psycopg.connect(PG, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def _side_by_side(url: str, dsn: str, database: str) -> None:
    """The same queues, read in-process: status's parts (its one reading of the server-wide
    parts shared) against a full inspect of each alone."""
    from qadmin.diagnostics import registry, run
    from qadmin.diagnostics.model import Options
    from qadmin.engines import open_engine
    from qadmin.ops import status

    for label, parts in (("status's parts", status.PARTS), ("full inspect", None)):
        engine = open_engine(url)
        found = status.find(engine, {})
        shared = registry.server_reads() if parts is not None else None
        before = _buffers(dsn, database)
        t0 = time.monotonic()
        for item in found.items:
            engine.use_schema(item.schema)
            run.inspect_resolved(engine, item.resolved, Options(sample_s=0), parts, shared)
        elapsed = time.monotonic() - t0
        engine.close()
        print(
            f"{label} (in-process, after finding them): {len(found.items)} queues, "
            f"{elapsed:.2f} s, buffers {_buffers(dsn, database) - before:,}"
        )
    # status's own reading (status.gather: finding included), on one connection and on two,
    # alternated: the design compared in one run
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(3):
        for connections in (1, 2):
            engine = open_engine(url)
            t0 = time.monotonic()
            status.gather(engine, {}, connections=connections)
            times[connections].append(time.monotonic() - t0)
            engine.close()
    for connections, walls in times.items():
        print(
            f"status.gather on {connections} connection{'s' if connections > 1 else ''} "
            f"(in-process): median {statistics.median(walls):.2f} s "
            f"(runs {', '.join(f'{w:.2f}' for w in walls)})"
        )


if __name__ == "__main__":
    main()
