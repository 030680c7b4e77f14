"""Push, pop, peek, ack and fail: the message operations, the same on every engine.

Each calls its queue's template section; on engines with server routines that section is a call
to the routine that ``create`` installed, so qadmin and applications share one code path.
"""

from __future__ import annotations

import os
import socket
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from qadmin import catalog, interrupts
from qadmin.catalog.rows import Row
from qadmin.catalog.sql import template_rows
from qadmin.engines.base import Engine
from qadmin.errors import (
    Deadlock,
    Interrupted,
    NotFound,
    QadminError,
    QueueEmpty,
    QueueFull,
    StaleStatement,
    UsageError,
)
from qadmin.kinds import ERROR_CHARS, MAX_BATCH, QueueSpec
from qadmin.values import iso, message

# Messages per statement (and per transaction) when a batch is pushed set-based: large enough
# that the commit and the round trip are shared by thousands, small enough that one statement's
# parameters stay a few megabytes and a lock is not held for long.
PUSH_CHUNK = 2_000
DEADLOCK_RETRIES = 5
T = TypeVar("T")
# pop --wait where the engine has no wake-up (MariaDB/MySQL, SQLite, SQL Server): the queue's
# head (the dequeue's own read-only SELECT: one index seek, no lock, no write transaction) is
# probed this often, and the pop runs again only when it shows a message; a push is seen within
# about 5 ms. A kind without a head section polls the pop itself, backing off to 0.1 s.
_PROBE_S = 0.005
_POLL_START_S = 0.01
_POLL_MAX_S = 0.1
# pop --wait where the pushes notify (PostgreSQL): a re-poll this often all the same, the safety
# net for a queue created before its push routine notified and for a missed notification.
_REPOLL_S = 1.0
# Whether a queue has push_many, per engine session: a batch loop must not pay two catalog reads
# per chunk. Keyed by what a create or a convert changes (kind, creation time, overlays).
_PUSH_MANY: weakref.WeakKeyDictionary[Engine, dict[tuple[Any, ...], list[str] | None]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class Pushed(Row):
    """One message a push put in: its id and time (a pending queue's due time, a capped
    queue's overwritten message where its server reports it)."""

    id: int
    enqueued_at: str | None = None
    due_at: str | None = None
    overwritten_id: int | None = None


@dataclass(frozen=True)
class Message(Row):
    """One message as a pop or peek gives it: times ISO 8601 UTC, the payload as bytes; the
    claim's state where the kind has claims (a pop's ``attempts`` is the fencing token)."""

    id: int
    payload: bytes
    enqueued_at: str | None = None
    due_at: str | None = None
    processing_started_at: str | None = None
    claimed_by: str | None = None
    attempts: int | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class Acked(Row):
    """A claimed message ack deleted."""

    id: int


@dataclass(frozen=True)
class Failed(Row):
    """A failure recorded: the message's attempts so far and whether it went to the dead
    table (its ``max_attempts``-th attempt)."""

    id: int
    attempts: int | None = None
    dead: bool = False


def on_queue(engine: Engine, name: str, op: Callable[[QueueSpec], T]) -> T:
    """``op`` on the queue as the catalog has it. SQLite has no routines: a convert or resize
    that rewrote the table after the catalog was read fails the statement whole, so the queue
    is read again and ``op`` runs once more (a push whose earlier chunks went in is not)."""
    try:
        return op(catalog.get(engine, name))
    except StaleStatement as stale:
        if stale.pushed:
            raise
    return op(catalog.get(engine, name))


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


def _messages(rows: list[dict[str, Any]]) -> list[Message]:
    times: dict[Any, str] = {}
    return [Message.of(message(r, times)) for r in rows if r.get("id") is not None]


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
) -> list[Pushed]:
    """Push messages in order, in one transaction (a ring stops at the first refusal)."""
    if due is not None:
        spec.require("due", "push --due/--delay")
    due_at = engine.adapt_time(due) if due is not None else None
    # A message too big for the push routine's statement may still fit a batch's (MariaDB:
    # base64, 4/3 of its size, against the driver's hex, twice it).
    if len(payloads) > 1 or (payloads and _over(engine, payloads[0])):
        many = push_many_section(engine, spec)
        if many is not None:
            return _push_batches(engine, spec, many, payloads, due_at)
        batch = engine.hooks.batch_section(spec)
        if batch is not None:
            return _push_batches(engine, spec, batch, payloads, due_at)
    for n, payload in enumerate(payloads, 1):
        if _over(engine, payload):
            raise _too_large(engine, n, payload, engine.push_limits()[1] or 0)
    params = [
        {"payload": payload, "due_at": due_at} if spec.info.due else {"payload": payload}
        for payload in payloads
    ]
    statements = engine.hooks.section(spec, "push")
    pushed: list[Pushed] = []
    # One transaction: a stop waits for its commit or rollback (see _push_batches).
    with _stoppable([], len(params), len(params)) as held:
        if not spec.info.ring:
            batches = _retrying(spec, lambda: engine.run_batch(statements, params))
            pushed = [Pushed.of(_merge(rows)) for rows in batches]
        else:
            # A ring batch is one transaction (one commit for the lot), stopping at the first
            # message the full ring refuses; what went in before it is committed and reported.
            with engine.transaction() as execute:
                for one in params:
                    rows = [row for statement in statements for row in execute(statement, one)]
                    if not any(r.get("id") is not None for r in rows):
                        break
                    pushed.append(Pushed.of(_merge(rows)))
    _stop_if(held, pushed, len(params))
    if not spec.info.ring:
        return pushed
    if len(pushed) < len(params):
        raise QueueFull(
            f"ring {spec.name} is full (capacity {spec.capacity}); "
            f"pushed {len(pushed)} of {len(params)}",
            pushed,
        )
    return pushed


