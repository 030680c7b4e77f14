"""Typed SQL rows: the base every diagnostic file's row type derives from (its fields the
file's columns on every engine), below the diagnostics that read them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any, Self

# A figure as the drivers give it: PyMySQL a Decimal for a division, the others a float or int.
Number = int | float | Decimal


@dataclass(frozen=True)
class Row:
    """Base of a typed SQL row. Its fields are every column the file's SELECT gives on any
    engine (``tests/unit/test_typed_rows.py`` holds them to the files' aliases), a column an
    engine's SELECT lacks reads None; ``columns`` keeps the ones this engine's gave, in their
    order, so JSON and tables show exactly the keys they always did."""

    columns: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Self:
        """A driver's row as this type; a column with no field is a bug the test catches."""
        try:  # push --lines makes 100,000 of these: the constructor itself refuses a stranger
            return cls(**row, columns=tuple(row))
        except TypeError as exc:
            unknown = sorted(set(row) - _columns_of(cls))
            if unknown:
                raise TypeError(f"{cls.__name__} has no field for columns {unknown}") from exc
            raise

    def has(self, column: str) -> bool:
        """Whether this engine's SELECT gives the column (not whether it is NULL)."""
        return column in self.columns

    def as_dict(self) -> dict[str, Any]:
        """The row as the driver gave it (the edge: JSON, CSV, tables)."""
        return {c: getattr(self, c) for c in self.columns}


def _columns_of(cls: type[Row]) -> frozenset[str]:
    """The columns a row type takes: its fields but ``columns``."""
    return frozenset(f.name for f in fields(cls)) - {"columns"}
