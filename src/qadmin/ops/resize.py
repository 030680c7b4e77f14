"""Growing or shrinking a ring or a capped queue while producers and consumers keep running.

The capacity lives in the queue's control row, and every push and pop reads it under a share
lock (the "capacity gate", see ``sql/queues/<dialect>/ring.sql``). Resize takes that gate
exclusively in one transaction: calls in flight finish first, new calls wait, and the messages
move to their new slots before anyone runs again. Message ids, order, both sequences and parked
numbers are untouched, so nothing is lost or duplicated; a killed resize rolls back whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from qadmin.diagnostics.entries import locks
from qadmin.engines.base import Engine, Execute
from qadmin.errors import Deadlock, LockTimeout, StatementTimeout, UnsupportedError, UsageError
from qadmin.kinds import MAX_CAPACITY, QueueSpec

DEADLOCK_RETRIES = 5  # as pop and push: a busy queue's victim runs again, a few times

# Slot rows added per statement (a progress step): large, since each statement is a round trip
# and a commit-free INSERT of 100,000 rows is well under a second; the MySQL statement builds
# them without a recursion deeper than 1,000 (MySQL 8's cte_max_recursion_depth).
CHUNK = 100_000

GATE = (
    "take the capacity gate exclusively (PostgreSQL: ACCESS EXCLUSIVE on {ctl.bare}; "
    "MySQL/MariaDB: X lock on the {ctl.bare} row; SQLite: the write lock): pushes and pops in "
    "flight finish, new ones wait until commit"
)
# What resize does, by the template of a resizable kind (KindSpec.resizable).
STEPS = {
    "ring": [
        GATE,
        "count the messages; refuse if they do not fit the new capacity",
        "move every message from its slot to the overflow table (SQLite: a temporary table)",
        f"cut slot rows at or above the new capacity, or add the missing ones in chunks of {CHUNK}",
        "move each message back to slot id % new capacity (a collision stays in the overflow "
        "table, where pop finds it by id); record the capacity in the queue and the catalog; "
        "commit",
    ],
    "capped": [
        GATE,
        "count the messages and the span of their ids; refuse if either exceeds the new "
        "capacity (no message is ever overwritten by a resize)",
        "move every message to slot id % new capacity (through negative slots, so no two rows "
        "ever share one); record the capacity in the queue and the catalog; commit",
    ],
}

Progress = Callable[[int, int], None]


def _check(engine: Engine, spec: QueueSpec, capacity: int) -> None:
    spec.require("resizable", "resize")
    if not 1 <= capacity <= MAX_CAPACITY:
        raise UsageError(f"--capacity must be between 1 and {MAX_CAPACITY:,}")
    if not engine.hooks.template(spec).has("resize"):
        raise UnsupportedError(
            f"resize is not available for {spec.kind} queues on {engine.dialect}"
        )


def _needed(state: dict[str, Any]) -> tuple[int, int]:
    """Messages held, and the slots they need: a capped queue's messages sit at id % capacity,
    so the span of their ids counts, not just how many there are."""
    messages = int(state["messages"])
    return messages, max(messages, int(state.get("span") or 0))


def _refuse(spec: QueueSpec, messages: int, needed: int, capacity: int) -> None:
    if messages > capacity:
        raise UsageError(
            f"refusing to resize {spec.name} to {capacity:,}: it holds {messages:,} messages "
            "(pop some first, or choose a capacity at least that large)"
        )
    if needed > capacity:
        raise UsageError(
            f"refusing to resize {spec.name} to {capacity:,}: the ids it holds span {needed:,} "
            "slots (pop the oldest first, or choose a capacity at least that large)"
        )


@dataclass(frozen=True)
class Resized:
    """A resize done: the capacity before and after, and the messages the ring held."""

    queue: str
    from_capacity: int
    to_capacity: int
    messages: int

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ResizePlan(Resized):
    """What resize would do (--dry-run): whether the messages fit, its steps and SQL."""

    fits: bool
    steps: list[str]
    statements: list[str]


def plan(engine: Engine, spec: QueueSpec, capacity: int) -> ResizePlan:
    """What resize would do, from one read-only look (--dry-run)."""
    _check(engine, spec, capacity)
    state = engine.run(engine.hooks.section(spec, "resize_state"), write=False)[0]
    (messages, needed), current = _needed(state), int(state["capacity"])
    template = engine.hooks.template(spec)
    sections = ("resize_lock", "resize", "resize_grow", "resize_place")
    statements = [
        *(s for name in sections if template.has(name) for s in engine.hooks.section(spec, name)),
        *engine.hooks.catalog_sql("set_capacity"),
    ]
    return ResizePlan(
        spec.name,
        current,
        capacity,
        messages,
        fits=needed <= capacity,
        steps=[engine.hooks.render_text(s, spec.objects()) for s in STEPS[spec.template]],
        statements=statements,
    )


def resize(
    engine: Engine, spec: QueueSpec, capacity: int, progress: Progress | None = None
) -> Resized:
    _check(engine, spec, capacity)
    for attempt in range(1, DEADLOCK_RETRIES + 1):
        try:
            with engine.transaction() as execute:
                for statement in engine.hooks.section(spec, "resize_lock"):
                    execute(statement)
                state = execute(engine.hooks.section(spec, "resize_state")[0])[0]
                (messages, needed), current = _needed(state), int(state["capacity"])
                _refuse(spec, messages, needed, capacity)
                _move(engine, spec, execute, current, capacity, progress)
            return Resized(spec.name, current, capacity, messages)
        except Deadlock:
            # The victim's transaction is undone whole (a resize takes no sequence numbers),
            # so a busy queue's resize runs again rather than fail the DBA's command.
            if attempt == DEADLOCK_RETRIES:
                raise
            time.sleep(0.05 * attempt)
        except LockTimeout as exc:
            if isinstance(exc, StatementTimeout):
                raise
            raise LockTimeout(locks.blocked_line(engine, spec, exc, "resize")) from None
    raise AssertionError("unreachable")


def _move(
    engine: Engine,
    spec: QueueSpec,
    execute: Execute,
    current: int,
    capacity: int,
    progress: Progress | None,
) -> None:
    params = {"capacity": capacity}
    for statement in engine.hooks.section(spec, "resize"):
        execute(statement, params)
    grow(engine, spec, execute, min(current, capacity), capacity, progress)
    for statement in engine.hooks.section(spec, "resize_place"):
        execute(statement, params)
    for statement in engine.hooks.catalog_sql("set_capacity"):
        execute(statement, {"capacity": capacity, "name": spec.name})


def grow(
    engine: Engine,
    spec: QueueSpec,
    execute: Execute,
    start: int,
    capacity: int,
    progress: Progress | None = None,
) -> None:
    """Add the slot rows ``start .. capacity - 1`` in chunks (create, resize and convert)."""
    if not engine.hooks.template(spec).has("resize_grow"):
        return  # a capped queue has no slot rows to add: a push inserts its slot's row
    statements = engine.hooks.section(spec, "resize_grow")
    starts = range(start, capacity, CHUNK)
    for done, lo in enumerate(starts, 1):
        for statement in statements:
            execute(statement, {"lo": lo, "hi": min(lo + CHUNK, capacity)})
        if progress:
            progress(done, len(starts))
