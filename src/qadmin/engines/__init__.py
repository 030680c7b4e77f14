"""Engines: ``open_engine`` builds the one a DSN names (the list is in ``registry``).

Nothing is imported here up front: reading a DSN or the engine table (``qadmin.engine_table``)
must not load ``base`` and the SQL machinery, so ``Engine`` and ``Timeouts`` load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qadmin.engines.base import Engine, Timeouts


def open_engine(dsn: str, schema: str | None = None, timeouts: Timeouts | None = None) -> Engine:
    """Build the engine for a DSN; the connection itself opens on first use."""
    from qadmin import dsn as dsn_mod
    from qadmin.engines import registry
    from qadmin.names import schema_option

    parsed = dsn_mod.parse(dsn)
    if schema is not None:
        # A quoted schema ('"Mixed-Sch"'), as a quoted NAME gives one: any existing name;
        # the engine quotes it wherever it is used.
        schema = schema_option(schema)
    return registry.engine_class(parsed.engine)(parsed, schema=schema, timeouts=timeouts)


def __getattr__(name: str) -> Any:
    if name in ("Engine", "Timeouts"):
        from qadmin.engines import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Engine", "Timeouts", "open_engine"]
