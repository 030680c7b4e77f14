"""Every engine qadmin speaks, in one place, as plain data: its name, the DSN schemes that pick
it, and where its connection and its dialect live (``module:Class``, imported on first use by
``engines.registry``). A leaf module: the DSN parser reads it, so it imports nothing of qadmin's
(importing an engine's module, and so its driver, is slow and happens only when a DSN picks it)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineEntry:
    # ``Dsn.engine`` and ``Engine.name``; also the templates' folder under sql/queues/.
    name: str
    # How the docs and messages name the servers it reaches.
    label: str
    # ``module:Class`` of the engine's connection (``engines.base.Engine``), imported on first use.
    code: str
    # URL schemes shown in messages, then further ones accepted too.
    schemes: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    # The DSN names a file (``sqlite:///path``), not a server: no host, user or password.
    file: bool = False
    # The scheme names the server's flavour (``mariadb://`` or ``mysql://``), kept on the Dsn.
    flavoured: bool = False
    # A raw ODBC string (``DRIVER={...};SERVER=...``) is a DSN for this engine.
    odbc: bool = False
    # Spark's JDBC driver: the jar under /usr/share/java, and the Debian package that has it.
    jdbc_jar: str | None = None
    jdbc_package: str | None = None
    # ``module:Class`` of the engine's dialect (``engines.dialect.Dialect``: its hooks).
    dialect: str = field(kw_only=True)


ENGINES = (
    EngineEntry(
        "sqlite",
        "SQLite",
        "qadmin.engines.sqlite:SqliteEngine",
        ("sqlite",),
        file=True,
        dialect="qadmin.engines.dialect:SqliteDialect",
    ),
    EngineEntry(
        "postgresql",
        "PostgreSQL",
        "qadmin.engines.postgres:PostgresEngine",
        ("postgresql",),
        aliases=("postgres",),
        jdbc_jar="postgresql.jar",
        jdbc_package="libpostgresql-jdbc-java",
        dialect="qadmin.engines.dialect:PostgresDialect",
    ),
    EngineEntry(
        "mysql",
        "MySQL 8 / MariaDB",
        "qadmin.engines.mysql:MysqlEngine",
        ("mysql", "mariadb"),
        flavoured=True,
        jdbc_jar="mariadb-java-client.jar",
        jdbc_package="libmariadb-java",
        dialect="qadmin.engines.dialect:MysqlDialect",
    ),
    EngineEntry(
        "mssql",
        "SQL Server",
        "qadmin.engines.mssql:MssqlEngine",
        ("mssql",),
        aliases=("sqlserver", "odbc"),
        odbc=True,
        dialect="qadmin.engines.dialect:MssqlDialect",
    ),
)
BY_NAME = {entry.name: entry for entry in ENGINES}
# Every accepted DSN scheme -> the engine it picks.
SCHEMES = {s: entry.name for entry in ENGINES for s in (*entry.schemes, *entry.aliases)}
NAMES = tuple(BY_NAME)


def shown_schemes() -> list[str]:
    """The schemes messages suggest, in registry order."""
    return [s for entry in ENGINES for s in entry.schemes]


def load(code: str) -> object:
    """The class a ``module:Class`` entry names, its module imported now."""
    module, _, name = code.partition(":")
    return getattr(importlib.import_module(module), name)