def push_many_section(engine: Engine, spec: QueueSpec) -> list[str] | None:
    """The call of the queue's ``push_many`` routine (many messages in one statement), or None
    for a queue created before it existed (its catalog records no such routine) or a kind that
    has none on this server: a batch then takes the push routine's path."""
    known = _PUSH_MANY.setdefault(engine, {})
    key = (spec.name, spec.kind, spec.created_at, spec.overlays)
    if key not in known:
        known[key] = _push_many_call(engine, spec)
    return known[key]


def _push_many_call(engine: Engine, spec: QueueSpec) -> list[str] | None:
    if not engine.hooks.template(spec).has("push_many"):
        return None
    name = spec.objects()["push_many"]
    if not any(obj == name for _, obj in catalog.owned(engine, spec)):
        return None
    return engine.hooks.section(spec, "push_many")


def _push_batches(
    engine: Engine,
    spec: QueueSpec,
    statements: list[str],
    payloads: Sequence[bytes],
    due_at: Any,
) -> list[Pushed]:
    """Push in chunks of ``PUSH_CHUNK``, each one statement and one transaction, in order
    (``push_many`` or, for an older queue, ``push_batch``). A ring's chunk stops at the first
    message the full ring refuses: the chunks before it and the messages of its own chunk
    before it are committed and reported."""
    pushed: list[Pushed] = []
    times: dict[Any, str] = {}
    for chunk in _chunks(engine, payloads):
        params = engine.batch_params(chunk)
        if spec.info.due:
            # One due time for the batch, or (push_many on PostgreSQL) one per message.
            params["due_at"] = due_at
            params["due_ats"] = None if due_at is None else [due_at] * len(chunk)
        # A stop (Ctrl-C, SIGTERM, SIGHUP) waits for the chunk's commit or rollback, so the
        # line says exactly how many went in; a second one stops at once, the chunk in doubt.
        with _stoppable(pushed, len(payloads), len(chunk)) as held:
            try:
                rows = _retrying(spec, partial(engine.run, statements, params))
            except QadminError as exc:
                if pushed:  # the chunks before this one are committed: say so, and show them
                    exc.args = (f"{exc}; pushed {len(pushed):,} of {len(payloads):,} before it",)
                    exc.pushed = pushed
                raise
            got = _as_pushed(rows, times)
            pushed.extend(got)
        _stop_if(held, pushed, len(payloads))
        if len(got) < len(chunk):
            raise QueueFull(
                f"ring {spec.name} is full (capacity {spec.capacity}); "
                f"pushed {len(pushed)} of {len(payloads)}",
                pushed,
            )
    return pushed


def _as_pushed(rows: list[dict[str, Any]], times: dict[Any, str]) -> list[Pushed]:
    """A batch's rows as ``Pushed``. Rows of an id and a time alone (every kind but pending
    and capped) skip ``message``'s general shaping: push --lines makes 100,000 of them."""
    if not rows or tuple(rows[0]) != _ID_AND_TIME:
        return [Pushed.of(message(r, times)) for r in rows if r.get("id") is not None]
    pushed: list[Pushed] = []
    for row in rows:
        got, at = row["id"], row["enqueued_at"]
        if got is None:
            continue
        when = None if at is None else (times.get(at) or times.setdefault(at, iso(at) or ""))
        pushed.append(Pushed(id=int(got), enqueued_at=when, columns=_ID_AND_TIME))
    return pushed


