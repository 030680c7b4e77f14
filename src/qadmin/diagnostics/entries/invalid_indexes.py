"""INVALID indexes (PostgreSQL): what a failed or cancelled CREATE INDEX CONCURRENTLY leaves
behind. Queries never use one, every write still maintains it, and it stays until dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.model import WARNING, Context, Finding, InspectReport, Result, Row
from qadmin.diagnostics.registry import Diagnostic, Field, Section
from qadmin.engines.base import Engine
from qadmin.engines.dialect import Dialect
from qadmin.errors import QadminError


@dataclass(frozen=True)
class InvalidIndex(Row):
    """A row of invalid_indexes.sql."""

    index_name: str = ""
    definition: str = ""
    index_bytes: int | None = None
    maintained: bool | None = None  # indisready: writes still maintain it
    is_unique: bool | None = None
    duplicates_query: str | None = None  # lists the keys more than one row holds (UNIQUE)
    duplicates_probe: str | None = None  # whether any does, reading a bounded number of rows
    # Set by collect for a UNIQUE index: True when rows share a key (creating it again fails),
    # False when none do, None when not known (more rows than the probe reads, or it failed).
    duplicate_keys: bool | None = None


@dataclass
class InvalidIndexes(Result):
    indexes: list[InvalidIndex] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def collect(ctx: Context) -> InvalidIndexes | None:
    if not sql.available(ctx.engine, "invalid_indexes"):
        return None
    part = sql.read(ctx.engine, "invalid_indexes", ctx.params)
    rows = [probed(ctx.engine, row) for row in part.typed(InvalidIndex)]
    return InvalidIndexes(rows, [part.note] if part.note else [])


def duplicate_keys(engine: Engine, row: dict[str, Any] | InvalidIndex) -> bool | None:
    """Whether rows of the table share a key of this INVALID UNIQUE index (so creating or
    rebuilding it fails again, leaving another INVALID index): the file's bounded probe, run
    read-only. None for an index that is not UNIQUE, or when not known: more rows than the
    probe reads and no duplicate among them, or the probe failed (a lock, a timeout)."""
    probe = row.get("duplicates_probe") if isinstance(row, dict) else row.duplicates_probe
    if not probe:
        return None
    try:
        found = (engine.query(str(probe)) or [{}])[0]
    except QadminError:
        return None
    if found.get("duplicated"):
        return True
    return False if found.get("complete") else None


def probed(engine: Engine, row: InvalidIndex) -> InvalidIndex:
    """The row with ``duplicate_keys`` read, for a UNIQUE index that is not a leftover copy."""
    if not row.is_unique or _LEFTOVER.search(row.index_name):
        return row
    return replace(row, duplicate_keys=duplicate_keys(engine, row))


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
    what = (
        f"index {row.index_name} is INVALID (a CREATE INDEX CONCURRENTLY failed or "
        "was cancelled): queries never use it, yet every write maintains it"
    )
    recreate = (
        f"DROP INDEX CONCURRENTLY {index}, then create it again: "
        f"{_concurrently(row.definition)}; or REINDEX INDEX CONCURRENTLY {index}"
    )
    if row.duplicate_keys:
        return Finding(
            WARNING,
            "invalid_index",
            f"{what}; rows share a key of this UNIQUE index, so creating it again fails the "
            "same way and leaves another INVALID index",
            f"list the keys rows share with {row.duplicates_query}; remove those rows, then "
            "inspect the queue again for the statements that recreate the index (if it need "
            f"not be unique: DROP INDEX CONCURRENTLY {index})",
        )
    if row.duplicates_query and row.duplicate_keys is None:
        return Finding(
            WARNING,
            "invalid_index",
            f"{what}; whether rows share a key of this UNIQUE index is not known (more rows "
            "than qadmin reads to check): if they do, creating it again fails the same way",
            f"list the keys rows share with {row.duplicates_query}; remove those rows first, "
            f"then: {recreate}",
        )
    return Finding(WARNING, "invalid_index", what, recreate)


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
