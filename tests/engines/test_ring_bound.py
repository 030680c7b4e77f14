"""A ring never holds more than its capacity, uncommitted pushes included (docs/kinds.md, The ring).

Each test drives the ring's installed routines from real concurrent sessions, as applications
do (psycopg, pymysql; READ COMMITTED transactions held open on purpose), and counts what the
ring holds: its occupied slots plus its overflow table, in one statement. The scenarios are a
tester's report against the ring that sent a push whose slot was locked to the overflow table
unbounded: a 10-slot ring took 2,000 more behind an uncommitted push_many of 10, and racing
push_many calls filled it to 30 (PostgreSQL) and 250 (MariaDB).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from qadmin import catalog
from qadmin.errors import QueueFull
from qadmin.ops import messages, queues
from tests.conftest import Target
from tests.helpers import drain

SERVER_ENGINES = ["postgresql", "mariadb", "mysql8"]


class Session:
    """One application connection calling the ring's routines at READ COMMITTED."""

    def __init__(self, target: Target, names: dict[str, str]):
        self.target, self.names = target, names
        if target.label == "postgresql":
            import psycopg

            self.conn: Any = psycopg.connect(
                target.dsn, autocommit=True, options=f"-c search_path={target.schema}"
            )
            self.conn.execute(
                "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED"
            )
        else:
            import pymysql

            self.conn = pymysql.connect(
                host="127.0.0.1", user="root", database=target.schema, autocommit=True
            )
            self._my("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")

    @property
    def pg(self) -> bool:
        return self.target.label == "postgresql"

    def _my(self, sql: str, args: list[Any] | None = None) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        with self.conn.cursor() as cur:
            cur.execute(sql, args)
            while True:
                if cur.description:
                    rows.extend(cur.fetchall())
                if not cur.nextset():
                    return rows

    def begin(self) -> None:
        if self.pg:
            self.conn.execute("BEGIN")
        else:
            self._my("START TRANSACTION")

    def commit(self) -> None:
        if self.pg:
            self.conn.execute("COMMIT")
        else:
            self._my("COMMIT")

    def push_many(self, payloads: list[bytes]) -> list[int]:
        """The ids taken; [] when the ring refused the batch (whole)."""
        name = self.names["push_many"]
        if self.pg:
            rows = self.conn.execute(f"SELECT id FROM {name}(%s::bytea[])", [payloads]).fetchall()
        else:
            batch = json.dumps([base64.b64encode(p).decode() for p in payloads])
            rows = self._my(f"CALL {name}(%s)", [batch])
        return [int(r[0]) for r in rows if r[0] is not None]

    def push(self, payload: bytes) -> int | None:
        name = self.names["push"]
        if self.pg:
            rows = self.conn.execute(f"SELECT id FROM {name}(%s)", [payload]).fetchall()
        else:
            rows = self._my(f"CALL {name}(%s)", [payload])
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def pop(self, count: int) -> list[int]:
        name = self.names["pop"]
        if self.pg:
            rows = self.conn.execute(f"SELECT id FROM {name}(%s)", [count]).fetchall()
        else:
            rows = self._my(f"CALL {name}(%s)", [count])
        return [int(r[0]) for r in rows]

    def held(self) -> int:
        """What the ring holds (committed): occupied slots plus the overflow table."""
        table, overflow = self.names["table"], self.names["overflow"]
        sql = (
            f"SELECT (SELECT count(*) FROM {table} WHERE reference_count = 1)"
            f" + (SELECT count(*) FROM {overflow})"
        )
        if self.pg:
            return int(self.conn.execute(sql).fetchone()[0])
        return int(self._my(sql)[0][0])

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def ring(request: pytest.FixtureRequest, target: Target) -> Iterator[tuple[Target, Any]]:
    capacity = request.param
    engine = target.engine()
    queues.create(engine, queues.make_spec("r", "ring", capacity, False))
    spec = catalog.get(engine, "r")
    engine.close()
    yield target, spec


def names(spec: Any) -> dict[str, str]:
    objects = spec.objects()
    return {k: objects[k] for k in ("table", "overflow", "push", "push_many", "pop")}


def sessions(target: Target, spec: Any, n: int) -> list[Session]:
    return [Session(target, names(spec)) for _ in range(n)]


def cli_push(target: Target, *payloads: str) -> subprocess.CompletedProcess[str]:
    schema = ["--schema", target.schema] if target.label == "postgresql" else []
    env = dict(os.environ, QADMIN_DSN=target.dsn)
    return subprocess.run(
        [sys.executable, "-m", "qadmin", "push", "r", *payloads, *schema],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("target", SERVER_ENGINES, indirect=True)
@pytest.mark.parametrize("ring", [10], indirect=True)
def test_an_uncommitted_push_many_fills_the_ring_for_everyone_else(ring):
    target, spec = ring
    holder, other = sessions(target, spec, 2)
    try:
        holder.begin()
        assert len(holder.push_many([b"h%d" % i for i in range(10)])) == 10
        assert other.held() == 0, "the holder's pushes are not committed yet"
        # The tester's MariaDB push_many of 2,000 was accepted whole; 50 single pushes on both.
        assert other.push_many([b"x"] * 2000) == []
        assert other.push_many([b"y"]) == []
        assert [other.push(b"z%d" % i) for i in range(50)] == [None] * 50
        cli = cli_push(target, "from-the-cli")
        assert cli.returncode == 4, cli.stderr
        assert "is full (capacity 10)" in cli.stderr
        holder.commit()
        assert other.held() == 10
        assert other.push(b"still full") is None
        # Room again after a pop, exactly as much as was popped: a batch that does not fit is
        # refused whole, one that fits goes in whole.
        assert len(other.pop(3)) == 3
        assert other.push_many([b"a"] * 4) == []
        assert len(other.push_many([b"a"] * 3)) == 3
        assert other.held() == 10
    finally:
        holder.close()
        other.close()


def race(target: Target, spec: Any, pushers: int, work: Any) -> list[list[int]]:
    """Run ``work(session)`` in ``pushers`` sessions at once, each in a transaction it holds
    open until every session has pushed (so the pushes overlap uncommitted), then commit."""
    group = sessions(target, spec, pushers)
    start, pushed = threading.Barrier(pushers), threading.Barrier(pushers)
    got: list[list[int]] = [[] for _ in group]
    errors: list[BaseException] = []

    def run(i: int, session: Session) -> None:
        try:
            start.wait(timeout=60)
            session.begin()
            got[i] = work(session)
            pushed.wait(timeout=60)
            session.commit()
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)
            start.abort()
            pushed.abort()

    threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate(group)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in group:
        s.close()
    assert not errors, errors
    return got