_ID_AND_TIME = ("id", "enqueued_at")


@contextmanager
def _stoppable(pushed: list[Pushed], total: int, flight: int) -> Iterator[interrupts.Held]:
    """A push transaction that a stop (Ctrl-C, SIGTERM, SIGHUP) waits for; a second stop ends
    it at once, and the line says the ``flight`` messages of it are in doubt."""
    try:
        with interrupts.deferred() as held:
            yield held
    except KeyboardInterrupt:
        stop = Interrupted(
            f"pushed {len(pushed):,} of {total:,} (committed), and the {flight:,} in flight "
            "may or may not be in (stopped twice, maybe mid-commit): count the queue before "
            "pushing the rest"
        )
        stop.pushed = pushed
        raise stop from None


def _stop_if(held: interrupts.Held, pushed: list[Pushed], total: int) -> None:
    """After a push transaction a stop waited for: say exactly what went in."""
    if held.signum is None:
        return
    rest = "the rest were not: push only those again" if len(pushed) < total else "all of them"
    stop = Interrupted(f"pushed {len(pushed):,} of {total:,} (committed; {rest})")
    stop.pushed = pushed
    raise stop


def _chunks(engine: Engine, payloads: Sequence[bytes]) -> list[Sequence[bytes]]:
    """The batch in order, in chunks of at most ``PUSH_CHUNK`` messages and the engine's byte
    budget per statement: a message over the budget goes alone, or, where the server would
    refuse it, the whole push is refused before anything is sent."""
    budget, alone = engine.push_limits()
    chunks: list[Sequence[bytes]] = []
    start, used = 0, 0
    for n, payload in enumerate(payloads):
        need = engine.wire_bytes(payload, batch=True)
        if need > budget and alone is not None:
            raise _too_large(engine, n + 1, payload, budget)
        if n > start and (n - start == PUSH_CHUNK or used + need > budget):
            chunks.append(payloads[start:n])
            start, used = n, 0
        used += need
    if start < len(payloads):
        chunks.append(payloads[start:])
    return chunks


def _over(engine: Engine, payload: bytes) -> bool:
    """Whether the message is more than a push routine's statement of its own may carry."""
    alone = engine.push_limits()[1]
    return alone is not None and engine.wire_bytes(payload, batch=False) > alone


def _too_large(engine: Engine, n: int, payload: bytes, limit: int) -> UsageError:
    return UsageError(
        f"message {n:,} ({len(payload):,} bytes) is too large for this {engine.label} server: "
        f"it would take more than the {limit:,} bytes a statement may carry "
        "(raise max_allowed_packet); nothing pushed"
    )


def _empty(engine: Engine, spec: QueueSpec) -> QueueEmpty:
    """Nothing popped: a paused queue says so (its catalog entry read again: the pause may
    have come while a --wait waited), else it is empty."""
    with suppress(QadminError):
        now = catalog.find(engine, spec.name)
        if now is not None and now.paused_at is not None:
            return QueueEmpty(
                f"queue {spec.name} is paused since {now.paused_at}: nothing popped "
                f"(qadmin resume {spec.name})"
            )
    stalled = _ring_stall(engine, spec)
    return QueueEmpty(stalled or f"queue {spec.name} is empty")


def _ring_stall(engine: Engine, spec: QueueSpec) -> str | None:
    """A ring whose pop took nothing while numbers were issued past the pop sequence: pops
    stop at a number whose push has not completed (in flight, or a pusher that died): said,
    with repair, rather than "empty" while messages wait behind it (two sequence reads)."""
    if not spec.info.ring:
        return None
    with suppress(QadminError):
        params = {"schema": engine.schema, "table": spec.name}
        [row] = template_rows(engine, spec, "counters", params) or [{}]
        pushed, popped = row.get("enqueued_total"), row.get("dequeued_total")
        if pushed is not None and popped is not None and int(pushed) > int(popped):
            return (
                f"queue {spec.name}: nothing popped, though {int(pushed) - int(popped):,} "
                f"numbered messages wait: pops stop at number {int(popped)}, whose push has "
                "not completed (still in flight, or its pusher died: qadmin repair "
                f"{spec.name} --dry-run)"
            )
    return None


