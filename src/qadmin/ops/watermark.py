"""Showing, advancing and repairing the watermark of a fifo or claim queue (article 004).

The dequeue of a queue created with ``--watermark`` range-scans from the watermark. It is moved
forward by the dequeue itself, in two phases (see ``sql/queues/<dialect>/watermark.sql``), so
that an id handed out before commit is never passed while its producer is still open. Here a
DBA looks at it, moves it by hand, and repairs it: a watermark above live rows strands them
(lowered, so they are served again), one far below the head makes dequeues walk dead rows
(raised, only as far as the same two-phase rule allows).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from qadmin.catalog.reads import WatermarkState as WatermarkState
from qadmin.catalog.reads import require_watermark as _watermarked
from qadmin.catalog.reads import watermark
from qadmin.engines.base import Engine
from qadmin.errors import PermissionMissing
from qadmin.kinds import QueueSpec

# How long advance and repair keep moving a watermark before they report where it got to:
# the two-phase rule waits for open producers, and a producer may stay open for long.
SETTLE_S = 10.0
_POLL_S = 0.25


@dataclass(frozen=True)
class WatermarkPlan:
    """What repair would do now: the state, and lower / raise / none to ``goal``."""

    state: WatermarkState
    action: str
    goal: int | None

    def to_json_dict(self) -> dict[str, Any]:
        return {**self.state.to_json_dict(), "action": self.action, "goal": self.goal}


@dataclass(frozen=True)
class WatermarkMove:
    """Where an advance or repair moved the watermark, and whether it reached its goal."""

    queue: str
    action: str
    moved_from: int
    to: int
    goal: int | None
    reached: bool

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "action": self.action,
            "from": self.moved_from,
            "to": self.to,
            "goal": self.goal,
            "reached": self.reached,
        }


# Showing it is read by inspect too: it lives below both (``catalog.reads``).
show = watermark


def unmovable(engine: Engine, spec: QueueSpec) -> str | None:
    """Why the dequeues of a queue just created can never move its watermark, if they cannot:
    on MySQL / MariaDB the routine reads INNODB_TRX with its definer's (this account's) rights."""
    if not spec.watermark or not engine.hooks.template(spec).has("wm_readable"):
        return None
    try:
        engine.run(engine.hooks.section(spec, "wm_readable"), write=False)
    except PermissionMissing:
        return (
            f"the watermark of {spec.name} will never move (safe, but its dequeues will walk "
            "every dead row): the account that created it needs PROCESS to read "
            "information_schema.INNODB_TRX (GRANT PROCESS ON *.* TO it)"
        )
    return None


def advance(engine: Engine, spec: QueueSpec, to: int | None = None) -> WatermarkMove:
    """Move the watermark forward, never past a row that is live or may still commit.

    Runs the dequeue's own advance until the watermark reaches the head (or ``to``), or
    ``SETTLE_S`` passes because a producer is still open; reports where it got to.
    """
    _watermarked(spec)
    before = show(engine, spec)
    goal = before.head_id if to is None else min(to, before.head_id or to)
    statements = engine.hooks.section(spec, "wm_advance")
    deadline = time.monotonic() + SETTLE_S
    while True:
        engine.run(statements, {"to": to})
        now = show(engine, spec)
        if before.head_id is None:
            # nothing waited: the goal is a row pushed since, else the next id, the candidate
            # a run recorded (none yet while another session holds the row: not reached)
            nxt = now.candidate if now.head_id is None else now.head_id
            goal = None if nxt is None else nxt if to is None else min(to, nxt)
        reached = goal is not None and now.watermark >= goal
        if reached or time.monotonic() > deadline:
            break
        time.sleep(_POLL_S)
    return WatermarkMove(spec.name, "advance", before.watermark, now.watermark, goal, reached)


def plan(engine: Engine, spec: QueueSpec) -> WatermarkPlan:
    """What repair would do now, from one read-only look."""
    state = show(engine, spec)
    goal: int | None
    if state.stranded:
        action, goal = "lower", state.stranded_min_id
    elif state.lag_ids:
        action, goal = "raise", state.head_id
    else:
        action, goal = "none", state.watermark
    return WatermarkPlan(state, action, goal)


def repair(engine: Engine, spec: QueueSpec) -> WatermarkMove:
    """Lower the watermark to the lowest stranded row, else raise it towards the head.

    Lowering happens with the watermark row locked, so it cannot race an advance; concurrent
    dequeues that read the old value only miss the stranded rows until their next call.
    """
    _watermarked(spec)
    with engine.transaction() as execute:
        locked = execute(engine.hooks.section(spec, "wm_lock")[0])
        wm = int(locked[0]["wm"])
        rows = execute(engine.hooks.section(spec, "wm_stranded")[0], {"wm": wm})
        lowest = rows[0]["stranded_min_id"] if rows else None
        if lowest is not None:
            for statement in engine.hooks.section(spec, "wm_set"):  # the value and any copy of it
                execute(statement, {"wm": int(lowest)})
    if lowest is not None:
        return WatermarkMove(spec.name, "lower", wm, int(lowest), int(lowest), True)
    return replace(advance(engine, spec), action="raise")
