"""Held-snapshot endurance: does a queue keep its rate while a long snapshot holds back cleanup?

For each design: 2 producer and 2 consumer processes, one message per transaction, 300-byte
payloads, while another session holds a REPEATABLE READ snapshot (PostgreSQL: a transaction that
has read, so its xmin keeps every dead row; MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT,
whose read view stops purge) for the whole run. Pops per second are counted per window; the
figure is each window's rate and last / first. At the end the producers stop, the snapshot is
released, the consumers drain the queue in batches of 500 (not measured; procrastinate one at a
time), and every message must have been popped exactly once (a lost, duplicated or unexpected
message fails the run). Table sizes (everything in the run's database) are printed.

Before the clock starts, with the snapshot already held, each design is aged: ``--age``
messages (200,000) pushed and popped through its own batch calls, so a few minutes show what
hours behind a held snapshot do. Every design is then called as an application calls it: one
bare driver call per push or pop (qadmin's designs: ``SELECT * FROM bench_pop(1)`` with
psycopg, ``CALL bench_pop(1)`` with pymysql; the peers: their own functions), so no design pays
for a Python layer the others skip. At the end, the last window's rate of every design is
compared with every other's on the same engine (ring and watermark against the rest).

Designs: qadmin's naive fifo, fifo --watermark and ring (100,000 slots) on PostgreSQL and
MariaDB, the routines the queue installs; on PostgreSQL the
peers that install from PyPI (the ``bench`` extra): PGMQ (the SQL the ``pgmq`` package ships,
``pgmq.send`` + ``pgmq.pop``), procrastinate (its schema; defer, fetch, finish-and-delete) and
pgqueuer (its schema; enqueue, dequeue, log). Each design runs in a database of its own, created
for the run and dropped after it.

    .venv/bin/python benchmarks/endurance.py [--seconds 240] [--window 30] [--repeats 1]
        [--engines postgresql,mariadb] [--designs fifo,watermark,ring,pgmq,procrastinate,pgqueuer]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from places import install_pgmq

PG_SERVER = "postgresql://postgres@127.0.0.1:5432"
MY_SERVER = "mysql://root@127.0.0.1:3306"
PAYLOAD_BYTES = 300
DRAIN_BATCH = 500  # pops per call once the clock has stopped (the drain is not measured)
RING_SLOTS = 100_000
QADMIN_DESIGNS = {
    "fifo": ("naive fifo", "fifo", None, False),
    "watermark": ("fifo --watermark", "fifo", None, True),
    "ring": (f"ring ({RING_SLOTS:,} slots)", "ring", RING_SLOTS, False),
}
PEERS = {"pgmq": "PGMQ send + pop", "procrastinate": "procrastinate", "pgqueuer": "pgqueuer"}


def _payload(key: str) -> bytes:
    return key.encode().ljust(PAYLOAD_BYTES, b".")


def _key(payload: bytes | str) -> str:
    text = payload.decode() if isinstance(payload, bytes) else payload
    return text.rstrip(".")


# -- one design's client, in its own process -----------------------------------------------


class Client:
    """Push one message or pop one, each its own transaction; ``pop`` returns the keys."""

    def push(self, key: str) -> bool:
        raise NotImplementedError

    def pop(self, n: int = 1) -> list[str]:
        """Pop up to ``n``: 1 while measured; the unmeasured drain takes batches, so a backlog
        left behind dead rows empties in minutes, not hours."""
        raise NotImplementedError


class QadminPgClient(Client):
    """An application's call of the routines the queue installed: one bare psycopg call each,
    in autocommit (``SELECT * FROM bench_push(...)``), as docs/kinds.md tells applications."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True, options="-c lock_timeout=30000")

    def push(self, key: str) -> bool:
        # A full ring returns no row: the producer waits and tries again.
        return (
            self.conn.execute("SELECT * FROM bench_push(%s)", [_payload(key)]).fetchone()
            is not None
        )

    def pop(self, n: int = 1) -> list[str]:
        rows = self.conn.execute("SELECT payload FROM bench_pop(%s)", [n]).fetchall()
        return [_key(bytes(r[0])) for r in rows]


