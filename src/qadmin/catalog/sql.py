"""Running one diagnostic SQL file, read-only, turning what the role may not read into a note.

A part the role may not read is switched off with a note naming the privilege (from the SQL
file's header), and the rest goes on: a missing privilege never reads as "nothing wrong". A
lock timeout is not turned into a note here: it propagates, so the part is reported blocked;
nor is a connection failure (a file that is not a database): it is the command's error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from qadmin.catalog.rows import Row
from qadmin.engines.base import Engine
from qadmin.errors import ConnectionFailed, LockTimeout, PermissionMissing, QadminError
from qadmin.kinds import QueueSpec
from qadmin.sqlfiles import header_fields

RowT = TypeVar("RowT", bound=Row)


@dataclass
class Rows:
    """One file's rows, or a note saying why they are missing."""

    name: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None

    @property
    def first(self) -> dict[str, Any]:
        return dict(self.rows[0]) if self.rows else {}

    def typed(self, row_type: type[RowT]) -> list[RowT]:
        """The rows as the file's typed row."""
        return [row_type.of(r) for r in self.rows]

    def first_typed(self, row_type: type[RowT]) -> RowT:
        """The first row typed; with no row, one with no columns (JSON: ``{}``)."""
        return row_type.of(self.rows[0]) if self.rows else row_type()


def read(engine: Engine, name: str, params: dict[str, Any] | None = None) -> Rows:
    file = engine.hooks.diagnostic_file(name)
    if file is None:
        return Rows(name, note=f"{name}: not available on {engine.dialect}")
    try:
        return Rows(name, engine.diagnostic(name, params))
    except PermissionMissing:
        privilege = header_fields(file.header).get("privilege", "a privilege qadmin lacks")
        return Rows(name, note=f"{name} unavailable: needs {privilege}")
    except (LockTimeout, ConnectionFailed):
        raise  # a lock is a blocked part; no database at all is no part of any version
    except QadminError as exc:
        version = header_fields(file.header).get("min version", "")
        return Rows(name, note=f"{name} unavailable ({version}): {exc}")


def available(engine: Engine, name: str) -> bool:
    return engine.hooks.diagnostic_file(name) is not None


def template_rows(
    engine: Engine, spec: QueueSpec, section: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """A section of the queue's own template (depth, claims, ring state), if it has one."""
    if not engine.hooks.template(spec).has(section):
        return []
    return engine.run(engine.hooks.section(spec, section), params, write=False)


def as_int(value: Any) -> int | None:
    return None if value is None else int(value)


def seconds(value: Any) -> float | None:
    return None if value is None else round(float(value), 3)


def duration(seconds: float) -> str:
    """A wait or an age as a person reads it."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
