"""Dead letters of claim queues: the max-attempts setting, listing ``<queue>_dead`` and
moving its messages back (redrive).

The move to the dead table is the queue's own fail routine (its template), so applications
and qadmin share it; this module only reads the dead table and empties it again. A redrive
moves each message back as a new delivery: a new id from the queue's own sequence (at its tail,
so no ack or fail fenced with an attempt of the old id can match the new claim), attempts reset,
enqueued_at and error history kept; one transaction for the lot: a message is in the queue or in
the dead table, never both, never neither.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass
from typing import Any

from qadmin import catalog
from qadmin.catalog.reads import COUNT_LIMIT as COUNT_LIMIT
from qadmin.catalog.reads import DeadDepth as DeadDepth
from qadmin.catalog.reads import dead_depth
from qadmin.diagnostics.entries import locks
from qadmin.diagnostics.model import PART_LOCK_MS, Context, Options
from qadmin.engines.base import Engine
from qadmin.errors import Deadlock, LockTimeout, NotFound, StatementTimeout, UsageError
from qadmin.kinds import QueueSpec
from qadmin.values import iso, message

# Bytes of payload a listing shows.
PREVIEW_BYTES = 64
# A redrive --all moves at most this many messages per run (one transaction).
REDRIVE_LIMIT = 10_000
MAX_ATTEMPTS_LIMIT = 1_000_000
DEADLOCK_RETRIES = 5


# The dead table's depth is read by inspect too: it lives below both (``catalog.reads``).
depth = dead_depth


def check_max_attempts(value: int | None) -> int | None:
    if value is not None and not 1 <= value <= MAX_ATTEMPTS_LIMIT:
        raise UsageError(f"--max-attempts must be between 1 and {MAX_ATTEMPTS_LIMIT:,}")
    return value


def require(spec: QueueSpec, command: str) -> None:
    """Refuse in one line unless the queue is a claim queue with its dead table."""
    spec.require("dead_letters", command)
    if not spec.dead_table:
        raise UsageError(
            f"{command}: claim queue {spec.name} was created before qadmin kept dead letters "
            "(it has no dead table); create a new queue to use them"
        )


def set_max_attempts(engine: Engine, spec: QueueSpec, value: int | None) -> QueueSpec:
    """Change the catalog entry's max_attempts; the fail routine reads it on its next call,
    so nothing is recreated. ``None``: failures never move a message."""
    require(spec, "alter --max-attempts")
    options = {k: v for k, v in spec.options.items() if k != "max_attempts"}
    if check_max_attempts(value) is not None:
        options["max_attempts"] = value
    catalog.set_options(engine, dataclasses.replace(spec, options=options))
    return catalog.get(engine, spec.name)


def _errors(text: Any) -> list[dict[str, Any]]:
    if text is None:
        return []
    parsed = json.loads(text) if isinstance(text, str | bytes) else text
    return list(parsed) if isinstance(parsed, list) else []


def listing(engine: Engine, spec: QueueSpec, count: int) -> list[dict[str, Any]]:
    """The dead messages, first to die first: id, attempts, first and last error, when it
    was enqueued and died, errors recorded and the payload's first ``PREVIEW_BYTES`` bytes."""
    require(spec, "dead")
    try:
        with engine.lock_timeout(PART_LOCK_MS):  # a read: give up as a diagnostic part does
            rows = engine.run(
                engine.section(spec, "dead_list"),
                {"count": count, "preview": PREVIEW_BYTES},
                write=False,
            )
    except StatementTimeout:
        raise
    except LockTimeout as exc:  # who holds it, read at once while the lock is still held
        raise LockTimeout(_blocked(engine, spec, exc)) from None
    out = []
    for row in rows:
        errors = _errors(row["errors"])
        out.append(
            message(
                {
                    "id": row["id"],
                    "attempts": row["attempts"],
                    "errors": len(errors),
                    "first_error": errors[0].get("error") if errors else None,
                    "last_error": errors[-1].get("error") if errors else None,
                    "enqueued_at": iso(row["enqueued_at"]),
                    "died_at": iso(row["died_at"]),
                    "payload": bytes(row["payload"]),
                }
            )
        )
    return out


def _blocked(engine: Engine, spec: QueueSpec, exc: LockTimeout) -> str:
    """The listing's lock timeout in one line, naming the session in the way as explain does."""
    text, session, certain = locks.blocker_of(Context(engine, spec.name, spec, Options()), None, [])
    line = f"dead: {exc}; blocked by {text}"
    if session is not None:
        end = engine.end_session(session)
        line += f"; end it if stuck: {end}" if certain else f"; {locks.CONFIRM}{end}"
    return line


@dataclass(frozen=True)
class Moved:
    """A dead message moved back: its old id and the new one it is served under."""

    id: int
    new_id: int


@dataclass(frozen=True)
class Redriven:
    """What a redrive moved (a dry run: what it would move, ``moved`` empty)."""

    queue: str
    action: str
    dry_run: bool
    redriven: int
    ids: list[int]
    moved: list[Moved]
    more: bool  # --all stopped at REDRIVE_LIMIT: run it again for the rest

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def redrive(
    engine: Engine,
    spec: QueueSpec,
    ids: list[int] | None,
    *,
    dry_run: bool = False,
) -> Redriven:
    """Move dead messages back to the queue as waiting messages (``ids``, or all with None,
    at most ``REDRIVE_LIMIT``), in one transaction: each gets a new id at the queue's tail
    (above any watermark, so the dequeue serves it) and keeps its enqueued_at and error
    history; its attempts start again from 0. A dry run locks and reads, then rolls back."""
    require(spec, "redrive")
    for attempt in range(DEADLOCK_RETRIES):
        try:
            return _redrive(engine, spec, ids, dry_run)
        except Deadlock:
            if attempt == DEADLOCK_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


class _DryRun(Exception):
    """Leaves the transaction rolled back (a dry run changes nothing)."""


def _redrive(engine: Engine, spec: QueueSpec, ids: list[int] | None, dry_run: bool) -> Redriven:
    found: list[int] = []
    missing: list[int] = []
    moved: list[Moved] = []
    try:
        with engine.transaction() as execute:
            if ids is None:
                rows = execute(engine.section(spec, "redrive_ids")[0], {"limit": REDRIVE_LIMIT})
                found = [int(r["id"]) for r in rows]
            else:
                for one in dict.fromkeys(ids):
                    rows = execute(engine.section(spec, "redrive_id")[0], {"id": one})
                    (found if rows else missing).append(one)
            if missing:
                raise NotFound(
                    f"redrive: no dead message {', '.join(map(str, missing))} in queue "
                    f"{spec.name} (nothing was moved)"
                )
            if dry_run:
                raise _DryRun
            for one in found:
                rows = [
                    row
                    for statement in engine.section(spec, "redrive_one")
                    for row in execute(statement, {"id": one})
                ]
                moved.append(Moved(one, int(rows[0]["new_id"])))
    except _DryRun:
        pass
    more = ids is None and len(found) == REDRIVE_LIMIT
    return Redriven(spec.name, "redrive", dry_run, len(found), found, moved, more)
