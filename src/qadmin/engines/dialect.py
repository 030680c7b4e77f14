"""An engine's dialect: what differs between engines beyond the connection, asked by the layers
above instead of comparing engine names (``tests/unit/test_engine_names.py`` holds them to it).

The connection (``engines.base.Engine``) connects, executes, runs transactions and translates
driver errors; the dialect says how this engine's data and plans are read and maintained. Both
are named in the engine registry (``qadmin.engine_table``). Plain classes with no driver import:
asking a dialect never loads a driver. A hook an engine lacks is ``None`` or ``False`` here, and
its caller says "not supported on <engine>": it never borrows another engine's.
"""

from __future__ import annotations

from typing import ClassVar

from qadmin.errors import UnsupportedError


class Dialect:
    """The hooks every engine answers; the defaults are "not here"."""

    # How findings and plans name the server (``MariaDB``, ``MySQL 8``, ``SQL Server``).
    title: ClassVar[str]
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

    def __init__(self, label: str) -> None:
        self.label = label

    def unsupported(self, what: str) -> UnsupportedError:
        """The one line a caller raises when this engine lacks a hook."""
        return UnsupportedError(f"{what} is not supported on {self.label}")


class SqliteDialect(Dialect):
    title = "SQLite"
    file = True
    untyped_times = True
    maintenance_planner = "file_vacuum"
    plan_format = "query_plan_rows"


class PostgresDialect(Dialect):
    title = "PostgreSQL"
    maintenance_planner = "vacuum"
    vacuum_truncates = True
    concurrent_reindex = True
    plan_format = "plan_tree_json"
    plan_measure = "cost"


class MysqlDialect(Dialect):
    title = "MySQL 8"
    maintenance_planner = "innodb_rebuild"
    plan_format = "query_block_json"
    plan_only_note = "MySQL 8: the optimizer's estimates (EXPLAIN FORMAT=JSON); not run"


class MariadbDialect(MysqlDialect):
    title = "MariaDB"


class MssqlDialect(Dialect):
    title = "SQL Server"
    maintenance_planner = "index_rebuild"
    # Its statements passed the T-SQL gate only: not verified live.
    maintenance_runs = False
