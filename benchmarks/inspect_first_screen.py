"""How soon ``qadmin inspect`` on a terminal shows its first screen, against its full report.

Runs ``qadmin inspect NAME --sample S`` on a pseudo-terminal ``--runs`` times and prints, as
medians of wall-clock seconds from the process's start: the first screen (its summary's rates
row received: ``sampling… over`` or, before issue 30's goal 5, the figures
``enqueue_per_s``), the full report (the figures received) and the exit. Before, the first
screen was the full report (it waited for the rate sample); since, the first screen comes
before the sample's second read. The queue is a fifo of 1,000 messages made in a fresh
SQLite file unless ``--dsn`` names a database that holds NAME already.

    cd benchmarks && PYTHONPATH=../src ../.venv/bin/python inspect_first_screen.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QADMIN = [sys.executable, "-m", "qadmin"]


FIRST = (b"sampling\xe2\x80\xa6 over", b"enqueue_per_s")  # the rates row, pending or done
FULL = b"enqueue_per_s"


def on_a_terminal(argv: list[str]) -> tuple[float, float, float]:
    """Seconds to the first screen, to the full report and to the process's exit."""
    leader, follower = pty.openpty()
    env = dict(os.environ, COLUMNS="120", LINES="50", TERM="xterm-256color")
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    received = bytearray()
    first = full = None
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed its side
            break
        if not chunk:
            break
        received.extend(chunk)
        now = time.monotonic() - started
        if first is None and any(m in received for m in FIRST):
            first = now
        if full is None and FULL in received:
            full = now
    code = proc.wait()
    done = time.monotonic() - started
    os.close(leader)
    if code != 0 or first is None or full is None:
        raise SystemExit(f"{' '.join(argv)} exited {code}:\n{received.decode(errors='replace')}")
    return first, full, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sample", default="1", help="inspect's --sample (default 1)")
    parser.add_argument("--name", default="bench_q")
    parser.add_argument("--dsn", help="a database holding NAME (default: a fresh SQLite file)")
    parser.add_argument("--schema", help="its --schema (PostgreSQL)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        where = ["--dsn", args.dsn or f"sqlite:///{Path(folder) / 'q.db'}"]
        if args.schema:
            where += ["--schema", args.schema]
        if not args.dsn:
            subprocess.run(
                [*QADMIN, "create", args.name, "--kind", "fifo", *where],
                stdout=subprocess.DEVNULL,
                check=True,
            )
            lines = "".join(f"m{i}\n" for i in range(1000)).encode()
            subprocess.run(
                [*QADMIN, "push", args.name, "--lines", *where],
                input=lines,
                stdout=subprocess.DEVNULL,
                check=True,
            )
        argv = [*QADMIN, "inspect", args.name, "--sample", args.sample, *where]
        figures = [on_a_terminal(argv) for _ in range(args.runs)]
    first, full, done = (statistics.median(f[n] for f in figures) for n in range(3))
    print(f"`qadmin inspect {args.name} --sample {args.sample}` on a pty, {args.runs} runs")
    print("| first screen, s | full report, s | exit, s | first screen earlier by |")
    print("|---|---|---|---|")
    print(f"| {first:.2f} | {full:.2f} | {done:.2f} | {full - first:.2f} s |")
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
