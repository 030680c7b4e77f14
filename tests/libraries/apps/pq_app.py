"""persist-queue's SQLite ack queues for tests/libraries/test_persist_queue.py: two named
queues, ``orders`` and ``emails`` (tables ``ack_queue_orders``, ``ack_queue_emails``), in the
directory LIB_DIR; ``python -m`` this module with ``produce``, ``view`` (persist-queue's own
counts per queue, as JSON), ``resume NAME`` (its own recovery: unacked items back to ready), or
``worker NAME`` (consumes one queue as a persist-queue consumer does: get, run, ack, or
ack_failed for a job that raises, blocking on ``sleepy`` while LIB_BLOCK exists)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from persistqueue import SQLiteAckQueue

QUEUES = ("orders", "emails")


def queue(name: str) -> SQLiteAckQueue:
    """The named queue, opened without auto_resume: opening it must not give a dead
    consumer's unacked rows back (persist-queue's own recovery, which the test asks for)."""
    return SQLiteAckQueue(os.environ["LIB_DIR"], name=name, multithreading=True, auto_resume=False)


def work(name: str) -> None:
    q = queue(name)
    while True:
        item = q.get(block=True)
        if item == "sleepy":
            while Path(os.environ["LIB_BLOCK"]).exists():
                time.sleep(0.1)
        if item == "boom":
            q.ack_failed(item)
        else:
            q.ack(item)


def produce() -> None:
    orders, emails = queue("orders"), queue("emails")
    for item in ("ok-1", "ok-2", "ok-3", "boom", "sleepy"):
        orders.put(item)
    for item in ("later-1", "later-2", "later-3"):
        emails.put(item)


def view() -> dict[str, dict[str, object]]:
    """persist-queue's own counts per queue (qsize: waiting; unack_count: taken, not acked),
    and the unacked rows' ids (its own table read the way its resume_unack_tasks reads it)."""
    out: dict[str, dict[str, object]] = {}
    for name in QUEUES:
        q = queue(name)
        sql = f"SELECT _id FROM {q._table_name} WHERE status = 2 ORDER BY _id"  # AckStatus.unack
        first = q._getter.execute(
            f"SELECT min(timestamp) FROM {q._table_name} WHERE status < 2"  # waiting
        ).fetchone()[0]
        out[name] = {
            "oldest": first,
            "waiting": q.qsize(),
            "ready": q.ready_count(),
            "unack": q.unack_count(),
            "unack_ids": [str(row[0]) for row in q._getter.execute(sql).fetchall()],
            "acked": q.acked_count(),
            "ack_failed": q.ack_failed_count(),
        }
    return out


if __name__ == "__main__" and sys.argv[1] == "worker":
    work(sys.argv[2])
elif __name__ == "__main__" and sys.argv[1] == "produce":
    produce()
elif __name__ == "__main__" and sys.argv[1] == "view":
    print(json.dumps(view()))
elif __name__ == "__main__" and sys.argv[1] == "resume":
    queue(sys.argv[2]).resume_unack_tasks()
