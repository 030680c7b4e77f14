"""kombu's SQLAlchemy transport for tests/libraries/test_kombu.py: ``python -m`` this module
with ``produce URL``, ``waiting URL QUEUE`` (prints kombu's own count), ``ids URL`` (its
queues' ids, as JSON) or ``worker URL``
(consumes queue 'work', acknowledging each message, blocking on 'sleepy'). Each runs in its
own process: kombu keeps its SQLAlchemy engines (and a session's open transaction) for the
life of the process, which would hold a metadata lock on MariaDB."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from kombu import Connection


def produce(url: str) -> None:
    with Connection(url) as conn:
        work = conn.SimpleQueue("work")
        for body in ("ok-1", "ok-2", "ok-3", "sleepy"):
            work.put(body)
        idle = conn.SimpleQueue("idle")
        for n in range(3):
            idle.put(f"later-{n}")
        work.close()
        idle.close()


def waiting(url: str, queue: str) -> int:
    """kombu's own count of a queue's waiting messages (the transport's _size)."""
    with Connection(url) as conn:
        channel = conn.default_channel
        return int(channel._size(queue))


def queue_ids(url: str) -> dict[str, int]:
    """kombu's own ids of its queues (kombu_queue.id, the messages' queue_id)."""
    with Connection(url) as conn:
        channel = conn.default_channel
        return {name: int(channel._get_or_create(name).id) for name in ("work", "idle")}


def work(url: str) -> None:
    with Connection(url) as conn:
        queue = conn.SimpleQueue("work")
        while True:
            message = queue.get(block=True, timeout=30)
            if message.payload == "sleepy":
                while Path(os.environ["LIB_BLOCK"]).exists():
                    time.sleep(0.1)
            message.ack()


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        work(sys.argv[2])
    elif sys.argv[1] == "produce":
        produce(sys.argv[2])
    elif sys.argv[1] == "ids":
        print(json.dumps(queue_ids(sys.argv[2])))
    else:
        print(waiting(sys.argv[2], sys.argv[3]))