class _Waiter:
    """How an empty pop --wait waits for the next try. Where pushes notify (PostgreSQL's
    LISTEN) it blocks until one does. Elsewhere it probes the head every 5 ms and says "pop
    again" when the head shows a message other than the one the last pop could not take (a
    lax pop skips a row another consumer holds: its head stays there), or after 0.1 s all the
    same, so a row behind a held head is still reached."""

    def __init__(self, engine: Engine, spec: QueueSpec, wait_s: float) -> None:
        self.engine = engine
        self.spec = spec
        self.deadline = time.monotonic() + wait_s
        # Listening starts before the first look, so a push committed after it wakes the wait.
        self.listening = wait_s > 0 and engine.listen(spec)
        self.probe: list[str] | None = None
        if wait_s > 0 and not self.listening and engine.hooks.template(spec).has("head"):
            self.probe = engine.hooks.section(spec, "head")
        self.delay = _POLL_START_S
        self.seen: tuple[Any, ...] | None = None

    def next_try(self) -> bool:
        """Wait until a pop is worth trying again: False once the wait is over."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return False
        if self.listening:
            self.engine.wait_for_push(self.spec, min(_REPOLL_S, remaining))
            return True
        if self.probe is None:
            time.sleep(min(self.delay, remaining))
            self.delay = min(self.delay * 2, _POLL_MAX_S)
            return True
        fallback = time.monotonic() + _POLL_MAX_S
        while (now := time.monotonic()) < min(fallback, self.deadline):
            time.sleep(min(_PROBE_S, self.deadline - now))
            rows = self.engine.run(self.probe, {}, write=False)
            head = tuple(rows[0].values()) if rows else None
            if head is not None and head != self.seen:
                self.seen = head
                return True
        return time.monotonic() < self.deadline

    def close(self) -> None:
        if self.listening:
            with suppress(QadminError):  # a dead connection must not hide the first error
                self.engine.unlisten(self.spec)


def pop(
    engine: Engine,
    spec: QueueSpec,
    count: int = 1,
    wait_s: float = 0.0,
    worker: str | None = None,
) -> list[Message]:
    """Pop up to ``count`` messages; wait up to ``wait_s`` for the first one to arrive."""
    _check_count(count)
    params: dict[str, Any] = {"count": count}
    if spec.info.claims:
        params["worker"] = worker or default_worker()
    statements = engine.hooks.section(spec, "pop")
    waiter = _Waiter(engine, spec, wait_s)
    try:
        while True:
            got = _retrying(spec, lambda: engine.run(statements, params))
            rows = [message(r) for r in got if r.get("id") is not None]
            if rows:
                return [Message.of(r) for r in spec.sort_rows(rows)]
            if not waiter.next_try():
                raise _empty(engine, spec)
    finally:
        waiter.close()


@dataclass(frozen=True)
class Delivery:
    """What a pop handed out: the messages popped, how many of them the output delivered, and
    whether exactly those were taken (``exact``) or, failing that, the whole batch went back
    (the delivered ones will be served again)."""

    rows: list[Message]
    delivered: int
    exact: bool = True


def pop_delivering(
    engine: Engine,
    spec: QueueSpec,
    count: int,
    deliver: Callable[[list[Message]], int],
    wait_s: float = 0.0,
    worker: str | None = None,
) -> Delivery:
    """Pop up to ``count`` messages in one transaction and hand them to ``deliver`` (which
    writes them out and returns how many it delivered) before the commit. All delivered:
    commit. Fewer: the pop is rolled back to a savepoint taken before it, and the delivered
    number is popped again in the same transaction; when that takes exactly the messages
    delivered (the queue's order; no consumer took one in between) it commits them and the
    rest stay in the queue (claim queues: unclaimed). Otherwise, and always for a ring (a
    rolled-back ring pop leaves its numbers behind, for ``repair`` to park), the whole batch
    stays, the delivered ones too. QueueEmpty after ``wait_s``."""
    _check_count(count)
    params: dict[str, Any] = {"count": count}
    if spec.info.claims:
        params["worker"] = worker or default_worker()
    statements = engine.hooks.section(spec, "pop")
    waiter = _Waiter(engine, spec, wait_s)
    handed = False
    mark = "qadmin_pop"

    def take(execute: Callable[..., list[dict[str, Any]]], n: int) -> list[Message]:
        got = [
            message(r)
            for statement in statements
            for r in execute(statement, {**params, "count": n})
            if r.get("id") is not None
        ]
        return [Message.of(r) for r in spec.sort_rows(got)]

    def attempt() -> Delivery | None:
        nonlocal handed
        with engine.transaction() as execute:
            execute(engine.hooks.mark_sql(mark))
            rows = take(execute, count)
            if not rows:
                return None
            handed = True  # from here a retry would deliver twice
            delivered = deliver(rows)
            if delivered == len(rows):
                return Delivery(rows, delivered)
            execute(engine.hooks.mark_sql(mark, undo=True))
            if delivered == 0:
                return Delivery(rows, 0)
            if not spec.info.ring:
                again = take(execute, delivered)
                if {r.id for r in again} == {r.id for r in rows[:delivered]}:
                    return Delivery(rows, delivered)
                execute(engine.hooks.mark_sql(mark, undo=True))
            return Delivery(rows, delivered, exact=False)

    def once() -> Delivery | None:
        # A deadlock victim runs again (as _retrying does), unless it had handed messages out.
        for tries in range(1, DEADLOCK_RETRIES + 1):
            try:
                return attempt()
            except Deadlock:
                if handed or spec.info.ring or tries == DEADLOCK_RETRIES:
                    raise
                time.sleep(0.01 * tries)
        raise AssertionError("unreachable")

    try:
        while True:
            outcome = once()
            if outcome is not None:
                return outcome
            if not waiter.next_try():
                raise _empty(engine, spec)
    finally:
        waiter.close()


def peek(engine: Engine, spec: QueueSpec, count: int = 10) -> list[Message]:
    _check_count(count)
    rows = engine.run(engine.hooks.section(spec, "peek"), {"count": count}, write=False)
    return _messages(rows)


def _fenced(section: str, attempt: int | None) -> str:
    """``ack_fenced`` / ``fail_fenced`` when a fencing attempt is given: the routines (and
    SQLite's statements) that take it, beside those existing callers use unchanged."""
    return section if attempt is None else section + "_fenced"


def _kept(engine: Engine, error: str) -> str:
    """The error text as the fail routines keep it: ``ERROR_CHARS`` characters, then how long
    it was. The routines cut it themselves (for applications too); SQLite has none, so its
    statements get it cut here."""
    if engine.hooks.has_routines or len(error) <= ERROR_CHARS:
        return error
    return f"{error[:ERROR_CHARS]}... (truncated, {len(error)} chars)"


def _not_claimed(spec: QueueSpec, message_id: int, attempt: int | None) -> NotFound:
    if attempt is None:
        return NotFound(f"message {message_id} is not claimed in queue {spec.name}")
    return NotFound(
        f"message {message_id} is not claimed at attempt {attempt} in queue {spec.name} "
        "(its claim went stale and it was requeued, claimed again, finished or died since; "
        "a redriven message comes back under a new id)"
    )


def ack(engine: Engine, spec: QueueSpec, message_id: int, attempt: int | None = None) -> Acked:
    """Delete a claimed message after successful processing. ``attempt`` (the fencing token
    pop returned): only while the message is still at that attempt."""
    spec.require("claims", "ack")
    rows = engine.run(
        engine.hooks.section(spec, _fenced("ack", attempt)),
        {"id": message_id, "attempt": attempt},
    )
    if not rows:
        raise _not_claimed(spec, message_id, attempt)
    return Acked.of(message(rows[0]))


def fail(
    engine: Engine,
    spec: QueueSpec,
    message_id: int,
    error: str,
    retry: bool = False,
    attempt: int | None = None,
) -> Failed:
    """Record a processing error; with ``retry`` the claim is released for another consumer.
    ``dead``: this was the queue's max_attempts-th attempt and the message moved to its dead
    table. ``attempt`` fences as for ack."""
    spec.require("claims", "fail")
    rows = engine.run(
        engine.hooks.section(spec, _fenced("fail", attempt)),
        {"id": message_id, "error": _kept(engine, error), "retry": retry, "attempt": attempt},
    )
    if not any(r.get("id") is not None for r in rows):
        raise _not_claimed(spec, message_id, attempt)
    done = _merge(rows)
    done["dead"] = bool(done.get("dead"))  # a queue made before dead letters: never dead
    return Failed.of(done)


def _check_count(count: int) -> None:
    if not 1 <= count <= MAX_BATCH:
        raise UsageError(f"--count must be between 1 and {MAX_BATCH}")
