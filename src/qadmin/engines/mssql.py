"""SQL Server through pyodbc: procedures for push/pop, READPAST for concurrent consumers.

No SQL Server runs where qadmin is developed: every statement this engine can send lives in
``sql/queues/mssql`` and ``sql/diagnostics/mssql`` and is parsed by sqlfluff's tsql dialect in
the test suite; the connection path is tested against refused ports and a local TDS endpoint.
Errors are mapped by SQLSTATE and native error number, never by exception class, because
ODBC drivers disagree on the classes.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from qadmin import extras
from qadmin.dsn import odbc_pairs, odbc_value
from qadmin.engines.base import APP_NAME, PARAM_PATTERN, Engine
from qadmin.errors import (
    ConnectionFailed,
    Deadlock,
    LockTimeout,
    LoginFailed,
    MissingDependency,
    NotFound,
    PermissionMissing,
    QadminError,
    StatementTimeout,
)

_NATIVE = re.compile(r"\((\d{3,5})\)")
_LOGIN = {18456, 18452, 4060}
_LOCK = {1222}
_PERMISSION = {229, 230, 262, 297, 300, 916}
_MISSING = {208, 2812, 3701}
_CONNECT_STATES = {"08001", "08S01", "08004", "HYT00", "01000", "IM002"}
_PREFERRED_DRIVERS = ("ODBC Driver 18 for SQL Server", "ODBC Driver 17 for SQL Server", "FreeTDS")


class MssqlEngine(Engine):
    name = "mssql"

    def _driver_module(self) -> Any:
        try:
            import pyodbc
        except ImportError as exc:
            raise MissingDependency(
                "mssql: pyodbc cannot load (" + str(exc).split(":")[0] + "); install it with "
                f"{extras.install_line('mssql')} and the ODBC libraries with "
                "apt-get install libodbc2 tdsodbc"
            ) from None
        return pyodbc

    def connection_string(self, drivers: list[str] | None = None) -> str:
        """The ODBC string for this DSN: a raw ODBC DSN as given plus APP, or one built from
        the URL, with the driver from ?driver= or the best installed one."""
        d = self.dsn
        if d.odbc is not None:
            text = d.odbc.rstrip(";")
            if not re.search(r"(?i)(^|;)\s*app\s*=", text):
                text += f";APP={APP_NAME}"
            return text
        driver = d.query.get("driver")
        if driver is not None and driver.startswith("{") and driver.endswith("}"):
            driver = driver[1:-1]  # ?driver={FreeTDS}, as in an ODBC string
        if driver is None:
            installed = drivers if drivers is not None else []
            driver = next((x for x in _PREFERRED_DRIVERS if x in installed), None)
            if driver is None:
                raise ConnectionFailed(
                    "mssql: no SQL Server ODBC driver is installed; apt-get install tdsodbc "
                    "(FreeTDS) or Microsoft's msodbcsql18, or name one with ?driver="
                )
        server = d.host or "localhost"
        parts = {"DRIVER": driver, "SERVER": server, "PORT": str(d.port or 1433)}
        if "freetds" not in driver.lower():
            parts = {"DRIVER": driver, "SERVER": f"{server},{d.port or 1433}"}
        if d.database:
            parts["DATABASE"] = d.database
        if d.user:
            parts["UID"] = d.user
        if d.password is not None:
            parts["PWD"] = d.password
        parts["APP"] = APP_NAME
        for key, value in d.query.items():
            if key != "driver":
                parts[key] = value
        freetds = "freetds" in driver.lower() or "tdsodbc" in driver.lower()
        return ";".join(f"{k}={odbc_value(v, freetds)}" for k, v in parts.items())

    def _open(self) -> Any:
        pyodbc = self._driver_module()
        drivers = (
            pyodbc.drivers() if self.dsn.odbc is None and "driver" not in self.dsn.query else None
        )
        conn = self._connect(pyodbc, self.connection_string(drivers))
        conn.timeout = max(1, round(self.timeouts.statement_ms / 1000))
        cursor = conn.cursor()
        for statement in self.session_statements():
            cursor.execute(statement)
        cursor.close()
        return conn

    def session_id(self) -> int:
        return int(self.query("SELECT @@SPID AS spid")[0]["spid"])

    def where(self) -> str:
        """host:port for messages; a raw ODBC string's SERVER (``host,port`` or ``host``)
        and PORT."""
        if self.dsn.odbc is None:
            return f"{self.dsn.host or 'localhost'}:{self.dsn.port or 1433}"
        found = {k.lower(): v for k, v, _, _ in odbc_pairs(self.dsn.odbc)}
        host, _, port = found.get("server", "localhost").partition(",")
        return f"{host}:{port or found.get('port') or 1433}"

    def _connect(self, pyodbc: Any, text: str) -> Any:
        """pyodbc.connect bounded by the connect timeout. FreeTDS ignores the ODBC login
        timeout once TCP is up (a server that accepts and never answers hangs it for good), so
        the attempt runs in a thread that is abandoned, and closes what it gets, when late."""
        outcome: dict[str, Any] = {}
        late = threading.Event()

        def attempt() -> None:
            try:
                conn = pyodbc.connect(text, timeout=self.timeouts.connect_s, autocommit=True)
            except Exception as exc:
                outcome["error"] = exc
                return
            if late.is_set():
                conn.close()
            outcome["conn"] = conn

        thread = threading.Thread(target=attempt, name="qadmin-odbc-connect", daemon=True)
        thread.start()
        thread.join(self.timeouts.connect_s + 1)
        if thread.is_alive():
            late.set()
            raise ConnectionFailed(
                f"mssql: no answer from {self.where()} within {self.timeouts.connect_s} s"
            )
        if "error" in outcome:
            raise outcome["error"]
        return outcome["conn"]

    # The connection runs in autocommit and writes open their own transaction: reads then hold
    # no locks and send no COMMIT, and no driver-side implicit transaction is left open.
    def _begin(self, cursor: Any, write: bool, snapshot: bool = False) -> None:
        # No snapshot reads here: export (their only user) is not built for SQL Server.
        if write:
            cursor.execute(self.base_hooks.engine_sql("begin"))

    def _commit(self, cursor: Any, write: bool) -> None:
        if write:
            cursor.execute(self.base_hooks.engine_sql("commit"))

    def _rollback(self) -> None:
        try:
            cursor = self._conn.cursor()
            cursor.execute(self.base_hooks.engine_sql("rollback"))
            cursor.close()
        except Exception:
            self.close()

    def session_statements(self) -> list[str]:
        """The lock timeout every qadmin session runs with (the statement limit is the
        driver's query timeout)."""
        return [f"SET LOCK_TIMEOUT {int(self.timeouts.lock_ms)}"]

    def _translate(self, exc: BaseException) -> QadminError | None:
        module = type(exc).__module__
        if not module.startswith("pyodbc"):
            return None
        state = str(exc.args[0]) if exc.args else ""
        text = self.scrub(str(exc.args[1]) if len(exc.args) > 1 else str(exc))
        natives = {int(n) for n in _NATIVE.findall(text)}
        where = self.where()
        if natives & _LOGIN or state == "28000":
            return LoginFailed(f"mssql: login failed for user {self.dsn.user!r} at {where}")
        if 1205 in natives:
            return Deadlock("mssql: chosen as deadlock victim; the transaction was rolled back")
        if natives & _LOCK:
            return LockTimeout(f"mssql: lock wait exceeded {self.lock_ms} ms")
        if state == "HYT00" and self._conn is not None:
            return StatementTimeout(
                f"mssql: statement stopped after {self.timeouts.statement_ms} ms"
            )
        if natives & _PERMISSION:
            return PermissionMissing(f"mssql: {_short(text)}")
        if natives & _MISSING:
            return NotFound(f"mssql: {_short(text)}")
        if state in _CONNECT_STATES or state.startswith("08"):
            return ConnectionFailed(f"mssql: cannot connect to {where}: {_short(text)}")
        return QadminError(f"mssql: [{state}] {_short(text)}")

    def server_version(self) -> str:
        return str(self.query(self.base_hooks.engine_sql("server_version"))[0]["v"]).splitlines()[0]

    def _default_schema(self) -> str:
        return str(self.query(self.base_hooks.engine_sql("default_schema"))[0]["s"] or "dbo")

    def batch_params(self, payloads: Sequence[bytes]) -> dict[str, Any]:
        """push_many's @batch: a JSON array of hex strings (OPENJSON, then CONVERT style 2)."""
        return {"batch": json.dumps([p.hex() for p in payloads])}

    def bind(self, statement: str, params: Mapping[str, Any]) -> tuple[str, Any]:
        """pyodbc takes ``?`` only: the named parameters become positional, in order."""
        order: list[Any] = []

        def take(match: re.Match[str]) -> str:
            order.append(params[match.group(1)])
            return "?"

        return PARAM_PATTERN.sub(take, statement), order


def _short(text: str) -> str:
    """ODBC messages carry a [vendor][driver][server] prefix; the last part says what happened."""
    return re.sub(r"^(\[[^\]]*\])+\s*", "", text.split("\n")[0])
