"""What the pause check costs a pop: the same queue's pop with the check (as created now) and
without it (the pop of a queue from before pause), called as an application calls it.

Per engine and kind: two queues of ``--messages`` messages each, ``q_new`` as created now and
``q_old`` whose pop routine (SQLite: pop statements) has the check replaced by a constant false.
Rounds alternate between the two (``--rounds`` rounds of ``--pops`` one-message pops, each its
own autocommit call), so load from other sessions falls on both alike; the figure is the
median microseconds per pop over the rounds, and the difference. A claim queue's popped
messages stay claimed (not acked): only the pop is timed.

    .venv/bin/python benchmarks/pause_cost.py [--engines postgresql,mariadb,sqlite]
        [--kinds fifo,claim,ring] [--messages 20000] [--rounds 20] [--pops 200]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from places import place

from qadmin import catalog
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.kinds import QueueSpec
from qadmin.ops import messages, queues

Pop = Callable[[], int]


def _open(dsn: str, schema: str | None) -> Engine:
    return open_engine(dsn, schema, Timeouts(lock_ms=30_000, statement_ms=600_000))


def _without_check(engine: Engine, spec: QueueSpec) -> list[str]:
    """The queue's pop routine (SQLite: pop statements) with the pause check made false."""
    check = engine.hooks.render_text(
        engine.hooks.fragment("paused"), {**spec.objects(), "catalog": "qadmin_queues"}
    )
    false = "FALSE" if engine.base_dialect == "postgresql" else "1 = 0"
    if engine.base_dialect == "sqlite":
        return [s.replace(check, "0") for s in engine.hooks.section(spec, "pop")]
    pop = spec.objects()["pop"]
    made = catalog.planned(engine, spec, engine.hooks.section(spec, "create"))
    routines = [s.replace(check, false) for s, obj in made if obj is not None and obj[1] == pop]
    if engine.base_dialect == "postgresql":
        return [s.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1) for s in routines]
    return [f"DROP PROCEDURE {engine.qualified(pop)}", *routines]


def _fill(engine: Engine, spec: QueueSpec, count: int) -> None:
    for start in range(0, count, 2000):
        n = min(2000, count - start)
        messages.push(engine, spec, [b"x" * 64] * n)


class Popper:
    """One application connection popping one message per call, and what each call cost:
    CPU seconds where they can be told apart from other sessions' (the PostgreSQL backend
    from /proc; SQLite runs in this process), and the reads of the catalog (PostgreSQL: index
    scans of qadmin_queues; MariaDB: handler key reads, whose server is one process)."""

    def __init__(self, label: str, dsn: str, schema: str | None, spec: QueueSpec, sets: list[str]):
        self.label = label
        args: list[Any] = [1, "bench"] if spec.info.claims else [1]
        marks = ", ".join(["%s"] * len(args))
        if label == "postgresql":
            import psycopg

            self.pg = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}")
            sql = f"SELECT * FROM {spec.name}_pop({marks})"
            self.pop: Pop = lambda: len(self.pg.execute(sql, args).fetchall())  # type: ignore[arg-type]
            self.pid = self.pg.info.backend_pid
        elif label == "mariadb":
            import pymysql

            url = urlsplit(dsn)
            self.my = pymysql.connect(
                host=url.hostname, user="root", database=url.path.lstrip("/"), autocommit=True
            )
            call = f"CALL {spec.name}_pop({marks})"

            def pop() -> int:
                got = 0
                with self.my.cursor() as cur:
                    cur.execute(call, args)
                    while True:
                        got += len(cur.fetchall() or ())
                        if not cur.nextset():
                            return got

            self.pop = pop
        else:
            lite = sqlite3.connect(dsn.removeprefix("sqlite:///"), isolation_level=None)
            params = {"count": 1, "worker": "bench"}

            def run() -> int:
                return sum(len(lite.execute(s, params).fetchall()) for s in sets)

            self.pop = run

    def cpu(self) -> float | None:
        if self.label == "postgresql":
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if self.label == "sqlite":
            return time.process_time()
        return None

    def reads(self) -> float:
        """Catalog index scans (PostgreSQL) or handler key reads (MariaDB) so far."""
        if self.label == "postgresql":
            row = self.pg.execute(
                "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_xact_user_tables "
                "WHERE relname = 'qadmin_queues'"
            ).fetchone()
            return float(row[0]) if row else 0.0
        if self.label == "mariadb":
            with self.my.cursor() as cur:
                cur.execute("SHOW SESSION STATUS LIKE 'Handler_read_key'")
                return float(cur.fetchone()[1])
        return 0.0

    def reads_per_pop(self, pops: int) -> float | None:
        """Reads per pop over ``pops`` calls (PostgreSQL: in one transaction, where the
        per-transaction statistics count them; rolled back)."""
        if self.label == "sqlite":
            return None
        if self.label == "postgresql":
            self.pg.execute("BEGIN")
        before = self.reads()
        for _ in range(pops):
            self.pop()
        after = self.reads()
        if self.label == "postgresql":
            self.pg.execute("ROLLBACK")
        return (after - before) / pops


