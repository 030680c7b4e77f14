"""django-q2's ORM broker, live on PostgreSQL, MariaDB and SQLite: django-q2's async_task on
two clusters (named queues ``work`` and ``idle``) and a one-off schedule an hour ahead, its
cluster on ``work`` (killed mid-task), and qadmin per named queue against the broker's own
queue_size and lock_size. django-q2 leases a task (``lock`` = locked until) and redelivers it
once the lease passes, so the killed cluster's task is a claim qadmin sees (its claim time is
not kept: age unknown) but, by design, nothing it releases."""

from __future__ import annotations

from contextlib import AbstractContextManager
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
    wait_until,
)

APP = "tests.libraries.apps.djq_app"
TABLE = "django_q_ormq"


@pytest.mark.parametrize("engine", ["postgresql", "mariadb", "sqlite"])
def test_django_q2(
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
        # Every session (the library's, qadmin's) starts in Tokyo: times must not move.
        with psycopg.connect(dsn, autocommit=True) as pg:
            pg.execute(f"ALTER DATABASE \"{dsn.rsplit('/', 1)[1]}\" SET timezone = 'Asia/Tokyo'")
        schema: str | None = "public"
        trouble = pg_trouble(
            dsn,
            f"SELECT count(*) FROM {TABLE}",
            f"SELECT id FROM {TABLE} WHERE key = 'idle' LIMIT 1 FOR UPDATE",
        )
    elif engine == "mariadb":
        database = request.getfixturevalue("my_database")
        dsn = f"mysql://root@{MY_HOST}:3306/{database}"
        schema = None
        trouble = my_trouble(database, TABLE, "`key` = 'idle'")
    else:
        path = tmp_path / "djq.db"
        dsn, schema = f"sqlite:///{path}", None
        trouble = sqlite_trouble(path, TABLE)
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))

    app_json(APP, "produce")
    cluster = processes.python(APP, "worker")
    own: dict[str, Any] = {}

    def worked() -> bool:
        own.update(app_json(APP, "view"))
        work = own["work"]
        return bool(
            own["success"] == 3
            and own["failure"] == 1
            and work["locked"] == 1
            and work["available"] == 0
        )

    wait_until("django-q2's cluster to run, fail and take the sleepy task", worked, timeout=90)
    processes.kill(cluster)
    own.update(app_json(APP, "view"))
    work, idle = own["work"], own["idle"]
    view = LibraryView(
        waiting=idle["available"],
        states={"available": idle["available"], "locked": work["locked"]},
        stuck=None,
    )
    assert view.waiting == 3  # the schedule an hour ahead is not among them
    # Per named queue (the cluster key): the locked task is a lease with no claim time qadmin
    # can read ("locked until" only), so it is listed with its age unknown; the oldest
    # waiting task is the broker's oldest available lock.
    views = {
        "work": QueueView(work["available"], 0, work["locked"], None, 0, work["oldest"]),
        "idle": QueueView(idle["available"], 0, idle["locked"], (), 0, idle["oldest"]),
    }
    assert views["work"].running == 1 and idle["oldest"] is not None
    check_named(["--dsn", dsn], TABLE, views, "2s")

    assert detected_library(dsn, TABLE, schema) == "django-q2"
    with trouble:
        report = check_qadmin(["--dsn", dsn], TABLE, "django-q2", view, releasable=False)
    assert report["claims"]["claimed"] == 1
