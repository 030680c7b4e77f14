"""persist-queue's SQLite ack queues for tests/libraries/test_persist_queue.py: two named
queues, ``orders`` and ``emails`` (tables ``ack_queue_orders``, ``ack_queue_emails``), in the
directory LIB_DIR; ``python -m`` this module with ``worker NAME`` consumes one of them as a
persist-queue consumer does: get, run, ack (ack_failed for a job that raises), blocking on
``sleepy`` while LIB_BLOCK exists."""

from __future__ import annotations

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


if __name__ == "__main__" and sys.argv[1] == "worker":
    work(sys.argv[2])
