"""INVALID indexes (PostgreSQL): what a failed or cancelled CREATE INDEX CONCURRENTLY leaves
behind. Queries never use one, every write still maintains it, and it stays until dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from qadmin.catalog import sql
from qadmin.diagnostics.model import WARNING, Context, Finding, InspectReport, Result, Row
from qadmin.diagnostics.registry import Diagnostic, Field, Section
from qadmin.engines.dialect import Dialect


@dataclass(frozen=True)
class InvalidIndex(Row):
    """A row of invalid_indexes.sql."""

    index_name: str = ""
    definition: str = ""
    index_bytes: int | None = None
    maintained: bool | None = None  # indisready: writes still maintain it


@dataclass
class InvalidIndexes(Result):
    indexes: list[InvalidIndex] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def collect(ctx: Context) -> InvalidIndexes | None:
    if not sql.available(ctx.engine, "invalid_indexes"):
        return None
    part = sql.read(ctx.engine, "invalid_indexes", ctx.params)
    return InvalidIndexes(part.typed(InvalidIndex), [part.note] if part.note else [])


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None:
        return []
    return [finding(row, report.advice.base_hooks) for row in part.indexes]


# What an interrupted REINDEX CONCURRENTLY leaves: the new copy (_ccnew) or the old one (_ccold).
_LEFTOVER = re.compile(r"_cc(new|old)[0-9]*$")


def finding(row: InvalidIndex, advice: Dialect) -> Finding:
    """One INVALID index and its fix (inspect's rule; explain reports the same)."""
    index = advice.qualified(row.index_name)
    leftover = _LEFTOVER.search(row.index_name)
    if leftover:
        return Finding(
            WARNING,
            "invalid_index",
            f"index {row.index_name} is the INVALID {leftover.group(1)} copy an interrupted "
            "REINDEX CONCURRENTLY left: queries never use it, yet every write maintains it",
            f"DROP INDEX CONCURRENTLY {index}"
            + (", then run the REINDEX CONCURRENTLY again" if leftover.group(1) == "new" else ""),
        )
    return Finding(
        WARNING,
        "invalid_index",
        f"index {row.index_name} is INVALID (a CREATE INDEX CONCURRENTLY failed or "
        "was cancelled): queries never use it, yet every write maintains it",
        f"DROP INDEX CONCURRENTLY {index}, then create it again: "
        f"{_concurrently(row.definition)}; or REINDEX INDEX CONCURRENTLY {index}",
    )


def _concurrently(definition: str) -> str:
    """pg_get_indexdef's ``CREATE [UNIQUE] INDEX name ON ...`` as the statement to type:
    ``CREATE [UNIQUE] INDEX CONCURRENTLY name ON ...``."""
    return re.sub(r"^(CREATE (?:UNIQUE )?INDEX) ", r"\1 CONCURRENTLY ", definition, count=1)


ENTRY: Diagnostic[InvalidIndexes] = Diagnostic(
    name="invalid_indexes",
    order=75,
    sql=("invalid_indexes",),
    rows=(("invalid_indexes", InvalidIndex),),
    collect=collect,
    rule=rule,
    lock_free=True,
    fields=(
        Field(
            "invalid_indexes",
            "indexes",
            "INVALID indexes on the queue table, left by a failed CREATE INDEX CONCURRENTLY "
            "(PostgreSQL)",
            "int32",
            lambda r: len(p.indexes) if (p := r.part(ENTRY)) else None,
        ),
    ),
    sections=(
        Section(
            "invalid indexes",
            "invalid_indexes.indexes",
            ("index_name", "index_bytes", "definition"),
        ),
    ),
)
