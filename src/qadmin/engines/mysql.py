"""MySQL 8 and MariaDB through PyMySQL: stored procedures for push/pop, SKIP LOCKED consumers.

The two servers share most of the dialect, and differ where qadmin cares: MariaDB has
sequences (10.3+) and DELETE ... RETURNING, MySQL 8 has neither; lock views and the statement
time limit differ too. The engine detects the server after connecting and picks the template
folder: ``sql/queues/mariadb`` overlays ``sql/queues/mysql`` (which is valid on both). A DSN
parameter ``dialect=mysql`` forces the MySQL 8 templates on a MariaDB server; the test suite
uses it to run the MySQL 8 code paths live.

Sessions run at READ COMMITTED: a SKIP LOCKED dequeue at REPEATABLE READ takes next-key locks
that block producers inserting at the end of the index.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

import pymysql
from pymysql.constants import CLIENT

from qadmin.engines.base import APP_NAME, Engine, Jdbc
from qadmin.engines.dialect import Dialect, MariadbDialect, MysqlDialect
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

_LOGIN = {1045, 1698}
_UNREACHABLE = {2003, 2005, 2006, 2013, 4031}
# The connection went away after it was made: ``KILL``, a restart, an idle timeout (4031).
_LOST = {1927, 2006, 2013, 4031}
_LOCK_TIMEOUT = {1205}
_DEADLOCK = 1213
_STATEMENT_TIMEOUT = {1969, 3024}
_PERMISSION = {1044, 1142, 1143, 1227, 1370}
_MISSING = {1049, 1146, 1305}
_DIALECTS = ("mysql", "mariadb")
_TOO_LARGE = {1153, 1301}  # a packet, or a function's result, over max_allowed_packet
_STATEMENT_ROOM = 64 * 1024  # the CALL around a push's payloads, and the protocol's header


class MysqlEngine(Engine):
    name = "mysql"
    # jdbc:mysql:// also for MariaDB: with jdbc:mariadb:// Spark picks a dialect that quotes
    # column names with double quotes. Without rewriteBatchedStatements a Spark load is ~7x slower.
    JDBC = Jdbc(
        "mysql",
        "org.mariadb.jdbc.Driver",
        3306,
        (("rewriteBatchedStatements", "true"), ("useBulkStmts", "true")),
        # pymysql parses and sends rows in Python: Spark pays off sooner.
        spark_export_from_rows=1_200_000,
        spark_load_from_rows=2_700_000,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        forced = self.dsn.query.get("dialect")
        if forced is not None and forced not in _DIALECTS:
            raise UsageError(f"dialect={forced!r}: use mysql or mariadb")
        self._forced = forced
        self._is_mariadb: bool | None = None
        # Which timeout a "timed out" read hit: the connect timeout while opening.
        self._opening = False
        self._packet: int | None = None  # max_allowed_packet, read at the first push

    def default_user(self) -> str:
        return "root"

    @property
    def label(self) -> str:
        """``mariadb`` or ``mysql``: the server as detected once connected; before that (a
        refused login), as the DSN's scheme or ``dialect=`` names it."""
        if self._is_mariadb is not None:
            return "mariadb" if self._is_mariadb else "mysql"
        return self._forced or self.dsn.flavor or "mysql"

    def session_id(self) -> int:
        return int(self.conn.thread_id())

    def _socket_fd(self) -> int | None:
        # Idle, the server sends nothing unasked but the error packet of a KILL, then closes.
        sock = getattr(self._conn, "_sock", None)
        return None if sock is None else int(sock.fileno())

    def _open(self) -> Any:
        self._opening = True  # stays set when opening fails, for _translate
        conn = self._connect()
        self._opening = False
        return conn

    def _connect(self) -> Any:
        d = self.dsn
        conn = pymysql.connect(
            host=d.host or "localhost",
            port=d.port or 3306,
            user=d.user or self.default_user(),
            password=d.password or "",
            database=d.database,
            # Until the session is set up, every read and write is bounded by the connect
            # timeout too: a server that accepts TCP and never answers fails like a refusal.
            connect_timeout=self.timeouts.connect_s,
            read_timeout=self.timeouts.connect_s,
            write_timeout=self.timeouts.connect_s,
            autocommit=False,
            program_name=APP_NAME,
            client_flag=CLIENT.MULTI_RESULTS,
            charset="utf8mb4",
            binary_prefix=True,
            defer_connect=True,
        )
        try:
            conn.connect()
        finally:
            # The server's greeting names it before the login: a refused login says mariadb too.
            greeting = getattr(conn, "server_version", None)
            if greeting and self._is_mariadb is None:
                self._is_mariadb = "mariadb" in str(greeting).lower()
        with conn.cursor() as cur:
            cur.execute(self.base_hooks.engine_sql("server_version"))
            self._is_mariadb = "mariadb" in str(cur.fetchone()[0]).lower()
            statements = MysqlDialect.session_statements(
                self.timeouts.lock_ms, self.timeouts.statement_ms, self._is_mariadb
            )
            for statement in statements:
                cur.execute(statement)
        conn.commit()
        # Then the read timeout that lets the server's own limits fire first. PyMySQL has no
        # public setter; it applies these before each read and write.
        conn._read_timeout = conn._write_timeout = self.timeouts.read_s
        return conn

    @property
    def dialect(self) -> str:
        if self._forced:
            return self._forced
        _ = self.conn
        return "mariadb" if self._is_mariadb else "mysql"

    def dialect_class(self) -> type[Dialect]:
        """MariaDB's hooks where the server is one (its own title in findings)."""
        return MariadbDialect if self.dialect == "mariadb" else MysqlDialect

    @property
    def base_dialect(self) -> str:
        return "mysql"

    def server_label(self) -> str:
        """``mariadb`` or ``mysql`` as the server says once connected, whatever ``dialect=``
        forces on the templates."""
        _ = self.conn
        return self.label

    def _translate(self, exc: BaseException) -> QadminError | None:
        if not isinstance(exc, pymysql.Error):
            return None
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        text = self.scrub(str(exc.args[1]) if len(exc.args) > 1 else str(exc))
        where = f"{self.dsn.host or 'localhost'}:{self.dsn.port or 3306}"
        if code in _LOGIN:
            return LoginFailed(f"{self.label}: login failed for user {self.dsn.user!r} at {where}")
        if code in _UNREACHABLE and "timed out" in text:
            waited = self.timeouts.connect_s if self._opening else self.timeouts.read_s
            return ConnectionFailed(f"{self.label}: no answer from {where} within {waited} s")
        if code in _LOST and not self._opening:
            return ConnectionFailed(
                f"{self.label}: the server ended this session at {where} (killed, or the "
                f"server restarted): {text}"
            )
        if code in _UNREACHABLE:
            return ConnectionFailed(f"{self.label}: cannot reach {where}: {text}")
        if code == _DEADLOCK:
            return Deadlock(f"{self.label}: deadlock; the transaction was rolled back")
        if code in _LOCK_TIMEOUT:
            return LockTimeout(f"{self.label}: lock wait exceeded {self.lock_ms} ms")
        if code in _STATEMENT_TIMEOUT:
            return StatementTimeout(
                f"{self.label}: statement stopped after {self.timeouts.statement_ms} ms"
            )
        if code in _PERMISSION:
            body = "\n".join(
                line for line in self.statement.splitlines() if not line.lstrip().startswith("--")
            )
            routine = re.match(
                r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:DEFINER\s*=\s*\S+\s+)?"
                r"(PROCEDURE|FUNCTION|TRIGGER)\b",
                body,
                re.I,
            )
            if code == 1044 and routine is not None:
                # "Access denied ... to database": the privilege a routine's CREATE needs
                needed = (
                    "TRIGGER on the table"
                    if routine[1].upper() == "TRIGGER"
                    else "CREATE ROUTINE (and ALTER ROUTINE to replace one) on the database"
                )
                return PermissionMissing(f"{self.label}: {text}: needs {needed}", privilege=needed)
            return PermissionMissing(f"{self.label}: {text}")
        if code in _TOO_LARGE:
            return UsageError(
                f"{self.label}: {text} (the server's max_allowed_packet is too small)"
            )
        if code in _MISSING:
            return NotFound(f"{self.label}: {text}")
        return QadminError(f"{self.label}: {text}")

    def batch_params(self, payloads: Sequence[bytes]) -> dict[str, Any]:
        """One JSON array of base64 payloads: JSON_TABLE turns it into rows in one statement."""
        return {"batch": json.dumps([base64.b64encode(p).decode("ascii") for p in payloads])}

    def push_limits(self) -> tuple[int, int | None]:
        """The server's max_allowed_packet, less room for the statement around the payloads:
        a statement over it is refused and the connection dropped (error 1153)."""
        if self._packet is None:
            self._packet = int(self.query("SELECT @@max_allowed_packet AS p")[0]["p"])
        room = self._packet - _STATEMENT_ROOM
        return room, room

    def wire_bytes(self, payload: bytes, batch: bool) -> int:
        """Base64 in a JSON string for a batch; alone, the literal the driver itself writes
        (PyMySQL 1.2 writes bytes as hex, twice their size; older releases escaped them)."""
        if batch:
            return 4 * ((len(payload) + 2) // 3) + 3
        return len(str(self.conn.escape(payload)))

    def server_version(self) -> str:
        row = self.query(self.base_hooks.engine_sql("server_version"))[0]
        return f"{row['v']} ({row['c']})"

    def _default_schema(self) -> str:
        schema = self.query(self.base_hooks.engine_sql("default_schema"))[0]["s"]
        if not schema:
            raise UsageError(
                f"{self.label}: the DSN names no database; add /DBNAME or use --schema"
            )
        return str(schema)
