"""The engine registry: the plain table (``qadmin.engine_table``: names, labels, DSN schemes) and,
for each engine, its two halves named there: the connection (``engines.base.Engine``: connect,
execute, transactions, error translation) and the dialect (``engines.dialect.Dialect``: what the
layers above ask instead of comparing engine names). The DSN parser, ``open_engine``, Spark's
driver jars and the messages that list engines all read this table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qadmin.engine_table import BY_NAME, ENGINES, NAMES, SCHEMES, EngineEntry, load, shown_schemes

if TYPE_CHECKING:
    from qadmin.engines.base import Engine
    from qadmin.engines.dialect import Dialect

__all__ = [
    "BY_NAME",
    "ENGINES",
    "NAMES",
    "SCHEMES",
    "EngineEntry",
    "dialect_class",
    "engine_class",
    "shown_schemes",
]


def engine_class(name: str) -> type[Engine]:
    """The engine class for an engine name, its module imported now."""
    found: type[Engine] = load(BY_NAME[name].code)  # type: ignore[assignment]
    return found


def dialect_class(name: str) -> type[Dialect]:
    """The dialect class for an engine name (no driver is imported for it)."""
    found: type[Dialect] = load(BY_NAME[name].dialect)  # type: ignore[assignment]
    return found
