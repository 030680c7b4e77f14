"""An engine's dialect: what differs between engines beyond the connection, asked by the layers
above instead of comparing engine names (``tests/unit/test_engine_names.py`` holds them to it).

The connection (``engines.base.Engine``) connects, executes, runs transactions and translates
driver errors; the dialect finds and renders the SQL it runs (the lookup chain, templates,
sections, the catalog's and the engine's own files: names and specs in, SQL text out, a server
fact such as MariaDB-or-MySQL passed in by the connection) and says how this engine's data and
plans are read and maintained. Both are named in the engine registry (``qadmin.engine_table``).
Plain classes with no driver import: asking a dialect never loads a driver (PostgreSQL's quoting
imports psycopg when a name is quoted). A hook an engine lacks is ``None`` or ``False`` here, and
its caller says "not supported on <engine>": it never borrows another engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from qadmin import sqlfiles, sqltext
from qadmin.errors import QadminError, UnsupportedError, WrongKind
from qadmin.kinds import KINDS, QueueSpec, said

# qadmin's catalog table, in the schema that holds the queues (qadmin/catalog.py).
CATALOG_TABLE = "qadmin_queues"


class Dialect:
    """The hooks every engine answers; the defaults are "not here"."""

    # The engine's own SQL file (``sql/engine/<engine>.sql``) and catalog folder: a flavour
    # shares its base's (MariaDB reads MySQL's).
    engine: ClassVar[str]
    # What a dequeue adds to skip rows other consumers hold (empty for a strict FIFO pop).
    lock_skip: ClassVar[str] = ""
    # Whether create installs push/pop routines on the server that qadmin then calls.
    has_routines: ClassVar[bool] = True
    # The server lists only the routines a role may run or alter (information_schema.ROUTINES,
    # sys.objects): one it does not list is not proven gone (PostgreSQL's pg_proc lists all).
    routines_hidden: ClassVar[bool] = False
    # How far the catalog's row estimate (the depth of a queue too big or too dirty to count)
    # may be from the truth, as a fraction of the truth: check judges an estimate only when
    # the threshold lies outside [estimate / (1 + error), estimate / (1 - error)].
    estimate_error: ClassVar[float] = 0.5
    # The kind's push_batch section (many messages in one statement) is used where its
    # template has one (MySQL 8 has no anonymous block to run it: one push call at a time).
    batch_statements: ClassVar[bool] = True
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
    # The latest template revision (kinds.ROUTINES_REVISION) that changed this engine's
    # routines: a queue's from before it are reported (routines_outdated) and repair replaces
    # them (0: they never changed since pause, which upgrades its own).
    routines_revised: ClassVar[int] = 0
    # DDL is transactional: a queue's objects and its catalog entry are dropped in one
    # transaction, all or nothing (elsewhere one by one, the catalog entry last).
    transactional_ddl: ClassVar[bool] = False

    def __init__(
        self,
        label: str,
        schema: Callable[[], str] | None = None,
        server: Callable[[], str] | None = None,
    ) -> None:
        """``label`` names the server in messages, ``schema`` gives the schema names are
        qualified in, and ``server`` the server as the connection detected it (``mariadb``):
        the fact a version gate reads (both asked only when needed, so no connection is
        opened for text that does not depend on them)."""
        self.label = label
        self._schema = schema
        self._server = server or (lambda: label)

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
        """A string literal; only the renderer (``render_text``) calls it."""
        return "'" + text.replace("'", "''") + "'"

    def schema(self) -> str:
        """The schema the connection works in (names are qualified and rendered there)."""
        if self._schema is None:
            raise ValueError("qualified names need the connection's schema")
        return self._schema()

    def qualified(self, name: str) -> str:
        """``schema.name`` in the schema the connection works in."""
        return f"{self.quote_ident(self.schema())}.{self.quote_ident(name)}"

    # -- the SQL lookup chain and the one renderer: names and specs in, SQL text out ----------

    def queue_file(self, name: str) -> sqlfiles.SqlFile:
        """A file of sql/queues/ (a kind's template, or one that belongs to no kind: a
        library's pause), from the first folder of the chain that has it; UnsupportedError
        where the dialect has none."""
        found = self.sql_file("queues", name)
        if found is None:
            raise UnsupportedError(
                f"{name.replace('_', ' ')} is not available on {self.folders[0]}"
            )
        return found

    def template(self, spec: QueueSpec) -> sqlfiles.SqlFile:
        """The kind's template with its overlays (e.g. a watermark) laid over it."""
        merged = self.queue_file(spec.template)
        for overlay in spec.overlays:
            merged = merged.overlay(self.queue_file(overlay))
        return merged

    def fragment(self, name: str) -> str:
        """A dialect's piece of SQL (``{name(object)}`` in a template), e.g. how to take a
        sequence value on a server that has no sequences; KeyError if the dialect has none."""
        for folder in self.folders:
            relative = f"queues/{folder}/fragments.sql"
            if sqlfiles.exists(relative) and sqlfiles.load(relative).has(name):
                return sqlfiles.load(relative).statements(name)[0]
        raise KeyError(name)

    def server_keywords(self) -> dict[str, str]:
        """Fixed SQL words that depend on the server (``server``) rather than the templates'
        dialect."""
        return {}

    def keywords(self, spec: QueueSpec) -> dict[str, str]:
        """The fixed SQL words a queue's templates take: the kind's, this engine's for the
        queue, and the server's."""
        words = spec.keywords()
        words["skip_locked"] = "" if spec.strict else self.lock_skip
        words["capacity"] = str(int(spec.capacity or 0))
        words.update(self.server_keywords())
        return words

    def render_text(
        self, text: str, names: Mapping[str, str], keywords: Mapping[str, str] | None = None
    ) -> str:
        """``text`` filled by the one renderer (``qadmin.sqltext``), spelled for this server."""
        target = sqltext.Target(self.quote_ident, self.quote_literal, self.schema(), self.fragment)
        return sqltext.render(text, target, names, keywords)

    def render(self, statement: str, spec: QueueSpec) -> str:
        """A queue template's statement: its names are the queue's objects, and ``{catalog}``
        the catalog table (a claim queue's fail routine reads its max_attempts there)."""
        names = {**spec.objects(), "catalog": CATALOG_TABLE}
        return self.render_text(statement, names, self.keywords(spec))

    def section(self, spec: QueueSpec, section: str) -> list[str]:
        """The rendered statements of one template section, ready to bind and run."""
        template = self.template(spec)
        if not template.has(section):
            raise self._no_section(spec, section)
        return [self.render(s, spec) for s in template.statements(section)]

    def _no_section(self, spec: QueueSpec, section: str) -> QadminError:
        """A command reached a section its kind's template lacks (callers check the KindSpec
        first; this is the net): one line naming the kinds whose templates have it here."""
        having = [k for k, info in KINDS.items() if self.queue_file(info.template).has(section)]
        if not having:
            return UnsupportedError(f"{section} is not available on {self.folders[0]}")
        return WrongKind(
            f"{section}: {spec.name} is a {spec.kind} queue; {section} works on "
            f"{said(having, 'or')} queues only"
        )

    def batch_section(self, spec: QueueSpec) -> list[str] | None:
        """The kind's ``push_batch`` statements (many messages in one statement), or None where
        this server has none and a batch goes one push call at a time."""
        if not self.batch_statements or not self.template(spec).has("push_batch"):
            return None
        return self.section(spec, "push_batch")

    def data_section(self, spec: QueueSpec, section: str) -> list[str]:
        """A section of ``sql/queues/<dialect>/data.sql`` (export, archive, load) for a queue."""
        return [self.render(s, spec) for s in self.data_file().statements(section)]

    def kind_data_section(self, spec: QueueSpec, operation: str) -> list[str]:
        """data.sql's ``<operation>_<template>`` where the kind's messages need their own
        (a pending queue's due times, a claim queue's state, a ring's slots), else the shared
        ``<operation>_rows``: the file says which, no table in Python does."""
        own = f"{operation}_{spec.template}"
        return self.data_section(spec, own if self.data_file().has(own) else f"{operation}_rows")

    def data_file(self) -> sqlfiles.SqlFile:
        """``data.sql`` (export, archive and load); UnsupportedError where there is none."""
        try:
            return self.queue_file("data")
        except UnsupportedError:
            raise UnsupportedError(
                f"export, archive and load are not available on {self.folders[0]}"
            ) from None

    def diagnostic_file(self, name: str) -> sqlfiles.SqlFile | None:
        """``sql/diagnostics/<folder>/<name>.sql`` from the dialect's chain (a flavour's own, else
        its base's), if any."""
        return self.sql_file("diagnostics", name)

    def engine_file(self) -> sqlfiles.SqlFile:
        """The engine's own queries, ``sql/engine/<engine>.sql``."""
        return sqlfiles.load(f"engine/{self.engine}.sql")

    def engine_sql(self, section: str) -> str:
        """One of the engine's own queries, from ``sql/engine/<engine>.sql``."""
        return self.engine_file().statements(section)[0]

    def mark_sql(self, mark: str, undo: bool = False) -> str:
        """A savepoint named ``mark`` (a qadmin constant), or with ``undo`` the rollback to it."""
        section = "rollback_to_savepoint" if undo else "savepoint"
        return self.render_text(self.engine_sql(section), {"mark": mark})

    def catalog(self) -> sqlfiles.SqlFile:
        return sqlfiles.load(f"queues/{self.engine}/catalog.sql")

    def catalog_sql(self, section: str, obj: str | None = None) -> list[str]:
        """A section of the catalog file: ``{catalog}`` is the queue table, ``{objects}`` the
        table of the objects qadmin created for each queue, ``{object}`` one of those."""
        names = {"catalog": CATALOG_TABLE, "objects": "qadmin_objects"}
        if obj is not None:
            names["object"] = obj
        return [self.render_text(s, names) for s in self.catalog().statements(section)]

    def lock_timeout_statements(self, ms: int) -> list[str]:
        """What sets a session's lock wait limit to ``ms`` (integers only, never input)."""
        return []

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
    engine = "sqlite"
    has_routines = False
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
    engine = "postgresql"
    lock_skip = "SKIP LOCKED"
    # n_live_tup counts inserts and deletes as they commit (size checks that the counters
    # are not behind the id high-water mark), but an ANALYZE replaces it with its own count,
    # which rows deleted under an open snapshot inflate (14,000 for 7,000 measured): as
    # InnoDB's, taken to be up to half off.
    estimate_error = 0.5
    replace_routine = "CREATE OR REPLACE"
    # 2: pops pick rows in = ANY (ARRAY(sub-select)), run once (an IN sub-select could be
    # planned as a semi join re-running the locking pick for every row: every message taken).
    routines_revised = 2
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
        # the statement ends at its semicolon: the prose after it is not pasted with it
        return f"VACUUM (VERBOSE) {self.qualified(table)}; run it once the horizon moves"

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

    def lock_timeout_statements(self, ms: int) -> list[str]:
        return [f"SET lock_timeout = {int(ms)}"]

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
    routines_hidden = True
    title = "MySQL 8"
    engine = "mysql"
    lock_skip = "SKIP LOCKED"
    # InnoDB's TABLE_ROWS is sampled: "may vary from the actual value by as much as 40% to
    # 50%" (MySQL manual, information_schema TABLES).
    estimate_error = 0.5
    # The batch section is an anonymous block (BEGIN NOT ATOMIC), which only MariaDB has.
    batch_statements = False
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

    def server_keywords(self) -> dict[str, str]:
        # The isolation level's variable: MySQL 8 removed tx_isolation, MariaDB 10.11 has no
        # transaction_isolation (it came in 11.1); a routine naming the wrong one fails to parse.
        # The server's, not the templates' (dialect=mysql runs MySQL 8's on a MariaDB server).
        mariadb = self._server() == "mariadb"
        variable = "@@tx_isolation" if mariadb else "@@transaction_isolation"
        # MySQL 8 serves information_schema's AUTO_INCREMENT (the rings' ticket counters) from
        # a cache for a day by default: a routine an application calls must see it live.
        stats = "DO 0" if mariadb else "SET SESSION information_schema_stats_expiry = 0"
        return {"isolation_var": variable, "stats_fresh": stats}

    @staticmethod
    def session_statements(lock_ms: int, statement_ms: int, mariadb: bool) -> list[str]:
        """Isolation and the timeouts every qadmin session runs with, as the server (not the
        templates' dialect) spells them."""
        lock_s = max(1, round(lock_ms / 1000))
        statements = [
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            f"SET SESSION innodb_lock_wait_timeout = {lock_s}",
            f"SET SESSION lock_wait_timeout = {lock_s}",
        ]
        if mariadb:
            limit_s = statement_ms / 1000
            statements.append(f"SET SESSION max_statement_time = {limit_s}")
            # A client that vanishes mid-transaction (the network goes silent) would otherwise
            # keep its locks until wait_timeout (8 hours by default): as PostgreSQL's
            # idle_in_transaction_session_timeout, at least a minute.
            idle_s = max(round(statement_ms / 1000), 60)
            statements.append(f"SET SESSION idle_transaction_timeout = {idle_s}")
        else:
            # MySQL 8 limits SELECT statements only; DML is bounded by the lock timeout.
            statements.append(f"SET SESSION max_execution_time = {statement_ms}")
            statements.append("SET SESSION information_schema_stats_expiry = 0")
        return statements

    def lock_timeout_statements(self, ms: int) -> list[str]:
        """Both limits are whole seconds, at least 1: row locks (InnoDB) and metadata locks."""
        seconds = max(1, round(ms / 1000))
        return [
            f"SET SESSION innodb_lock_wait_timeout = {seconds}",
            f"SET SESSION lock_wait_timeout = {seconds}",
        ]


class MariadbDialect(MysqlDialect):
    title = "MariaDB"
    batch_statements = True
    replace_routine = "CREATE OR REPLACE"
    folders: ClassVar[tuple[str, ...]] = ("mariadb", "mysql")


class MssqlDialect(Dialect):
    routines_hidden = True
    title = "SQL Server"
    engine = "mssql"
    lock_skip = "READPAST,"
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

    def keywords(self, spec: QueueSpec) -> dict[str, str]:
        # The article's heap has no clustered index; the ordered kinds cluster on id.
        clustering = "CLUSTERED" if spec.info.order_by else "NONCLUSTERED"
        return {**super().keywords(spec), "clustering": clustering}

    def lock_timeout_statements(self, ms: int) -> list[str]:
        return [f"SET LOCK_TIMEOUT {int(ms)}"]

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
