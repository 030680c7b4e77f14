"""Dead letters of claim queues: the max-attempts setting, listing ``<queue>_dead`` (a
message's whole error history too), throwing dead letters away (discard) and moving them back
or into another queue (redrive).

The move to the dead table is the queue's own fail routine (its template), so applications
and qadmin share it; this module only reads the dead table and empties it again. A redrive
moves each message back as a new delivery: a new id from the queue's own sequence (at its tail,
so no ack or fail fenced with an attempt of the old id can match the new claim), attempts reset,
enqueued_at and error history kept. Exactly once (docs/reliability.md): a filter's ids are read
without locks (a dead row never changes), then each batch is one transaction that locks each id
by its key and moves or deletes only what it found: a message is in the queue or in the dead
table, never both, never neither, and two movers never both take one.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from qadmin import catalog, interrupts
from qadmin.catalog.reads import COUNT_LIMIT as COUNT_LIMIT
from qadmin.catalog.reads import DeadDepth as DeadDepth
from qadmin.catalog.reads import dead_depth
from qadmin.diagnostics.entries import locks
from qadmin.diagnostics.model import PART_LOCK_MS
from qadmin.engines.base import Engine, Execute
from qadmin.errors import (
    Deadlock,
    Interrupted,
    LockTimeout,
    NotFound,
    QadminError,
    QueueFull,
    StatementTimeout,
    UsageError,
)
from qadmin.kinds import QueueSpec
from qadmin.values import iso, to_bytes

# Bytes of payload a listing shows.
PREVIEW_BYTES = 64
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


@dataclass(frozen=True)
class DeadMessage:
    """One dead message as the listing shows it: its errors counted, the first and the last
    one it died with, and the payload's first ``PREVIEW_BYTES`` bytes."""

    id: int
    attempts: int | None
    errors: int
    first_error: str | None
    last_error: str | None
    enqueued_at: str | None
    died_at: str | None
    payload: bytes

    def as_dict(self) -> dict[str, Any]:
        """The row at the edge (JSON, CSV, tables)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ErrorEntry:
    """One error a message (or a library's job) recorded: its attempt, when, and the text."""

    attempt: Any
    at: Any
    error: Any

    def as_dict(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "at": self.at, "error": self.error}


@dataclass(frozen=True)
class DeadHistory:
    """One dead message whole: every error recorded, its times and its payload."""

    id: int
    attempts: int
    enqueued_at: str | None
    died_at: str | None
    last_error: str | None
    errors: list[ErrorEntry]
    payload: bytes

    def to_json_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["errors"] = [e.as_dict() for e in self.errors]
        return data


@dataclass(frozen=True)
class Action:
    """What the batched mover does with each dead message it takes: ``redrive`` moves it
    back (or into another queue), ``discard`` deletes it. ``counted``: the result's count
    key; ``done``: the past tense its lines use."""

    name: str
    counted: str
    done: str
    verb: str


REDRIVE = Action("redrive", counted="redriven", done="moved", verb="move")
DISCARD = Action("discard", counted="discarded", done="discarded", verb="discard")


@dataclass(frozen=True)
class Moved:
    """A redriven message: its dead id and the new id it went back under."""

    id: int
    new_id: int


@dataclass(frozen=True)
class Outcome:
    """What a discard or redrive took (or, ``dry_run``, would take): the ids it took, those
    gone already (another mover took them first), and a redrive's destination and new ids.
    ``source``: a library's redrive, the retry it ran (its profile's)."""

    queue: str
    action: Action
    dry_run: bool
    ids: list[int]
    gone: list[int] = field(default_factory=list)
    to: str | None = None
    moved: list[Moved] = field(default_factory=list)
    source: str | None = None

    @property
    def count(self) -> int:
        return len(self.ids)

    def to_json_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "queue": self.queue,
            "action": self.action.name,
            "dry_run": self.dry_run,
            self.action.counted: self.count,
            "ids": list(self.ids),
            "gone": list(self.gone),
        }
        if self.to is not None:
            data["to"] = self.to
            data["moved"] = [{"id": m.id, "new_id": m.new_id} for m in self.moved]
        if self.source is not None:
            data["as"] = self.source
        return data


