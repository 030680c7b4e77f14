"""huey's SQLite storage (SqliteHuey), live: two huey instances (named queues ``orders`` and
``emails``) in one file, tasks an hour ahead and a retry an hour later, huey's own consumer on
``orders`` killed mid-task, and qadmin per named queue on both of huey's tables against huey's
own pending and scheduled counts. huey deletes a task from ``task`` when its consumer takes
it: a running task (and a killed consumer's) is not in the database, so there is no claim for
qadmin to find, as for huey itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.libraries.conftest import Processes
from tests.libraries.named import QueueView, app_json, check_named, sqlite_trouble
from tests.libraries.scenario import LibraryView, check_qadmin, detected_library, wait_until

APP = "tests.libraries.apps.huey_app"


def test_huey(
    tmp_path: Path,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "huey.db"
    monkeypatch.setenv("LIB_DB", str(path))
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    dsn = f"sqlite:///{path}"
    conn = ["--dsn", dsn]

    app_json(APP, "produce")
    before = app_json(APP, "view")
    # Not yet read by a consumer: every task, scheduled or not, waits in ``task``.
    assert before["orders"]["pending"] == 8 and before["orders"]["scheduled_later"] == 0
    consumer = processes.python(APP, "worker", "orders")
    own: dict[str, dict[str, Any]] = {}

    def worked() -> bool:
        own.update(app_json(APP, "view"))
        # Both 'later' tasks, the failed one's retry and the one due soon are in the
        # schedule, the sleepy one taken: nothing of orders is left in ``task``.
        return own["orders"] == {
            "pending": 0,
            "scheduled_due": 0,
            "scheduled_later": 4,
            "oldest_due": None,
        }

    wait_until("huey's consumer to schedule, fail and take the sleepy task", worked, timeout=60)
    processes.kill(consumer)
    # No scheduler now: the task due soon stays in the schedule once due, a due row there.
    wait_until(
        "the scheduled task to be due",
        lambda: bool(own.update(app_json(APP, "view")) or own["orders"]["scheduled_due"] == 1),
    )
    assert own["orders"]["pending"] == 0 and own["orders"]["scheduled_later"] == 3
    assert own["emails"]["pending"] == 4 and own["emails"]["scheduled_later"] == 0

    tasks = {
        q: QueueView(depth=v["pending"], scheduled=0, running=0, stuck=(), failed=0)
        for q, v in own.items()
    }
    check_named(conn, "task", tasks, "2s", running_known=False)
    schedule = {
        q: QueueView(
            depth=v["scheduled_due"],
            scheduled=v["scheduled_later"],
            running=0,
            stuck=(),
            failed=0,
            oldest=v["oldest_due"],  # the due row's age runs from its eta
        )
        for q, v in own.items()
    }
    check_named(conn, "schedule", schedule, "2s", running_known=False)

    assert detected_library(dsn, "task", None) == "huey"
    assert detected_library(dsn, "schedule", None) == "huey"
    view = LibraryView(waiting=4, states={}, stuck=None, has_enqueue_time=False)
    with sqlite_trouble(path, "task"):
        report = check_qadmin(conn, "task", "huey", view, releasable=False)
    assert report["size"].get("claimed") in (0, None)
    assert report["claims"]["stale"] == []
    assert "huey keeps no enqueue time in task: no oldest age" in report["size"]["notes"]
