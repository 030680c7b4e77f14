"""How long one `qadmin metrics` scrape takes on a PostgreSQL server with many queues.

The same database as benchmarks/status_scale.py builds (its set-up is reused): --schemas
schemas of --queues qadmin queues each (fifo, claim, ring, pending, lifo in turn, two messages
each), plus an Oban and a River table of --rows rows (three named queues each). It prints:

- `qadmin metrics` and `qadmin status` through the CLI, in turn --repeat times (wall time of
  each process, its start included: the same load for both);
- `qadmin metrics --listen 127.0.0.1:0` scraped over HTTP --repeat times, as Prometheus does
  (each request one scrape; the time of each request, the process already running);
- the shared buffers each read touched (pg_stat_database of the bench database).

    .venv/bin/python benchmarks/metrics_scale.py --schemas 20 --queues 10 --rows 1000000
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
import status_scale  # the set-up of the same database

PG = status_scale.PG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--schemas", type=int, default=20)
    parser.add_argument("--queues", type=int, default=10, help="qadmin queues per schema")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per library table")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    database = "qadmin_bench_metrics_" + uuid.uuid4().hex[:6]
    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {database}")
    dsn = make_conninfo(PG, dbname=database)
    url = f"postgresql://postgres@127.0.0.1:5432/{database}"
    server = None
    try:
        started = time.monotonic()
        status_scale.setup(dsn, url, args.schemas, args.queues, args.rows)
        print(f"# set-up: {time.monotonic() - started:.1f} s")
        load = os.getloadavg()
        print(f"# machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f}")
        print(
            f"# {args.schemas} schemas x {args.queues} qadmin queues"
            + (f", oban_jobs and river_job of {args.rows:,} rows" if args.rows else "")
        )
        command = [sys.executable, "-m", "qadmin", "metrics", "--dsn", url]
        status = [sys.executable, "-m", "qadmin", "status", "--dsn", url, "--format", "json"]
        walls: dict[str, list[float]] = {"status": [], "metrics": []}
        printed = None
        for _ in range(args.repeat):  # interleaved: both see the same load
            for label, argv in (("status", status), ("metrics", command)):
                t0 = time.monotonic()
                done = subprocess.run(argv, capture_output=True, text=True, check=False)
                walls[label].append(time.monotonic() - t0)
                if label == "metrics":
                    printed = done
                    if done.returncode != 0:
                        raise SystemExit(f"metrics failed: {done.stderr}")
        assert printed is not None
        queues = printed.stdout.count("\nqadmin_queue_status{")
        series = sum(1 for line in printed.stdout.splitlines() if not line.startswith("#"))
        for label, runs in walls.items():
            print(
                f"{label} (CLI process): wall median {statistics.median(runs):.2f} s "
                f"(runs {', '.join(f'{w:.2f}' for w in runs)})"
            )
        print(f"metrics printed {queues} queues, {series} series")
        server = subprocess.Popen(
            [*command, "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True
        )
        assert server.stderr is not None
        endpoint = server.stderr.readline().split(" on ", 1)[1].strip()
        times, reads = [], []
        for _ in range(args.repeat):
            before = status_scale._buffers(dsn, database)
            t0 = time.monotonic()
            with urllib.request.urlopen(endpoint, timeout=60) as response:
                body = response.read().decode()
            times.append(time.monotonic() - t0)
            reads.append(status_scale._buffers(dsn, database) - before)
            if "qadmin_up{" not in body or 'qadmin_scrape_error{server="' not in body:
                raise SystemExit("the scrape answered no qadmin_up")
        unread = [
            line for line in body.splitlines() if line.startswith("qadmin_scrape_queues_unread")
        ]
        print(
            f"metrics --listen (HTTP scrape, {args.repeat} scrapes): median "
            f"{statistics.median(times):.2f} s, max {max(times):.2f} s "
            f"(runs {', '.join(f'{t:.2f}' for t in times)}), buffers median "
            f"{int(statistics.median(reads)):,}; last {unread[0] if unread else ''}"
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        with psycopg.connect(PG, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


if __name__ == "__main__":
    main()
