"""PGMQ as a peer, from the SQL install script its PyPI package ships (``pgmq/sql/pgmq.sql``,
the ``bench`` extra): endurance.py and batches.py both install it through here.

PGMQ's objects live in a schema of their own (``pgmq``), so it goes into a database made for
the run (``database``), never into a shared one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PG_SERVER = "postgresql://postgres@127.0.0.1:5432"


def install(conn: Any, queue: str) -> None:
    """PGMQ's schema and functions on ``conn`` (a psycopg connection in autocommit), and the
    queue ``queue`` made with ``pgmq.create``."""
    import pgmq

    conn.execute((Path(pgmq.__file__).parent / "sql" / "pgmq.sql").read_text())
    conn.execute("SELECT pgmq.create(%s)", [queue])


@contextmanager
def database(server: str = PG_SERVER) -> Iterator[str]:
    """The DSN of a new database on ``server``, dropped afterwards."""
    import psycopg

    name = f"bench_pgmq_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