@pytest.mark.parametrize("target", SERVER_ENGINES, indirect=True)
@pytest.mark.parametrize(
    ("ring", "pushers", "batch", "fits"),
    [
        # the tester's: PostgreSQL took 30 every time, MariaDB up to 250; 150 into 50 slots
        (10, 4, 100, 0),
        (50, 3, 300, 0),
        # batches that fit: exactly the batches that fit go in, each whole
        (10, 4, 4, 8),
        (50, 3, 20, 40),
    ],
    indirect=["ring"],
)
def test_racing_push_many_never_overfills_the_ring(ring, pushers, batch, fits):
    target, spec = ring
    capacity = spec.capacity
    probe = Session(target, names(spec))
    engine = target.engine()
    try:
        for _ in range(5):
            got = race(target, spec, pushers, lambda s: s.push_many([b"m"] * batch))
            assert all(len(ids) in (0, batch) for ids in got), "a batch went in part-way"
            taken = sum(len(ids) for ids in got)
            assert taken == fits, got
            assert probe.held() == taken <= capacity
            assert len(drain(engine, spec, 10_000)) == taken
    finally:
        engine.close()
        probe.close()


@pytest.mark.parametrize("target", SERVER_ENGINES, indirect=True)
@pytest.mark.parametrize("ring", [10], indirect=True)
def test_racing_single_pushes_in_open_transactions_stop_at_the_capacity(ring):
    """4 sessions push 20 each, one at a time, in transactions held open: 10 go in."""
    target, spec = ring
    probe = Session(target, names(spec))
    engine = target.engine()
    try:
        for _ in range(3):
            got = race(
                target, spec, 4, lambda s: [i for _ in range(20) if (i := s.push(b"s")) is not None]
            )
            assert sum(len(ids) for ids in got) == 10, got
            assert probe.held() == 10
            assert len(drain(engine, spec, 10_000)) == 10
    finally:
        engine.close()
        probe.close()


@pytest.mark.parametrize("target", SERVER_ENGINES, indirect=True)
@pytest.mark.parametrize("ring", [20], indirect=True)
def test_producers_and_consumers_never_overfill_and_lose_nothing(ring):
    """3 producers (batches of 3 per transaction) and 2 consumers on a 20-slot ring while a
    probe counts what the ring holds, over and over: never more than 20; every message
    pushed is popped once."""
    target, spec = ring
    producers, consumers = sessions(target, spec, 3), sessions(target, spec, 2)
    probe = Session(target, names(spec))
    pushed: list[int] = []
    popped: list[int] = []
    done = threading.Event()
    errors: list[BaseException] = []
    over: list[int] = []

    def produce(s: Session) -> None:
        try:
            for _ in range(60):
                s.begin()
                pushed.extend(s.push_many([b"p"] * 3))
                s.commit()
        except BaseException as exc:
            errors.append(exc)

    def consume(s: Session) -> None:
        try:
            while not done.is_set() or len(popped) < len(pushed):
                got = s.pop(2)
                popped.extend(got)
                if not got and done.is_set():
                    break
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=produce, args=(s,)) for s in producers]
    readers = [threading.Thread(target=consume, args=(s,)) for s in consumers]
    for t in threads + readers:
        t.start()
    while any(t.is_alive() for t in threads):
        if (n := probe.held()) > spec.capacity:
            over.append(n)
    done.set()
    for t in threads + readers:
        t.join()
    popped.extend(probe.pop(10_000))
    for s in producers + consumers + [probe]:
        s.close()
    assert not errors, errors
    assert not over, f"the ring held more than its capacity: {over[:10]}"
    assert sorted(popped) == sorted(pushed) and len(set(popped)) == len(popped)
    assert pushed, "nothing went in"


@pytest.mark.parametrize("target", ["sqlite"], indirect=True)
@pytest.mark.parametrize("ring", [10], indirect=True)
def test_sqlite_ring_is_bounded_by_its_single_writer(ring):
    """SQLite has no routines: 4 threads push 20 each through qadmin at once; the write lock
    serializes them, and what goes in stops at the capacity (each push of a list takes what
    fits, then exit 4)."""
    target, spec = ring
    start = threading.Barrier(4)
    took: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        engine = target.engine()
        try:
            start.wait(timeout=60)
            try:
                took.append(len(messages.push(engine, spec, [b"s"] * 20)))
            except QueueFull as exc:
                took.append(len(exc.pushed))
        except BaseException as exc:
            errors.append(exc)
        finally:
            engine.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(took) == 10, took
    engine = target.engine()
    try:
        with pytest.raises(QueueFull):
            messages.push(engine, spec, [b"one more"])
        assert len(messages.pop(engine, spec, 100)) == 10
    finally:
        engine.close()
