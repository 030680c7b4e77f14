"""huey's SQLite storage (SqliteHuey) for tests/libraries/test_huey.py: two huey instances
named ``orders`` and ``emails`` (huey's named queues, the ``queue`` column) in the SQLite file
LIB_DB; ``python -m`` this module with ``produce`` (enqueue on both, some an hour ahead),
``view`` (huey's own counts per instance, as JSON) or ``worker NAME`` (huey's own consumer on
one of them: one worker thread, a one-second scheduler)."""

from __future__ import annotations

import datetime
import json
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
# Long enough for the consumer to move it into the schedule before it is due (and before the
# test kills the consumer), short enough to wait for.
SOON_S = 15


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


def produce() -> None:
    """orders: three tasks, two an hour ahead, one that fails into a retry an hour later,
    one due in SOON_S, then the one the consumer is killed in; emails (no consumer): three,
    one an hour ahead.
    A scheduled task waits in ``task`` until a consumer reads its eta and moves it into
    ``schedule``: the consumer takes them before the sleepy one blocks it."""
    orders, emails = TASKS["orders"], TASKS["emails"]
    for n in range(3):
        orders["ok"](n)  # type: ignore[operator]
    for _ in range(2):
        orders["later"].schedule(delay=RETRY_DELAY_S)  # type: ignore[attr-defined]
    orders["boom"]()  # type: ignore[operator]
    # Due soon: in the schedule when the consumer is killed, and due there after (no
    # scheduler left to move it into ``task``).
    orders["ok"].schedule(args=(9,), delay=SOON_S)  # type: ignore[attr-defined]
    orders["sleepy"]()  # type: ignore[operator]
    for n in range(3):
        emails["ok"](n)  # type: ignore[operator]
    emails["later"].schedule(delay=RETRY_DELAY_S)  # type: ignore[attr-defined]


def view() -> dict[str, dict[str, object]]:
    """huey's own view per instance: pending_count() (its rows of ``task``), its scheduled()
    tasks split by whether their eta has come, and the earliest eta that has (huey's etas
    are naive UTC)."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    out = {}
    for name, huey in HUEYS.items():
        etas = [task.eta for task in huey.scheduled()]
        due = [eta for eta in etas if eta <= now]
        out[name] = {
            "oldest_due": min(due).isoformat() if due else None,
            "pending": huey.pending_count(),
            "scheduled_due": sum(1 for eta in etas if eta <= now),
            "scheduled_later": sum(1 for eta in etas if eta > now),
        }
    return out


if __name__ == "__main__" and sys.argv[1] == "produce":
    from tests.libraries.apps import huey_app

    huey_app.produce()
elif __name__ == "__main__" and sys.argv[1] == "view":
    from tests.libraries.apps import huey_app

    print(json.dumps(huey_app.view()))
elif __name__ == "__main__" and sys.argv[1] == "worker":
    # huey names a task by its module: the consumer takes the instances (and tasks) of this
    # module imported by its own name, as the producer did, not those of ``__main__``.
    from tests.libraries.apps import huey_app

    consumer = huey_app.HUEYS[sys.argv[2]].create_consumer(
        workers=1, periodic=False, initial_delay=0.1, backoff=1.0, max_delay=0.2
    )
    consumer.run()
