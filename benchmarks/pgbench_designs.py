"""The queue designs' server-side cost on PostgreSQL, measured with pgbench (a C client).

queue_throughput.py drives the queues through qadmin from Python processes, where a client's
round trips may set the rate rather than the server's work per message. Here pgbench calls the
routines each queue installs (``<q>_push`` / ``<q>_pop``) as prepared statements with
``synchronous_commit=off``: each client picks push or pop at random, one message per
transaction. Messages/s = messages popped in the window (pushes less the change in depth)
divided by it. A fresh schema per run; a full ring refuses a push, which pgbench counts but
puts nothing in, so the ring is sized far above the backlog a random walk reaches.

    .venv/bin/python benchmarks/pgbench_designs.py [--seconds 10] [--clients 2 4]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import uuid
from pathlib import Path

from qadmin.engines import open_engine
from qadmin.ops import queues

PG = "postgresql://postgres@127.0.0.1:5432/test"
DESIGNS = {
    "naive fifo": ("fifo", None, False),
    "fifo + watermark": ("fifo", None, True),
    "ring": ("ring", 100_000, False),
}
PAYLOAD = "\\x" + "ab" * 100


def _pgbench(schema: str, clients: int, seconds: int, scripts: list[Path]) -> str:
    env = dict(os.environ, PGOPTIONS=f"-c synchronous_commit=off -c search_path={schema}")
    argv = ["pgbench", "-h", "127.0.0.1", "-U", "postgres", "-n", "-M", "prepared"]
    argv += ["-T", str(seconds), "-c", str(clients), "-j", str(clients)]
    argv += [arg for script in scripts for arg in ("-f", f"{script}@1")]
    done = subprocess.run([*argv, "test"], env=env, capture_output=True, text=True, check=True)
    return done.stdout


def _depth(schema: str, spec: queues.QueueSpec) -> int:
    engine = open_engine(PG, schema)
    try:
        walk = {"lo": 0, "hi": 2**63 - 1, "limit": 10**12}  # every row: the count the check needs
        return int(engine.run(engine.hooks.section(spec, "depth"), walk, write=False)[0]["depth"])
    finally:
        engine.close()


def measure(design: str, clients: int, seconds: int) -> float:
    """Messages popped per second: pushes that went in, less what the queue still holds."""
    kind, capacity, watermark = DESIGNS[design]
    schema = f"pgb_{uuid.uuid4().hex[:8]}"
    admin = open_engine(PG)
    admin.run([f"CREATE SCHEMA {schema}"])
    try:
        engine = open_engine(PG, schema)
        spec = queues.create(engine, queues.make_spec("q", kind, capacity, False, watermark))
        engine.close()
        with tempfile.TemporaryDirectory() as folder:
            push, pop = Path(folder, "push.sql"), Path(folder, "pop.sql")
            push.write_text(f"SELECT id FROM q_push('{PAYLOAD}'::bytea);\n")
            pop.write_text("SELECT id FROM q_pop(1);\n")
            _pgbench(schema, clients, 2, [push, pop])  # warm-up
            start = _depth(schema, spec)
            out = _pgbench(schema, clients, seconds, [push, pop])
            end = _depth(schema, spec)
        match = re.search(r"push\.sql.*?\n - (\d+) transactions", out, re.S)
        if match is None:
            raise RuntimeError(f"no push count in pgbench's output:\n{out}")
        return (int(match.group(1)) - (end - start)) / seconds
    finally:
        admin.run([f"DROP SCHEMA {schema} CASCADE"])
        admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--clients", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    print(f"pgbench, synchronous_commit=off, prepared, {args.seconds} s windows, messages/s")
    for clients in args.clients:
        rates = {d: measure(d, clients, args.seconds) for d in DESIGNS}
        cells = "  ".join(f"{d} {r:>8,.0f}" for d, r in rates.items())
        ratio = rates["ring"] / rates["naive fifo"]
        print(f"{clients} clients  {cells}  ring/naive {ratio:.2f}")


if __name__ == "__main__":
    main()
