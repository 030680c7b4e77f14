"""An engine's dialect: what differs between engines beyond the connection, asked by the layers
above instead of comparing engine names (``tests/unit/test_engine_names.py`` holds them to it).

The connection (``engines.base.Engine``) connects, executes, runs transactions and translates
driver errors; the dialect says how this engine's data and plans are read and maintained. Both
are named in the engine registry (``qadmin.engine_table``). Plain classes with no driver import:
asking a dialect never loads a driver. A hook an engine lacks is ``None`` or ``False`` here, and
its caller says "not supported on <engine>": it never borrows another engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from qadmin import sqlfiles
from qadmin.errors import UnsupportedError


class Dialect:
    """The hooks every engine answers; the defaults are "not here"."""

    # How findings and plans name the server (``MariaDB``, ``MySQL 8``, ``SQL Server``).
    title: ClassVar[str]
    # The SQL lookup chain: the folders under sql/queues/ and sql/diagnostics/ its files are
    # read from, its own first (MariaDB's over MySQL's).
    folders: ClassVar[tuple[str, ...]]
    # The database is one file (SQLite), not a schema on a server.
    file: ClassVar[bool] = False
    # Times may be kept as text or numbers (no timestamp type): a declared time column of
    # those types is accepted.
    untyped_times: ClassVar[bool] = False
    # maintain: which planner in ops/maintain.py reads this engine's figures and proposes its
    # online actions (None: maintain is not supported here).
    maintenance_planner: ClassVar[str | None] = None
    # maintain runs the actions it proposes (False: printed for a DBA to run by hand).
    maintenance_runs: ClassVar[bool] = True
    # --allow-blocking lets a VACUUM cut the empty pages off the end of the file.
    vacuum_truncates: ClassVar[bool] = False
    # A REINDEX CONCURRENTLY that gives up leaves an INVALID copy to drop, and a VACUUM
    # reports the dead rows a snapshot made it keep.
    concurrent_reindex: ClassVar[bool] = False
    # explain: the format of this engine's plan (a parser in diagnostics/entries/plan.py; None:
    # plans are not read here), ...
    plan_format: ClassVar[str | None] = None
    # ... what its estimate measures (``cost``: the planner's cost, bounded even through an
    # index; ``rows examined``: an index read in order stops at the head whatever it says), ...
    plan_measure: ClassVar[str] = "rows examined"
    # ... and what a plan that is only estimated, never run, is noted as.
    plan_only_note: ClassVar[str] = ""
    # How a routine is replaced in one statement, callers never finding it missing (pause
    # upgrading an old queue's pop); None: the engine cannot (MySQL 8 drops and creates).
    replace_routine: ClassVar[str | None] = None
    # DDL is transactional: a queue's objects and its catalog entry are dropped in one
    # transaction, all or nothing (elsewhere one by one, the catalog entry last).
    transactional_ddl: ClassVar[bool] = False

    def __init__(self, label: str, schema: Callable[[], str] | None = None) -> None:
        self.label = label
        self._schema = schema

    @staticmethod
    def existing_only(dsn: str, path: str | None, query: Mapping[str, str]) -> str:
        """The DSN opening only a database that exists (a monitor must never make one); a
        server's databases are never made by connecting: the DSN as it is."""
        return dsn

    def unsupported(self, what: str) -> UnsupportedError:
        """The one line a caller raises when this engine lacks a hook."""
        return UnsupportedError(f"{what} is not supported on {self.label}")

    def sql_file(self, kind: str, name: str) -> sqlfiles.SqlFile | None:
        """``sql/<kind>/<folder>/<name>.sql`` from the first folder of the chain that has it."""
        for folder in self.folders:
            relative = f"{kind}/{folder}/{name}.sql"
            if sqlfiles.exists(relative):
                return sqlfiles.load(relative)
        return None

    # -- quoting: the only way an identifier or a literal reaches SQL -------------------------

    @staticmethod
    def quote_ident(name: str) -> str:
        """The standard's double quotes; engines that quote otherwise say so."""
        return '"' + name.replace('"', '""') + '"'

    @staticmethod
    def quote_literal(text: str) -> str:
        """A string literal; only the renderer (``Engine.render_text``) calls it."""
        return "'" + text.replace("'", "''") + "'"

    def qualified(self, name: str) -> str:
        """``schema.name`` in the schema the connection works in."""
        if self._schema is None:
            raise ValueError("qualified names need the connection's schema")
        return f"{self.quote_ident(self._schema())}.{self.quote_ident(name)}"

    # -- advice: what a DBA runs, in this engine's words (findings quote it) ------------------

    def end_session(self, session: str, kind: str = "session") -> str:
        """How to end a server session that holds something back (``kind``: the horizon's
        holder_kind, for engines where a replication slot or a prepared transaction holds it
        too)."""
        return f"end session {session} with the server's own tools"

    def rebuild_index_advice(self, index: str, table: str) -> str:
        return f"rebuild index {index}"

    def vacuum_advice(self, table: str) -> str:
        """How to return the space of dead rows once nothing holds them."""
        return f"reclaim the dead rows of {table} once nothing holds them back"

    def deleted_rows_advice(self, table: str) -> str:
        """What to do about the rows a bulk delete (archive) leaves behind."""
        return self.vacuum_advice(table)

    def analyze_advice(self, table: str) -> str:
        return f"gather the statistics of {table}"

    def autovacuum_advice(self, table: str, *, server: bool) -> str:
        return "switch the server's automatic maintenance back on"

    def idle_transaction_advice(self) -> str:
        """How to stop abandoned open transactions from recurring."""
        return "give sessions an idle-in-transaction limit to stop it recurring"

    def horizon_notes(self, holders: Sequence[Mapping[str, Any]]) -> list[str]:
        """What the holders list cannot show with this role's privileges."""
        return []

    def index_waste(self, row: Mapping[str, Any]) -> tuple[str, bool] | None:
        """(what is wasted, whether a rebuild is worth it) from this engine's fragmentation
        row, or None when the row says nothing either way (too small, no figure)."""
        return None


