"""Engine registry: the DSN's scheme picks a module, imported only when it is used."""

from __future__ import annotations

import importlib

from qadmin import dsn as dsn_mod
from qadmin.engines.base import Engine, Timeouts
from qadmin.names import validate_schema_name

_MODULES = {
    "sqlite": ("qadmin.engines.sqlite", "SqliteEngine"),
    "postgresql": ("qadmin.engines.postgres", "PostgresEngine"),
    "mysql": ("qadmin.engines.mysql", "MysqlEngine"),
    "mssql": ("qadmin.engines.mssql", "MssqlEngine"),
}


def open_engine(dsn: str, schema: str | None = None, timeouts: Timeouts | None = None) -> Engine:
    """Build the engine for a DSN; the connection itself opens on first use."""
    parsed = dsn_mod.parse(dsn)
    if schema is not None:
        validate_schema_name(schema)
    module_name, class_name = _MODULES[parsed.engine]
    cls: type[Engine] = getattr(importlib.import_module(module_name), class_name)
    return cls(parsed, schema=schema, timeouts=timeouts)


__all__ = ["Engine", "Timeouts", "open_engine"]
