"""kombu's SQLAlchemy transport, live on PostgreSQL, MariaDB and SQLite: kombu's producer and
consumer (killed mid-message), and qadmin's depth against kombu's own queue size. A delivered
message is kept with visible false and never delivered again, so the killed consumer's
message is done as far as the table can tell: no claim for qadmin to find or release."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from tests.conftest import MY_HOST
from tests.libraries.conftest import Processes
from tests.libraries.named import QueueView, check_named
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_trouble,
    wait_until,
)

APP = "tests.libraries.apps.kombu_app"


def _kombu(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", APP, *args], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@contextmanager
def my_trouble(database: str) -> Iterator[None]:
    """A consistent snapshot that read the table, and a locked waiting row, on MariaDB."""
    import pymysql

    snap = pymysql.connect(host=MY_HOST, user="root", password="", database=database)
    locker = pymysql.connect(host=MY_HOST, user="root", password="", database=database)
    with snap, locker, snap.cursor() as s, locker.cursor() as lk:
        s.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        s.execute("SELECT count(*) FROM kombu_message")
        lk.execute("START TRANSACTION")
        lk.execute("SELECT id FROM kombu_message WHERE visible = 1 LIMIT 1 FOR UPDATE")
        try:
            yield
        finally:
            snap.rollback()
            locker.rollback()


@contextmanager
def sqlite_trouble(path: Path) -> Iterator[None]:
    """Another connection in a read transaction that read the table (its snapshot)."""
    import sqlite3

    reader = sqlite3.connect(path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM kombu_message").fetchall()
        yield
    finally:
        reader.execute("ROLLBACK")
        reader.close()


@pytest.mark.parametrize("engine", ["postgresql", "mariadb", "sqlite"])
def test_kombu(
    engine: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trouble: AbstractContextManager[None]
    if engine == "postgresql":
        dsn = request.getfixturevalue("pg_own_database")
        url = "sqla+" + dsn.replace("postgresql://", "postgresql+psycopg://", 1)
        schema: str | None = "public"
    elif engine == "mariadb":
        database = request.getfixturevalue("my_database")
        dsn = f"mysql://root@{MY_HOST}:3306/{database}"
        url = f"sqla+mysql+pymysql://root@{MY_HOST}:3306/{database}"
        schema = None
    else:
        path = tmp_path / "kombu.db"
        dsn, url, schema = f"sqlite:///{path}", f"sqla+sqlite:///{path}", None
    monkeypatch.setenv("LIB_BLOCK", str(block_file))

    _kombu("produce", url)
    processes.python(APP, "worker", url)
    # kombu's own view: the worker took every 'work' message (the last one it is stuck on).
    wait_until(
        "kombu's consumer to take every message", lambda: _kombu("waiting", url, "work") == "0"
    )
    processes.kill(processes.started[-1])
    view = LibraryView(
        waiting=int(_kombu("waiting", url, "idle")),
        states={},  # visible true/false: compared by group below
        stuck=None,
        has_enqueue_time=False,
    )
    assert view.waiting == 3
    # Per named queue (kombu_message.queue_id: kombu_queue's id for each name), against
    # kombu's own _size of each; kombu has no delayed delivery to schedule anything with.
    ids = json.loads(_kombu("ids", url))
    views = {
        str(ids[name]): QueueView(
            depth=int(_kombu("waiting", url, name)), scheduled=0, running=0, stuck=(), failed=0
        )
        for name in ("work", "idle")
    }
    check_named(["--dsn", dsn], "kombu_message", views, "2s", running_known=False)

    assert detected_library(dsn, "kombu_message", schema) == "kombu"
    if engine == "postgresql":
        trouble = pg_trouble(
            dsn,
            "SELECT count(*) FROM kombu_message",
            "SELECT id FROM kombu_message WHERE visible LIMIT 1 FOR UPDATE",
        )
    elif engine == "mariadb":
        trouble = my_trouble(dsn.rsplit("/", 1)[1])
    else:
        trouble = sqlite_trouble(path)
    with trouble:
        report = check_qadmin(["--dsn", dsn], "kombu_message", "kombu", view, releasable=False)
    assert report["size"]["done"] == 4  # delivered: kept, never delivered again
    assert report["size"]["claimed"] in (0, None)
