"""Django's DATABASES entry for a test app, from a qadmin DSN (postgresql://, mysql://,
sqlite:///): the Django apps of tests/libraries run on every engine the library supports."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit


def database(dsn: str) -> dict[str, Any]:
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
