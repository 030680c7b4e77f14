"""Each engine's dialect, as the engine registry names it: loading one imports no driver, its
hooks name only planners and parsers that exist, and a hook an engine lacks says "not supported
on <engine>" instead of borrowing another engine's (a new engine's SQLite-file stand-in here: a
real SQLite database whose dialect leaves the hook out)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from qadmin.diagnostics import run
from qadmin.diagnostics.entries import plan
from qadmin.diagnostics.model import Options
from qadmin.engines import open_engine, registry
from qadmin.engines.dialect import Dialect, MariadbDialect, MysqlDialect, SqliteDialect
from qadmin.engines.sqlite import SqliteEngine
from qadmin.errors import UnsupportedError
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops import maintain, queues
from qadmin.profiles.resolve import resolve


def test_every_engine_names_a_dialect_whose_hooks_exist():
    for name in registry.NAMES:
        dialect = registry.dialect_class(name)
        assert issubclass(dialect, Dialect) and dialect.folders[-1] == name
        assert dialect.maintenance_planner in (None, *maintain.PLANNERS), name
        assert dialect.plan_format in (None, *plan._PARSERS), name
        assert dialect.plan_measure in ("cost", "rows examined"), name


def test_a_dialect_renders_a_queue_s_sql_with_no_connection():
    """Names and a spec in, SQL text out: the engine's own SQL and the catalog's too."""
    for name in registry.NAMES:
        dialect = registry.dialect_class(name)(name, lambda: "app")
        spec = QueueSpec("q", Kind.FIFO)
        assert dialect.section(spec, "push") and dialect.catalog_sql("get")
        assert dialect.engine_sql("server_version")
        assert dialect.keywords(spec)["skip_locked"] == dialect.lock_skip
        strict = QueueSpec("q", Kind.FIFO, strict=True)
        assert dialect.keywords(strict)["skip_locked"] == ""


def test_mysql_s_server_gates_read_the_server_the_connection_found():
    """dialect=mysql runs MySQL 8's templates on a MariaDB server: the isolation variable is
    still the server's (MariaDB 10.11 has no @@transaction_isolation)."""
    on_mariadb = MysqlDialect("mysql", lambda: "app", lambda: "mariadb")
    assert on_mariadb.server_keywords()["isolation_var"] == "@@tx_isolation"
    on_mysql = MariadbDialect("mysql", lambda: "app", lambda: "mysql")
    assert on_mysql.server_keywords()["isolation_var"] == "@@transaction_isolation"
    mariadb = MysqlDialect.session_statements(5_000, 30_000, mariadb=True)
    assert "SET SESSION max_statement_time = 30.0" in mariadb
    assert "SET SESSION max_execution_time = 30000" in MysqlDialect.session_statements(
        5_000, 30_000, mariadb=False
    )


def test_loading_every_dialect_imports_no_driver():
    code = (
        "import sys; from qadmin.engines import registry;"
        "[registry.dialect_class(n) for n in registry.NAMES];"
        "print(sorted(m for m in ('psycopg', 'pymysql', 'pyodbc') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class _Bare(SqliteDialect):
    """SQLite's dialect with no maintenance planner and no plan parser, as a new engine's."""

    maintenance_planner = None
    plan_format = None


class _BareEngine(SqliteEngine):
    def dialect_class(self) -> type[Dialect]:
        return _Bare


def _engine(tmp_path) -> SqliteEngine:
    parsed = open_engine(f"sqlite:///{tmp_path / 'q.db'}").dsn
    return _BareEngine(parsed)


def test_a_missing_maintenance_planner_is_not_supported_never_borrowed(tmp_path):
    engine = _engine(tmp_path)
    queues.create(engine, queues.make_spec("bare_q", "fifo", None, False))
    with pytest.raises(UnsupportedError, match=r"^maintain is not supported on sqlite$"):
        maintain.plan(engine, "bare_q", "bare_q")
    engine.close()


def test_a_missing_plan_parser_is_a_note_never_another_engines_parser(tmp_path):
    engine = _engine(tmp_path)
    queues.create(engine, queues.make_spec("bare_q", "claim", None, False))
    ctx = run.context(engine, resolve(engine, "bare_q", {}, {}), Options())
    result = plan.explain(ctx)
    assert "explain: reading the plan is not supported on sqlite" in result.notes
    assert result.access is None and result.plan is None
    engine.close()
