"""Recognising a job-queue library's table from its shape: its name and its columns.

Read-only and cheap: it looks only at what ``read_shape`` read from the catalog. A user can
always override it (a declared profile, or ``--library none``).
"""

from __future__ import annotations

import dataclasses

from qadmin.profiles.libraries import SHAPES
from qadmin.profiles.model import LibraryShape, Profile
from qadmin.profiles.shape import TableShape


def named(table: str, names: tuple[str, ...]) -> bool:
    """Whether ``table`` is one of a library's table names: a name, or a prefix ending in
    ``*`` for a library that makes a table per named queue (persist-queue's ack_queue_NAME)."""
    table = table.lower()
    return any(
        table.startswith(n[:-1]) and len(table) > len(n) - 1 if n.endswith("*") else table == n
        for n in names
    )


def matches(shape: TableShape, library: LibraryShape, dialect: str, forced: bool = False) -> bool:
    """The table has the library's documented name (any name when the user named the
    library: a prefixed or renamed install) and all of its identifying columns."""
    return (
        dialect in library.dialects
        and (forced or named(shape.table, library.tables))
        and library.columns <= shape.names
    )


def detect(shape: TableShape, dialect: str, library: str | None = None) -> Profile | None:
    """The profile of the first library whose documented table this is (only ``library``'s
    when one is named), with its columns spelled as the catalog spells them."""
    for candidate in SHAPES:
        if library is not None and candidate.library != library:
            continue
        if matches(shape, candidate, dialect, forced=library is not None):
            profile = candidate.profile
            # A queue-name column some of the library's versions lack (Delayed::Job's queue):
            # the table then holds one queue.
            queue_column = profile.queue_column
            if queue_column is not None and shape.column(queue_column) is None:
                queue_column = None
            return dataclasses.replace(
                profile,
                name=shape.table,
                table=shape.table,
                schema=shape.schema,
                source="detected",
                queue_column=queue_column,
            )
    return None


def libraries() -> list[str]:
    """Every library qadmin recognises, for --library's choices and the docs."""
    return sorted({s.library for s in SHAPES})
