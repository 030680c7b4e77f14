"""Lock waits on the queue table: who waits, who blocks, how long; pile-ups behind one blocker."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qadmin.catalog import sql
from qadmin.diagnostics.model import (
    CRITICAL,
    WARNING,
    BlockedPart,
    Context,
    Finding,
    InspectReport,
    Number,
    Options,
    Result,
    Row,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric, Section
from qadmin.engines.dialect import Dialect

if TYPE_CHECKING:
    from qadmin.diagnostics.entries.ghosts import Holder
    from qadmin.engines.base import Engine
    from qadmin.kinds import QueueSpec


@dataclass(frozen=True)
class LockWait(Row):
    """A row of locks.sql: one session waiting on the queue table and who blocks it."""

    waiter: str = ""
    blocker: str | None = None
    lock: str | None = None
    wait_s: Number | None = None
    blocker_state: str | None = None
    blocker_xact_age_s: Number | None = None
    waiter_query: str | None = None
    blocker_query: str | None = None
    blocker_source: str | None = None  # MySQL, MariaDB: how the blocker was found
    root_blocker: str | None = None  # not SQL Server
    candidates: str | None = None  # MariaDB: the other sessions an inferred holder may be


@dataclass(frozen=True)
class LockHolder(Row):
    """A row of lock_holders.sql: a session holding (or queued for) a lock on the table."""

    holder: str = ""
    mode: str | None = None
    relation: str | None = None  # PostgreSQL: the queue table or its dead table
    certain: bool | int | None = None  # MySQL: False for a processlist guess
    granted: bool | int | None = None
    state: str | None = None
    xact_age_s: Number | None = None
    query: str | None = None


@dataclass
class Locks(Result):
    waits: list[LockWait] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    read: bool = True  # False: the lock views could not be read (no figure, not "no waits")

    @property
    def max_wait_s(self) -> float:
        return max((float(w.wait_s or 0) for w in self.waits), default=0.0)


@dataclass(frozen=True)
class LockWaiting(Row):
    """The row of lock_waiting.sql: lock requests waiting anywhere on the server."""

    waiting: Number | None = None


def collect(ctx: Context) -> Locks:
    if ctx.shared is not None and _none_waiting(ctx):
        return Locks()  # nobody waits on any lock, so nobody on this queue's table
    part = sql.read(ctx.engine, "locks", ctx.params)
    return Locks(part.typed(LockWait), [part.note] if part.note else [], part.note is None)


def _none_waiting(ctx: Context) -> bool:
    """In a run over many queues, whether the run's one reading of the server's waiting lock
    requests found none (an engine without that file, or a role that may not read it: not
    known, so each queue's waits are read)."""
    read = ctx.read("lock_waiting")
    return read.note is None and sql.as_int(read.first_typed(LockWaiting).waiting) == 0


# blocker_source values for a holder that is a guess, or that could not be found at all.
INFERRED = "inferred"
UNKNOWN = "unknown"
CONFIRM = (
    "confirm first (SHOW PROCESSLIST; the metadata_lock_info plugin or "
    "performance_schema.metadata_locks name the holder), then "
)
FIND_HOLDER = (
    "find the holder: SHOW PROCESSLIST (a session that ran LOCK TABLES, or has a transaction "
    "open on the table, perhaps from another database); the metadata_lock_info plugin or "
    "performance_schema.metadata_locks name it; then end it"
)


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None:
        part = Locks()
    lock_wait, waiters = report.limit("lock_wait"), report.limit("lock_waiters")
    out = []
    behind = _queues(part, lock_wait.warn)
    for wait in (w for queued in behind.values() for w in queued):
        wait_s = float(wait.wait_s or 0)
        critical = lock_wait.crit is not None and wait_s >= lock_wait.crit
        out.append(_lock_wait(wait, wait_s, CRITICAL if critical else WARNING, report))
    out += [
        part_blocked(name, blocked, report.advice.base_hooks, report.command("locks"))
        for name, blocked in report.blocked.items()
        if not blocked.lockless
    ]
    pileup = waiters.crit if waiters.crit is not None else waiters.warn
    for root, queued in sorted(behind.items()):
        if pileup is not None and len(queued) >= pileup:
            level = (
                CRITICAL if waiters.crit is not None and len(queued) >= waiters.crit else WARNING
            )
            head = queued[0]
            fix = _fix(head, report)
            if _source(head) not in (INFERRED, UNKNOWN):
                end = report.advice.base_hooks.end_session(root)
                fix = f"end session {root}'s transaction: {end}"
            out.append(
                Finding(
                    level,
                    "lock_pileup",
                    f"{len(queued)} sessions wait on the queue table behind {_holder(head)}",
                    fix,
                )
            )
    return out


def _lock_wait(wait: LockWait, wait_s: float, level: str, report: InspectReport) -> Finding:
    """A certain blocker is named as such; a guessed one says "probably", and its fix asks to
    confirm before ending anything (MariaDB without the metadata_lock_info plugin)."""
    head = f"session {wait.waiter} has waited {sql.duration(wait_s)} for {wait.lock}"
    if _source(wait) not in (INFERRED, UNKNOWN):
        blocker = str(wait.blocker)
        return Finding(
            level,
            "lock_wait",
            f"{head} held by session {blocker}",
            f"see what session {blocker} is doing; end its transaction if stuck "
            f"({report.advice.base_hooks.end_session(blocker)})",
        )
    if wait.blocker and str(wait.blocker) != _root(wait):
        head += f", queued behind session {wait.blocker}'s pending request, which waits for"
    else:
        head += " held by"
    return Finding(level, "lock_wait", f"{head} {_holder(wait)}", _fix(wait, report))


def part_blocked(name: str, blocked: BlockedPart, advice: Dialect, locks_command: str) -> Finding:
    """A part that gave up on its short lock timeout, the holder named, and how to end it
    (``locks_command``: ``qadmin locks QUEUE`` as a fix prints it)."""
    fix = f"{locks_command} to find the session holding a lock on the queue table"
    if blocked.session is not None:
        end = advice.end_session(blocked.session)
        fix = f"wait for it to finish, or end it: {end}" if blocked.certain else CONFIRM + end
    message = f"the {name} part was not read: it gave up waiting for a lock held by "
    return Finding(WARNING, "part_blocked", message + blocked.blocker, fix)


def _source(wait: LockWait) -> str:
    return str(wait.blocker_source or "")


def _holder(wait: LockWait) -> str:
    """Who holds what the wait (or its chain) is waiting for, as a human should read it."""
    root = _root(wait)
    if _source(wait) == UNKNOWN:
        return (
            "an unknown holder (no open transaction in this database began before the wait: "
            "a LOCK TABLES, or a session working from another database)"
        )
    if _source(wait) != INFERRED:
        return f"session {root}"
    others = f"; other candidates: {wait.candidates}" if wait.candidates else ""
    return f"probably session {root} (inferred: an open transaction in this database{others})"


def _fix(wait: LockWait, report: InspectReport) -> str:
    if _source(wait) == UNKNOWN:
        return FIND_HOLDER
    return CONFIRM + report.advice.base_hooks.end_session(_root(wait))


ENTRY: Diagnostic[Locks] = Diagnostic(
    name="locks",
    order=40,
    sql=("locks", "lock_holders", "lock_waiting"),
    collect=collect,
    rule=rule,
    lock_free=True,
    rows=(("locks", LockWait), ("lock_holders", LockHolder), ("lock_waiting", LockWaiting)),
    server_wide=("lock_waiting",),
    metrics=(
        Metric(
            "lock_wait",
            "s",
            "longest lock wait on the queue in seconds",
            lambda r: p.max_wait_s if (p := _read(r)) else None,
            warn=5,
            crit=30,
        ),
        Metric(
            "lock_waiters",
            "",
            "sessions waiting past --warn-lock-wait on the queue table behind one blocker "
            "(a pile-up)",
            lambda r: (
                float(_most_behind_one(p, r.limit("lock_wait").warn)) if (p := _read(r)) else None
            ),
            crit=2,
        ),
    ),
    fields=(
        Field(
            "lock_waits",
            "sessions",
            "sessions waiting on a lock on the queue table",
            "int32",
            lambda r: len(p.waits) if (p := r.part(ENTRY)) else None,
        ),
        Field(
            "max_lock_wait_s",
            "s",
            "longest of those waits",
            "float64",
            lambda r: p.max_wait_s if (p := r.part(ENTRY)) else None,
        ),
    ),
    sections=(
        Section(
            "lock waits",
            "locks.waits",
            (
                "waiter",
                "blocker",
                "lock",
                "wait_s",
                "blocker_state",
                "blocker_xact_age_s",
                "waiter_query",
                "blocker_query",
                "blocker_source",
                "candidates",
            ),
        ),
    ),
)


def _root(wait: LockWait) -> str:
    """The session at the head of a wait chain (a reader queued behind a waiting ALTER waits,
    in the end, for the transaction the ALTER waits for): a pile-up is counted per root, and
    the waits whose holder could not be found count together, under "unknown"."""
    if wait.root_blocker:
        return str(wait.root_blocker)
    return UNKNOWN if _source(wait) == UNKNOWN else str(wait.blocker)


def _read(report: InspectReport) -> Locks | None:
    part = report.part(ENTRY)
    return part if part is not None and part.read else None


def _queues(part: Locks, at_least_s: float | None) -> dict[str, list[LockWait]]:
    """The waits past the warning level, one per waiter, grouped by root blocker in the order
    listed: consumers of a strict queue wait on each other for a moment by design, and such
    short waits are neither a finding nor a pile-up."""
    behind: dict[str, list[LockWait]] = defaultdict(list)
    seen: set[str] = set()
    for wait in part.waits:
        waiter = str(wait.waiter)
        if waiter in seen or (at_least_s is not None and float(wait.wait_s or 0) < at_least_s):
            continue
        seen.add(waiter)
        behind[_root(wait)].append(wait)
    return behind


def _most_behind_one(part: Locks, at_least_s: float | None) -> int:
    """The longest queue behind one root blocker (the lock_waiters metric)."""
    return max((len(v) for v in _queues(part, at_least_s).values()), default=0)


def blocker_of(
    ctx: Context, locks: Locks | None, ghosts_holders: Sequence[Holder]
) -> tuple[str, str | None, bool]:
    """Who a part that timed out on its lock was most likely waiting for, read at once while
    the lock is still held, and whether that is certain: a holder of (or queued for) an
    exclusive lock on the table or its dead table, else the holder the lock waits seen wait
    for, else a session in the queue's database, else (a guess across the server) the oldest
    open transaction."""
    spec = ctx.spec
    dead = spec.objects()["dead"] if spec is not None and spec.dead_table else ctx.table
    holders = sql.read(ctx.engine, "lock_holders", {**ctx.params, "dead": dead}).typed(LockHolder)
    certain = [h for h in holders if h.certain is None or h.certain]
    if certain:
        first = certain[0]
        held = "holds" if first.granted else "waits for"
        relation = first.relation if first.has("relation") else ctx.table
        queue = ctx.spec is not None or ctx.profile is not None
        on = "the queue table" if relation == ctx.table and queue else relation or dead
        text = (
            f"session {first.holder}, which {held} {first.mode} on {on} "
            f"({first.state or 'state unknown'}: {first.query or ''})"
        )
        return text, str(first.holder), True
    if locks is not None and locks.waits:
        wait = locks.waits[0]
        if _source(wait) in (INFERRED, UNKNOWN):
            root = None if _source(wait) == UNKNOWN else _root(wait)
            return f"{_holder(wait)}, whom the lock waits listed wait for", root, False
        blocker = _root(wait)
        return f"session {blocker} (at the head of the lock waits listed)", blocker, True
    if holders:
        first = holders[0]
        text = (
            f"session {first.holder} (probably: in this database for "
            f"{first.xact_age_s} s, {first.state}; the server cannot list "
            "table locks without performance_schema)"
        )
        return text, str(first.holder), False
    if ghosts_holders:
        oldest = max(ghosts_holders, key=lambda h: float(h.xact_age_s or 0))
        who = str(oldest.holder)
        text = (
            f"a guess across the server: probably {oldest.holder_kind} {who}, the oldest "
            "open transaction on the server (any database: nothing in this one fits)"
        )
        return text, who, False
    return "a session qadmin cannot see", None, False


def blocked_line(engine: Engine, spec: QueueSpec, exc: Exception, what: str) -> str:
    """A command's lock timeout in one line, naming the session in the way as a read-only
    command's does (read at once, while the lock is still held), and how to end it."""
    text, session, certain = blocker_of(Context(engine, spec.name, spec, Options()), None, [])
    line = f"{what}: {exc}; blocked by {text}"
    if session is not None:
        end = engine.base_hooks.end_session(session)
        line += f"; end it if stuck: {end}" if certain else f"; {CONFIRM}{end}"
    return line
