"""Do size, inspect and check stay as cheap behind dead rows as on a clean queue?

For each kind (fifo, fifo --watermark, claim, ring) on PostgreSQL and MariaDB: a clean queue of
``--live`` waiting messages, then the same queue with ``--dead`` dead rows behind its head,
made while another session holds a REPEATABLE READ snapshot (PostgreSQL) or a consistent
snapshot (MariaDB) open, so neither VACUUM nor purge can remove them. Times ``size``,
``inspect`` and ``check`` in process (median of ``--trials``) on both, and on PostgreSQL the
buffers each reads from the queue's tables and indexes (pg_statio_user_tables deltas, flushed
with pg_stat_force_next_flush). Goal: behind the dead rows <= 1.5x the clean time. Run:

    cd benchmarks && ../.venv/bin/python dead_rows.py [--dead 3000000] [--ring-dead N]
        [--live 1000] [--trials 7] [--engines postgresql,mariadb]
        [--kinds "fifo,fifo --watermark,claim,ring"] [--analyze]

With ``--analyze`` each queue is measured again after an ANALYZE of its table (the clean one
too): the statistics then say what ANALYZE sampled (PostgreSQL's live and dead counts are
replaced by its estimates), and the diagnostics must stay bounded whatever they say.

The "clean" queue has the same history (the same pushes and pops), its dead rows removed
(VACUUM; InnoDB's purge). PostgreSQL runs in a database of its own (VACUUM's horizon then
ignores other databases' snapshots), MariaDB in a database from benchmarks/places.py; both are
dropped afterwards.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from places import PG, place

from qadmin.diagnostics import check, run
from qadmin.diagnostics.entries import size
from qadmin.engines import Engine, open_engine
from qadmin.kinds import QueueSpec
from qadmin.ops import messages, queues
from qadmin.ops import watermark as wm_ops

KINDS = (("fifo", False), ("fifo", True), ("claim", False), ("ring", False))
CHUNK = 50_000


def _label(kind: str, watermark: bool) -> str:
    return kind + (" --watermark" if watermark else "")


def _fill(engine: Engine, spec: QueueSpec, n: int) -> None:
    """n messages: a set insert for row kinds, the batch push for the ring."""
    if spec.kind.value == "ring":
        for start in range(0, n, 2000):
            messages.push(engine, spec, [b"x" * 300] * min(2000, n - start))
        return
    table = engine.qualified(spec.name)
    for start in range(0, n, CHUNK):
        rows = min(CHUNK, n - start)
        if engine.name == "postgresql":
            source = f"SELECT convert_to(repeat('x', 300), 'UTF8') FROM generate_series(1, {rows})"
            columns = "payload"
        else:
            source = f"SELECT UTC_TIMESTAMP(6), REPEAT('x', 300) FROM seq_1_to_{rows}"
            columns = "enqueued_at, payload"
        engine.run([f"INSERT INTO {table} ({columns}) {source}"])


def _kill(engine: Engine, spec: QueueSpec, n: int) -> None:
    """Pop n messages the way consumers leave them: deleted (claim: claimed, then acked)."""
    if spec.kind.value == "ring":
        for start in range(0, n, 1000):
            messages.pop(engine, spec, min(1000, n - start))
        return
    table = engine.qualified(spec.name)
    if spec.kind.value == "claim":
        now = "clock_timestamp()" if engine.name == "postgresql" else "UTC_TIMESTAMP(6)"
        engine.run([f"UPDATE {table} SET processing_started_at = {now}"])
    engine.run([f"DELETE FROM {table}"])
    if spec.watermark:  # phase 1 records the candidate, phase 2 moves the watermark to it
        wm_ops.advance(engine, spec)
        wm_ops.advance(engine, spec)


class Snapshot:
    """Another session holding a snapshot open, so the dead rows stay (a plain driver
    connection: qadmin's own sessions time out when idle)."""

    def __init__(self, engine_name: str, dsn: str) -> None:
        if engine_name == "postgresql":
            import psycopg

            self.conn: Any = psycopg.connect(dsn)
            self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            self.conn.execute("SELECT 1")
        else:
            import pymysql

            self.conn = pymysql.connect(host="127.0.0.1", user="root")
            self.conn.cursor().execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")

    def close(self) -> None:
        self.conn.rollback()
        self.conn.close()


def _history(engine: Engine, spec: QueueSpec, dead: int, capacity: int | None) -> float:
    """``dead`` messages pushed and consumed, then ``live`` left waiting; the seconds it took."""
    started = time.perf_counter()
    chunk = capacity // 2 if capacity else 100_000  # a ring holds only so many
    for start in range(0, dead, chunk):
        step = min(chunk, dead - start)
        _fill(engine, spec, step)
        _kill(engine, spec, step)
    return time.perf_counter() - started


def _vacuum(engine: Engine, dsn: str, schema: str | None) -> None:
    """The clean queue's dead rows removed: VACUUM (PostgreSQL); InnoDB purges by itself."""
    if engine.name != "postgresql":
        return
    import psycopg

    engine.query("SELECT pg_stat_force_next_flush()")  # the deletes counted before VACUUM

    with psycopg.connect(dsn, autocommit=True) as conn:
        for (table,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall():
            conn.execute(f'VACUUM "{schema}"."{table}"')


def _watermark_at_head(engine: Engine, spec: QueueSpec) -> str:
    """Where the dequeues' advance puts the watermark; set by hand when an open writer
    elsewhere on a shared MariaDB server holds the advance back (said in the output)."""
    if not spec.watermark:
        return ""
    state = wm_ops.show(engine, spec)
    if state["head_id"] is None or state["watermark"] >= state["head_id"]:
        return ""
    wm = engine.qualified(spec.name + "_wm")
    engine.run([f"UPDATE {wm} SET wm = {int(state['head_id'])}"])
    return " (watermark set to the head by hand: an open writer held the advance)"


def _buffers(engine: Engine, schema: str) -> int:
    """Blocks the schema's tables and indexes were read (hit or from disk), flushed first."""
    engine.query("SELECT pg_stat_force_next_flush()")
    rows = engine.query(
        "SELECT coalesce(sum(coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0)"
        " + coalesce(idx_blks_read, 0) + coalesce(idx_blks_hit, 0)), 0) AS b"
        " FROM pg_statio_user_tables WHERE schemaname = :schema",
        {"schema": schema},
    )
    return int(rows[0]["b"])


def _diagnostics(engine: Engine, spec: QueueSpec) -> dict[str, Callable[[], Any]]:
    return {
        "size": lambda: size.measure(engine, spec),
        "inspect": lambda: run.inspect(engine, spec),
        "check": lambda: check.evaluate(run.inspect(engine, spec)),
    }


def _measure(engine: Engine, spec: QueueSpec, schema: str | None, trials: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, call in _diagnostics(engine, spec).items():
        call()  # warm the cache and the plans
        times = []
        for _ in range(trials):
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
        blocks = None
        if engine.name == "postgresql" and schema:
            before = _buffers(engine, schema)
            call()
            blocks = _buffers(engine, schema) - before
        out[name] = (statistics.median(times) * 1000, blocks)
    part = size.measure(engine, spec)
    out["depth"] = (part.depth, part.depth_exact, part.depth_source)
    out["oldest"] = (part.oldest_age_s, part.oldest_at_least, part.oldest_source)
    return out


def _analyze(engine: Engine, spec: QueueSpec) -> None:
    table = engine.qualified(spec.name)
    engine.run([f"ANALYZE {table}" if engine.name == "postgresql" else f"ANALYZE TABLE {table}"])


def _row(label: str, state: str, m: dict[str, Any]) -> str:
    cells = [
        f"{m[d][0]:.1f} ms" + ("" if m[d][1] is None else f" / {m[d][1]} buf")
        for d in ("size", "inspect", "check")
    ]
    depth, exact, _ = m["depth"]
    return f"| {label} | {state} | {' | '.join(cells)} | {depth}{'' if exact else '~'} |"


def _own_database() -> tuple[str, str | None, Callable[[], None]]:
    """A PostgreSQL database of its own: VACUUM's horizon then ignores the snapshots other
    sessions hold in other databases, so the clean queue is clean on a shared server."""
    import psycopg

    name = os.environ.get("QADMIN_BENCH_PREFIX", "bench_") + "dead_" + uuid.uuid4().hex[:8]
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")

    def drop() -> None:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")

    return PG.rsplit("/", 1)[0] + "/" + name, "public", drop


def bench(
    engine_name: str,
    dead: int,
    ring_dead: int,
    live: int,
    trials: int,
    kinds: list[str],
    analyze: bool = False,
) -> None:
    dsn, schema, drop = _own_database() if engine_name == "postgresql" else place(engine_name)
    engine = open_engine(dsn, schema)
    try:
        for i, (kind, wm) in enumerate(KINDS):
            label = _label(kind, wm)
            if label not in kinds:
                continue
            capacity = max(2 * live, 10_000) if kind == "ring" else None
            spec = queues.create(engine, queues.make_spec(f"q{i}", kind, capacity, False, wm))
            n_dead = ring_dead if kind == "ring" else dead
            _history(engine, spec, n_dead, capacity)
            _vacuum(engine, dsn, schema)
            _fill(engine, spec, live)
            note = _watermark_at_head(engine, spec)
            clean = _measure(engine, spec, schema, trials)
            clean_analyzed = None
            if analyze:
                _analyze(engine, spec)
                clean_analyzed = _measure(engine, spec, schema, trials)
            queues.drop(engine, spec)
            spec = queues.create(engine, queues.make_spec(f"d{i}", kind, capacity, False, wm))
            holder = Snapshot(engine_name, dsn)
            try:
                made = _history(engine, spec, n_dead, capacity)
                _fill(engine, spec, live)
                note += _watermark_at_head(engine, spec)
                behind = _measure(engine, spec, schema, trials)
                behind_analyzed = None
                if analyze:
                    _analyze(engine, spec)
                    behind_analyzed = _measure(engine, spec, schema, trials)
            finally:
                holder.close()
            queues.drop(engine, spec)
            print(_row(label, "clean (same history, vacuumed)", clean))
            print(_row(label, f"{n_dead:,} dead ({made:.0f} s to make){note}", behind))
            ratios = ", ".join(
                f"{d} {behind[d][0] / clean[d][0]:.2f}x" for d in ("size", "inspect", "check")
            )
            print(f"|   | behind / clean | {ratios} | | |")
            print(f"|   | sources | depth: {behind['depth'][2]}; oldest: {behind['oldest'][2]} |")
            if clean_analyzed is not None and behind_analyzed is not None:
                print(_row(label, "clean, after ANALYZE", clean_analyzed))
                print(_row(label, f"{n_dead:,} dead, after ANALYZE", behind_analyzed))
                a = behind_analyzed
                print(f"|   | sources | depth: {a['depth'][2]}; oldest: {a['oldest'][2]} |")
    finally:
        engine.close()
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dead", type=int, default=3_000_000)
    parser.add_argument("--ring-dead", type=int, help="dead pops for the ring (default --dead)")
    parser.add_argument("--live", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=7)
    parser.add_argument("--engines", default="postgresql,mariadb")
    parser.add_argument("--kinds", default=",".join(_label(k, w) for k, w in KINDS))
    parser.add_argument("--analyze", action="store_true", help="measure again after ANALYZE")
    args = parser.parse_args()
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[:3]}")
    for name in args.engines.split(","):
        print(f"\n{name}\n")
        print("| kind | queue | size | inspect | check | depth |")
        print("|---|---|---|---|---|---|")
        kinds = args.kinds.split(",")
        dead, ring_dead = args.dead, args.ring_dead or args.dead
        bench(name, dead, ring_dead, args.live, args.trials, kinds, args.analyze)
    with open("/proc/loadavg") as f:
        print(f"\nload average at end: {f.read().split()[:3]}")


if __name__ == "__main__":
    main()
