"""``export``: a read-only, consistent snapshot of a queue's messages, written to a file.

The Python path reads keyset pages (``id > last id``) inside one snapshot transaction, so the
file is the queue as it was at one instant, in queue-id order, with memory bounded by a page.
Filters are values bound into fixed SQL (age, claim state), never SQL from the user.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from qadmin.engines.base import Engine
from qadmin.errors import UsageError
from qadmin.kinds import QueueSpec
from qadmin.pipeline import formats

PAGE_ROWS = 5_000
CLAIM_STATES = ("ready", "claimed", "failed")
# No age filter: a bound later than any enqueue time every engine can store.
_NO_AGE_LIMIT = datetime(9999, 1, 1, tzinfo=UTC)

Progress = Callable[[int, int], None] | None


@dataclass(frozen=True)
class Selection:
    """Which messages: older than ``older_than_s`` (all if None), claim queues by state."""

    older_than_s: int | None = None
    states: tuple[str, ...] = CLAIM_STATES

    def check(self, spec: QueueSpec) -> None:
        if tuple(self.states) != CLAIM_STATES:
            spec.require("claims", "--state")
        unknown = set(self.states) - set(CLAIM_STATES)
        if unknown or not self.states:
            raise UsageError(f"--state takes {', '.join(CLAIM_STATES)}")

    def before(self) -> datetime:
        if self.older_than_s is None:
            return _NO_AGE_LIMIT
        return datetime.now(UTC) - timedelta(seconds=self.older_than_s)

    def params(self, engine: Engine) -> dict[str, Any]:
        return {
            "before": engine.adapt_time(self.before()),
            "ready": "ready" in self.states,
            "claimed": "claimed" in self.states,
            "failed": "failed" in self.states,
        }


@dataclass
class Exported:
    path: Path | None
    format: str
    rows: int = 0
    first_id: int | None = None
    last_id: int | None = None
    ids: array[int] = field(default_factory=lambda: array("q"))

    def summary(self) -> dict[str, Any]:
        return {
            "file": str(self.path) if self.path else None,
            "format": self.format,
            "rows": self.rows,
            "first_id": self.first_id,
            "last_id": self.last_id,
        }


def export(
    engine: Engine,
    spec: QueueSpec,
    path: Path,
    fmt: str,
    selection: Selection,
    progress: Progress = None,
    *,
    keep_empty: bool = True,
) -> Exported:
    """Write the selected messages to ``path``; with ``keep_empty`` False, no rows, no file."""
    selection.check(spec)
    statements = engine.hooks.kind_data_section(spec, "export")
    writer = formats.Writer(path, fmt, formats.columns(spec.info), spec.name, spec.kind.value)
    result = Exported(path=None, format=fmt)
    params = selection.params(engine)
    params["limit"] = PAGE_ROWS
    try:
        with engine.transaction(write=False, snapshot=True) as execute:
            after = -1
            while True:
                params["after"] = after
                page = [row for s in statements for row in execute(s, params)]
                if not page:
                    break
                writer.write(page)
                for row in page:
                    result.ids.append(int(row["id"]))
                result.rows += len(page)
                after = int(page[-1]["id"])
                if result.first_id is None:
                    result.first_id = int(page[0]["id"])
                result.last_id = after
                if progress:
                    progress(result.rows, 0)
        if result.rows == 0 and not keep_empty:
            writer.abort()
            return result
        result.path = writer.commit()
    except BaseException:
        writer.abort()
        raise
    return result
