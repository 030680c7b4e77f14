"""A first look at one queue: what it is and how much it holds.

This is the minimal inspect the foundation ships; the diagnostics issue extends it with
counters, ghosts, locks and findings from ``sql/diagnostics``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qadmin.engines.base import Engine
from qadmin.kinds import QueueSpec
from qadmin.ops.values import iso, to_utc


def summary(engine: Engine, spec: QueueSpec) -> dict[str, Any]:
    row = engine.run(engine.section(spec, "depth"), write=False)[0]
    oldest = to_utc(row.get("oldest_enqueued_at"))
    age = (datetime.now(UTC) - oldest).total_seconds() if oldest else None
    return {
        "queue": spec.name,
        "schema": engine.schema,
        "engine": engine.name,
        "server_version": engine.server_version(),
        "kind": spec.kind.value,
        "capacity": spec.capacity,
        "strict": spec.strict,
        "depth": int(row["depth"]),
        "oldest_enqueued_at": iso(oldest),
        "oldest_age_s": round(age, 3) if age is not None else None,
        "created_at": spec.created_at,
    }