class QadminMyClient(Client):
    """The same on MariaDB/MySQL: ``CALL bench_push(...)``, every result set read."""

    def __init__(self, dsn: str) -> None:
        import pymysql

        self.conn = pymysql.connect(
            host="127.0.0.1",
            user="root",
            password="",
            database=dsn.rsplit("/", 1)[1],
            autocommit=True,
        )
        with self.conn.cursor() as cur:
            cur.execute("SET SESSION innodb_lock_wait_timeout = 30")

    def _call(self, sql: str, args: list[Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            while True:
                if cur.description:
                    names = [c[0] for c in cur.description]
                    rows.extend(dict(zip(names, r, strict=True)) for r in cur.fetchall())
                if not cur.nextset():
                    break
        return rows

    def push(self, key: str) -> bool:
        return any(
            r.get("id") is not None for r in self._call("CALL bench_push(%s)", [_payload(key)])
        )

    def pop(self, n: int = 1) -> list[str]:
        return [_key(r["payload"]) for r in self._call("CALL bench_pop(%s)", [n]) if "payload" in r]


class PgmqClient(Client):
    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)

    def push(self, key: str) -> bool:
        body = json.dumps({"k": key, "pad": "." * (PAYLOAD_BYTES - len(key) - 20)})
        self.conn.execute("SELECT pgmq.send('bench', %s::jsonb)", [body])
        return True

    def pop(self, n: int = 1) -> list[str]:
        rows = self.conn.execute("SELECT message FROM pgmq.pop('bench', %s)", [n]).fetchall()
        return [r[0]["k"] for r in rows]


class ProcrastinateClient(Client):
    """procrastinate's own SQL (procrastinate/sql/queries.sql): defer, then fetch and finish
    with delete (a worker configured to delete succeeded jobs): two transactions per message."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)
        self.worker: int | None = None

    def push(self, key: str) -> bool:
        body = json.dumps({"k": key, "pad": "." * (PAYLOAD_BYTES - len(key) - 20)})
        self.conn.execute(
            "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW('bench', 'bench_task', 0, "
            "NULL, NULL, %s::jsonb, NULL)::procrastinate_job_to_defer_v1]))",
            [body],
        )
        return True

    def pop(self, n: int = 1) -> list[str]:
        # procrastinate fetches one job a call; its drain stays one at a time.
        if self.worker is None:
            self.worker = self.conn.execute(
                "SELECT worker_id FROM procrastinate_register_worker_v1()"
            ).fetchone()[0]
        row = self.conn.execute(
            "SELECT id, args FROM procrastinate_fetch_job_v2(ARRAY['bench']::varchar[], %s)",
            [self.worker],
        ).fetchone()
        if row is None or row[0] is None:
            return []
        self.conn.execute("SELECT procrastinate_finish_job_v1(%s, 'succeeded', true)", [row[0]])
        return [row[1]["k"]]


class PgqueuerClient(Client):
    """pgqueuer's Queries: enqueue, dequeue (status 'picked'), log_jobs (moves it to the log)."""

    def __init__(self, dsn: str) -> None:
        import psycopg
        from pgqueuer.queries import Queries

        self.loop = asyncio.new_event_loop()
        self.conn = self.loop.run_until_complete(
            psycopg.AsyncConnection.connect(dsn, autocommit=True)
        )
        self.queries = Queries.from_psycopg_connection(self.conn)
        self.manager = uuid.uuid4()

    def push(self, key: str) -> bool:
        self.loop.run_until_complete(self.queries.enqueue("bench", _payload(key)))
        return True

    def pop(self, n: int = 1) -> list[str]:
        from pgqueuer.queries import EntrypointExecutionParameter

        jobs = self.loop.run_until_complete(
            self.queries.dequeue(
                batch_size=n,
                entrypoints={"bench": EntrypointExecutionParameter(concurrency_limit=0)},
                queue_manager_id=self.manager,
                global_concurrency_limit=None,
                heartbeat_timeout=timedelta(seconds=300),
            )
        )
        if not jobs:
            return []
        self.loop.run_until_complete(self.queries.log_jobs([(j, "successful", None) for j in jobs]))
        return [_key(j.payload or b"") for j in jobs]


CLIENTS: dict[str, type[Client]] = {
    "pgmq": PgmqClient,
    "procrastinate": ProcrastinateClient,
    "pgqueuer": PgqueuerClient,
}


def _client(design: str, dsn: str) -> Client:
    if design in CLIENTS:
        return CLIENTS[design](dsn)
    return QadminPgClient(dsn) if dsn.startswith("postgresql") else QadminMyClient(dsn)


def _ready(ready: Any, go: Any, start: Any) -> float:
    """Every worker connected and set up before the clock starts: returns the start time."""
    ready.wait()
    go.wait()
    return float(start.value)


def _producer(
    design: str, dsn: str, worker: int, seconds: float, sync: tuple[Any, Any, Any], out: str
) -> None:
    client = _client(design, dsn)
    stop_at = _ready(*sync) + seconds
    n = 0
    while time.time() < stop_at:
        if client.push(f"p{worker}-{n}"):
            n += 1
        else:
            time.sleep(0.001)  # a full ring: let the consumers catch up
    Path(out).write_text(json.dumps({"pushed": n}))


def _consumer(
    design: str,
    dsn: str,
    window: float,
    sync: tuple[Any, Any, Any],
    producers_done: Any,
    out: str,
) -> None:
    client = _client(design, dsn)
    start = _ready(*sync)
    windows: dict[int, int] = {}
    keys: list[str] = []
    idle = 0
    while True:
        got = client.pop(DRAIN_BATCH if producers_done.is_set() else 1)
        if got:
            idle = 0
            keys.extend(got)
            if not producers_done.is_set():
                index = int((time.time() - start) // window)
                windows[index] = windows.get(index, 0) + len(got)
            continue
        if producers_done.is_set():
            idle += 1
            if idle >= 20:
                break
        time.sleep(0.002)
    Path(out).write_text(json.dumps({"windows": windows, "keys": keys}))


# -- setting a design up, in a database of its own ------------------------------------------


def _create_database(engine: str) -> tuple[str, str]:
    name = f"bench_{uuid.uuid4().hex[:10]}"
    if engine == "postgresql":
        import psycopg

        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name, f"{PG_SERVER}/{name}"
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", user="root", password="")
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
    conn.close()
    return name, f"{MY_SERVER}/{name}"


def _drop_database(engine: str, name: str) -> None:
    if engine == "postgresql":
        import psycopg

        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", user="root", password="")
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    conn.close()


def _set_up(design: str, dsn: str) -> None:
    if design in QADMIN_DESIGNS:
        from qadmin.engines import open_engine
        from qadmin.ops import queues

        _, kind, capacity, watermark = QADMIN_DESIGNS[design]
        engine = open_engine(dsn, None)
        queues.create(engine, queues.make_spec("bench", kind, capacity, False, watermark))
        engine.close()
        return
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        if design == "pgmq":
            install_pgmq(conn, "bench")
        elif design == "procrastinate":
            import procrastinate

            sql = (Path(procrastinate.__file__).parent / "sql" / "schema.sql").read_text()
            conn.execute(sql)
    if design == "pgqueuer":
        from pgqueuer.queries import Queries

        async def install() -> None:
            aconn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
            await Queries.from_psycopg_connection(aconn).install()
            await aconn.close()

        asyncio.run(install())


AGE_BATCH = 1_000


def _age_qadmin(dsn: str, count: int) -> None:
    """qadmin's own batch push and pop (the queue's _push_many and _pop(n)): not measured."""
    from qadmin import catalog
    from qadmin.engines import Timeouts, open_engine
    from qadmin.errors import QueueEmpty
    from qadmin.ops import messages

    engine = open_engine(dsn, None, Timeouts(lock_ms=30_000, statement_ms=600_000))
    spec = catalog.get(engine, "bench")
    for start in range(0, count, AGE_BATCH):
        messages.push(engine, spec, [_payload(f"age-{start + i}") for i in range(AGE_BATCH)])
        with contextlib.suppress(QueueEmpty):
            while len(messages.pop(engine, spec, AGE_BATCH)) == AGE_BATCH:
                pass
    engine.close()


def _age_peer(design: str, dsn: str, count: int) -> None:
    """Each peer's own batch calls where it has them; procrastinate's worker takes one job per
    call, so its jobs are moved to 'doing' and deleted a batch at a time, the row changes its
    fetch and finish-with-delete make."""
    import psycopg

    body = "jsonb_build_object('k', 'age-' || g, 'pad', repeat('.', 270))"
    with psycopg.connect(dsn, autocommit=True) as conn:
        for start in range(0, count, AGE_BATCH):
            span = [start, start + AGE_BATCH - 1]
            if design == "pgmq":
                conn.execute(
                    f"SELECT pgmq.send_batch('bench', array_agg({body})) "
                    "FROM generate_series(%s::int, %s::int) AS g",
                    span,
                )
                conn.execute("SELECT count(*) FROM pgmq.pop('bench', %s)", [AGE_BATCH])
            elif design == "procrastinate":
                conn.execute(
                    "SELECT procrastinate_defer_jobs_v1(array_agg(ROW('bench', 'bench_task', 0, "
                    f"NULL, NULL, {body}, NULL)::procrastinate_job_to_defer_v1)) "
                    "FROM generate_series(%s::int, %s::int) AS g",
                    span,
                )
                conn.execute("UPDATE procrastinate_jobs SET status = 'doing' WHERE status = 'todo'")
                conn.execute("DELETE FROM procrastinate_jobs WHERE status = 'doing'")
    if design == "pgqueuer":
        client = PgqueuerClient(dsn)
        from pgqueuer.queries import EntrypointExecutionParameter

        for start in range(0, count, AGE_BATCH):
            keys = [_payload(f"age-{start + i}") for i in range(AGE_BATCH)]
            client.loop.run_until_complete(
                client.queries.enqueue(["bench"] * AGE_BATCH, list(keys), [0] * AGE_BATCH)
            )
            jobs = client.loop.run_until_complete(
                client.queries.dequeue(
                    batch_size=AGE_BATCH,
                    entrypoints={"bench": EntrypointExecutionParameter(concurrency_limit=0)},
                    queue_manager_id=client.manager,
                    global_concurrency_limit=None,
                    heartbeat_timeout=timedelta(seconds=300),
                )
            )
            client.loop.run_until_complete(
                client.queries.log_jobs([(j, "successful", None) for j in jobs])
            )


def age(design: str, dsn: str, count: int) -> float:
    """Before the clock starts, with the snapshot already held: ``count`` messages pushed and
    popped, so the run starts where a queue is after hours behind a held snapshot (its dead
    rows and index entries already there) instead of spending the measured minutes getting
    there. Returns the seconds it took (printed, not part of the figures)."""
    began = time.perf_counter()
    if count:
        if design in QADMIN_DESIGNS:
            _age_qadmin(dsn, count)
        else:
            _age_peer(design, dsn, count)
    return time.perf_counter() - began


class Snapshot:
    """Another session's snapshot, held for the whole run."""

    def __init__(self, engine: str, dsn: str) -> None:
        self.engine = engine
        if engine == "postgresql":
            import psycopg

            self.conn: Any = psycopg.connect(dsn)
            self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            self.conn.execute("SELECT count(*) FROM pg_class").fetchone()
        else:
            import pymysql

            database = dsn.rsplit("/", 1)[1]
            self.conn = pymysql.connect(host="127.0.0.1", user="root", database=database)
            with self.conn.cursor() as cur:
                cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                cur.execute("SELECT count(*) FROM information_schema.tables")

    def release(self) -> None:
        self.conn.rollback()
        self.conn.close()


def _sizes(engine: str, dsn: str) -> dict[str, int]:
    if engine == "postgresql":
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class AS c "
                "JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE c.relkind = 'r' "
                "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
                "AND pg_total_relation_size(c.oid) > 8192 * 4 ORDER BY 2 DESC"
            ).fetchall()
        return {r[0]: int(r[1]) for r in rows}
    import pymysql

    database = dsn.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", user="root", database=database)
    with conn.cursor() as cur:
        # The tablespace files' sizes: information_schema.tables lags behind on InnoDB.
        cur.execute(
            "SELECT SUBSTRING_INDEX(name, '/', -1), file_size "
            "FROM information_schema.innodb_sys_tablespaces "
            "WHERE name LIKE CONCAT(%s, '/%%') AND file_size > 65536 ORDER BY 2 DESC",
            [database],
        )
        rows = cur.fetchall()
    conn.close()
    return {r[0]: int(r[1]) for r in rows}


def run_design(
    engine: str, design: str, seconds: float, window: float, aged: int
) -> dict[str, Any]:
    name, dsn = _create_database(engine)
    try:
        _set_up(design, dsn)
        snapshot = Snapshot(engine, dsn)
        ageing_s = age(design, dsn, aged)
        ctx = mp.get_context("spawn")
        done = ctx.Event()
        ready, go, start = ctx.Barrier(5), ctx.Barrier(5), ctx.Value("d", 0.0)
        sync = (ready, go, start)
        with tempfile.TemporaryDirectory() as tmp:
            cons = [
                ctx.Process(target=_consumer, args=(design, dsn, window, sync, done, f"{tmp}/c{c}"))
                for c in range(2)
            ]
            prods = [
                ctx.Process(target=_producer, args=(design, dsn, p, seconds, sync, f"{tmp}/p{p}"))
                for p in range(2)
            ]
            for proc in cons + prods:
                proc.start()
            ready.wait()  # the workers' start-up is not measured
            start.value = time.time()
            go.wait()
            for proc in prods:
                proc.join()
            done.set()
            sizes = _sizes(engine, dsn)  # before the drain: what the run left behind
            snapshot.release()  # the drain only checks exactly-once: it is not measured
            for proc in cons:
                proc.join()
            pushed = [json.loads(Path(f"{tmp}/p{p}").read_text())["pushed"] for p in range(2)]
            results = [json.loads(Path(f"{tmp}/c{c}").read_text()) for c in range(2)]
    finally:
        _drop_database(engine, name)
    expected = {f"p{p}-{n}" for p in range(2) for n in range(pushed[p])}
    keys = [k for r in results for k in r["keys"]]
    counts = [0] * int(seconds // window)
    for r in results:
        for index, count in r["windows"].items():
            if 0 <= int(index) < len(counts):
                counts[int(index)] += count
    rates = [c / window for c in counts]
    return {
        "pushed": sum(pushed),
        "popped": len(keys),
        "lost": len(expected - set(keys)),
        "duplicated": len(keys) - len(set(keys)),
        "unexpected": len(set(keys) - expected),
        "rates": rates,
        "last_first": rates[-1] / rates[0] if rates and rates[0] else None,
        "sizes": sizes,
        "ageing_s": ageing_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=240)
    parser.add_argument("--window", type=float, default=30)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--age",
        type=int,
        default=200_000,
        help="messages pushed and popped before the clock starts",
    )
    parser.add_argument("--engines", default="postgresql,mariadb")
    parser.add_argument("--designs", default="fifo,watermark,ring,pgmq,procrastinate,pgqueuer")
    args = parser.parse_args()
    print(
        f"2 producers, 2 consumers, one message per transaction, {PAYLOAD_BYTES}-byte payloads,"
        f" a REPEATABLE READ snapshot held; aged by {args.age:,} messages pushed and popped"
        f" under it first; {args.seconds:g} s in {args.window:g} s windows"
    )
    print(
        "| engine | design | run | ageing s | pop/s per window | last / first | exactly once "
        "| sizes |"
    )
    print("|---|---|---|---|---|---|---|---|")
    last: dict[tuple[str, str], list[float]] = {}
    for engine in args.engines.split(","):
        for design in args.designs.split(","):
            if engine != "postgresql" and design in PEERS:
                continue  # the peers are PostgreSQL-only
            label = QADMIN_DESIGNS[design][0] if design in QADMIN_DESIGNS else PEERS[design]
            for repeat in range(1, args.repeats + 1):
                r = run_design(engine, design, args.seconds, args.window, args.age)
                rates = " / ".join(f"{x:,.0f}" for x in r["rates"])
                ratio = "n/a" if r["last_first"] is None else f"{r['last_first']:.2f}"
                once = (
                    f"yes ({r['popped']:,})"
                    if (r["lost"], r["duplicated"], r["unexpected"]) == (0, 0, 0)
                    and r["popped"] == r["pushed"]
                    else f"NO: pushed {r['pushed']} popped {r['popped']} lost {r['lost']} "
                    f"dup {r['duplicated']} unexpected {r['unexpected']}"
                )
                sizes = ", ".join(f"{k} {v / 1048576:.1f} MB" for k, v in r["sizes"].items())
                row = (
                    f"| {engine} | {label} | {repeat} | {r['ageing_s']:.0f} | {rates} | {ratio} "
                    f"| {once} | {sizes} |"
                )
                print(row, flush=True)  # each design as it ends: a full run takes hours
                if r["rates"]:
                    last.setdefault((engine, label), []).append(r["rates"][-1])
    _print_ratios(last)


def _print_ratios(last: dict[tuple[str, str], list[float]]) -> None:
    """Last-window pop rates side by side: each row design / each column design (medians of
    the repeats), the figure the goals are stated in."""
    from statistics import median

    for engine in dict.fromkeys(e for e, _ in last):
        labels = [lab for e, lab in last if e == engine]
        rate = {lab: median(last[(engine, lab)]) for lab in labels}
        print(f"\n{engine}: last-window pop/s ratio (row / column)")
        print("| | " + " | ".join(labels) + " |")
        print("|---" * (len(labels) + 1) + "|")
        for row in labels:
            cells = [f"{rate[row] / rate[col]:.1f}x" if rate[col] else "n/a" for col in labels]
            print(f"| {row} ({rate[row]:,.0f}/s) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
