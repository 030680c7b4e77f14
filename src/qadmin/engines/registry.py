"""Every engine qadmin speaks, in one place: its name, the DSN schemes that pick it, and where
its code lives. The DSN parser, ``open_engine``, Spark's driver jars and the messages that list
engines all read this table. Plain data: an engine's module (and so its driver, which is slow
to import) is imported only when a DSN picks it."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qadmin.engines.base import Engine


@dataclass(frozen=True)
class EngineEntry:
    # ``Dsn.engine`` and ``Engine.name``; also the templates' folder under sql/queues/.
    name: str
    # How the docs and messages name the servers it reaches.
    label: str
    # ``module:Class`` of the engine, imported on first use.
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


ENGINES = (
    EngineEntry("sqlite", "SQLite", "qadmin.engines.sqlite:SqliteEngine", ("sqlite",), file=True),
    EngineEntry(
        "postgresql",
        "PostgreSQL",
        "qadmin.engines.postgres:PostgresEngine",
        ("postgresql",),
        aliases=("postgres",),
        jdbc_jar="postgresql.jar",
        jdbc_package="libpostgresql-jdbc-java",
    ),
    EngineEntry(
        "mysql",
        "MySQL 8 / MariaDB",
        "qadmin.engines.mysql:MysqlEngine",
        ("mysql", "mariadb"),
        flavoured=True,
        jdbc_jar="mariadb-java-client.jar",
        jdbc_package="libmariadb-java",
    ),
    EngineEntry(
        "mssql",
        "SQL Server",
        "qadmin.engines.mssql:MssqlEngine",
        ("mssql",),
        aliases=("sqlserver", "odbc"),
        odbc=True,
    ),
)
BY_NAME = {entry.name: entry for entry in ENGINES}
# Every accepted DSN scheme -> the engine it picks.
SCHEMES = {s: entry.name for entry in ENGINES for s in (*entry.schemes, *entry.aliases)}
NAMES = tuple(BY_NAME)


def shown_schemes() -> list[str]:
    """The schemes messages suggest, in registry order."""
    return [s for entry in ENGINES for s in entry.schemes]


def engine_class(name: str) -> type[Engine]:
    """The engine class for an engine name, its module imported now."""
    module, _, cls = BY_NAME[name].code.partition(":")
    found: type[Engine] = getattr(importlib.import_module(module), cls)
    return found
