"""The one interface every engine's connection implements, and the behaviour they all share.

An engine owns a DB-API connection: connecting (with timeouts and an application name), the
placeholder style, running a list of statements as one transaction, and turning driver
exceptions into qadmin errors. What differs beyond that is its dialect (``engines.dialect``):
the SQL lookup chain and the one renderer (names and specs in, SQL text out), quoting, the
dialect facts and version gates, advice and the hooks the layers above ask. Callers reach it
through ``Engine.hooks`` (the flavour's: the SQL a queue runs) or ``Engine.base_hooks`` (the
registry's, which never connects: advice, the engine's own SQL); only quoting delegates here.
Nothing above this layer imports a driver or sees a driver exception.

Guarantees each engine gives:
- every connection carries a lock timeout and a statement timeout (``Timeouts``);
- every identifier reaches SQL through ``quote_ident`` only, and values are always bound;
- ``run`` executes its statements in one transaction and commits, or rolls back and raises.
"""

from __future__ import annotations

import os
import re
import select
import socket
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any, ClassVar

from qadmin import secrets
from qadmin.dsn import Dsn
from qadmin.engine_table import BY_NAME, load
from qadmin.engines.dialect import CATALOG_TABLE, Dialect
from qadmin.errors import NotFound, QadminError, UnsupportedError
from qadmin.kinds import QueueSpec

__all__ = ["APP_NAME", "CATALOG_TABLE", "Engine", "Execute", "Jdbc", "Row", "Timeouts"]

APP_NAME = "qadmin"
READ_MARGIN_S = 10

# ``:name`` placeholders in qadmin's SQL files; ``::`` (a PostgreSQL cast) is not one.
PARAM_PATTERN = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


@dataclass(frozen=True)
class Timeouts:
    """Set on every connection qadmin opens, so nothing it runs can wait or run unbounded."""

    connect_s: int = 5
    lock_ms: int = 5_000
    statement_ms: int = 30_000

    @property
    def read_s(self) -> int:
        """How long the client waits for any answer where the driver can bound it (MySQL):
        past the server's own limits (lock wait plus statement time) with a margin, so the
        server, not the client, stops a long statement and says why."""
        return (self.lock_ms + self.statement_ms) // 1000 + READ_MARGIN_S


@dataclass(frozen=True)
class Jdbc:
    """How Spark reaches this engine: the JDBC URL scheme, driver class, default port, extra
    connection properties (never the password: that goes separately). The jar that carries the
    driver is in the engine registry (``registry.EngineEntry.jdbc_jar``)."""

    scheme: str
    driver: str
    port: int
    properties: tuple[tuple[str, str], ...] = ()
    # Whether parallel reads can share one snapshot (PostgreSQL's exported snapshots).
    shared_snapshot: bool = False
    # The backlog past which a one-shot Spark export (JVM start-up included) beats the Python
    # path, measured on 2 cores by benchmarks/pipeline.py (results/pipeline.md).
    spark_export_from_rows: int = 2_500_000
    # The same for load (the move into the queue costs the same either way: only staging
    # differs, and COPY on PostgreSQL keeps the Python path ahead far longer).
    spark_load_from_rows: int = 20_000_000


@lru_cache(maxsize=4096)
def _pyformat(statement: str) -> str:
    """``:name`` placeholders as ``%(name)s`` (and ``%`` doubled): cached, since status binds
    the same few hundred statements thousands of times."""
    text = statement.replace("%", "%%")
    return PARAM_PATTERN.sub(lambda m: f"%({m.group(1)})s", text)


@cache
def _dialect_of(name: str) -> type[Dialect]:
    """The registry's dialect for an engine (quoting is the same for every flavour of it)."""
    found: type[Dialect] = load(BY_NAME[name].dialect)  # type: ignore[assignment]
    return found


Row = dict[str, Any]
Execute = Callable[..., list[Row]]


