"""kombu's SQLAlchemy transport, live on PostgreSQL, MariaDB and SQLite: kombu's producer and
consumer (killed mid-message), and qadmin's depth against kombu's own queue size. A delivered
message is kept with visible false and never delivered again, so the killed consumer's
message is done as far as the table can tell: no claim for qadmin to find or release."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.conftest import MY_HOST
from tests.libraries.conftest import Processes
from tests.libraries.named import QueueView, check_named
from tests.libraries.scenario import (
    LibraryView,
    app_output,
    check_qadmin,
    detected_library,
    my_trouble,
    pg_trouble,
    sqlite_trouble,
    wait_until,
)

APP = "tests.libraries.apps.kombu_app"


def _kombu(*args: str) -> str:
    return app_output(APP, *args, timeout=60)


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
    # Per named queue (kombu_message.queue_id: kombu_queue's id for each name; qadmin shows
    # and takes the name), against kombu's own _size of each; kombu has no delayed delivery.
    ids = json.loads(_kombu("ids", url))
    assert set(ids) >= {"work", "idle"}
    views = {
        name: QueueView(
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
        trouble = my_trouble(dsn.rsplit("/", 1)[1], "kombu_message", "visible = 1")
    else:
        trouble = sqlite_trouble(path, "kombu_message")
    with trouble:
        report = check_qadmin(["--dsn", dsn], "kombu_message", "kombu", view, releasable=False)
    assert report["size"]["done"] == 4  # delivered: kept, never delivered again
    assert report["size"]["claimed"] in (0, None)