def measure(label: str, kind: str, count: int, rounds: int, pops: int) -> str:
    dsn, schema, drop = place(label)
    try:
        engine = _open(dsn, schema)
        capacity = count + 10 if kind == "ring" else None
        poppers: dict[str, Popper] = {}
        for name in ("q_new", "q_old"):
            spec = queues.create(engine, queues.make_spec(name, kind, capacity, False))
            _fill(engine, spec, count)
            sets = engine.hooks.section(spec, "pop")
            if name == "q_old":
                changed = _without_check(engine, spec)
                if label == "sqlite":
                    sets = changed
                else:
                    engine.run(changed)
            poppers[name] = Popper(label, dsn, schema, spec, sets)
        walls: dict[str, list[float]] = {"q_new": [], "q_old": []}
        cpus: dict[str, float] = {"q_new": 0.0, "q_old": 0.0}
        for _ in range(rounds):
            for name, popper in poppers.items():
                cpu = popper.cpu()
                started = time.perf_counter()
                for _ in range(pops):
                    if not popper.pop():
                        raise SystemExit(f"{label} {kind} {name}: ran out of messages")
                walls[name].append((time.perf_counter() - started) / pops * 1e6)
                after = popper.cpu()
                if cpu is not None and after is not None:
                    cpus[name] += after - cpu
        new, old = (statistics.median(walls[n]) for n in ("q_new", "q_old"))
        line = f"{label:<11} {kind:<6} wall/pop (median) {new:7.0f} vs {old:7.0f} us"
        if label != "mariadb":
            cnew, cold = (cpus[n] / (rounds * pops) * 1e6 for n in ("q_new", "q_old"))
            who = "server" if label == "postgresql" else "client"
            line += f"  {who} CPU/pop {cnew:6.1f} vs {cold:6.1f} us ({cnew - cold:+.1f})"
        rnew, rold = (poppers[n].reads_per_pop(min(pops, 50)) for n in ("q_new", "q_old"))
        if rnew is not None and rold is not None:
            what = "catalog index scans" if label == "postgresql" else "handler key reads"
            line += f"  {what}/pop {rnew:.2f} vs {rold:.2f}"
        engine.close()
        return line
    finally:
        with suppress(Exception):
            drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="postgresql,mariadb,sqlite")
    parser.add_argument("--kinds", default="fifo,claim,ring")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--pops", type=int, default=200)
    args = parser.parse_args()
    if args.rounds * args.pops > args.messages:
        raise SystemExit("--rounds x --pops must not exceed --messages")
    for label in args.engines.split(","):
        for kind in args.kinds.split(","):
            print(measure(label, kind, args.messages, args.rounds, args.pops), flush=True)


if __name__ == "__main__":
    main()
