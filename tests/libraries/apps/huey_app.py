"""huey's SQLite storage (SqliteHuey) for tests/libraries/test_huey.py: two huey instances
named ``orders`` and ``emails`` (huey's named queues, the ``queue`` column) in the SQLite file
LIB_DB; ``python -m`` this module with ``worker NAME`` runs huey's own consumer on one of them
(one worker thread, a one-second scheduler)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from huey import SqliteHuey

orders = SqliteHuey("orders", filename=os.environ["LIB_DB"])
emails = SqliteHuey("emails", filename=os.environ["LIB_DB"])
HUEYS = {"orders": orders, "emails": emails}
# A failed task is retried an hour later: huey puts it in its schedule with that eta.
RETRY_DELAY_S = 3600


def _tasks(huey: SqliteHuey) -> dict[str, object]:
    @huey.task(name="ok")
    def ok(n: int) -> int:
        return n

    @huey.task(retries=1, retry_delay=RETRY_DELAY_S, name="boom")
    def boom() -> None:
        raise ValueError("boom on purpose")

    @huey.task(name="sleepy")
    def sleepy() -> None:
        while Path(os.environ["LIB_BLOCK"]).exists():
            time.sleep(0.1)

    @huey.task(name="later")
    def later() -> None:
        """Scheduled an hour ahead: waits in huey's schedule, not due."""

    return {"ok": ok, "boom": boom, "sleepy": sleepy, "later": later}


TASKS = {name: _tasks(huey) for name, huey in HUEYS.items()}


if __name__ == "__main__" and sys.argv[1] == "worker":
    # huey names a task by its module: the consumer takes the instances (and tasks) of this
    # module imported by its own name, as the producer did, not those of ``__main__``.
    from tests.libraries.apps import huey_app

    consumer = huey_app.HUEYS[sys.argv[2]].create_consumer(
        workers=1, periodic=False, initial_delay=0.1, backoff=1.0, max_delay=0.2
    )
    consumer.run()
