"""django-tasks' database backend (django-tasks-db) for tests/libraries/test_django_tasks.py:
Django configured from LIB_DSN (postgresql://, mysql://, sqlite:///); ``python -m`` this
module with ``worker QUEUE`` runs the backend's own ``db_worker`` on that named queue."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import django
from django.conf import settings

QUEUES = ["default", "orders", "emails"]


def _database(dsn: str) -> dict[str, Any]:
    url = urlsplit(dsn)
    if url.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": url.path[1:] or url.netloc}
    if url.scheme == "mysql":
        import pymysql

        pymysql.install_as_MySQLdb()  # Django's MySQL backend on PyMySQL (no C client here)
        return {
            "ENGINE": "django.db.backends.mysql",
            "NAME": url.path.lstrip("/"),
            "USER": url.username or "root",
            "PASSWORD": url.password or "",
            "HOST": url.hostname,
            "PORT": url.port or 3306,
        }
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": url.path.lstrip("/"),
        "USER": url.username or "postgres",
        "HOST": url.hostname,
        "PORT": url.port or 5432,
    }


def setup() -> None:
    if settings.configured:
        return
    settings.configure(
        DATABASES={"default": _database(os.environ["LIB_DSN"])},
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


if __name__ == "__main__" and sys.argv[1] == "worker":
    from django.core.management import call_command

    call_command(
        "db_worker",
        queue_name=sys.argv[2],
        interval=0.2,
        startup_delay=False,
        reload=False,
        verbosity=0,
    )