@dataclass
class _Tally:
    """A mover's running count while it works (the ``Outcome`` is made from it at the end)."""

    queue: str
    action: Action
    dry_run: bool
    to: str | None = None
    ids: list[int] = field(default_factory=list)
    gone: list[int] = field(default_factory=list)
    moved: list[Moved] = field(default_factory=list)

    def outcome(self) -> Outcome:
        return Outcome(
            self.queue, self.action, self.dry_run, self.ids, self.gone, self.to, self.moved
        )

    def so_far(self) -> str:
        count = len(self.ids)
        return f"{self.action.done} {count:,} dead message{'' if count == 1 else 's'}"


def _errors(text: Any) -> list[dict[str, Any]]:
    if text is None:
        return []
    parsed = json.loads(text) if isinstance(text, str | bytes) else text
    return list(parsed) if isinstance(parsed, list) else []


@dataclass(frozen=True)
class Filter:
    """Which dead messages dead, discard and redrive pick (all of them when nothing is set):
    died more than ``older_s`` ago, within the last ``newer_s``, the error it died with
    containing ``error`` (a substring, case-insensitive; LIKE's wildcards in it are literal)."""

    older_s: float | None = None
    newer_s: float | None = None
    error: str | None = None

    @property
    def given(self) -> bool:
        return self.older_s is not None or self.newer_s is not None or self.error is not None

    def params(self) -> dict[str, Any]:
        """The filter as the sections bind it: a flag and a value each, never a NULL."""
        return {
            "has_older": int(self.older_s is not None),
            "older_s": self.older_s or 0,
            "has_newer": int(self.newer_s is not None),
            "newer_s": self.newer_s or 0,
            "has_error": int(self.error is not None),
            "pattern": like_substring(self.error or ""),
        }


# The LIKE escape character every dead section names (ESCAPE '!'); T-SQL's [ escaped too.
LIKE_ESCAPE = "!"


