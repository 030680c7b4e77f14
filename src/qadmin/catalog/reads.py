"""Reads of a queue's own tables that inspect and the operations share: a claim queue's dead
table's depth, and a watermark's state. Below diagnostics and ops, which both call them, so
neither has to import the other."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from qadmin.engines.base import Engine
from qadmin.errors import WrongKind
from qadmin.kinds import QueueSpec, kinds_with, said
from qadmin.values import iso

# Counting stops here (inspect's other counts are bounded the same way).
COUNT_LIMIT = 10_000


@dataclass(frozen=True)
class DeadDepth:
    """How many messages the dead table holds (exact below ``COUNT_LIMIT``) and how long the
    one that died first has been there."""

    count: int
    exact: bool
    oldest_s: float | None


def dead_depth(engine: Engine, spec: QueueSpec) -> DeadDepth:
    """The dead table's depth (bounded count) and its oldest death's age: two index reads."""
    rows = engine.run(engine.hooks.section(spec, "dead_depth"), {"limit": COUNT_LIMIT}, write=False)
    count = int(rows[0]["dead"] or 0)
    oldest = rows[0]["oldest_dead_s"]
    return DeadDepth(
        count=count,
        exact=count < COUNT_LIMIT,
        oldest_s=None if oldest is None else round(float(oldest), 3),
    )


@dataclass(frozen=True)
class WatermarkState:
    """Where a queue's watermark is, how far behind the head, and what it strands."""

    queue: str
    watermark: int
    head_id: int | None
    lag_ids: int | None
    candidate: int | None  # the id the last advance may move to once its producers end
    candidate_age_s: float | None
    advanced_at: str | None
    # why the last try did not move it (MySQL / MariaDB queues made since it is recorded)
    held_by: str | None
    stranded: int
    stranded_min_id: int | None
    oldest_stranded_s: float | None
    state: str  # "stranded" or "ok"

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def require_watermark(spec: QueueSpec) -> None:
    if not spec.watermark:
        kinds = said(kinds_with("allows_watermark"), "or")
        raise WrongKind(
            f"queue {spec.name} has no watermark (create a {kinds} queue with --watermark)"
        )


def watermark(engine: Engine, spec: QueueSpec) -> WatermarkState:
    """Value, head, lag and rows stranded below the watermark (read-only, index seeks)."""
    require_watermark(spec)
    row = engine.run(engine.hooks.section(spec, "wm_show"), write=False)[0]
    wm, head = int(row["wm"]), int_or_none(row["head_id"])
    stranded = int(row["stranded"] or 0)
    return WatermarkState(
        queue=spec.name,
        watermark=wm,
        head_id=head,
        lag_ids=None if head is None else head - wm,
        candidate=int_or_none(row["candidate"]),
        candidate_age_s=seconds_or_none(row["candidate_age_s"]),
        advanced_at=iso(row["advanced_at"]),
        held_by=row.get("held_by") if row["candidate"] is not None else None,
        stranded=stranded,
        stranded_min_id=int_or_none(row["stranded_min_id"]),
        oldest_stranded_s=seconds_or_none(row["oldest_stranded_s"]),
        state="stranded" if stranded else "ok",
    )


def int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def seconds_or_none(value: Any) -> float | None:
    return None if value is None else round(float(value), 3)
