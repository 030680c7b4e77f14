"""pgqueuer 1.x, live: its producer, its queue manager (killed mid-job), and qadmin against
pgqueuer's own queue_size and stale_jobs. pgqueuer re-picks a stale job itself, so qadmin's
requeue refuses and a new worker finishes the job."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_trouble,
    qadmin_json,
    queue_entry,
    wait_until,
)

APP = "tests.libraries.apps.pgqueuer_app"


def test_pgqueuer(
    pg_own_database: str,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsn = pg_own_database
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    from tests.libraries.apps import pgqueuer_app as lib

    asyncio.run(lib.install_and_enqueue())
    worker = processes.python(APP, "worker")
    own: dict[str, Any] = {}

    def settled() -> bool:
        own.update(asyncio.run(lib.own_view()))
        # 3 'later' due, one 'later' and one 'ok' an hour ahead
        return own["counts"] == {"queued": 5, "picked": 1, "failed": 2}

    wait_until("pgqueuer to finish, hold the failures and pick the sleepy job", settled)
    processes.kill(worker)

    def stale() -> bool:
        own.update(asyncio.run(lib.own_view()))
        return len(own["stale"]) == 1

    wait_until("pgqueuer to call its job stale", stale)
    # pgqueuer's queue_size counts its queued jobs per entrypoint (its named queues), those an
    # hour ahead included: one on 'later' and one on 'ok' were enqueued so.
    assert own["queued"] == {"later": 4, "ok": 1}
    due = own["queued"]["later"] - 1
    view = LibraryView(waiting=due, states=own["counts"], stuck=own["stale"][0])
    assert view.waiting == 3
    conn = ["--dsn", dsn, "--stale-after", "2s"]
    report = qadmin_json("inspect", "pgqueuer", *conn)
    assert report["size"]["scheduled"] == 2
    expected = {
        # entrypoint: (depth, scheduled, running, stale, failed)
        "later": (own["queued"]["later"] - 1, 1, 0, 0, 0),
        "ok": (own["queued"]["ok"] - 1, 1, 0, 0, 0),
        "sleepy": (0, 0, 1, 1, 0),
        "boom": (0, 0, 0, 0, 2),
    }
    for queue, (depth, scheduled, running, stale, failed) in expected.items():
        entry = queue_entry(report, queue, "pgqueuer", *conn)
        got = (entry["depth"], entry["scheduled"], entry["running"], entry["stale"])
        assert (*got, entry["failed"]) == (depth, scheduled, running, stale, failed), entry

    assert detected_library(dsn, "pgqueuer", "public") == "pgqueuer"
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM pgqueuer",
        "SELECT id FROM pgqueuer WHERE entrypoint = 'later' LIMIT 1 FOR UPDATE",
    ):
        check_qadmin(["--dsn", dsn], "pgqueuer", "pgqueuer", view, releasable=False)

    os.unlink(block_file)
    processes.python(APP, "worker")

    def finished() -> bool:
        own.update(asyncio.run(lib.own_view()))
        return own["counts"] == {"queued": 5, "failed": 2}

    wait_until("a new pgqueuer worker to re-pick the stale job and finish it", finished)