class Engine(ABC):
    """A connection to one database server, speaking its dialect."""

    name: ClassVar[str]
    # How Spark connects; None where Spark has no JDBC path (SQLite, SQL Server for now).
    JDBC: ClassVar[Jdbc | None] = None

    def __init__(self, dsn: Dsn, schema: str | None = None, timeouts: Timeouts | None = None):
        self.dsn = dsn
        self.timeouts = timeouts or Timeouts()
        self._schema = schema
        self._conn: Any = None
        self._version: str | None = None
        # The lock wait limit in force now: the connection's, or a diagnostic part's shorter one.
        self.lock_ms = self.timeouts.lock_ms
        # Whether naive timestamps are read as UTC now (read_naive_times_as_utc); a new
        # connection reads them in the session's time zone.
        self._naive_utc = False
        # The server's id of the run's other connection (status reads with two), bound as
        # :sibling in every diagnostic: never named as a lock or snapshot holder, as this
        # connection never is; 0 while there is none.
        self.sibling_session = 0
        # Catalog reads kept for the rest of a run over many queues (reading_many: one read of
        # a schema's missing objects serves each of its queues); None outside one.
        self.memo: dict[tuple[str, ...], Any] | None = None

    # -- connection -------------------------------------------------------------------------

    @abstractmethod
    def _open(self) -> Any:
        """Open and configure a DB-API connection (timeouts, application name, isolation)."""

    @abstractmethod
    def _translate(self, exc: BaseException) -> QadminError | None:
        """Map a driver exception to a qadmin error, or None if it is not a driver error."""

    @abstractmethod
    def server_version(self) -> str:
        """The server's own version string, as a DBA would recognise it."""

    def version_label(self) -> str:
        """``server_version()``, asked once per connection: a report's header names it, and
        status makes a report per queue (ping asks the server each time: it times it)."""
        if self._version is None:
            self._version = self.server_version()
        return self._version

    @abstractmethod
    def _default_schema(self) -> str:
        """The schema (PostgreSQL, SQL Server), database (MySQL) or ``main`` (SQLite) in use."""

    @property
    def label(self) -> str:
        """How messages and reports name this server: the engine's name, or the flavour an
        engine that speaks to two kinds of server detected (``mariadb`` or ``mysql``)."""
        return self.name

    def server_label(self) -> str:
        """The server as the connection finds it, for a dialect's version gates: ``label``,
        where that needs no connection; MySQL connects to tell MariaDB from MySQL 8."""
        return self.label

    @property
    def conn(self) -> Any:
        if self._conn is None:
            with self.errors():
                self._conn = self._open()
        return self._conn

    def session_lost(self) -> bool:
        """Without a round trip: whether the server has ended this session while no statement
        runs (a pop writing its output): its socket is readable and holds the server's last
        word (``_last_word``) or its close. False where that cannot be told cheaply."""
        fd = self._socket_fd() if self._conn is not None else None
        if fd is None or fd < 0:
            return False
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(0):
                return False
            with socket.socket(fileno=os.dup(fd)) as sock:
                first = sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (OSError, ValueError):
            return False
        return first == b"" or self._last_word(first)

    def _socket_fd(self) -> int | None:
        """The connection's socket, for ``session_lost``; None: not looked at."""
        return None

    def _last_word(self, first: bytes) -> bool:
        """Whether unasked-for bytes from the server (their first) end the session."""
        return True

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
                self._version = None
                # the next connection starts with the configured lock limit again
                self.lock_ms = self.timeouts.lock_ms
                self._naive_utc = False

    def session_id(self) -> int:
        """The server's id of this connection (0: the engine has none: SQLite)."""
        return 0

    def sibling(self) -> Engine:
        """A second connection with the same DSN, schema and timeouts: for an operation that
        must hold a lock in one session while DDL (which commits on its own) runs in another."""
        return type(self)(self.dsn, self.schema, self.timeouts)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema(self) -> str:
        if self._schema is None:
            self._schema = self._default_schema()
        return self._schema

    def use_schema(self, schema: str) -> None:
        """Work in ``schema`` from now on: a table named ``schema.name`` is read there, by
        every part, as if --schema had named it."""
        self._schema = schema

    @property
    def dialect(self) -> str:
        """Folder of queue templates under ``sql/queues``; a flavour may overlay its base."""
        return self.name

    @property
    def base_dialect(self) -> str:
        return self.name

    def dialect_class(self) -> type[Dialect]:
        """This engine's dialect, as the registry names it (a flavour may pick its own)."""
        return _dialect_of(self.name)

    @property
    def hooks(self) -> Dialect:
        """This connection's dialect (a flavour's own: MySQL connects to learn it): the SQL a
        queue runs (templates, sections, the catalog's), its facts and the hooks asked
        instead of comparing engine names above this layer."""
        return self.dialect_class()(self.label, lambda: self.schema, self.server_label)

    @property
    def base_hooks(self) -> Dialect:
        """The registry's dialect, flavour aside, which never connects to learn the flavour:
        the engine's own SQL (``sql/engine``), a session's lock timeout, and advice (a flavour
        words its advice alike)."""
        return _dialect_of(self.name)(self.name, lambda: self.schema)

    # -- errors -----------------------------------------------------------------------------

    # The statement last sent: a refusal's message names the privilege that statement needed.
    statement: str = ""

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Turn driver exceptions into qadmin errors whose text holds no secret."""
        try:
            yield
        except QadminError:
            raise
        except Exception as exc:
            mapped = self._translate(exc)
            if mapped is None:
                raise
            raise mapped from None

    def scrub(self, text: str) -> str:
        """Driver messages can echo connection parameters: never let the password through."""
        return secrets.scrub(" ".join(str(text).split()))

    # -- SQL text ---------------------------------------------------------------------------

    def quote_ident(self, name: str) -> str:
        """The only way an identifier reaches SQL on this engine (its dialect's quoting)."""
        return _dialect_of(self.name).quote_ident(name)

    def quote_literal(self, text: str) -> str:
        """A string literal (the dialect's)."""
        return _dialect_of(self.name).quote_literal(text)

    def qualified(self, name: str) -> str:
        return f"{self.quote_ident(self.schema)}.{self.quote_ident(name)}"

    def bind(self, statement: str, params: Mapping[str, Any]) -> tuple[str, Any]:
        """Turn ``:name`` placeholders into the driver's style (pyformat by default)."""
        return _pyformat(statement), dict(params)

    # -- running ----------------------------------------------------------------------------

    def _begin(self, cursor: Any, write: bool, snapshot: bool = False) -> None:
        """Start a transaction: reads are read-only where the engine's SQL says how, and a
        snapshot read sees one snapshot for all its statements (export's pages)."""
        sql = self.base_hooks.engine_file()
        section = "snapshot_read" if snapshot and sql.has("snapshot_read") else "read_only"
        if (snapshot or not write) and sql.has(section):
            for statement in sql.statements(section):
                cursor.execute(statement)

    def _commit(self, cursor: Any, write: bool) -> None:
        self._conn.commit()

    def _results(self, cursor: Any) -> list[Row]:
        rows: list[Row] = []
        while True:
            described = cursor.description  # built anew on each access (psycopg): read once
            if described:
                cols = [d[0].lower() for d in described]
                rows.extend(dict(zip(cols, r, strict=True)) for r in cursor.fetchall())
            nextset = getattr(cursor, "nextset", None)  # sqlite3 has one result set only
            if nextset is None or not nextset():
                return rows

    def run(
        self,
        statements: Sequence[str],
        params: Mapping[str, Any] | None = None,
        *,
        write: bool = True,
    ) -> list[Row]:
        """Run statements as one transaction; return the rows of every result set, in order."""
        return self.run_batch(statements, [params or {}], write=write)[0]

    def run_batch(
        self,
        statements: Sequence[str],
        batch: Sequence[Mapping[str, Any]],
        *,
        write: bool = True,
    ) -> list[list[Row]]:
        """Run the statements once per parameter set, all in one transaction.

        Returns one list of rows per parameter set, so callers can match results to inputs.
        """
        with self.transaction(write=write) as execute:
            return [
                [row for statement in statements for row in execute(statement, one)]
                for one in batch
            ]

    @contextmanager
    def transaction(self, *, write: bool = True, snapshot: bool = False) -> Iterator[Execute]:
        """One transaction in which the caller decides the next statement from the last
        one's rows (resize, convert, watermark repair); commits on leaving, else rolls back."""
        conn = self.conn
        with self.errors():
            cursor = conn.cursor()

            def execute(statement: str, params: Mapping[str, Any] | None = None) -> list[Row]:
                self.statement = statement  # an error names the privilege it needed
                with self.errors():
                    if params:
                        sql, args = self.bind(statement, params)
                        cursor.execute(sql, args)
                    else:
                        cursor.execute(statement)
                    return self._results(cursor)

            try:
                self._begin(cursor, write, snapshot)
                yield execute
                self._commit(cursor, write)
            except BaseException:
                self._rollback()
                raise
            finally:
                with suppress(Exception):  # a dead connection must not hide the first error
                    cursor.close()

    def run_outside_transaction(self, statement: str) -> list[Row]:
        """One statement with no transaction around it, committed by the server as it runs:
        maintenance that refuses a transaction block (VACUUM, REINDEX ... CONCURRENTLY) and
        DDL that commits on its own (MySQL)."""
        self.statement = statement
        with self.errors():
            cursor = self.conn.cursor()
            try:
                cursor.execute(statement)
                rows = self._results(cursor)
            finally:
                cursor.close()
            self.conn.commit()
        return rows

    def query(self, statement: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        return self.run([statement], params, write=False)

    def _rollback(self) -> None:
        try:
            self._conn.rollback()
        except Exception:
            # The connection may be gone (killed, timed out); the original error matters more.
            self.close()

    def batch_params(self, payloads: Sequence[bytes]) -> dict[str, Any]:
        """The payloads of one ``push_batch`` as the section binds them."""
        return {"payloads": list(payloads)}

    def push_limits(self) -> tuple[int, int | None]:
        """Bytes one batch statement carries at most (a chunk ends before it would pass them),
        and the most one message may take in a statement of its own: None where the server
        sets no limit a message could reach (a message over the batch budget goes alone)."""
        return 64 * 2**20, None

    def wire_bytes(self, payload: bytes, batch: bool) -> int:
        """What a payload takes in a push statement: in a batch's parameter, or alone."""
        return len(payload)

    def listen(self, spec: QueueSpec) -> bool:
        """Ask to be woken by the queue's pushes; False where the engine cannot (poll instead)."""
        return False

    def unlisten(self, spec: QueueSpec) -> None:
        """Stop being woken by the queue's pushes (only called after ``listen`` said True)."""
        raise NotImplementedError(f"{self.name} does not listen")

    def wait_for_push(self, spec: QueueSpec, timeout_s: float) -> None:
        """Return when a push to the queue may have committed, or after ``timeout_s``."""
        time.sleep(timeout_s)

    def default_user(self) -> str | None:
        """The user the driver logs in as when the DSN names none."""
        return None

    def jdbc_url(self) -> str:
        """The JDBC URL for Spark: host, port and database only, never user or password."""
        if self.JDBC is None:
            raise UnsupportedError(f"--engine spark has no JDBC path to {self.label}")
        d = self.dsn
        host, port = d.host or "localhost", d.port or self.JDBC.port
        return f"jdbc:{self.JDBC.scheme}://{host}:{port}/{d.database or ''}"

    def bulk_insert(self, statement: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run one INSERT (load's ``stage_insert``) for many rows in the open transaction, as
        the driver batches it; PostgreSQL's section is a COPY instead."""
        sql, _ = self.bind(statement, rows[0])
        with self.errors():
            cursor = self.conn.cursor()
            try:
                cursor.executemany(sql, [dict(r) for r in rows])
            finally:
                cursor.close()

    def adapt_time(self, value: datetime) -> Any:
        """A UTC datetime as this engine's driver binds it into a UTC timestamp column."""
        return value.astimezone(UTC).replace(tzinfo=None)

    # -- catalog helpers ---------------------------------------------------------------------

    def diagnostic(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run a diagnostic query read-only, with this connection's timeouts."""
        file = self.hooks.diagnostic_file(name)
        if file is None:
            raise KeyError(f"no {name} diagnostic for {self.dialect}")
        bound = {"sibling": self.sibling_session, **(params or {})}
        return self.run(list(file.statements("main")), bound, write=False)

    # -- a diagnostic part's own lock timeout ------------------------------------------------

    def _apply_lock_timeout(self, ms: int) -> None:
        statements = self.base_hooks.lock_timeout_statements(ms)
        if statements:
            conn = self.conn
            with self.errors():
                cursor = conn.cursor()
                try:
                    for statement in statements:
                        cursor.execute(statement)
                finally:
                    cursor.close()
                conn.commit()
        self.lock_ms = ms

    @contextmanager
    def reading_many(self) -> Iterator[None]:
        """Everything inside only reads, the same statements for many queues (status, check
        --all, metrics): what is read once a schema is kept (``memo``), and an engine may
        make each read cheaper for the duration (PostgreSQL: one round trip a read, one plan
        a statement)."""
        if self.memo is not None:
            yield
            return
        self.memo = {}
        try:
            with self._reading_session():
                yield
        finally:
            self.memo = None

    @contextmanager
    def _reading_session(self) -> Iterator[None]:
        """The session's settings for reading many queues (none here)."""
        yield

    @contextmanager
    def lock_timeout(self, ms: int) -> Iterator[None]:
        """Statements inside wait at most ``ms`` (never more than the connection's limit) for
        a lock: a diagnostic part during a lock incident gives up quickly and says so, instead
        of the whole inspect waiting and failing. The limit before is restored after (an outer
        part's, when nested: explain inside inspect --deep). A limit already in force is not
        set again: status reads hundreds of queues' parts under one, two round trips a part
        otherwise."""
        before = self.lock_ms
        wanted = max(1, min(ms, self.timeouts.lock_ms))
        if wanted != self.lock_ms:
            self._apply_lock_timeout(wanted)
        try:
            yield
        finally:
            if self._conn is not None and self.lock_ms != before:
                self._apply_lock_timeout(before)

    def read_naive_times_as_utc(self, utc: bool) -> None:
        """Read naive timestamps as UTC (a library that always writes UTC) or, by default, in
        the session's time zone. An engine whose ``sql/engine`` file has no such section
        (SQLite, SQL Server: qadmin reads naive times as UTC there) needs nothing."""
        if utc == self._naive_utc:
            return  # already so (status asks for each of hundreds of queues)
        file = self.base_hooks.engine_file()
        section = "naive_utc" if utc else "naive_session"
        if file.has(section):
            self.run_outside_transaction(file.statements(section)[0])
        self._naive_utc = utc

    def table_exists(self, name: str) -> bool:
        """Whether a table of this name exists in the schema (a cheap catalog lookup)."""
        rows = self.query(
            self.base_hooks.engine_sql("table_exists"), {"schema": self.schema, "name": name}
        )
        return bool(rows)

    def require_schema(self, schema: str | None = None) -> None:
        """NotFound when the schema (MySQL: database; default: the one in use) does not exist,
        so a typo in --schema is not answered with an empty list, nor a name looked up there
        with "no queue or table" (nor, in create, an unclassified error)."""
        schema = schema or self.schema
        exists = self.base_hooks.engine_sql("schema_exists")
        if not self.query(exists, {"schema": schema}):
            word = "database" if self.base_dialect == "mysql" else "schema"
            said = f"{self.label}: {word} {schema} does not exist"
            folded = schema.lower()
            if folded != schema and self.query(exists, {"schema": folded}):
                # CREATE SCHEMA tB_s unquoted made tb_s: the config's "tB_s" then misses it
                said += f" (there is a {word} {folded}: an unquoted name is folded to lower case)"
            raise NotFound(said)

    def claim_database(self) -> None:
        """qadmin is about to make its catalog here: settings that belong to a database qadmin
        writes (SQLite's WAL mode) are made now, never by a read-only command on someone
        else's file. A server database has none."""
        return None

    def run_catalog(
        self, section: str, params: Mapping[str, Any] | None = None, *, write: bool = True
    ) -> list[Row]:
        return self.run(self.hooks.catalog_sql(section), params, write=write)
