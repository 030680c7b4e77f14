"""What one ``tail`` sample costs the server, and what sampling every second costs in all.

For each engine: a fifo queue of --rows messages, then --samples snapshots exactly as ``tail``
takes them. Server CPU is read from /proc for the server process (PostgreSQL: the sampling
backend; MariaDB: the whole mariadbd, so run it on an otherwise idle server; SQLite runs in
the client). Prints wall time and CPU per sample and the fraction of one core that sampling
at a 1 s interval keeps busy. Run:

    .venv/bin/python benchmarks/tail_overhead.py [--rows 100000] [--samples 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from places import PG

from qadmin.engines import Engine, open_engine
from qadmin.ops import queues, telemetry

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def measure(label: str, engine: Engine, rows: int, samples: int, server_pid: int | None) -> None:
    spec = queues.create(engine, queues.make_spec("tail_q", "fifo", None, False))
    table = engine.qualified("tail_q")
    batch = [b"x" * 100] * 1000
    from qadmin.ops import messages

    for _ in range(rows // 1000):
        messages.push(engine, spec, batch)
    telemetry.snapshot(engine, spec, 300)
    walls, clients = [], []
    server_before = cpu_seconds(server_pid) if server_pid else 0.0
    for _ in range(samples):
        wall, cpu = time.perf_counter(), time.process_time()
        telemetry.snapshot(engine, spec, 300)
        walls.append(time.perf_counter() - wall)
        clients.append(time.process_time() - cpu)
    server = (cpu_seconds(server_pid) - server_before) / samples if server_pid else None
    wall_ms = statistics.median(walls) * 1000
    client_ms = statistics.mean(clients) * 1000
    server_text = f"{server * 1000:6.2f} ms" if server is not None else "  (in client)"
    busy = (server or 0.0) + client_ms / 1000
    print(
        f"{label:11} {rows:>8,} rows  wall {wall_ms:6.2f} ms  client CPU {client_ms:6.2f} ms"
        f"  server CPU {server_text}  at 1 s interval: {busy:.2%} of one core"
    )
    queues.drop(engine, spec)
    del table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    import psycopg
    import pymysql

    name = "qb_" + uuid.uuid4().hex[:8]
    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{name}"')
        try:
            engine = open_engine(PG, name)
            pid = int(engine.query("SELECT pg_backend_pid() AS p")[0]["p"])
            measure("PostgreSQL", engine, args.rows, args.samples, pid)
            engine.close()
        finally:
            admin.execute(f'DROP SCHEMA "{name}" CASCADE')
    admin_my = pymysql.connect(host="127.0.0.1", user="root", password="", autocommit=True)
    with admin_my.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
        try:
            engine = open_engine(f"mysql://root@127.0.0.1/{name}")
            pid = int(subprocess.check_output(["pidof", "mariadbd"]).split()[0])
            measure("MariaDB", engine, args.rows, args.samples, pid)
            engine.close()
        finally:
            cur.execute(f"DROP DATABASE `{name}`")
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_engine(f"sqlite:///{tmp}/q.db")
        measure("SQLite", engine, args.rows, args.samples, None)
        engine.close()


if __name__ == "__main__":
    main()
