"""The torture harness: every queue kind under load and faults, then an exactly-once audit.

P producer and C consumer processes push and pop uniquely named messages while a fault loop
SIGKILLs consumers (some between claim and ack), kills random worker connections on the server
(``pg_terminate_backend``, MariaDB ``KILL CONNECTION``), holds the queue's lock past the
workers' lock timeout, and keeps a snapshot open for the whole run; an admin loop runs qadmin
commands against the live queue (``inspect``, ``tail``, ``purge --dry-run``, ``requeue`` for
claim queues, ``repair``/``resize`` for rings, ``watermark repair``, and ``convert`` of a fifo
where the engine supports it: not MySQL 8). Then the audit:

- destructive pop (heap, fifo, lifo, pending, ring, capped, watermarked fifo): every message
  whose push committed is popped exactly once (capped: or reported overwritten); a pop whose
  commit the consumer could not confirm (it was killed or lost its connection) counts once if
  the message never appears again;
- claim queues (at-least-once): every message is acked; a message acked twice must have had its
  claim released by ``requeue`` after going stale.

Each worker logs before and after each commit (Jepsen style), so an operation whose outcome is
unknown is audited as such rather than guessed. Run the full version with ``scripts/torture``
(default: 1,000,000 messages per engine); ``tests/engines/test_torture.py`` runs a bounded one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from qadmin import catalog
from qadmin.diagnostics.entries import ring, size
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import LockTimeout, QadminError, QueueFull
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops import messages, queues
from qadmin.values import message

# name -> (kind, capacity, watermark)
KINDS: dict[str, tuple[str, int | None, bool]] = {
    "heap": ("heap", None, False),
    "fifo": ("fifo", None, False),
    "lifo": ("lifo", None, False),
    "pending": ("pending", None, False),
    "capped": ("capped", 5_000, False),
    "claim": ("claim", None, False),
    "ring": ("ring", 2_000, False),
    "fifo_wm": ("fifo", None, True),
    "claim_wm": ("claim", None, True),
}
CLAIM_STALE_S = 2
WORKER_LOCK_MS = 1_000
PUSH_BATCH = 20
POP_BATCH = 10
# Empty pops in a row (10 ms apart) after the run before a consumer stops: rows a dying
# session still locks are skipped, not gone.
IDLE_POLLS = 200
# After the faults stop: how long a ring may take to drain, with repairs, before the audit.
SETTLE_S = 300.0


@dataclass
class Faults:
    consumer_kill_s: float = 1.5
    connection_kill_s: float = 1.0
    lock_hold_s: float = 3.0
    snapshot: bool = True
    admin: bool = True


@dataclass
class Audit:
    kind: str
    engine: str
    pushed: int = 0
    uncertain_pushes: int = 0
    delivered: int = 0
    lost: int = 0
    duplicated: int = 0
    duplicates_requeued: int = 0
    unexpected: int = 0
    overwritten: int = 0
    leftover: int = 0
    consumers_killed: int = 0
    connections_killed: int = 0
    lock_holds: int = 0
    admin_runs: int = 0
    # fifo: whether the queue was converted to a ring mid-run (where the engine supports it)
    converted: bool = False
    admin_failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            self.lost == 0
            and self.duplicated == self.duplicates_requeued
            and self.unexpected == 0
            and self.leftover == 0
            and not self.admin_failures
        )

    def line(self) -> str:
        return (
            f"{self.engine:10} {self.kind:9} pushed {self.pushed:>9,} "
            f"(uncertain {self.uncertain_pushes}) delivered {self.delivered:>9,} "
            f"lost {self.lost} dup {self.duplicated} (requeued {self.duplicates_requeued}) "
            f"unexpected {self.unexpected} overwritten {self.overwritten} left {self.leftover} | "
            f"SIGKILLs {self.consumers_killed} conn kills {self.connections_killed} "
            f"lock holds {self.lock_holds} admin runs {self.admin_runs} "
            + ("(converted) " if self.converted else "")
            + f"admin failures {len(self.admin_failures)} | {self.seconds:.0f} s"
            + ("" if self.ok else "  FAILED")
        )


# -- workers (separate processes) ------------------------------------------------------------


def _connect(dsn: str, schema: str | None, pids: Path) -> tuple[Engine, QueueSpec]:
    """A fresh connection; its server-side id goes to ``pids`` for the connection killer."""
    while True:
        try:
            engine = open_engine(dsn, schema, Timeouts(lock_ms=WORKER_LOCK_MS))
            if engine.name != "sqlite":
                sql = (
                    "SELECT pg_backend_pid() AS id"
                    if engine.name == "postgresql"
                    else ("SELECT CONNECTION_ID() AS id")
                )
                server_id = engine.query(sql)[0]["id"]
                with pids.open("a") as fh:
                    fh.write(f"{server_id}\n")
            return engine, catalog.get(engine, "torture_q")
        except QadminError:
            time.sleep(0.2)


def _log(fh: Any, **record: Any) -> None:
    fh.write(json.dumps(record) + "\n")
    fh.flush()


def produce(
    dsn: str, schema: str | None, worker: int, count: int, out: str, pids: str, pace_s: float
) -> None:
    """Push ``count`` messages, sleeping ``pace_s`` between batches (so a small run still
    lasts long enough for the faults to land)."""
    engine, spec = _connect(dsn, schema, Path(pids))
    with open(out, "a") as fh:
        i = 0
        while i < count:
            time.sleep(pace_s)
            chunk = [f"p{worker}-{n}" for n in range(i, min(i + PUSH_BATCH, count))]
            try:
                pushed = messages.push(engine, spec, [c.encode() for c in chunk])
            except QueueFull as exc:
                pushed = exc.pushed
                time.sleep(0.005)
            except LockTimeout:
                continue
            except QadminError:
                # Connection killed, or the queue was converted under us: whether the batch
                # committed is unknown. Never re-push it (that could duplicate); audit it.
                _log(fh, uncertain=chunk)
                engine.close()
                engine, spec = _connect(dsn, schema, Path(pids))
                i += len(chunk)
                continue
            for payload, row in zip(chunk, pushed, strict=False):
                _log(fh, pushed=payload, id=row.id, ow=row.overwritten_id)
            i += len(pushed)


def consume(dsn: str, schema: str | None, out: str, pids: str, stop_file: str) -> None:
    engine, spec = _connect(dsn, schema, Path(pids))
    with open(out, "a") as fh:
        idle = 0
        while True:
            try:
                params: dict[str, Any] = {"count": POP_BATCH}
                if spec.kind is Kind.CLAIM:
                    params["worker"] = f"torture:{os.getpid()}"
                with engine.transaction() as execute:
                    rows = [
                        message(r)
                        for statement in engine.hooks.section(spec, "pop")
                        for r in execute(statement, params)
                        if r.get("id") is not None
                    ]
                    got = [r["payload"].decode() for r in rows]
                    if got:
                        _log(fh, pending=got)
                if got:
                    _log(fh, committed=got)
                for row in rows if spec.kind is Kind.CLAIM else []:
                    _log(fh, acking=row["payload"].decode())
                    messages.ack(engine, spec, row["id"])
                    _log(fh, acked=row["payload"].decode())
            except LockTimeout:
                continue
            except QadminError:
                engine.close()
                engine, spec = _connect(dsn, schema, Path(pids))
                continue
            if got:
                idle = 0
                continue
            idle += 1
            if Path(stop_file).exists() and idle > IDLE_POLLS:
                return
            time.sleep(0.01)


# -- the run ---------------------------------------------------------------------------------


class Run:
    """One kind on one engine: workers, the fault loop, the admin loop, then the audit."""

    def __init__(self, dsn: str, schema: str | None, label: str, kind: str, workdir: Path):
        self.dsn, self.schema, self.label, self.name = dsn, schema, label, kind
        self.dir = workdir / f"{label}-{kind}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pids = self.dir / "server_ids"
        self.stop_file = self.dir / "stop"
        self.audit = Audit(kind=kind, engine=label)
        self.ctx = mp.get_context("forkserver")  # as load.py: clients start without imports
        self.ctx.set_forkserver_preload(["tests.engines.torture"])
        self.consumers: list[Any] = []
        self.requeued: set[int] = set()
        self._stop = threading.Event()

    def engine(self) -> Engine:
        return open_engine(self.dsn, self.schema, Timeouts(lock_ms=10_000))

    def execute(
        self, producers: int, consumers: int, total: int, faults: Faults, min_s: float = 0.0
    ) -> Audit:
        kind, capacity, watermark = KINDS[self.name]
        admin = self.engine()
        queues.create(admin, queues.make_spec("torture_q", kind, capacity, False, watermark))
        self.spec = catalog.get(admin, "torture_q")
        holder = self._hold_snapshot() if faults.snapshot else None
        started = time.monotonic()
        prods = [
            self.ctx.Process(
                target=produce,
                args=(
                    self.dsn,
                    self.schema,
                    p,
                    total // producers,
                    str(self.dir / f"prod-{p}"),
                    str(self.pids),
                    min_s / max(total // producers // PUSH_BATCH, 1),
                ),
            )
            for p in range(producers)
        ]
        for _ in range(consumers):
            self._start_consumer()
        for proc in prods:
            proc.start()
        loops = [threading.Thread(target=self._fault_loop, args=(faults,))]
        if faults.admin:
            loops.append(threading.Thread(target=self._admin_loop))
        if self.spec.kind is Kind.CLAIM:
            loops.append(threading.Thread(target=self._requeue_loop))
        for loop in loops:
            loop.start()
        for proc in prods:
            proc.join()
        self._stop.set()
        for loop in loops:
            loop.join()
        if holder is not None:
            holder.close()
        # The connection killer may have hit this connection too (server process ids are
        # reused); it has stopped now, so a fresh one lasts.
        admin.close()
        admin = self.engine()
        self._settle(admin)
        self.stop_file.touch()
        for proc in self.consumers:
            proc.join(timeout=120)
            if proc.is_alive():
                proc.kill()
        self.audit.seconds = time.monotonic() - started
        leftover = messages.peek(admin, catalog.get(admin, "torture_q"), 10_000)
        self._reconcile(leftover)
        queues.drop(admin, catalog.get(admin, "torture_q"))
        admin.close()
        return self.audit

    def _start_consumer(self) -> None:
        n = len(self.consumers)
        proc = self.ctx.Process(
            target=consume,
            args=(
                self.dsn,
                self.schema,
                str(self.dir / f"cons-{n}"),
                str(self.pids),
                str(self.stop_file),
            ),
        )
        proc.start()
        self.consumers.append(proc)

    def _hold_snapshot(self) -> Engine | None:
        holder = open_engine(self.dsn, self.schema, Timeouts(statement_ms=86_400_000))
        if holder.name == "sqlite":
            return None
        cursor = holder.conn.cursor()
        if holder.name == "postgresql":
            cursor.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        else:
            cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cursor.execute(f"SELECT count(*) FROM {holder.qualified('qadmin_queues')}")
        cursor.fetchall()
        return holder

    # -- faults --

    def _fault_loop(self, faults: Faults) -> None:
        killer = self.engine()
        next_kill = time.monotonic() + faults.consumer_kill_s
        next_conn = time.monotonic() + faults.connection_kill_s
        next_lock = time.monotonic() + faults.lock_hold_s
        holders: list[threading.Thread] = []
        while not self._stop.wait(0.1):
            now = time.monotonic()
            if now >= next_kill:
                next_kill = now + faults.consumer_kill_s
                victim = random.choice([p for p in self.consumers if p.is_alive()] or [None])
                if victim is not None:
                    os.kill(victim.pid, signal.SIGKILL)
                    self.audit.consumers_killed += 1
                    self._start_consumer()
            if now >= next_conn and killer.name != "sqlite":
                next_conn = now + faults.connection_kill_s
                self._kill_a_connection(killer)
            if now >= next_lock:
                next_lock = now + faults.lock_hold_s
                holders.append(threading.Thread(target=self._hold_lock))
                holders[-1].start()
        for holder in holders:
            holder.join()  # no lock may outlive the faults: consumers would take it for empty
        killer.close()

    def _kill_a_connection(self, killer: Engine) -> None:
        ids = [line for line in self.pids.read_text().split() if line] if self.pids.exists() else []
        if not ids:
            return
        victim = int(random.choice(ids[-40:]))
        sql = (
            f"SELECT pg_terminate_backend({victim}) AS killed"
            if killer.name == "postgresql"
            else f"KILL CONNECTION {victim}"
        )
        try:
            killer.run([sql])
            self.audit.connections_killed += 1
        except QadminError:
            pass  # already gone

    def _hold_lock(self) -> None:
        """Hold the queue's table past the workers' lock timeout: they time out and retry."""
        locker = self.engine()
        table = locker.qualified("torture_q")
        try:
            with locker.transaction() as execute:
                if locker.name == "postgresql":
                    execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")
                elif locker.name != "sqlite":
                    execute(f"SELECT * FROM {table} LIMIT 200 FOR UPDATE")
                time.sleep(WORKER_LOCK_MS / 1000 * 1.5)
            self.audit.lock_holds += 1
        except QadminError:
            pass
        finally:
            locker.close()

    # -- admin --

    def _qadmin(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, QADMIN_DSN=self.dsn)
        schema = ["--schema", self.schema] if self.schema else []
        return subprocess.run(
            [sys.executable, "-m", "qadmin", *args, *schema],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    def _admin(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = self._qadmin(*args)
        self.audit.admin_runs += 1
        # A shrink refused because the backlog does not fit is resize doing its job.
        refused = args[0] == "resize" and "refusing to resize" in result.stderr
        if result.returncode != 0 and not refused:
            self.audit.admin_failures.append(f"{' '.join(args)}: {result.stderr.strip()}")
        return result

    def _admin_loop(self) -> None:
        # convert is refused on MySQL 8 (the mysql templates forced on MariaDB)
        scheme = self.dsn.split(":")[0]
        convertible = (
            scheme in ("postgresql", "sqlite", "mysql") and "dialect=mysql" not in self.dsn
        )
        convert = self.name == "fifo" and convertible
        commands = self._commands()
        step = 0
        while not self._stop.wait(1.0):
            if convert and step == 0:  # first: it must land while the producers run
                result = self._admin(
                    "convert", "torture_q", "--to", "ring", "--capacity", "1000000", "--yes"
                )
                self.audit.converted = result.returncode == 0
                self.spec = catalog.get(self.engine(), "torture_q")
                commands = self._commands()  # a ring now: repair joins in
            else:
                self._admin(*commands[step % len(commands)])
            step += 1

    def _commands(self) -> list[tuple[str, ...]]:
        commands: list[tuple[str, ...]] = [
            ("inspect", "torture_q", "--format", "json"),
            ("tail", "torture_q", "--count", "1", "--interval", "0.2", "--format", "json"),
            ("purge", "torture_q", "--dry-run", "--format", "json"),
        ]
        if self.spec.kind is Kind.RING:
            commands.append(
                ("repair", "torture_q", "--older-than", "3s", "--yes", "--format", "json")
            )
        if self.name == "ring":
            commands += [
                ("resize", "torture_q", "--capacity", "4000", "--yes", "--format", "json"),
                ("resize", "torture_q", "--capacity", "3000", "--yes", "--format", "json"),
            ]
        if self.spec.watermark:
            commands.append(("watermark", "torture_q", "repair", "--yes", "--format", "json"))
        return commands

    def _requeue_loop(self) -> None:
        while not self._stop.wait(1.0):
            self._requeue(CLAIM_STALE_S)

    def _requeue(self, stale_after: int) -> None:
        result = self._admin(
            "requeue", "torture_q", "--stale-after", str(stale_after), "--yes", "--format", "json"
        )
        if result.returncode == 0:
            self.requeued.update(int(r["id"]) for r in json.loads(result.stdout or "[]"))

    def _settle(self, admin: Engine) -> None:
        """After the faults: get every message back in reach of the consumers."""
        spec = catalog.get(admin, "torture_q")
        if spec.kind is Kind.RING:
            # Holes left by killed clients: repair until the consumers have taken everything.
            # Repair until the consumers have drained it (a large backlog takes a while).
            # An orphan (a popper took its number and died) is not in depth: wait for both.
            deadline = time.monotonic() + SETTLE_S
            while self._stalled(admin, spec) and time.monotonic() < deadline:
                self._admin("repair", "torture_q", "--older-than", "0", "--yes")
                time.sleep(1.0)
        if spec.kind is Kind.CLAIM:
            time.sleep(CLAIM_STALE_S + 0.5)
            self._requeue(CLAIM_STALE_S)
        if spec.watermark:
            self._admin("watermark", "torture_q", "repair", "--yes")

    @staticmethod
    def _stalled(admin: Engine, spec: QueueSpec) -> bool:
        """Messages still in the ring: counted in depth, or orphaned behind the pop sequence."""
        state = ring.measure(admin, spec)
        orphan = state is not None and state.state.orphan_id is not None
        return bool(size.measure(admin, spec).depth) or orphan

    # -- audit --

    def _records(self, prefix: str) -> list[dict[str, Any]]:
        records = []
        for path in self.dir.glob(f"{prefix}*"):
            for line in path.read_text().splitlines():
                with contextlib.suppress(json.JSONDecodeError):  # a SIGKILLed writer's last line
                    records.append(json.loads(line))
        return records

    def _reconcile(self, leftover: list[messages.Message]) -> None:
        pushes = self._records("prod-")
        certain = {r["pushed"]: r for r in pushes if "pushed" in r}
        uncertain = {p for r in pushes if "uncertain" in r for p in r["uncertain"]}
        ids = {r["id"]: r["pushed"] for r in certain.values()}
        overwritten = {ids[r["ow"]] for r in certain.values() if r.get("ow") in ids}
        pops = self._records("cons-")
        committed = Counter(p for r in pops if "committed" in r for p in r["committed"])
        claim = self.spec.kind is Kind.CLAIM
        # Popped (claim: acked) but the consumer died before it could log the commit.
        in_doubt = (
            {r["acking"] for r in pops if "acking" in r}
            if claim
            else {p for r in pops if "pending" in r for p in r["pending"]}
        )
        acked = Counter(r["acked"] for r in pops if "acked" in r)
        delivered = acked if claim else committed
        audit = self.audit
        audit.pushed = len(certain)
        audit.uncertain_pushes = len(uncertain)
        audit.overwritten = len(overwritten)
        audit.leftover = len(leftover)
        audit.delivered = sum(delivered.values())
        for payload in certain:
            if payload in overwritten:
                continue
            if delivered[payload] == 0 and payload not in in_doubt:
                audit.lost += 1
        requeued_payloads = {ids[i] for i in self.requeued if i in ids}
        for payload, times in delivered.items():
            if times > 1:
                audit.duplicated += times - 1
                if claim and payload in requeued_payloads:
                    audit.duplicates_requeued += times - 1
        seen = set(committed) | set(acked)
        audit.unexpected = len(seen - set(certain) - uncertain)


def torture(
    dsn: str,
    schema: str | None,
    label: str,
    kinds: list[str],
    total: int,
    workdir: Path,
    producers: int = 2,
    consumers: int = 3,
    faults: Faults | None = None,
    min_s: float = 0.0,
) -> list[Audit]:
    audits = []
    for kind in kinds:
        audit = Run(dsn, schema, label, kind, workdir).execute(
            producers, consumers, total, faults or Faults(), min_s
        )
        print(audit.line(), flush=True)
        audits.append(audit)
    return audits


def main() -> None:
    parser = argparse.ArgumentParser(description="qadmin torture harness (see module docstring)")
    parser.add_argument("--messages", type=int, default=1_000_000, help="per engine, all kinds")
    parser.add_argument("--engine", action="append", choices=["sqlite", "postgresql", "mariadb"])
    parser.add_argument("--kind", action="append", choices=sorted(KINDS))
    parser.add_argument("--producers", type=int, default=2)
    parser.add_argument("--consumers", type=int, default=3)
    parser.add_argument("--json", metavar="FILE", help="also write the audits as JSON")
    args = parser.parse_args()
    import tempfile
    import uuid

    kinds = args.kind or list(KINDS)
    per_kind = max(args.messages // len(kinds), args.producers)
    audits: list[Audit] = []
    for label in args.engine or ["sqlite", "postgresql", "mariadb"]:
        workdir = Path(tempfile.mkdtemp(prefix="torture-"))
        schema = None
        if label == "sqlite":
            dsn = f"sqlite:///{workdir / 'torture.db'}"
        elif label == "postgresql":
            dsn, schema = "postgresql://postgres@127.0.0.1:5432/test", "torture"
            _pg_schema(dsn, schema)
        else:
            dsn = f"mysql://root@127.0.0.1:3306/torture_{uuid.uuid4().hex[:6]}"
            _my_database(dsn)
        audits += torture(
            dsn, schema, label, kinds, per_kind, workdir, args.producers, args.consumers
        )
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(a) for a in audits], indent=1))
    sys.exit(0 if all(a.ok for a in audits) else 1)


def _pg_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")


def _my_database(dsn: str) -> None:
    import pymysql

    name = dsn.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    conn.cursor().execute(f"CREATE DATABASE {name}")
    conn.close()


if __name__ == "__main__":
    main()
