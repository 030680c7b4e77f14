"""django-tasks' database backend (django-tasks-db) for tests/libraries/test_django_tasks.py:
Django configured from LIB_DSN (postgresql://, mysql://, sqlite:///); ``python -m`` this
module with ``produce`` (migrate, then enqueue on the named queues ``orders`` and ``emails``,
some an hour ahead), ``view`` (the backend's own counts per queue, as JSON) or ``worker QUEUE``
(the backend's own ``db_worker`` on that named queue)."""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from pathlib import Path

import django
from django.conf import settings

from tests.libraries.apps.djdb import database

QUEUES = ["default", "orders", "emails"]
SOON = datetime.timedelta(seconds=2)


def setup() -> None:
    if settings.configured:
        return
    settings.configure(
        DATABASES={"default": database(os.environ["LIB_DSN"])},
        INSTALLED_APPS=["django_tasks", "django_tasks_db"],
        USE_TZ=True,
        SECRET_KEY="qadmin-tests-only",
        TASKS={"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": QUEUES}},
    )
    django.setup()


setup()

from django_tasks import task  # noqa: E402  (needs the settings above)


@task()
def ok(n: int) -> int:
    return n


@task()
def boom() -> None:
    raise ValueError("boom on purpose")


@task()
def sleepy() -> None:
    while Path(os.environ["LIB_BLOCK"]).exists():
        time.sleep(0.1)


@task()
def later() -> None:
    """Enqueued with run_after an hour ahead: waits, not due."""


def produce() -> None:
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", "django_tasks_database", verbosity=0)
    hour = timezone.now() + datetime.timedelta(hours=1)
    for n in range(3):
        ok.using(queue_name="orders").enqueue(n)
    boom.using(queue_name="orders").enqueue()
    sleepy.using(queue_name="orders").enqueue()
    for _ in range(2):
        later.using(queue_name="orders", run_after=hour).enqueue()
    for n in range(3):
        ok.using(queue_name="emails").enqueue(n)
    later.using(queue_name="emails", run_after=hour).enqueue()
    # Due in two seconds: scheduled until then, then waiting like any READY task.
    later.using(queue_name="emails", run_after=timezone.now() + SOON).enqueue()


def view() -> dict[str, object]:
    """The backend's own view through its model's querysets: per named queue, ready() (due
    READY tasks), READY ones not ready yet (run_after ahead), running(), failed(),
    successful(), and the running tasks' ids as the database holds them."""
    from django.db import connection
    from django_tasks_db.models import DBTaskResult, get_date_max

    out: dict[str, object] = {}
    for queue in ("orders", "emails"):
        tasks = DBTaskResult.objects.filter(queue_name=queue)
        ready = tasks.ready().count()
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT id FROM {DBTaskResult._meta.db_table} "
                "WHERE queue_name = %s AND status = 'RUNNING'",
                [queue],
            )
            running = [str(row[0]) for row in cur.fetchall()]
        # When each ready task became due: its run_after when one was set (not the "run now"
        # sentinel) and later than its enqueue, else its enqueue; the oldest of them.
        never = get_date_max()
        due = [
            enqueued if after is None or after == never or after <= enqueued else after
            for enqueued, after in tasks.ready().values_list("enqueued_at", "run_after")
        ]
        first = min(due) if due else None
        out[queue] = {
            "oldest": None if first is None else first.isoformat(),
            "ready": ready,
            "scheduled": tasks.filter(status="READY").count() - ready,
            "running": running,
            "failed": tasks.failed().count(),
            "successful": tasks.successful().count(),
        }
    return out


if __name__ == "__main__" and sys.argv[1] == "produce":
    # Tasks are stored by import path: enqueue this module's tasks under its own name.
    from tests.libraries.apps import dtasks_app

    dtasks_app.produce()
elif __name__ == "__main__" and sys.argv[1] == "view":
    print(json.dumps(view()))
elif __name__ == "__main__" and sys.argv[1] == "worker":
    from django.core.management import call_command

    call_command(
        "db_worker",
        queue_name=sys.argv[2],
        interval=0.2,
        startup_delay=False,
        reload=False,
        verbosity=0,
    )
