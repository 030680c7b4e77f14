"""dramatiq-pg, live: dramatiq's producer, a worker per named queue (the ``orders`` one
SIGKILLed mid-job, the ``mailers`` one alive and busy), messages delayed an hour (the
``<queue>.DQ`` queues) and a rejected one; qadmin against dramatiq-pg's own counts and its own
rule for a dead consumer's message: a 'consumed' row whose advisory lock
(dramatiq_pg.broker.message_lock) a new session can take."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from tests.libraries.conftest import Processes
from tests.libraries.scenario import (
    STALE_AFTER,
    detected_library,
    pg_counts,
    pg_trouble,
    qadmin,
    qadmin_json,
    queue_entry,
    stale_entry,
    status_lines,
    wait_until,
)

APP = "tests.libraries.apps.dramatiq_pg_app"


def _states(dsn: str) -> dict[tuple[str, str], int]:
    return pg_counts(
        dsn, "SELECT queue_name, state::text, count(*) FROM dramatiq.queue GROUP BY 1, 2"
    )


def _orphaned(dsn: str) -> list[str]:
    """dramatiq-pg's own rule (PostgresConsumer.consume_one): a consumed message is taken
    again by whoever gets its advisory lock; the ones a new session can lock are orphaned."""
    from dramatiq_pg.broker import message_lock

    found = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT queue_name, message_id::text FROM dramatiq.queue WHERE state = 'consumed'"
        ).fetchall()
        for queue, message_id in rows:
            key = message_lock(SimpleNamespace(queue_name=queue, message_id=message_id))
            [(got,)] = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchall()
            if got:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                found.append(message_id)
    return sorted(found)


def _consumed(dsn: str, queue: str) -> str:
    with psycopg.connect(dsn) as conn:
        [(message_id,)] = conn.execute(
            "SELECT message_id::text FROM dramatiq.queue"
            " WHERE queue_name = %s AND state = 'consumed'",
            (queue,),
        ).fetchall()
    return str(message_id)


def test_dramatiq_pg(
    pg_own_database: str,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsn = pg_own_database
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    from tests.libraries.apps import dramatiq_pg_app as lib

    lib.setup()
    orders = processes.python(APP, "worker", "orders")
    processes.python(APP, "worker", "mailers")

    def settled() -> bool:
        states = _states(dsn)
        return (
            states.get(("orders", "done")) == 3
            and states.get(("orders", "rejected")) == 1
            and states.get(("orders", "consumed")) == 1
            and states.get(("mailers", "consumed")) == 1
            # each worker holds its queue's delayed message until its eta, an hour away
            and states.get(("orders.DQ", "consumed")) == 1
            and states.get(("mailers.DQ", "consumed")) == 1
        )

    wait_until("dramatiq's workers to finish, reject one and take both blocking jobs", settled)
    stuck, delayed = _consumed(dsn, "orders"), _consumed(dsn, "orders.DQ")
    running = _consumed(dsn, "mailers")
    assert _orphaned(dsn) == []  # every consumed message's consumer lives
    processes.kill(orders)
    wait_until("the killed consumer's locks to go", lambda: len(_orphaned(dsn)) == 2)
    assert _orphaned(dsn) == sorted([stuck, delayed])
    states = _states(dsn)
    assert states[("orders", "queued")] == 2
    assert states[("mailers", "queued")] == 2

    assert detected_library(dsn, "queue", "dramatiq") == "dramatiq-pg"
    # explain plans the library's dequeue (its waiting state, in its dequeue order).
    planned = qadmin("explain", "queue", "--dsn", dsn, "--schema", "dramatiq", "--format", "json")
    assert planned.exit_code in (0, 1), (planned.stdout, planned.stderr)
    conn_args = ["--dsn", dsn, "--schema", "dramatiq", "--stale-after", STALE_AFTER]
    with pg_trouble(
        dsn,
        "SELECT count(*) FROM dramatiq.queue",
        "SELECT message_id FROM dramatiq.queue WHERE queue_name = 'mailers'"
        " AND state = 'queued' LIMIT 1 FOR UPDATE",
    ):
        report = qadmin_json("inspect", "queue", *conn_args)
        assert report["profile"]["library"] == "dramatiq-pg"
        size = report["size"]
        assert size["depth"] == 4  # two queued behind each blocking job
        assert 0 <= size["oldest_age_s"] < 600
        expected = {
            # queue: (depth, running, stale, failed)
            "orders": (2, 1, 1, 1),
            "mailers": (2, 1, 0, 0),
            "orders.DQ": (0, 1, 1, 0),
            "mailers.DQ": (0, 1, 0, 0),
        }
        for queue, (depth, claimed, stale, failed) in expected.items():
            entry = queue_entry(report, queue, "queue", *conn_args)
            assert entry["depth"] == depth, entry
            assert entry["running"] == claimed, entry
            assert entry["stale"] == stale, entry
            assert entry["failed"] == failed, entry

        lines = status_lines(dsn, "queue", "--stale-after", STALE_AFTER)
        assert sorted(lines) == sorted(expected)
        for queue, (depth, claimed, stale, _failed) in expected.items():
            line = lines[queue]
            assert line["what"] == "dramatiq-pg", line
            assert (line["depth"], line["running"], line["stale"]) == (depth, claimed, stale)

        # Only the dead consumer's messages are stale: the live one holds its locks.
        claims = report["claims"]
        assert sorted(str(c["id"]) for c in claims["stale"]) == sorted([stuck, delayed])
        assert stale_entry(claims, stuck)["worker_alive"] is False
        assert claims["claimed"] == 4
        for queue, stale_ids in (("orders", [stuck]), ("mailers", [])):
            listed = qadmin_json("claims", "queue", *conn_args, "--queue", queue)
            assert [str(c["id"]) for c in listed] == stale_ids
        # tail's one sample per named queue carries the same depth.
        depths = {"orders": 2, "mailers": 2}
        for queue in ("orders", "mailers"):
            tail = ["tail", "queue", "--dsn", dsn, "--schema", "dramatiq", "--queue", queue]
            tail += ["--count", "1"]
            sample = qadmin(*tail, "--format", "json")
            assert sample.exit_code == 0, sample.stderr
            assert json.loads(sample.stdout.strip().splitlines()[0])["depth"] == depths[queue]
        checked = qadmin("check", "queue", *conn_args)
        assert checked.exit_code == 1, checked.stdout
        assert "no session holds its lock" in checked.stdout, checked.stdout
        assert running not in checked.stdout
        calm = qadmin("check", "queue", *conn_args, "--queue", "mailers")
        assert calm.exit_code == 0, calm.stdout

        # requeue gives the orphans back as `dramatiq-pg recover` does (state 'queued'),
        # never the live consumer's message.
        dry = qadmin("requeue", "queue", *conn_args, "--dry-run")
        assert dry.exit_code == 0, dry.stderr
        assert stuck in dry.stdout and running not in dry.stdout
        done = qadmin("requeue", "queue", *conn_args, "--yes")
        assert done.exit_code == 0, done.stderr

    states = _states(dsn)
    assert states[("orders", "queued")] == 3
    assert states[("mailers", "consumed")] == 1
    os.unlink(block_file)
    processes.python(APP, "worker", "orders")
    wait_until(
        "a new dramatiq worker to run the requeued message",
        lambda: _states(dsn).get(("orders", "done")) == 6,
        timeout=60,
    )
