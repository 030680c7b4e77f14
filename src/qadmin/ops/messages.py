"""Push, pop, peek, ack and fail: the message operations, the same on every engine.

Each calls its queue's template section; on engines with server routines that section is a call
to the routine that ``create`` installed, so qadmin and applications share one code path.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from qadmin.engines.base import Engine
from qadmin.errors import Deadlock, NotFound, QueueEmpty, QueueFull, UsageError
from qadmin.kinds import QueueSpec
from qadmin.ops.values import message

MAX_BATCH = 10_000
DEADLOCK_RETRIES = 5
T = TypeVar("T")
_POLL_START_S = 0.05
_POLL_MAX_S = 1.0


def default_worker() -> str:
    """Who claimed a message: recorded so a DBA can find the consumer behind a stale claim."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _retrying(spec: QueueSpec, work: Callable[[], T]) -> T:
    """Run a transaction again when the server rolled it back as a deadlock victim.

    Safe because the victim's transaction is undone whole. Not for rings: a ring transaction
    takes sequence numbers, which no rollback returns, so a retry would leave a hole; the
    deadlock is reported instead (see ``qadmin repair``).
    """
    for attempt in range(DEADLOCK_RETRIES):
        try:
            return work()
        except Deadlock:
            if spec.info.ring or attempt == DEADLOCK_RETRIES - 1:
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")


def _merge(rows: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for row in rows:
        merged.update(row)
    return message(merged)


def push(
    engine: Engine,
    spec: QueueSpec,
    payloads: Sequence[bytes],
    due: datetime | None = None,
) -> list[dict[str, Any]]:
    """Push messages in order, in one transaction (a ring stops at the first refusal)."""
    if due is not None:
        spec.require("due", "push --due/--delay")
    params: list[dict[str, Any]] = []
    for payload in payloads:
        one: dict[str, Any] = {"payload": payload}
        if spec.info.due:
            one["due_at"] = engine.adapt_time(due) if due is not None else None
        params.append(one)
    statements = engine.section(spec, "push")
    if not spec.info.ring:
        batches = _retrying(spec, lambda: engine.run_batch(statements, params))
        return [_merge(rows) for rows in batches]
    # A ring batch is one transaction (one commit for the lot), stopping at the first message
    # the full ring refuses; what went in before it is committed and reported.
    pushed: list[dict[str, Any]] = []
    with engine.transaction() as execute:
        for one in params:
            rows = [row for statement in statements for row in execute(statement, one)]
            if not any(r.get("id") is not None for r in rows):
                break
            pushed.append(_merge(rows))
    if len(pushed) < len(params):
        raise QueueFull(
            f"ring {spec.name} is full (capacity {spec.capacity}); "
            f"pushed {len(pushed)} of {len(params)}",
            pushed,
        )
    return pushed


def pop(
    engine: Engine,
    spec: QueueSpec,
    count: int = 1,
    wait_s: float = 0.0,
    worker: str | None = None,
) -> list[dict[str, Any]]:
    """Pop up to ``count`` messages; wait up to ``wait_s`` for the first one to arrive."""
    _check_count(count)
    params: dict[str, Any] = {"count": count}
    if spec.info.claims:
        params["worker"] = worker or default_worker()
    statements = engine.section(spec, "pop")
    deadline = time.monotonic() + wait_s
    delay = _POLL_START_S
    while True:
        got = _retrying(spec, lambda: engine.run(statements, params))
        rows = [message(r) for r in got if r.get("id") is not None]
        if rows:
            return spec.sort_rows(rows)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise QueueEmpty(f"queue {spec.name} is empty")
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, _POLL_MAX_S)


def peek(engine: Engine, spec: QueueSpec, count: int = 10) -> list[dict[str, Any]]:
    _check_count(count)
    rows = engine.run(engine.section(spec, "peek"), {"count": count}, write=False)
    return [message(r) for r in rows]


def ack(engine: Engine, spec: QueueSpec, message_id: int) -> dict[str, Any]:
    """Delete a claimed message after successful processing."""
    spec.require("claims", "ack")
    rows = engine.run(engine.section(spec, "ack"), {"id": message_id})
    if not rows:
        raise NotFound(f"message {message_id} is not claimed in queue {spec.name}")
    return message(rows[0])


def fail(
    engine: Engine,
    spec: QueueSpec,
    message_id: int,
    error: str,
    retry: bool = False,
) -> dict[str, Any]:
    """Record a processing error; with ``retry`` the claim is released for another consumer."""
    spec.require("claims", "fail")
    rows = engine.run(
        engine.section(spec, "fail"),
        {"id": message_id, "error": error, "retry": retry},
    )
    if not rows:
        raise NotFound(f"message {message_id} is not claimed in queue {spec.name}")
    return message(rows[0])


def _check_count(count: int) -> None:
    if not 1 <= count <= MAX_BATCH:
        raise UsageError(f"--count must be between 1 and {MAX_BATCH}")
