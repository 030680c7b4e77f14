"""django-q2's ORM broker for tests/libraries/test_django_q2.py: Django configured from
LIB_DSN; ``python -m`` this module with ``worker`` runs django-q2's own cluster (qcluster)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import django
from django.conf import settings

# A claim is held 30 s: long enough that the test sees the killed cluster's task still locked.
LEASE_S = 30


def setup() -> None:
    if settings.configured:
        return
    url = urlsplit(os.environ["LIB_DSN"])
    settings.configure(
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": url.path.lstrip("/"),
                "USER": url.username or "postgres",
                "HOST": url.hostname,
                "PORT": url.port or 5432,
            }
        },
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


if __name__ == "__main__" and sys.argv[1:] == ["worker"]:
    setup()
    from django.core.management import call_command

    call_command("qcluster")
