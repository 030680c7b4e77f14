"""What every live library test checks of qadmin against the library's own view.

A test runs the library (its producer, its worker, a worker SIGKILLed mid-job), reads the
library's own counts and stuck jobs into a ``LibraryView``, and hands it to ``check_qadmin``
with a snapshot and a row lock held elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from qadmin.engines import open_engine
from qadmin.profiles.detect import detect
from qadmin.profiles.shape import read_shape
from tests.conftest import MY_HOST
from tests.helpers import invoke as qadmin
from tests.libraries.conftest import NODE_DIR, REPO

STALE_AFTER = "2s"


def qadmin_json(*args: str) -> Any:
    result = qadmin(*args, "--format", "json")
    assert result.exit_code in (0, 1), (args, result.exit_code, result.stdout, result.stderr)
    return json.loads(result.stdout)


def wait_until(what: str, probe: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll ``probe`` until it holds: a library's worker runs at its own pace."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def stale_entry(claims: dict[str, Any], row_id: object) -> dict[str, Any]:
    """The stale claim naming ``row_id`` in ``claims``' JSON (ids compared as text)."""
    for entry in claims["stale"]:
        if str(entry["id"]) == str(row_id):
            return dict(entry)
    pytest.fail(f"{row_id} is not among the stale claims: {claims['stale']}")


def queue_entry(report: dict[str, Any], queue: str, *args: str) -> dict[str, Any]:
    """One named queue's figures: inspect's line for it (its JSON ``named_queues.queues``), and
    the same figures from ``inspect --queue`` (``args``: the table and connection options),
    which must agree with it."""
    listed = (report.get("named_queues") or {}).get("queues")
    if listed:
        lines = {str(entry["queue"]): dict(entry) for entry in listed}
        if queue not in lines:
            pytest.fail(f"no named queue {queue} in inspect's report: {listed}")
        line = lines[queue]
        alone = _queue_alone(queue, *args)
        for key, value in alone.items():
            if key != "oldest_age_s":
                assert line[key] == value, (key, line, alone)
        return line
    return _queue_alone(queue, *args)


def _queue_alone(queue: str, *args: str) -> dict[str, Any]:
    """One named queue's figures from ``inspect --queue``."""
    one = qadmin_json("inspect", *args, "--queue", queue)
    size, claims = one["size"], one["claims"]
    return {
        "queue": queue,
        "depth": size["depth"],
        "scheduled": size.get("scheduled"),
        "retrying": size.get("retrying"),
        "running": size["claimed"],
        "stale": len(claims["stale"]),
        "failed": size["failed"],
        "oldest_age_s": size["oldest_age_s"],
    }


def status_lines(dsn: str, table: str, *args: str) -> dict[str, dict[str, Any]]:
    """``qadmin status``'s lines for ``table``'s named queues in this database, by queue."""
    result = qadmin("status", "--dsn", dsn, *args, "--format", "json")
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stdout, result.stderr)
    lines = json.loads(result.stdout)["lines"]
    return {str(line["queue"]): line for line in lines if line["table"] == table}


def state_rows(size: dict[str, Any]) -> dict[str, int]:
    """``size.states`` as {state: rows}, for comparing with the library's own counts."""
    return {str(s["state"]): int(s["rows"]) for s in size["states"] if s["rows"]}


@dataclass(frozen=True)
class LibraryView:
    """What the library itself says: its waiting count, its counts per state (as text), and
    the job its killed worker left claimed (None: the library keeps no claim in the table)."""

    waiting: int
    states: dict[str, int]
    stuck: object | None
    has_enqueue_time: bool = True
    # Whether the library keeps a liveness qadmin reads (a workers table or a heartbeat on the
    # row); without one a claim is stale by its age alone.
    liveness: bool = True


def detected_library(dsn: str, table: str, schema: str | None) -> str | None:
    """The library qadmin's detection names for the table, from the catalog alone."""
    engine = open_engine(dsn, schema)
    try:
        shape = read_shape(engine, table)
        assert shape is not None, f"{table} not found"
        profile = detect(shape, engine.dialect) or detect(shape, engine.base_dialect)
        return profile.library if profile else None
    finally:
        engine.close()


@contextmanager
def pg_trouble(dsn: str, read_sql: str, lock_sql: str) -> Iterator[None]:
    """Another session holding a snapshot (REPEATABLE READ that read the table) and another
    holding a row lock, open while qadmin looks."""
    import psycopg

    with psycopg.connect(dsn) as snap, psycopg.connect(dsn) as locker:
        snap.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        snap.execute(read_sql).fetchall()
        locker.execute(lock_sql).fetchall()
        try:
            yield
        finally:
            snap.rollback()
            locker.rollback()


