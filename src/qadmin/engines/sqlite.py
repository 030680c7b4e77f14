"""SQLite, the embedded default: stdlib driver, one writer at a time, no server routines.

Writes run inside ``BEGIN IMMEDIATE`` so a transaction takes the write lock up front instead of
failing when it upgrades from read to write; ``busy_timeout`` is the lock timeout. A database
qadmin makes its catalog in is switched to WAL mode (it stays so) so readers (peek, inspect)
never wait for a writer; a command that only reads never changes the file's journal mode.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from qadmin.engines.base import Engine, Row
from qadmin.errors import (
    ConnectionFailed,
    LockTimeout,
    NotFound,
    PermissionMissing,
    QadminError,
    StaleStatement,
    UsageError,
)


class SqliteEngine(Engine):
    name = "sqlite"

    def _open(self) -> sqlite3.Connection:
        path = self.dsn.path or ":memory:"
        if path != ":memory:":
            parent = Path(path).expanduser().parent
            if not parent.exists():
                parent.mkdir(parents=True, exist_ok=True)
        mode = self.dsn.query.get("mode")
        # A URI: '#', '?' and '%' in the file's name are escaped, or SQLite opens another file.
        uri = f"file:{quote(path)}"
        if mode:
            uri += f"?mode={quote(mode)}"
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=self.timeouts.lock_ms / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeouts.lock_ms)}")
        if path != ":memory:" and mode != "ro":
            conn.execute("PRAGMA synchronous = NORMAL")  # this connection's only
        return conn

    def claim_database(self) -> None:
        if (self.dsn.path or ":memory:") != ":memory:" and self.dsn.query.get("mode") != "ro":
            with self.errors():
                self.conn.execute("PRAGMA journal_mode = WAL")

    def _translate(self, exc: BaseException) -> QadminError | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        text = self.scrub(str(exc))
        if isinstance(exc, sqlite3.OperationalError):
            lowered = text.lower()
            if "locked" in lowered or "busy" in lowered:
                waited = self.lock_ms
                return LockTimeout(f"sqlite: database is locked (waited {waited} ms)")
            if "unable to open" in lowered:
                return ConnectionFailed(f"sqlite: cannot open {self.dsn.path}: {text}")
            if "readonly" in lowered or "read-only" in lowered:
                return PermissionMissing(f"sqlite: {text}", privilege="write access to the file")
            if "no such column" in lowered or "no such table" in lowered:
                return StaleStatement(f"sqlite: {text}")
        if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text.lower():
            return ConnectionFailed(f"sqlite: {self.dsn.path} is not a SQLite database file")
        return QadminError(f"sqlite: {text}")

    def server_version(self) -> str:
        # Asked of the connection (not the module's constant) so ping times a real round trip.
        return "SQLite " + str(self.query(self.base_hooks.engine_sql("server_version"))[0]["v"])

    def _default_schema(self) -> str:
        return "main"

    @property
    def schema(self) -> str:
        if self._schema not in (None, "main"):
            raise UsageError("SQLite has a single schema, main; leave out --schema")
        return "main"

    def require_schema(self, schema: str | None = None) -> None:
        """main always exists (the schema property refuses any other, as here)."""
        if schema not in (None, "main"):
            raise NotFound(f"sqlite: schema {schema} does not exist (SQLite has one, main)")

    def bind(self, statement: str, params: Mapping[str, Any]) -> tuple[str, Any]:
        return statement, dict(params)

    def _begin(self, cursor: Any, write: bool, snapshot: bool = False) -> None:
        # A deferred BEGIN reads one WAL snapshot from its first read to its end.
        cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def run_outside_transaction(self, statement: str) -> list[Row]:
        """Stepped to the end (sqlite3's executescript): PRAGMA incremental_vacuum frees one
        page per step, and a cursor with no result columns is stepped once only."""
        with self.errors():
            self.conn.executescript(statement)
        return []

    def _apply_lock_timeout(self, ms: int) -> None:
        """busy_timeout is SQLite's lock wait: a pragma on the connection, no transaction."""
        with self.errors():
            self.conn.execute(f"PRAGMA busy_timeout = {int(ms)}")
        self.lock_ms = ms

    def adapt_time(self, value: datetime) -> str:
        # Same text form as strftime('%Y-%m-%d %H:%M:%f'), so due times compare as text.
        utc = value.astimezone(UTC)
        return utc.strftime("%Y-%m-%d %H:%M:%S.") + f"{utc.microsecond // 1000:03d}"
