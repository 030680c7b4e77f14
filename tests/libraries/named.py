"""Per named queue: qadmin's figures for each of a table's named queues against the library's
own, and the trouble (a held snapshot, a row lock) on MariaDB and SQLite, for any table.

``QueueView`` is what the library itself says of one named queue; ``check_named`` reads
inspect's ``named_queues`` (the whole table) and ``size``/``claims``/``tail`` with ``--queue NAME``
and compares every figure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import MY_HOST
from tests.libraries.scenario import qadmin, qadmin_json


@dataclass(frozen=True)
class QueueView:
    """One named queue as the library counts it: due waiting jobs, jobs waiting for a later
    time, running (claimed) jobs and which of them are stuck (a killed worker's), failed."""

    depth: int
    scheduled: int
    running: int
    # None: the library keeps no claim time qadmin can read (qadmin lists its claims with
    # the age unknown, so a queue's stale figure is unknown too).
    stuck: tuple[str, ...] | None
    failed: int
    # The oldest due waiting job's enqueue time as the library stores it (an epoch in
    # seconds, or an ISO 8601 text), or None: the library keeps none / nothing waits.
    oldest: float | str | None = None


def instant(value: float | str) -> datetime:
    """A library's time (epoch seconds, or ISO 8601, naive meaning UTC) as a UTC instant."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def app_json(module: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """A test app's subcommand in its own process (a library's settings are per process):
    its last stdout line, as JSON."""
    import os

    out = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else None


def check_named(
    conn: list[str],
    table: str,
    views: dict[str, QueueView],
    stale_after: str,
    *,
    running_known: bool = True,
) -> dict[str, Any]:
    """Each named queue's depth, scheduled, running, stale and failed from inspect's
    ``named_queues`` and from ``size``/``claims --queue``, equal to the library's ``views``.
    ``running_known`` False: the library keeps no running job in the table (huey)."""
    report = qadmin_json("inspect", table, *conn, "--stale-after", stale_after)
    lines = {str(q["queue"]): q for q in report["named_queues"]["queues"]}
    assert set(lines) <= set(views), lines
    for name, view in views.items():
        if name not in lines:  # no row of it in the table at all
            assert not _any(view), (name, lines, view)
            continue
        line = lines[name]
        assert line["exact"] is True, line
        assert line["depth"] == view.depth, (name, line, view)
        assert (line["scheduled"] or 0) == view.scheduled, (name, line, view)
        assert (line["failed"] or 0) == view.failed, (name, line, view)
        if running_known:
            assert line["running"] == view.running, (name, line, view)
            stale_n = None if view.stuck is None else len(view.stuck)
            assert line["stale"] == stale_n, (name, line, view)

        size = qadmin_json("size", table, *conn, "--queue", name)
        assert size["depth"] == view.depth, (name, size, view)
        assert (size.get("scheduled") or 0) == view.scheduled, (name, size, view)
        # The oldest due job: the same row's time as the library's (to the microsecond).
        if view.oldest is None:
            assert size["oldest_enqueued_at"] is None, (name, size)
            assert line["oldest_age_s"] is None, (name, line)
        else:
            seen = instant(size["oldest_enqueued_at"])
            assert abs((seen - instant(view.oldest)).total_seconds()) < 1e-3, (name, size, view)
            assert line["oldest_age_s"] is not None and line["oldest_age_s"] >= 0, line
        # tail's sample of the named queue (what a monitor graphs per queue).
        tail = qadmin("tail", table, *conn, "--queue", name, "--count", "1", "--format", "json")
        assert tail.exit_code == 0, tail.stderr
        sample = json.loads(tail.stdout.strip().splitlines()[0])
        assert sample["queue"] == f"{table}[{name}]" and sample["depth"] == view.depth, sample
        if running_known and view.stuck is not None:
            stale = qadmin_json(
                "claims", table, *conn, "--queue", name, "--stale-after", stale_after
            )
            assert sorted(str(c["id"]) for c in stale) == sorted(view.stuck), (name, stale)
    return dict(report)


def _any(view: QueueView) -> bool:
    return bool(view.depth or view.scheduled or view.running or view.failed)


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