def check_qadmin(
    conn: list[str], table: str, library: str, view: LibraryView, releasable: bool
) -> dict[str, Any]:
    """inspect, check, tail, claims and requeue --dry-run (and --yes when ``releasable``)
    against the library's view; returns inspect's JSON."""
    report = qadmin_json("inspect", table, *conn, "--stale-after", STALE_AFTER)
    assert report["profile"]["library"] == library
    assert report["profile"]["source"] == "detected"
    size = report["size"]
    assert size["depth"] == view.waiting
    if view.states:
        assert state_rows(size) == {k: v for k, v in view.states.items() if v}
    if view.has_enqueue_time and view.waiting:
        assert 0 <= size["oldest_age_s"] < 600
    claims = report["claims"]
    if view.stuck is not None:
        entry = stale_entry(claims, view.stuck)
        if view.liveness:
            assert entry["worker_alive"] is False or (entry["heartbeat_age_s"] or 0) >= 2, entry
        else:
            assert entry["claimed_for_s"] >= 2, entry
        checked = qadmin("check", table, *conn, "--stale-after", STALE_AFTER)
        assert checked.exit_code == 1, checked.stdout
        # The finding names the library and its job as the library does.
        noun = report["profile"]["noun"]
        assert f"{library} {noun} {view.stuck}" in checked.stdout, checked.stdout
        alone = qadmin_json("claims", table, *conn, "--stale-after", STALE_AFTER)
        stale_entry({"stale": alone}, view.stuck)  # claims prints the stale rows

    tail = qadmin("tail", table, *conn, "--count", "1", "--format", "json")
    assert tail.exit_code == 0, tail.stderr
    sample = json.loads(tail.stdout.strip().splitlines()[0])
    assert sample["depth"] == view.waiting

    dry = qadmin("requeue", table, *conn, "--stale-after", STALE_AFTER, "--dry-run")
    if releasable:
        assert dry.exit_code == 0, dry.stderr
        assert str(view.stuck) in dry.stdout
        done = qadmin("requeue", table, *conn, "--stale-after", STALE_AFTER, "--yes")
        assert done.exit_code == 0, done.stderr
    else:
        assert dry.exit_code == 2, (dry.stdout, dry.stderr)
        assert library in dry.stderr
    return dict(report)


@dataclass(frozen=True)
class NodeScript:
    """One of tests/libraries/node's scripts, run against one database: its subcommands print
    a JSON line last (the library's own view), ``worker`` runs until killed."""

    path: Path
    env: dict[str, str]

    @classmethod
    def of(cls, name: str, dsn: str, block_file: Path, node_modules: Path) -> NodeScript:
        env = {
            **os.environ,
            "LIB_DSN": dsn,
            "LIB_BLOCK": str(block_file),
            "NODE_PATH": str(node_modules),
        }
        return cls(NODE_DIR / name, env)

    def __call__(self, *args: str) -> Any:
        out = subprocess.run(
            ["node", str(self.path), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    def command(self, *args: str) -> list[str]:
        return ["node", str(self.path), *args]


def app_output(
    module: str,
    *args: str,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> str:
    """A test app's subcommand (tests/libraries/apps) in its own process, as the library runs
    in an application (its settings are per process): its stdout, stripped. ``python``: the
    interpreter that has the library (Oban's own venv); ``env`` is added to the test's."""
    out = subprocess.run(
        [python, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip()


def app_json(
    module: str, *args: str, python: str = sys.executable, env: dict[str, str] | None = None
) -> Any:
    """``app_output``'s last line as JSON (the app's own view), None when it printed nothing."""
    out = app_output(module, *args, python=python, env=env)
    return json.loads(out.splitlines()[-1]) if out else None


def pg_counts(dsn: str, sql: str) -> dict[Any, int]:
    """A library's own counts from a ``SELECT key..., count(*) ... GROUP BY`` on PostgreSQL:
    {key: n} for one key column, {(key1, key2): n} for more."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(sql).fetchall()
    return {(row[0] if len(row) == 2 else tuple(row[:-1])): int(row[-1]) for row in rows}


def pg_age_s(dsn: str, sql: str, *params: object) -> float:
    """Seconds from a one-value ``SELECT extract(epoch FROM now() - ...)``; 0 while the row or
    its time is not there yet."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute(sql, params).fetchone()
    return float(row[0]) if row and row[0] is not None else 0.0


@contextmanager
def my_trouble(database: str, table: str, lock_where: str) -> Iterator[None]:
    """A consistent snapshot that read the table, and a locked row, on MariaDB."""
    import pymysql

    snap = pymysql.connect(host=MY_HOST, user="root", password="", database=database)
    locker = pymysql.connect(host=MY_HOST, user="root", password="", database=database)
    with snap, locker, snap.cursor() as s, locker.cursor() as lk:
        s.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        s.execute(f"SELECT count(*) FROM `{table}`")
        lk.execute("START TRANSACTION")
        lk.execute(f"SELECT 1 FROM `{table}` WHERE {lock_where} LIMIT 1 FOR UPDATE")
        try:
            yield
        finally:
            snap.rollback()
            locker.rollback()


@contextmanager
def sqlite_trouble(path: Path, table: str) -> Iterator[None]:
    """Another connection in a read transaction that read the table (its snapshot)."""
    import sqlite3

    reader = sqlite3.connect(path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute(f'SELECT count(*) FROM "{table}"').fetchall()
        yield
    finally:
        reader.execute("ROLLBACK")
        reader.close()
