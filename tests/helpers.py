"""The helpers the tests share: qadmin run as a user runs it (in process or as a process),
queues made and drained through the operations, and what parallel test workers need (a
worker-unique name, a lock around a cache that one worker builds for all).

One module, so a change of how qadmin is started or how a queue is drained is made once.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from qadmin import catalog
from qadmin.cli import cli
from qadmin.engines import Engine
from qadmin.errors import QueueEmpty
from qadmin.kinds import Kind
from qadmin.ops import messages, queues
from qadmin.ops.queues import QueueSpec

REPO = Path(__file__).resolve().parents[1]


def worker_id() -> str:
    """pytest-xdist's worker name (gw0, gw1, ...), or ``main`` when the run is not split."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def unique_name(prefix: str = "qt_") -> str:
    """A schema/database name no other test, worker or session on the server can hold."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing): a cache that several workers
    may build at once (npm's node_modules, Oban's venv) is built by the first, used by all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- qadmin as a user runs it -----------------------------------------------------------------


def invoke(
    *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
) -> Result:
    """One qadmin command in process (click's runner): its exit code, stdout and stderr."""
    return CliRunner().invoke(cli, list(args), input=input, env=env)


def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    """``invoke``, and whatever the exit code, never a traceback on stderr."""
    result = invoke(*args, input=input, env=env)
    assert "Traceback" not in result.stderr
    return result


def one_line(result: Result) -> str:
    """The one line a refused command prints on stderr."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def invoke_on(target: Any, *args: str) -> Result:
    """``invoke`` with ``target``'s connection options (a ``tests.conftest.Target``) after."""
    return invoke(*args, *target.cli_args())


def run_qadmin(
    *args: str,
    stdin: bytes | str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    text: bool = False,
) -> subprocess.CompletedProcess[Any]:
    """One qadmin command in its own process (``python -m qadmin``), as from a shell: real
    signals, exit codes and stdio. ``env`` is added to the test's environment; stdin is empty
    unless given."""
    if stdin is None:
        stdin = "" if text else b""
    return subprocess.run(
        [sys.executable, "-m", "qadmin", *args],
        input=stdin,
        capture_output=True,
        env=dict(os.environ, **env) if env else None,
        cwd=cwd,
        timeout=timeout,
        text=text,
        check=False,
    )


# --- queues -----------------------------------------------------------------------------------


def make_queue(
    engine: Engine,
    name: str,
    kind: str = "fifo",
    capacity: int | None = None,
    strict: bool = False,
    *,
    count: int = 0,
    close: bool = False,
    **options: Any,
) -> QueueSpec:
    """Create a queue through the operations (as ``qadmin create`` does) and push ``count``
    messages ``m0``, ``m1``, ... into it. ``close``: ``engine`` is closed after, made or not
    (for an engine opened just for this queue)."""
    try:
        spec = queues.create(engine, queues.make_spec(name, kind, capacity, strict, **options))
        if count:
            messages.push(engine, spec, [b"m%d" % i for i in range(count)])
        return spec
    finally:
        if close:
            engine.close()


def drain(
    engine: Engine, queue: QueueSpec | str, batch: int = 100, *, ack: bool = False
) -> list[messages.Message]:
    """Pop ``queue`` (a spec, or a name read from the catalog) until it is empty; the messages
    in the order they came out. ``ack``: a claim queue's messages are acknowledged as popped."""
    spec = catalog.get(engine, queue) if isinstance(queue, str) else queue
    got: list[messages.Message] = []
    while True:
        try:
            popped = messages.pop(engine, spec, count=batch)
        except QueueEmpty:
            return got
        if ack and spec.kind is Kind.CLAIM:
            for message in popped:
                messages.ack(engine, spec, message.id)
        got.extend(popped)


def drain_payloads(
    engine: Engine, queue: QueueSpec | str, batch: int = 100, *, ack: bool = False
) -> list[bytes]:
    """``drain``'s payloads."""
    return [m.payload for m in drain(engine, queue, batch, ack=ack)]


def drain_ids(engine: Engine, queue: QueueSpec | str, batch: int = 100) -> list[tuple[int, bytes]]:
    """``drain``'s (id, payload) pairs."""
    return [(m.id, m.payload) for m in drain(engine, queue, batch)]


# --- another session ----------------------------------------------------------------------------


@contextmanager
def table_locked(target: Any, table: str) -> Iterator[str]:
    """Another session holding ``table`` of ``target`` (tests.conftest.Target) locked, as a
    DBA's psql does during an incident: PostgreSQL ACCESS EXCLUSIVE, MariaDB/MySQL LOCK TABLES
    ... WRITE; yields that session's id, released on exit."""
    if target.label == "postgresql":
        import psycopg

        with psycopg.connect(target.dsn) as pg:
            pg.execute(f'LOCK TABLE "{target.schema}"."{table}" IN ACCESS EXCLUSIVE MODE')
            try:
                yield str(pg.info.backend_pid)
            finally:
                pg.rollback()
        return
    import pymysql

    from tests.conftest import MY_HOST

    my = pymysql.connect(host=MY_HOST, user="root", password="", database=target.schema)
    try:
        with my.cursor() as cur:
            cur.execute(f"LOCK TABLES `{table}` WRITE")
            cur.execute("SELECT CONNECTION_ID()")
            (session,) = cur.fetchone()
            try:
                yield str(session)
            finally:
                cur.execute("UNLOCK TABLES")
    finally:
        my.close()


@contextmanager
def reading_role(target: Any, *, sessions: int | None = None) -> Iterator[str]:
    """A login role that may read every table and sequence of ``target``'s schema (MySQL:
    database) and nothing more, allowed ``sessions`` connections at once (None: no limit);
    yields its DSN, dropped on exit."""
    role = f"qa_rd_{uuid.uuid4().hex[:8]}"
    admin = target.engine()
    schema = admin.schema
    base = target.dsn.split("://", 1)[1].split("@", 1)[1]
    if target.label == "postgresql":
        limit = "" if sessions is None else f" CONNECTION LIMIT {int(sessions)}"
        grants = [
            f'CREATE ROLE "{role}" LOGIN{limit}',
            f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"',
            f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"',
            f'GRANT SELECT ON ALL SEQUENCES IN SCHEMA "{schema}" TO "{role}"',
        ]
        cleanup = [f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"']
        dsn = f"postgresql://{role}@{base}"
    else:
        limit = "" if sessions is None else f" WITH MAX_USER_CONNECTIONS {int(sessions)}"
        grants = [
            f"CREATE USER '{role}'@'%'{limit}",
            f"GRANT SELECT ON `{schema}`.* TO '{role}'@'%'",
        ]
        cleanup = [f"DROP USER '{role}'@'%'"]
        dsn = f"mysql://{role}@{base}"
    try:
        for statement in grants:
            admin.run_outside_transaction(statement)
        yield dsn
    finally:
        for statement in cleanup:
            admin.run_outside_transaction(statement)
        admin.close()
