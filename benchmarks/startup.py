"""CPU a command costs before it does anything: ``qadmin --help`` against bare Python.

Each figure is the median over ``--runs`` runs of the child's user + system CPU time (from
``os.wait4``), so a busy machine's waiting is not counted; the goal is stated over bare Python
(``python -c pass``) started the same way.

    .venv/bin/python benchmarks/startup.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

# The installed script's own start (qadmin.launch:main), run by this interpreter so a checkout
# on PYTHONPATH is measured.
QADMIN = [sys.executable, "-c", "import sys; from qadmin.launch import main; main()"]
CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "qadmin --help": [*QADMIN, "--help"],
    "qadmin push --help": [*QADMIN, "push", "--help"],
    "qadmin inspect --help": [*QADMIN, "inspect", "--help"],
}


def cpu_ms(argv: list[str]) -> float:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    figures = {
        name: statistics.median(cpu_ms(argv) for _ in range(args.runs))
        for name, argv in CASES.items()
    }
    bare = figures["python -c pass"]
    print(f"| command | CPU ms (median of {args.runs}) | over bare Python |")
    print("|---|---|---|")
    for name, ms in figures.items():
        print(f"| `{name}` | {ms:.0f} | {ms - bare:+.0f} |")
    print(f"\nload average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
