"""Where a benchmark runs: a fresh PostgreSQL schema, MariaDB database or SQLite file of its
own on the test servers, and how to drop it afterwards (batches, long_ops and wakeup); and PGMQ,
the peer batches.py and endurance.py install from the SQL its PyPI package ships
(``pgmq/sql/pgmq.sql``, the ``bench`` extra), in a database of its own (its schema is fixed:
``pgmq``), never in a shared one."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# The PostgreSQL database the benchmarks make their own schemas in (each drops its own).
PG = os.environ.get("QADMIN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
MY = "mysql://root@127.0.0.1:3306"
PG_SERVER = PG.rsplit("/", 1)[0]

ENGINES = ("postgresql", "mariadb", "sqlite")

Place = tuple[str, str | None, Callable[[], None]]


def place(engine: str) -> Place:
    """(DSN, schema, drop) of a place nothing else uses."""
    if engine not in ENGINES:  # a typo must not run MariaDB under another engine's name
        raise SystemExit(f"unknown engine {engine!r}: choose from {', '.join(ENGINES)}")
    # QADMIN_BENCH_PREFIX: a prefix of one's own on shared servers (default bench_).
    name = os.environ.get("QADMIN_BENCH_PREFIX", "bench_") + uuid.uuid4().hex[:8]
    if engine == "sqlite":
        path = Path(tempfile.mkdtemp()) / f"{name}.db"
        return f"sqlite:///{path}", None, lambda: path.unlink(missing_ok=True)
    if engine == "postgresql":
        import psycopg

        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")

        def drop_schema() -> None:
            with psycopg.connect(PG, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {name} CASCADE")

        return PG, name, drop_schema
    import pymysql

    admin = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
    admin.cursor().execute(f"CREATE DATABASE {name}")

    def drop_database() -> None:
        admin.cursor().execute(f"DROP DATABASE {name}")
        admin.close()

    return f"{MY}/{name}", None, drop_database


def install_pgmq(conn: Any, queue: str) -> None:
    """PGMQ's schema and functions on ``conn`` (a psycopg connection in autocommit), and the
    queue ``queue`` made with ``pgmq.create``."""
    import pgmq

    conn.execute((Path(pgmq.__file__).parent / "sql" / "pgmq.sql").read_text())
    conn.execute("SELECT pgmq.create(%s)", [queue])


@contextmanager
def pg_database(server: str = PG_SERVER) -> Iterator[str]:
    """The DSN of a new PostgreSQL database on ``server`` (for PGMQ), dropped afterwards."""
    import psycopg

    name = "bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
