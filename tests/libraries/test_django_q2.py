"""django-q2's ORM broker, live on PostgreSQL: django-q2's async_task, its cluster (killed
mid-task), and qadmin against the broker's own queue_size and lock_size. django-q2 leases a
task (``lock`` = locked until) and redelivers it once the lease passes, so the killed
cluster's task is a claim qadmin sees but, by design, nothing it releases."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.libraries.conftest import Processes
from tests.libraries.named import QueueView, check_named
from tests.libraries.scenario import (
    LibraryView,
    check_qadmin,
    detected_library,
    pg_trouble,
    wait_until,
)

APP = "tests.libraries.apps.djq_app"


def test_django_q2(
    pg_own_database: str,
    processes: Processes,
    block_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsn = pg_own_database
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    from tests.libraries.apps import djq_app as lib

    lib.setup()
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone
    from django_q.brokers import get_broker
    from django_q.models import Failure, OrmQ, Success
    from django_q.tasks import async_task, schedule

    call_command("migrate", "django_q", verbosity=0)
    for n in range(3):
        async_task(f"{lib.__name__}.ok", n)
    async_task(f"{lib.__name__}.boom")
    async_task(f"{lib.__name__}.sleepy")
    for _ in range(3):
        async_task(f"{lib.__name__}.later", cluster="idle")
    # django-q2's job for later: a one-off schedule, kept in django_q_schedule (not a queue
    # table) until the cluster's scheduler enqueues it when due: no row of django_q_ormq.
    schedule(
        f"{lib.__name__}.later",
        schedule_type="O",
        next_run=timezone.now() + timedelta(hours=1),
        cluster="idle",
    )
    work, idle = get_broker("work"), get_broker("idle")
    try:
        cluster = processes.python(APP, "worker")
        wait_until(
            "django-q2's cluster to run, fail and take the sleepy task",
            lambda: (
                Success.objects.count() == 3
                and Failure.objects.count() == 1
                and work.lock_size() == 1
                and work.queue_size() == 0
            ),
            timeout=60,
        )
        processes.kill(cluster)
        view = LibraryView(
            waiting=idle.queue_size(),
            states={"available": idle.queue_size(), "locked": work.lock_size()},
            stuck=None,
        )
        assert view.waiting == 3
        # Per named queue (the cluster key): a locked task is a lease with no claim time
        # qadmin can read ("locked until" only), so it is listed with its age unknown.
        # The oldest waiting task: the broker's own OrmQ rows whose lock has passed.
        first = (
            OrmQ.objects.filter(key="idle", lock__lte=timezone.now())
            .order_by("lock")
            .values_list("lock", flat=True)
            .first()
        )
        assert first is not None
        views = {
            "work": QueueView(work.queue_size(), 0, work.lock_size(), None, 0),
            "idle": QueueView(idle.queue_size(), 0, idle.lock_size(), (), 0, first.isoformat()),
        }
        assert views["work"].running == 1
        check_named(["--dsn", dsn], "django_q_ormq", views, "2s")

        assert detected_library(dsn, "django_q_ormq", "public") == "django-q2"
        with pg_trouble(
            dsn,
            "SELECT count(*) FROM django_q_ormq",
            "SELECT id FROM django_q_ormq WHERE key = 'idle' LIMIT 1 FOR UPDATE",
        ):
            report = check_qadmin(
                ["--dsn", dsn], "django_q_ormq", "django-q2", view, releasable=False
            )
        assert report["claims"]["claimed"] == 1
    finally:
        connections.close_all()
