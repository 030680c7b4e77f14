"""What the catalog says about a table: its columns (with a type family) and its indexes.

Read once per command from catalog views only (no lock on the table, no scan), and used to
recognise a job-queue library's table, to check a declared profile's columns, and to tell
whether an index fits a query before running it.
"""

from __future__ import annotations

from dataclasses import dataclass

from qadmin.catalog import sql
from qadmin.engines.base import Engine

# Type families (columns.sql): what a column can be used for.
TIME_FAMILIES = ("timestamp",)
ORDER_FAMILIES = ("integer", "timestamp")


@dataclass(frozen=True)
class Column:
    name: str
    data_type: str  # as the server spells it (``timestamp with time zone``, ``bigint(20)``)
    family: str  # timestamp, date, integer, number, text, uuid, boolean, enum, json, other
    nullable: bool
    default: str | None
    labels: tuple[str, ...] = ()  # a PostgreSQL enum's labels: the only values it can hold


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str, ...]  # key columns in order (an expression key is left out)
    unique: bool
    primary: bool
    partial: bool  # has a WHERE clause: fits only queries that imply it
    valid: bool

    def leads_with(self, *columns: str) -> bool:
        """Whether the index's first keys are these columns, in this order."""
        return self.valid and self.columns[: len(columns)] == columns


@dataclass(frozen=True)
class TableShape:
    schema: str
    table: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...]
    # The engine has no timestamp type (its dialect's ``untyped_times``): times are text or numbers.
    untyped_times: bool = False

    def column(self, name: str) -> Column | None:
        """The column as the catalog spells it: an exact match first, else the one column
        whose name matches ignoring case (a user typing ``Status`` for ``status``)."""
        exact = [c for c in self.columns if c.name == name]
        if exact:
            return exact[0]
        folded = [c for c in self.columns if c.name.lower() == name.lower()]
        return folded[0] if len(folded) == 1 else None

    @property
    def names(self) -> frozenset[str]:
        """Column names, lower-cased, for matching a library's documented shape."""
        return frozenset(c.name.lower() for c in self.columns)

    def primary_key(self) -> tuple[str, ...]:
        for index in self.indexes:
            if index.primary:
                return index.columns
        return ()

    def index_leading(self, *columns: str) -> Index | None:
        """A non-partial, valid index whose first keys are ``columns`` (None: a query on
        them would scan)."""
        for index in self.indexes:
            if not index.partial and index.leads_with(*columns):
                return index
        return None


def _flag(value: object) -> bool:
    return bool(int(value)) if isinstance(value, int | str) else bool(value)


def read_shape(engine: Engine, table: str, schema: str | None = None) -> TableShape | None:
    """The table's shape, or None when the catalog shows no such table to this role."""
    params = {"schema": schema or engine.schema, "table": table}
    cols = sql.read(engine, "columns", params).rows
    if not cols:
        return None
    idx = sql.read(engine, "indexes", params).rows
    return TableShape(
        schema=params["schema"],
        table=table,
        columns=tuple(
            Column(
                name=str(r["column_name"]),
                data_type=str(r["data_type"]),
                family=str(r["type_family"]),
                nullable=_flag(r["nullable"]),
                default=None if r["column_default"] is None else str(r["column_default"]),
                labels=tuple(str(v) for v in r.get("enum_labels") or ()),
            )
            for r in cols
        ),
        indexes=tuple(
            Index(
                name=str(r["index_name"]),
                columns=tuple(c for c in str(r["key_columns"] or "").split(",") if c),
                unique=_flag(r["is_unique"]),
                primary=_flag(r["is_primary"]),
                partial=_flag(r["partial"]),
                valid=_flag(r["valid"]),
            )
            for r in idx
        ),
        untyped_times=engine.hooks.untyped_times,
    )
