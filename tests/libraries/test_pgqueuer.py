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
        return own["counts"] == {"queued": 3, "picked": 1, "failed": 2}

    wait_until("pgqueuer to finish, hold the failures and pick the sleepy job", settled)
    processes.kill(worker)

    def stale() -> bool:
        own.update(asyncio.run(lib.own_view()))
        return len(own["stale"]) == 1

    wait_until("pgqueuer to call its job stale", stale)
    view = LibraryView(waiting=own["later"], states=own["counts"], stuck=own["stale"][0])
    assert view.waiting == 3

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
        return own["counts"] == {"queued": 3, "failed": 2}

    wait_until("a new pgqueuer worker to re-pick the stale job and finish it", finished)
