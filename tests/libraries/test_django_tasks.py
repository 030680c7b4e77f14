"""django-tasks' database backend (django-tasks-db), live on PostgreSQL, MariaDB and SQLite:
its own enqueue (two named queues, tasks an hour ahead), its own db_worker (killed mid-task),
and qadmin per named queue against the backend's own querysets (ready, running, failed).
The backend keeps no heartbeat and recovers nothing itself: a killed worker's task stays
RUNNING, stale by its started_at alone, and requeue refuses it."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import MY_HOST
from tests.libraries.conftest import Processes
from tests.libraries.named import QueueView, app_json, check_named, my_trouble, sqlite_trouble
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_trouble,
    qadmin,
    qadmin_json,
    wait_until,
)

APP = "tests.libraries.apps.dtasks_app"
TABLE = "django_tasks_database_dbtaskresult"


def _views(own: dict[str, Any], stuck: bool) -> dict[str, QueueView]:
    return {
        queue: QueueView(
            depth=v["ready"],
            scheduled=v["scheduled"],
            running=len(v["running"]),
            stuck=tuple(v["running"]) if stuck else (),
            failed=v["failed"],
            oldest=v["oldest"],
        )
        for queue, v in own.items()
    }


@pytest.mark.parametrize("engine", ["postgresql", "mariadb", "sqlite"])
def test_django_tasks(
    engine: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if engine == "postgresql":
        dsn = request.getfixturevalue("pg_own_database")
        # Every session (the library's, qadmin's) starts in Tokyo: times must not move.
        with psycopg.connect(dsn, autocommit=True) as pg:
            pg.execute(f"ALTER DATABASE \"{dsn.rsplit('/', 1)[1]}\" SET timezone = 'Asia/Tokyo'")
        schema: str | None = "public"
    elif engine == "mariadb":
        database = request.getfixturevalue("my_database")
        dsn = f"mysql://root@{MY_HOST}:3306/{database}"
        schema = None
    else:
        path = tmp_path / "tasks.db"
        dsn, schema = f"sqlite:///{path}", None
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    conn = ["--dsn", dsn]

    app_json(APP, "produce")
    worker = processes.python(APP, "worker", "orders")
    own: dict[str, Any] = {}

    def worked() -> bool:
        own.update(app_json(APP, "view"))
        orders = own["orders"]
        # Its counts are read one query after another: wait for the settled state (the worker
        # blocked in the sleepy task, nothing of orders ready), not a moment between two.
        return bool(
            orders["successful"] == 3
            and orders["failed"] == 1
            and len(orders["running"]) == 1
            and orders["ready"] == 0
            # and the emails task run_after two seconds due (the backend's ready() takes it):
            # nothing changes while qadmin and the backend are compared.
            and own["emails"]["ready"] == 4
        )

    wait_until("db_worker to run, fail and take the sleepy task", worked, timeout=60)
    [running] = own["orders"]["running"]
    # The live worker's task, an hour's grace: running, not stale (no heartbeat to read, so
    # a claim is stale by its age alone: a live task older than --stale-after would be too).
    check_named(conn, TABLE, _views(own, stuck=False), "1h")

    processes.kill(worker)
    own.update(app_json(APP, "view"))
    assert own["orders"]["running"] == [running]  # nothing gives it back: RUNNING for good
    views = _views(own, stuck=True)
    assert views["orders"] == QueueView(0, 2, 1, (running,), 1, oldest=None)
    assert views["emails"] == QueueView(4, 1, 0, (), 0, oldest=own["emails"]["oldest"])
    wait_until(
        "the killed worker's task to be older than 2 s",
        lambda: len(qadmin_json("claims", TABLE, *conn, "--stale-after", "2s")) == 1,
    )
    check_named(conn, TABLE, views, "2s")

    assert detected_library(dsn, TABLE, schema) == "django-tasks"
    if engine == "postgresql":
        # explain's proposed head index can be created: its READY-or-SCHEDULED state reads
        # the clock, which an index predicate may not (PostgreSQL: immutable functions only).
        [fix] = [f["fix"] for f in qadmin_json("explain", TABLE, *conn)["findings"] if f["fix"]]
        with psycopg.connect(dsn, autocommit=True) as pg:
            pg.execute(fix)

    trouble: AbstractContextManager[None] = nullcontext()
    if engine == "postgresql":
        trouble = pg_trouble(
            dsn,
            f"SELECT count(*) FROM {TABLE}",
            f"SELECT id FROM {TABLE} WHERE queue_name = 'emails' LIMIT 1 FOR UPDATE",
        )
    elif engine == "mariadb":
        trouble = my_trouble(database, TABLE, "queue_name = 'emails'")
    else:
        trouble = sqlite_trouble(path, TABLE)
    view = LibraryView(
        waiting=sum(v.depth for v in views.values()),
        states={
            "READY": sum(v.depth for v in views.values()),
            "SCHEDULED": 3,
            "RUNNING": 1,
            "SUCCESSFUL": 3,
            "FAILED": 1,
        },
        stuck=running,
        liveness=False,
    )
    with trouble:
        report = check_qadmin(conn, TABLE, "django-tasks", view, releasable=False)
    # What to do instead, in the refusal and in the finding's fix.
    refused = qadmin("requeue", TABLE, *conn, "--stale-after", "2s", "--yes")
    assert refused.exit_code == 2 and "enqueue()" in refused.stderr, refused.stderr
    [stale] = [f for f in report["findings"] if f["code"] == "stale_claims"]
    assert "enqueue()" in stale["fix"]
    assert report["size"]["scheduled"] == 3


@pytest.mark.parametrize("engine", ["mariadb", "sqlite"])
def test_django_tasks_run_after_due_to_the_microsecond(
    engine: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task whose run_after passed a moment ago is due at once: SQLite's CURRENT_TIMESTAMP
    and MariaDB's keep whole seconds, which kept it SCHEDULED for up to a second after (while
    the backend's own ready() already took it)."""
    if engine == "mariadb":
        import pymysql

        database = request.getfixturevalue("my_database")
        dsn = f"mysql://root@{MY_HOST}:3306/{database}"
    else:
        import sqlite3

        path = tmp_path / "tasks.db"
        dsn = f"sqlite:///{path}"
    monkeypatch.setenv("LIB_DSN", dsn)
    app_json(APP, "produce")
    # Inside one whole second, and a fifth of a second past a run_after in that same second.
    while not 0.3 <= time.time() % 1 <= 0.6:
        time.sleep(0.01)
    passed = datetime.now(UTC) - timedelta(seconds=0.2)
    moved = f"UPDATE {TABLE} SET run_after = {{p}} WHERE queue_name = 'emails'"
    if engine == "mariadb":
        with pymysql.connect(host=MY_HOST, user="root", password="", database=database) as my:
            my.cursor().execute(moved.format(p="%s"), (passed.replace(tzinfo=None),))
            my.commit()
    else:
        with sqlite3.connect(path) as lite:
            lite.execute(moved.format(p="?"), (passed.replace(tzinfo=None).isoformat(" "),))
    size = qadmin_json("size", TABLE, "--dsn", dsn, "--queue", "emails")
    assert (size["depth"], size.get("scheduled") or 0) == (5, 0), size
    own = app_json(APP, "view")["emails"]
    assert (own["ready"], own["scheduled"]) == (5, 0)