def like_substring(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere, its wildcards taken literally."""
    escaped = "".join(LIKE_ESCAPE + c if c in "!%_[" else c for c in text)
    return f"%{escaped}%"


def listing(
    engine: Engine, spec: QueueSpec, count: int, picked: Filter | None = None
) -> list[DeadMessage]:
    """The dead messages, first to die first: id, attempts, first and last error, when it
    was enqueued and died, errors recorded and the payload's first ``PREVIEW_BYTES`` bytes."""
    require(spec, "dead")
    params = {"count": count, "preview": PREVIEW_BYTES, **(picked or Filter()).params()}
    try:
        with engine.lock_timeout(PART_LOCK_MS):  # a read: give up as a diagnostic part does
            rows = engine.run(engine.hooks.section(spec, "dead_list"), params, write=False)
    except StatementTimeout:
        raise
    except LockTimeout as exc:  # who holds it, read at once while the lock is still held
        raise LockTimeout(locks.blocked_line(engine, spec, exc, "dead")) from None
    out = []
    for row in rows:
        errors = _errors(row["errors"])
        out.append(
            DeadMessage(
                id=int(row["id"]),
                attempts=None if row["attempts"] is None else int(row["attempts"]),
                errors=len(errors),
                first_error=errors[0].get("error") if errors else None,
                last_error=errors[-1].get("error") if errors else None,
                enqueued_at=iso(row["enqueued_at"]),
                died_at=iso(row["died_at"]),
                payload=to_bytes(row["payload"]),
            )
        )
    return out


def history(engine: Engine, spec: QueueSpec, message_id: int) -> DeadHistory:
    """One dead message whole: every error recorded (attempt, error, when; the first and the
    latest ``ERRORS_KEPT`` - 1 once a message failed more often), its times and its payload."""
    require(spec, "dead")
    rows = engine.run(engine.hooks.section(spec, "dead_one"), {"id": message_id}, write=False)
    if not rows:
        raise NotFound(f"dead: no dead message {message_id} in queue {spec.name}")
    row = rows[0]
    errors = [
        ErrorEntry(e.get("attempt"), _when(e.get("at")), e.get("error"))
        for e in _errors(row["errors"])
    ]
    return DeadHistory(
        id=int(row["id"]),
        attempts=int(row["attempts"]),
        enqueued_at=iso(row["enqueued_at"]),
        died_at=iso(row["died_at"]),
        last_error=row["last_error"],
        errors=errors,
        payload=bytes(row["payload"]),
    )


def _when(value: Any) -> str | None:
    """An error entry's time as every output writes times (the JSON keeps the server's text)."""
    if not isinstance(value, str):
        return None
    try:
        return iso(value)
    except ValueError:
        return value


# Messages one transaction moves or removes (without --rate): short locks, bounded undo.
BATCH = 100
# Ids a filtered dry run reads per round trip.
PAGE = 1_000
TOP_ID = 2**63 - 1


@dataclass(frozen=True)
class Pace:
    """--rate: at most ``per_s`` messages a second, in batches of ``batch``."""

    per_s: float

    @property
    def batch(self) -> int:
        # About five transactions a second, each at least one message and at most BATCH.
        return max(1, min(BATCH, int(self.per_s / 5)))


def redrive(
    engine: Engine,
    spec: QueueSpec,
    ids: list[int] | None,
    *,
    picked: Filter | None = None,
    dry_run: bool = False,
    pace: Pace | None = None,
    to: QueueSpec | None = None,
) -> Outcome:
    """Move dead messages back as waiting messages: ``ids`` (all of them or none, one
    transaction), or those ``picked`` (every one with an empty filter) in batches of one
    transaction each. Back into ``spec`` each gets a new id at the queue's tail (above any
    watermark, so the dequeue serves it) and keeps its enqueued_at and error history, attempts
    from 0; ``to`` another qadmin queue on the same connection, it is pushed there through
    that queue's own push (payload only) and leaves the dead table in the same transaction."""
    if to is not None and to.name == spec.name:
        to = None
    return move(engine, spec, REDRIVE, ids, picked=picked, dry_run=dry_run, pace=pace, to=to)


def discard(
    engine: Engine,
    spec: QueueSpec,
    ids: list[int] | None,
    *,
    picked: Filter | None = None,
    dry_run: bool = False,
    pace: Pace | None = None,
) -> Outcome:
    """Throw dead messages away: ``ids`` (all or none) or those ``picked``, from the dead
    table only (the live queue is never touched), each deleted once: a message another
    discard or redrive took first is reported gone, not counted twice."""
    return move(engine, spec, DISCARD, ids, picked=picked, dry_run=dry_run, pace=pace)


def move(
    engine: Engine,
    spec: QueueSpec,
    action: Action,
    ids: list[int] | None,
    *,
    picked: Filter | None = None,
    dry_run: bool = False,
    pace: Pace | None = None,
    to: QueueSpec | None = None,
) -> Outcome:
    """The one batched mover behind discard and redrive: ``ids`` in one transaction, or
    those ``picked`` in batches of one transaction each, each message taken by ``action``
    (``to``: a redrive into another queue)."""
    require(spec, action.name)
    done = _Tally(spec.name, action, dry_run, (to or spec).name if action is REDRIVE else None)
    if ids is not None:
        _by_id(engine, spec, list(dict.fromkeys(ids)), to, done)
        return done.outcome()
    picked = picked or Filter()
    top = engine.run(engine.hooks.section(spec, "dead_top"), write=False)[0]["top_id"]
    if top is None:
        return done.outcome()
    if dry_run:
        done.ids = _matching(engine, spec, picked, 0, int(top), TOP_ID)
        return done.outcome()
    size = pace.batch if pace else BATCH
    after, started = 0, time.monotonic()
    try:
        while True:
            batch = _matching(engine, spec, picked, after, int(top), size)
            if not batch:
                return done.outcome()
            after = batch[-1]
            _batch(engine, spec, batch, to, done)
            if pace is not None:  # the next batch waits until the rate allows it
                time.sleep(max(0.0, started + len(done.ids) / pace.per_s - time.monotonic()))
    except KeyboardInterrupt:  # between batches: every one before it committed, none open
        raise _with(
            Interrupted(f"{action.name}: {done.so_far()} (committed); the rest are still dead"),
            done,
        ) from None


def _matching(
    engine: Engine, spec: QueueSpec, picked: Filter, after: int, top: int, limit: int
) -> list[int]:
    """Ids of dead messages the filter picks after ``after`` (up to ``top``), at most
    ``limit``, read without locks."""
    out: list[int] = []
    section = engine.hooks.section(spec, "dead_match")
    while len(out) < limit:
        page = min(PAGE, limit - len(out))
        params = {"after": after, "upto": top, "limit": page, **picked.params()}
        got = [int(r["id"]) for r in engine.run(section, params, write=False)]
        out.extend(got)
        if len(got) < page:
            break
        after = got[-1]
    return out


def _by_id(
    engine: Engine, spec: QueueSpec, ids: list[int], to: QueueSpec | None, done: _Tally
) -> None:
    """Named ids: one transaction, every id found (locked) or nothing done at all."""

    def check(execute: Execute) -> None:
        missing = [
            one
            for one in ids
            if not execute(engine.hooks.section(spec, "redrive_id")[0], {"id": one})
        ]
        if missing:
            raise NotFound(
                f"{done.action.name}: no dead message {', '.join(map(str, missing))} in queue "
                f"{spec.name} (nothing was {done.action.done})"
            )
        if done.dry_run:
            raise _DryRun

    try:
        _batch(engine, spec, ids, to, done, check)
    except _DryRun:
        done.ids = list(ids)


class _DryRun(Exception):
    """Leaves the transaction rolled back (a dry run changes nothing)."""


def _batch(
    engine: Engine,
    spec: QueueSpec,
    ids: list[int],
    to: QueueSpec | None,
    done: _Tally,
    first: Callable[[Execute], None] | None = None,
) -> None:
    """One transaction over ``ids``: each locked by its key, then moved or deleted; one gone
    already (another redrive or discard took it) is reported gone. Deadlocks retry the
    batch; a stop (Ctrl-C, SIGTERM) waits for its commit or rollback, then says what was done."""
    for attempt in range(DEADLOCK_RETRIES):
        try:
            with interrupts.deferred() as held:
                result = _one_batch(engine, spec, done.action, ids, to, first)
            break
        except Deadlock:
            if attempt == DEADLOCK_RETRIES - 1:
                raise _with(
                    Deadlock(
                        f"{done.action.name}: deadlocked {DEADLOCK_RETRIES} times; {done.so_far()}"
                    ),
                    done,
                ) from None
        except QadminError as exc:
            if done.ids:
                exc.args = (f"{exc}; {done.so_far()} before it (committed)",)
            _with(exc, done)
            raise
    taken, gone, moved = result
    done.ids.extend(taken)
    done.gone.extend(gone)
    done.moved.extend(moved)
    if held.signum is not None:
        raise _with(
            Interrupted(
                f"{done.action.name}: {done.so_far()} (committed); the rest are still dead"
            ),
            done,
        )


def _with(exc: QadminError, done: _Tally) -> QadminError:
    """``exc`` carrying what its batches had committed (the CLI prints it first: a redrive's
    old -> new ids must not be lost with the stop)."""
    exc.partial = done.outcome()
    return exc


def _one_batch(
    engine: Engine,
    spec: QueueSpec,
    action: Action,
    ids: list[int],
    to: QueueSpec | None,
    first: Callable[[Execute], None] | None,
) -> tuple[list[int], list[int], list[Moved]]:
    taken: list[int] = []
    gone: list[int] = []
    moved: list[Moved] = []
    with engine.transaction() as execute:
        if first is not None:
            first(execute)
        for one in ids:
            if to is not None:
                rows = execute(engine.hooks.section(spec, "dead_take")[0], {"id": one})
            else:
                rows = execute(engine.hooks.section(spec, "redrive_id")[0], {"id": one})
            if not rows:
                gone.append(one)
                continue
            taken.append(one)
            if action is DISCARD:
                execute(engine.hooks.section(spec, "discard_one")[0], {"id": one})
            elif to is not None:
                new_id = _push(engine, execute, to, to_bytes(rows[0]["payload"]))
                execute(engine.hooks.section(spec, "discard_one")[0], {"id": one})
                moved.append(Moved(one, new_id))
            else:
                back = [
                    row
                    for statement in engine.hooks.section(spec, "redrive_one")
                    for row in execute(statement, {"id": one})
                ]
                moved.append(Moved(one, int(back[0]["new_id"])))
    return taken, gone, moved


def _push(engine: Engine, execute: Execute, to: QueueSpec, payload: bytes) -> int:
    """Push one payload into ``to`` through its own push, inside the caller's transaction; a
    full ring refuses it, and the whole batch rolls back."""
    params = {"payload": payload, "due_at": None}
    rows = [
        row for statement in engine.hooks.section(to, "push") for row in execute(statement, params)
    ]
    ids = [r["id"] for r in rows if r.get("id") is not None]
    if not ids:
        raise QueueFull(f"redrive --to: ring {to.name} is full (capacity {to.capacity})")
    return int(ids[0])
