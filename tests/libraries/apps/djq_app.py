"""django-q2's ORM broker for tests/libraries/test_django_q2.py: Django configured from
LIB_DSN (postgresql://, mysql://, sqlite:///); ``python -m`` this module with ``produce``
(migrate, then async_task on the clusters ``work`` and ``idle``, and a one-off schedule an
hour ahead), ``view`` (the broker's own counts per cluster, as JSON) or ``worker`` (django-q2's
own cluster, qcluster, as ``work``)."""

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

# A claim is held 30 s: long enough that the test sees the killed cluster's task still locked.
LEASE_S = 30


def setup() -> None:
    if settings.configured:
        return
    settings.configure(
        DATABASES={"default": database(os.environ["LIB_DSN"])},
        INSTALLED_APPS=["django_q"],
        USE_TZ=True,
        SECRET_KEY="qadmin-tests-only",
        Q_CLUSTER={
            "name": "work",
            "orm": "default",
            "workers": 1,
            "timeout": LEASE_S - 5,
            "retry": LEASE_S,
            "poll": 0.2,
            "ack_failures": True,
            "max_attempts": 1,
            "catch_up": False,
        },
    )
    django.setup()


def ok(n: int) -> int:
    return n


def boom() -> None:
    raise ValueError("boom on purpose")


def sleepy() -> None:
    while Path(os.environ["LIB_BLOCK"]).exists():
        time.sleep(0.1)


def later() -> None:
    """Queued for cluster 'idle', which nobody runs: these tasks stay waiting."""


def produce() -> None:
    from django.core.management import call_command
    from django.utils import timezone
    from django_q.tasks import async_task, schedule

    call_command("migrate", "django_q", verbosity=0)
    here = "tests.libraries.apps.djq_app"
    for n in range(3):
        async_task(f"{here}.ok", n)
    async_task(f"{here}.boom")
    async_task(f"{here}.sleepy")
    for _ in range(3):
        async_task(f"{here}.later", cluster="idle")
    # django-q2's job for later: a one-off schedule, kept in django_q_schedule (not a queue
    # table) until the cluster's scheduler enqueues it when due: no row of django_q_ormq.
    schedule(
        f"{here}.later",
        schedule_type="O",
        next_run=timezone.now() + datetime.timedelta(hours=1),
        cluster="idle",
    )


def view() -> dict[str, object]:
    """The broker's own view: Success and Failure counts, and per cluster its queue_size
    (available tasks), lock_size (leased ones) and the oldest available task's lock."""
    from django.utils import timezone
    from django_q.brokers import get_broker
    from django_q.models import Failure, OrmQ, Success

    out: dict[str, object] = {
        "success": Success.objects.count(),
        "failure": Failure.objects.count(),
    }
    for key in ("work", "idle"):
        broker = get_broker(key)
        first = (
            OrmQ.objects.filter(key=key, lock__lte=timezone.now())
            .order_by("lock")
            .values_list("lock", flat=True)
            .first()
        )
        out[key] = {
            "available": broker.queue_size(),
            "locked": broker.lock_size(),
            "oldest": None if first is None else first.isoformat(),
        }
    return out


if __name__ == "__main__" and sys.argv[1:] == ["worker"]:
    setup()
    from django.core.management import call_command

    call_command("qcluster")
elif __name__ == "__main__" and sys.argv[1:] == ["produce"]:
    setup()
    produce()
elif __name__ == "__main__" and sys.argv[1:] == ["view"]:
    setup()
    print(json.dumps(view()))