def _pg_sql() -> Any:
    """psycopg's SQL composition (its quoting), imported when a PostgreSQL name is quoted: the
    driver is there whenever a PostgreSQL DSN was given."""
    from psycopg import sql

    return sql


class SqliteDialect(Dialect):
    title = "SQLite"
    folders: ClassVar[tuple[str, ...]] = ("sqlite",)
    file = True
    untyped_times = True
    transactional_ddl = True
    maintenance_planner = "file_vacuum"
    plan_format = "query_plan_rows"

    @staticmethod
    def quote_ident(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    @staticmethod
    def existing_only(dsn: str, path: str | None, query: Mapping[str, str]) -> str:
        """A file opened read-write only (``mode=rw``): one removed since it was checked is a
        failed connection, never a new empty database. In-memory and explicit modes stay."""
        if not path or path == ":memory:" or "mode" in query:
            return dsn
        return f"{dsn}{'&' if '?' in dsn else '?'}mode=rw"

    def end_session(self, session: str, kind: str = "session") -> str:
        return "stop the process that keeps its transaction open on the file"

    def rebuild_index_advice(self, index: str, table: str) -> str:
        return "VACUUM (rewrites the whole file; locks it meanwhile)"

    def vacuum_advice(self, table: str) -> str:
        return "VACUUM the database file in a quiet moment (it locks the whole file)"

    def deleted_rows_advice(self, table: str) -> str:
        return (
            "the deleted rows' pages are reused by new messages; VACUUM returns them to the "
            "disk in a quiet moment (it locks the whole file)"
        )

    def analyze_advice(self, table: str) -> str:
        return f"ANALYZE {self.quote_ident(table)}"

    def index_waste(self, row: Mapping[str, Any]) -> tuple[str, bool] | None:
        """dbstat's measure (--deep), on an index of at least 128 pages."""
        if row.get("unused_pct") is not None and int(row.get("pages") or 0) >= 128:
            unused = float(row["unused_pct"])
            return f"{unused:.0f} % unused bytes (measured)", unused >= 50
        return None


class PostgresDialect(Dialect):
    title = "PostgreSQL"
    replace_routine = "CREATE OR REPLACE"
    transactional_ddl = True
    folders: ClassVar[tuple[str, ...]] = ("postgresql",)
    maintenance_planner = "vacuum"
    vacuum_truncates = True
    concurrent_reindex = True
    plan_format = "plan_tree_json"
    plan_measure = "cost"

    @staticmethod
    def quote_ident(name: str) -> str:
        return str(_pg_sql().Identifier(name).as_string(None))

    @staticmethod
    def quote_literal(text: str) -> str:
        return str(_pg_sql().Literal(text).as_string(None))

    def end_session(self, session: str, kind: str = "session") -> str:
        name = self.quote_literal(session)
        if kind == "replication_slot":
            return f"SELECT pg_drop_replication_slot({name})"
        if kind == "prepared_xact":
            return f"ROLLBACK PREPARED {name}"
        if session.isdigit():
            return f"SELECT pg_terminate_backend({int(session)})"
        return (
            f"SELECT pg_drop_replication_slot({name}) for a replication slot, "
            f"ROLLBACK PREPARED {name} for a prepared transaction"
        )

    def rebuild_index_advice(self, index: str, table: str) -> str:
        return f"REINDEX INDEX CONCURRENTLY {self.qualified(index)}"

    def vacuum_advice(self, table: str) -> str:
        return f"VACUUM (VERBOSE) {self.qualified(table)} once the horizon moves"

    def deleted_rows_advice(self, table: str) -> str:
        return (
            f"VACUUM {self.qualified(table)}; until a vacuum (autovacuum's or this one) every "
            "dequeue walks the deleted rows as dead rows"
        )

    def analyze_advice(self, table: str) -> str:
        # The SQL alone, prose after a semicolon: the statement runs as printed in psql.
        return f"ANALYZE {self.qualified(table)}; then find why autovacuum has not run it"

    def autovacuum_advice(self, table: str, *, server: bool) -> str:
        if server:
            return "ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf()"
        return f"ALTER TABLE {self.qualified(table)} RESET (autovacuum_enabled)"

    def idle_transaction_advice(self) -> str:
        return "set idle_in_transaction_session_timeout to stop it recurring"

    def horizon_notes(self, holders: Sequence[Mapping[str, Any]]) -> list[str]:
        if any(h.get("detail") == "<insufficient privilege>" for h in holders):
            return [
                "partial view: pg_read_all_stats (or pg_monitor) is needed to see what "
                "other roles' sessions are doing"
            ]
        return []

    def index_waste(self, row: Mapping[str, Any]) -> tuple[str, bool] | None:
        """The catalog estimate (bloat_pct) or pgstatindex's measure (free_pages_pct), on an
        index of at least 128 pages."""
        if row.get("bloat_pct") is not None and int(row.get("pages") or 0) >= 128:
            bloat = float(row["bloat_pct"])
            return f"an estimated {bloat:.0f} % bloat", bloat >= 50
        pages = int(row.get("leaf_pages") or 0) + int(row.get("deleted_pages") or 0)
        if row.get("free_pages_pct") is not None and pages >= 128:
            density, free = float(row["avg_leaf_density"] or 0), float(row["free_pages_pct"])
            waste = f"{free:.0f} % empty or deleted pages, leaves {density:.0f} % full (measured)"
            return waste, free >= 50 or density < 50
        return None


class MysqlDialect(Dialect):
    title = "MySQL 8"
    folders: ClassVar[tuple[str, ...]] = ("mysql",)
    maintenance_planner = "innodb_rebuild"
    plan_format = "query_block_json"
    plan_only_note = "MySQL 8: the optimizer's estimates (EXPLAIN FORMAT=JSON); not run"

    @staticmethod
    def quote_ident(name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def end_session(self, session: str, kind: str = "session") -> str:
        return f"KILL {int(session)}"

    def rebuild_index_advice(self, index: str, table: str) -> str:
        return (
            f"OPTIMIZE TABLE {self.qualified(table)}; for InnoDB it rebuilds the table and its "
            "indexes online"
        )

    def vacuum_advice(self, table: str) -> str:
        return f"let purge catch up, then OPTIMIZE TABLE {self.qualified(table)} if it stays large"

    def deleted_rows_advice(self, table: str) -> str:
        return (
            "InnoDB's purge removes the deleted rows by itself; OPTIMIZE TABLE "
            f"{self.qualified(table)} returns their space to the disk (it rebuilds the table)"
        )

    def analyze_advice(self, table: str) -> str:
        return f"ANALYZE TABLE {self.qualified(table)}"

    def idle_transaction_advice(self) -> str:
        return "set idle_transaction_timeout (MariaDB) or wait_timeout to stop it recurring"


class MariadbDialect(MysqlDialect):
    title = "MariaDB"
    replace_routine = "CREATE OR REPLACE"
    folders: ClassVar[tuple[str, ...]] = ("mariadb", "mysql")


class MssqlDialect(Dialect):
    title = "SQL Server"
    replace_routine = "CREATE OR ALTER"
    folders: ClassVar[tuple[str, ...]] = ("mssql",)
    maintenance_planner = "index_rebuild"
    # Its statements passed the T-SQL gate only: not verified live.
    maintenance_runs = False

    def end_session(self, session: str, kind: str = "session") -> str:
        return f"KILL {int(session)}"

    def rebuild_index_advice(self, index: str, table: str) -> str:
        return (
            f"ALTER INDEX {self.quote_ident(index)} ON {self.qualified(table)} REORGANIZE "
            "(or REBUILD WITH (ONLINE = ON))"
        )

    def vacuum_advice(self, table: str) -> str:
        return "the ghost cleanup task removes them once no snapshot needs them"

    def analyze_advice(self, table: str) -> str:
        return f"UPDATE STATISTICS {self.qualified(table)}"

    def idle_transaction_advice(self) -> str:
        return (
            "find the application that leaves transactions open (sys.dm_tran_session_transactions)"
        )

    def index_waste(self, row: Mapping[str, Any]) -> tuple[str, bool] | None:
        """Logical fragmentation from dm_db_index_physical_stats, on at least 1000 pages."""
        if row.get("fragmentation_pct") is not None and int(row.get("pages") or 0) >= 1000:
            fragmentation = float(row["fragmentation_pct"])
            return f"{fragmentation:.0f} % logical fragmentation", fragmentation >= 30
        return None

    @staticmethod
    def quote_ident(name: str) -> str:
        return "[" + name.replace("]", "]]") + "]"

    @staticmethod
    def quote_literal(text: str) -> str:
        return "N'" + text.replace("'", "''") + "'"
