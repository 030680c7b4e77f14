"""kombu's SQLAlchemy transport for tests/libraries/test_kombu.py: ``python -m`` this module
with ``worker URL`` consumes queue 'work' (acknowledging each message, blocking on 'sleepy')."""

from __future__ import annotations

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


def work(url: str) -> None:
    with Connection(url) as conn:
        queue = conn.SimpleQueue("work")
        while True:
            message = queue.get(block=True, timeout=30)
            if message.payload == "sleepy":
                while Path(os.environ["LIB_BLOCK"]).exists():
                    time.sleep(0.1)
            message.ack()


if __name__ == "__main__" and sys.argv[1] == "worker":
    work(sys.argv[2])
