"""PostgreSQL through psycopg 3: functions for push/pop, SKIP LOCKED for concurrent consumers.

Every connection names itself ``qadmin`` (application_name) and carries lock_timeout,
statement_timeout and idle_in_transaction_session_timeout, so an admin session can neither
wait behind a lock for long nor leave a transaction open holding back vacuum.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors as pgerr

from qadmin.engines.base import APP_NAME, Engine, Jdbc, Row
from qadmin.errors import (
    ConnectionFailed,
    Deadlock,
    LockTimeout,
    LoginFailed,
    NotFound,
    PermissionMissing,
    QadminError,
    StatementTimeout,
    UsageError,
)
from qadmin.kinds import QueueSpec

_LOGIN_SQLSTATES = {"28P01", "28000"}
# psycopg >= 3.2.? bounds each wait on the server (one statement, one COPY chunk) when given a
# timeout; older versions have no such parameter and keep waiting.
_CAN_BOUND_READS = "timeout" in inspect.signature(psycopg.Connection.wait).parameters


class _Connection(psycopg.Connection[Any]):
    """A psycopg connection whose every wait for the server ends after ``read_timeout_s``:
    libpq has no read timeout, and a server that hangs after the login (while its kernel still
    answers TCP) would otherwise hold qadmin for ever."""

    read_timeout_s: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        if timeout is None:
            timeout = self.read_timeout_s
        return super().wait(gen, interval=interval, timeout=timeout)


# The session's settings inside reading_many (reset after it).
_SETTING = re.compile(r"SET\s+LOCAL\s+[a-z_]+\s*=\s*[a-z_0-9]+", re.IGNORECASE)


def _setting(statement: str) -> bool:
    """A ``SET LOCAL name = value`` alone (comment lines aside): no parameter, no result."""
    body = " ".join(
        line for line in statement.splitlines() if not line.lstrip().startswith("--")
    ).strip()
    return all(_SETTING.fullmatch(part.strip()) for part in body.rstrip(";").split(";"))


def _settings_joined(statements: Sequence[str]) -> list[str]:
    """The statements with each run of consecutive settings joined into one."""
    out: list[str] = []
    for statement in statements:
        if out and _setting(statement) and _setting(out[-1]):
            out[-1] = f"{out[-1].rstrip().rstrip(';')};\n{statement}"
        else:
            out.append(statement)
    return out


_READING_MANY = {"default_transaction_read_only": "on", "plan_cache_mode": "force_generic_plan"}


class PostgresEngine(Engine):
    name = "postgresql"
    JDBC = Jdbc(
        "postgresql",
        "org.postgresql.Driver",
        5432,
        # prepareThreshold=-1: binary transfer from the first execution, so bytea payloads
        # are not hex-encoded by the server and decoded by the driver (each partition's
        # query runs once, below the default threshold of 5).
        (
            ("reWriteBatchedInserts", "true"),
            ("prepareThreshold", "-1"),
            ("ApplicationName", APP_NAME),
        ),
        shared_snapshot=True,
    )
    _reads_alone = False  # inside reading_many

    def session_id(self) -> int:
        return int(self.conn.info.backend_pid)

    def _socket_fd(self) -> int | None:
        return int(self._conn.fileno()) if not self._conn.closed else None

    def _last_word(self, first: bytes) -> bool:
        # An ErrorResponse ('E': FATAL, terminated); a NOTIFY ('A') or a notice is no end.
        return first == b"E"

    def _open(self) -> psycopg.Connection[Any]:
        d = self.dsn
        t = self.timeouts
        # jit=off: qadmin's queries are short index and catalog reads, and a table bloated by
        # dead rows inflates their cost estimates past jit_above_cost: the compile alone took
        # 715 ms of a 716 ms watermark read behind 50,000 dead rows (benchmarks/dead_rows.py).
        # The user's own options (the DSN's options=, else PGOPTIONS, which an explicit options
        # keyword would silently replace) come first, e.g. a library's search_path; qadmin's
        # timeouts follow, so they win where both set the same thing.
        own = str(d.query.get("options") or os.environ.get("PGOPTIONS", "")).strip()
        options = (
            f"{own} -c lock_timeout={t.lock_ms} -c statement_timeout={t.statement_ms} "
            f"-c idle_in_transaction_session_timeout={max(t.statement_ms, 60_000)} -c jit=off"
        ).strip()
        # A dead peer or a cut network is noticed within about 25 s even while a statement
        # runs (the server's kernel answers keepalives while its backend works); a DSN's own
        # keepalive settings win. statement_timeout bounds a live server.
        params: dict[str, Any] = {
            "keepalives": 1,
            "keepalives_idle": 10,
            "keepalives_interval": 5,
            "keepalives_count": 3,
            "tcp_user_timeout": t.read_s * 1000,
        }
        params.update(d.query)
        fixed = {
            "host": d.host or None,
            "port": d.port or None,
            "user": d.user or None,
            "password": d.password,
            "dbname": d.database or None,
            "application_name": APP_NAME,
            "connect_timeout": t.connect_s,
            "options": options,
        }
        params |= {k: v for k, v in fixed.items() if v is not None}
        if not _CAN_BOUND_READS:
            return psycopg.connect(autocommit=False, **params)
        conn = _Connection.connect(autocommit=False, **params)
        conn.read_timeout_s = t.read_s
        return conn

    def _translate(self, exc: BaseException) -> QadminError | None:
        if not isinstance(exc, psycopg.Error):
            return None
        text = self.scrub(getattr(exc.diag, "message_primary", None) or str(exc))
        state = exc.sqlstate or ""
        where = f"{self.dsn.host or 'local socket'}:{self.dsn.port or 5432}"
        if isinstance(exc, (pgerr.DeadlockDetected, pgerr.SerializationFailure)):
            return Deadlock(f"postgresql: {text}; the transaction was rolled back")
        if isinstance(exc, pgerr.LockNotAvailable):
            return LockTimeout(f"postgresql: lock wait exceeded {self.lock_ms} ms: {text}")
        if isinstance(exc, pgerr.QueryCanceled):
            return StatementTimeout(
                f"postgresql: statement cancelled after {self.timeouts.statement_ms} ms: {text}"
            )
        if isinstance(exc, pgerr.InsufficientPrivilege):
            context = getattr(exc.diag, "context", None) or ""
            needed = privilege_needed(text, self.statement, context)
            said = f"postgresql: {text}" + (f": needs {needed}" if needed else "")
            return PermissionMissing(said, privilege=needed)
        if isinstance(exc, (pgerr.UndefinedTable, pgerr.UndefinedFunction)):
            return NotFound(f"postgresql: {text}")
        if state in _LOGIN_SQLSTATES or "authentication failed" in text:
            return LoginFailed(f"postgresql: login failed for user {self.dsn.user!r} at {where}")
        if isinstance(exc, getattr(pgerr, "_WaitTimeout", ())):
            return ConnectionFailed(
                f"postgresql: no answer from {where} within {self.timeouts.read_s} s"
            )
        loading = isinstance(exc, psycopg.DataError) and not state
        if state == "22008" or (loading and ("timestamp" in text or "date" in text)):
            # A time the server cannot subtract (infinity) or the driver cannot load (past
            # year 9999): the table's value, not qadmin's failure: one line, exit 2.
            return UsageError(f"postgresql: a time value qadmin cannot read: {_first_line(text)}")
        if isinstance(exc, pgerr.AdminShutdown):
            return ConnectionFailed(f"postgresql: the server ended the session: {text}")
        if isinstance(exc, psycopg.OperationalError) and not state:
            if f'database "{self.dsn.database}" does not exist' in text:
                # The server answered: not found, as MySQL's unknown database is.
                return NotFound(
                    f"postgresql: database {self.dsn.database} does not exist at {where}"
                )
            return ConnectionFailed(f"postgresql: cannot connect to {where}: {_first_line(text)}")
        return QadminError(f"postgresql: {text}")

    def bind(self, statement: str, params: Mapping[str, Any]) -> tuple[str, Any]:
        """As the base class, but a list of byte strings (a batch's payloads) goes in binary
        format: text format escapes every element of a bytea array in Python, which cost about
        as much as the database's work for the batch."""
        sql, args = super().bind(statement, params)
        for name, value in params.items():
            if isinstance(value, list) and value and isinstance(value[0], bytes):
                sql = sql.replace(f"%({name})s", f"%({name})b")
        return sql, args

    def run_batch(
        self,
        statements: Sequence[str],
        batch: Sequence[Mapping[str, Any]],
        *,
        write: bool = True,
    ) -> list[list[Row]]:
        """One statement for many parameter sets, pipelined (psycopg's executemany): one
        transaction and about one round trip for the lot. Each execution is its own statement,
        so it calls the routine by name, as one push at a time does: a convert that swaps the
        queue's routines mid-batch is followed, where one statement calling the routine for
        every element would hold on to the dropped one."""
        if self._reads_alone and not write and len(statements) == 1 and len(batch) == 1:
            return [self._read_alone(statements[0], batch[0])]
        settings = _settings_joined(statements)
        if len(settings) < len(statements):
            # the planner settings a read begins with, sent as one (no parameters: the simple
            # protocol takes several statements): one round trip where each took one
            with self.transaction(write=write) as execute:
                return [
                    [r for s in settings for r in execute(s, None if _setting(s) else one)]
                    for one in batch
                ]
        if len(statements) != 1 or len(batch) < 2:
            return super().run_batch(statements, batch, write=write)
        sql, _ = self.bind(statements[0], batch[0])
        self.statement = statements[0]
        with self.transaction(write=write), self.errors():
            cursor = self.conn.cursor()
            cursor.executemany(sql, [dict(one) for one in batch], returning=True)
            results: list[list[Row]] = []
            while True:
                cols = [d[0].lower() for d in cursor.description or ()]
                rows = cursor.fetchall() if cols else []
                results.append([dict(zip(cols, r, strict=True)) for r in rows])
                if not cursor.nextset():
                    return results

    @contextmanager
    def _reading_session(self) -> Iterator[None]:
        """While inside: the session's transactions READ ONLY by default, and a read of one
        statement run alone in autocommit, one round trip where BEGIN READ ONLY, the
        statement and COMMIT took three (status over 206 queues: about 2,500 reads, 0.7 s of
        3.9); a statement alone is a transaction of its own, as each read was. And the
        session keeps one plan for each prepared statement (force_generic_plan): the catalog
        reads made for every queue with the same text are index look-ups whatever the names,
        and planning them anew each time cost 0.6 s of 3.7. The profile reads whose plan
        depends on their values say force_custom_plan themselves (sql/queues/postgresql/
        profile.sql)."""
        for setting in _READING_MANY:
            self.run_outside_transaction(f"SET {setting} = {_READING_MANY[setting]}")
        self._reads_alone = True
        try:
            yield
        finally:
            self._reads_alone = False
            if self._conn is not None and not self._conn.closed:
                with suppress(QadminError):  # never over the error that ended the block
                    for setting in _READING_MANY:
                        self.run_outside_transaction(f"RESET {setting}")

    def _read_alone(self, statement: str, params: Mapping[str, Any]) -> list[Row]:
        conn = self.conn
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            return super().run_batch([statement], [params], write=False)[0]  # a caller's open
        self.statement = statement
        conn.autocommit = True
        try:
            with self.errors():
                cursor = conn.cursor()
                try:
                    if params:
                        cursor.execute(*self.bind(statement, params))
                    else:
                        cursor.execute(statement)
                    return self._results(cursor)
                finally:
                    cursor.close()
        finally:
            if not conn.closed:
                conn.autocommit = False

    def _begin(self, cursor: Any, write: bool, snapshot: bool = False) -> None:
        """A read says READ ONLY in its BEGIN (psycopg's ``read_only``), not in a SET
        TRANSACTION of its own: one round trip fewer for each of the thousands of reads a
        status over hundreds of queues makes. A write's BEGIN says nothing (READ WRITE would
        fail on a standby); a snapshot read sets its isolation as the base class does. The
        setting is the connection's: it is cleared as the transaction ends (``_ended``)."""
        if not write:
            self._conn.read_only = True
        super()._begin(cursor, write, snapshot)

    def _commit(self, cursor: Any, write: bool) -> None:
        super()._commit(cursor, write)
        self._ended()

    def _rollback(self) -> None:
        super()._rollback()
        self._ended()

    def _ended(self) -> None:
        """A read's READ ONLY ends with it: a transaction begun next on this connection by
        other means (a caller's own cursor, a lock limit's SET) begins as the server's."""
        conn = self._conn
        if conn is None or conn.closed or conn.read_only is None:
            return
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            conn.read_only = None  # never raising over the error a failed rollback carries

    def run_outside_transaction(self, statement: str) -> list[Row]:
        """In autocommit: psycopg otherwise opens a transaction block, which VACUUM and the
        CONCURRENTLY forms refuse."""
        conn = self.conn
        conn.autocommit = True
        try:
            return super().run_outside_transaction(statement)
        finally:
            if not conn.closed:
                conn.autocommit = False

    def _channel(self, spec: QueueSpec) -> str:
        """The queue's notification channel, as its push routines spell it:
        ``'qadmin_' || md5({table.lit})`` (short enough for any schema and name)."""
        return "qadmin_" + hashlib.md5(self.qualified(spec.name).encode()).hexdigest()

    def listen(self, spec: QueueSpec) -> bool:
        """LISTEN on the queue's channel (committed at once, so it is in force before the
        first pop looks): every push routine notifies it, payload-free, at its commit."""
        self.run([f"LISTEN {self.quote_ident(self._channel(spec))}"])
        return True

    def unlisten(self, spec: QueueSpec) -> None:
        self.run([f"UNLISTEN {self.quote_ident(self._channel(spec))}"])

    def wait_for_push(self, spec: QueueSpec, timeout_s: float) -> None:
        """Block on the idle connection until a notification (any: only this queue's channel is
        listened to) or the timeout; the caller pops again either way."""
        with self.errors():
            for _ in self.conn.notifies(timeout=timeout_s, stop_after=1):
                pass

    def server_version(self) -> str:
        row = self.query(self.base_hooks.engine_sql("server_version"))[0]
        return "PostgreSQL " + str(row["server_version"])

    def _default_schema(self) -> str:
        schema = self.query(self.base_hooks.engine_sql("default_schema"))[0]["s"]
        if not schema:
            raise QadminError("postgresql: no current schema (empty search_path); use --schema")
        return str(schema)

    def bulk_insert(self, statement: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """The section is a COPY ... FROM STDIN: several times faster than batched INSERTs.
        Each row's values go in the order of its keys, which is the COPY's column order."""
        with self.errors(), self.conn.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(tuple(row.values()))

    def adapt_time(self, value: datetime) -> datetime:
        return value.astimezone(UTC)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "connection failed"


# The privilege each kind of object in "permission denied for <kind> <name>" is refused.
_OBJECT_PRIVILEGE = {
    "function": "EXECUTE",
    "procedure": "EXECUTE",
    "routine": "EXECUTE",
    "schema": "USAGE",
    "sequence": "USAGE",
    "database": "CONNECT",
}
_WRITES = ("INSERT", "UPDATE", "DELETE", "TRUNCATE")


def privilege_needed(text: str, statement: str, context: str = "") -> str | None:
    """The privilege PostgreSQL's "permission denied for table x" leaves unnamed: EXECUTE on a
    routine, USAGE on a schema or sequence; on a table the statement's own verbs (SELECT
    when it only reads), or, refused inside a routine (``context``), the routine's."""
    if text.startswith("must be owner of "):
        return f"ownership of {text.removeprefix('must be owner of ')}"
    match = re.match(r"permission denied for (\w+(?: view)?) (.+)$", text)
    if match is None:
        return None
    kind, name = match.groups()
    if kind == "schema" and re.match(r"\s*CREATE\b", statement, re.IGNORECASE):
        return f"CREATE on schema {name}"  # making an object there (repair, create)
    if kind == "sequence" and not re.search(r"\b(nextval|setval)\s*\(", statement, re.I):
        return f"SELECT on sequence {name}"  # read as a table (a ring's positions): USAGE won't
    if kind in _OBJECT_PRIVILEGE:
        return f"{_OBJECT_PRIVILEGE[kind]} on {kind} {name}"
    routine = re.search(r"(?:SQL|PL/pgSQL) function (\S+)", context)
    if routine is not None:
        return f"what {routine[1]} does on {kind} {name} (SELECT, INSERT, UPDATE or DELETE)"
    verbs = [v for v in _WRITES if re.search(rf"\b{v}\b", statement, re.IGNORECASE)]
    return f"{' and '.join(verbs or ['SELECT'])} on {kind} {name}"
