"""persist-queue's SQLite ack queues, live: two named queues (a table each: ack_queue_orders,
ack_queue_emails), persist-queue's own consumer loop on ``orders`` killed mid-item, and qadmin
per queue against persist-queue's own counts (qsize, unack_count, acked_count,
ack_failed_count). An unacked item keeps no claim time and no owner: qadmin lists it with its
age unknown and warns (claims_unread, claims exits 1), live consumer or dead, never an empty
OK; persist-queue's own recovery (resume_unack_tasks) gives it back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.libraries.conftest import Processes
from tests.libraries.named import app_json, instant, sqlite_trouble
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    qadmin,
    qadmin_json,
    wait_until,
)

APP = "tests.libraries.apps.pq_app"


def _states(v: dict[str, Any]) -> dict[str, int]:
    """persist-queue's statuses as its counts give them (0 inited: waiting, never nacked)."""
    return {
        "0": v["waiting"] - v["ready"],
        "1": v["ready"],
        "2": v["unack"],
        "5": v["acked"],
        "9": v["ack_failed"],
    }


def _unread(conn: list[str], table: str, ids: list[str]) -> None:
    """claims lists exactly these unacked items, age unknown, and exits 1; check warns."""
    listed = qadmin("claims", table, *conn, "--stale-after", "2s", "--format", "json")
    assert listed.exit_code == 1, (listed.stdout, listed.stderr)
    assert "age is unknown" in listed.stderr
    rows = json.loads(listed.stdout)
    assert sorted(str(r["id"]) for r in rows) == ids
    assert all(r["claimed_for_s"] is None for r in rows)
    checked = qadmin("check", table, *conn, "--stale-after", "2s")
    assert checked.exit_code == 1, checked.stdout
    assert "claims_unread" in checked.stdout


def test_persist_queue(
    tmp_path: Path,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LIB_DIR", str(tmp_path))
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    path = tmp_path / "data.db"
    dsn = f"sqlite:///{path}"
    conn = ["--dsn", dsn]

    app_json(APP, "produce")
    consumer = processes.python(APP, "worker", "orders")
    own: dict[str, Any] = {}

    def worked() -> bool:
        own.update(app_json(APP, "view"))
        orders = own["orders"]
        return bool(orders["acked"] == 3 and orders["ack_failed"] == 1 and orders["unack"] == 1)

    wait_until("the consumer to ack, fail and take the sleepy item", worked, timeout=60)
    [taken] = own["orders"]["unack_ids"]
    # A live consumer's item: listed with its age unknown, as a dead one's would be.
    _unread(conn, "ack_queue_orders", [taken])

    processes.kill(consumer)
    own.update(app_json(APP, "view"))
    assert own["orders"]["unack_ids"] == [taken]  # persist-queue keeps it unacked
    for name in ("orders", "emails"):
        table = f"ack_queue_{name}"
        assert detected_library(dsn, table, None) == "persist-queue"
        size = qadmin_json("size", table, *conn)
        assert size["depth"] == own[name]["waiting"]
        assert size["claimed"] == own[name]["unack"]
        assert size["done"] == own[name]["acked"]
        assert size["failed"] == own[name]["ack_failed"]
        if own[name]["waiting"]:  # the oldest waiting item's put time, epoch seconds
            seen = instant(size["oldest_enqueued_at"])
            assert abs((seen - instant(own[name]["oldest"])).total_seconds()) < 1e-3, size
        else:
            assert size["oldest_enqueued_at"] is None
    _unread(conn, "ack_queue_orders", [taken])
    assert qadmin_json("claims", "ack_queue_emails", *conn, "--stale-after", "2s") == []

    # status finds both queue tables by their name prefix: the unacked item running, how many
    # are stale unknown (not 0), the queue's status a warning.
    lines = {line["table"]: line for line in qadmin_json("status", *conn)["lines"]}
    assert set(lines) == {"ack_queue_orders", "ack_queue_emails"}
    assert lines["ack_queue_orders"]["running"] == 1
    assert lines["ack_queue_orders"]["stale"] is None
    assert lines["ack_queue_orders"]["status"] == "WARNING"
    assert lines["ack_queue_emails"]["depth"] == 3 and lines["ack_queue_emails"]["stale"] == 0

    emails = LibraryView(own["emails"]["waiting"], _states(own["emails"]), stuck=None)
    assert emails.waiting == 3
    with sqlite_trouble(path, "ack_queue_emails"):
        check_qadmin(conn, "ack_queue_emails", "persist-queue", emails, releasable=False)
    orders = LibraryView(waiting=0, states=_states(own["orders"]), stuck=None)
    report = check_qadmin(conn, "ack_queue_orders", "persist-queue", orders, releasable=False)
    assert [str(c["id"]) for c in report["claims"]["undated"]] == [taken]
    refused = qadmin("requeue", "ack_queue_orders", *conn, "--stale-after", "2s", "--yes")
    assert refused.exit_code == 2 and "resume_unack_tasks()" in refused.stderr, refused.stderr

    # persist-queue's own recovery: every unacked item back to ready (status 1).
    app_json(APP, "resume", "orders")
    own.update(app_json(APP, "view"))
    assert own["orders"]["waiting"] == 1 and own["orders"]["unack"] == 0
    size = qadmin_json("size", "ack_queue_orders", *conn)
    assert size["depth"] == 1 and size["claimed"] == 0
    assert qadmin_json("claims", "ack_queue_orders", *conn, "--stale-after", "2s") == []


def test_persist_queue_other_kinds(tmp_path: Path) -> None:
    """FILOSQLiteAckQueue, UniqueAckQ and SQLiteQueue, through persist-queue's own API in
    this process: each table recognised by its name prefix, depth and claims as its own
    qsize and unack_count say (a SQLiteQueue get deletes the row: no claim)."""
    from persistqueue import FILOSQLiteAckQueue, SQLiteQueue, UniqueAckQ

    dsn = f"sqlite:///{tmp_path / 'data.db'}"
    filo = FILOSQLiteAckQueue(str(tmp_path), name="jobs", multithreading=True, auto_resume=False)
    unique = UniqueAckQ(str(tmp_path), name="jobs", multithreading=True, auto_resume=False)
    plain = SQLiteQueue(str(tmp_path), name="jobs", multithreading=True)
    for n in range(4):
        filo.put(f"f{n}")
        unique.put(f"u{n}")
        plain.put(f"p{n}")
    unique.put("u0")  # a duplicate: UniqueAckQ keeps one
    assert filo.get() == "f3"  # newest first: taken, not acked
    unique.get()
    plain.get()
    for table, q, unacked in (
        ("ack_filo_queue_jobs", filo, 1),
        ("ack_unique_queue_jobs", unique, 1),
        ("queue_jobs", plain, 0),
    ):
        assert detected_library(dsn, table, None) == "persist-queue", table
        size = qadmin_json("size", table, "--dsn", dsn)
        assert size["depth"] == q.qsize() == 3, (table, size)
        assert 0 <= size["oldest_age_s"] < 600
        if unacked:
            assert size["claimed"] == q.unack_count() == unacked
            _unread(["--dsn", dsn], table, [str(min(q._unack_cache))])
