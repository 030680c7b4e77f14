"""Dead / ghost records of the queue table, and the sessions whose snapshots hold their cleanup
back (the horizon): dead rows, InnoDB's purge lag, held snapshots."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.model import (
    CRITICAL,
    INFO,
    WARNING,
    Context,
    Finding,
    InspectReport,
    Number,
    Result,
    Row,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric, Section
from qadmin.values import iso

# Dead rows worth a finding: this many, and either 10x the live rows (a drained queue) or this
# share of the table (a queue that keeps rows).
DEAD_ROWS_MIN = 1000
DEAD_SHARE = 0.2
DEAD_TIMES_LIVE = 10
# InnoDB's history list (server-wide) this long means purge is behind.
PURGE_LAG_UNDO_LOGS = 100_000

# A snapshot pinned to the first holder's xid, open this long, is named beside it (as maintain
# names it): ending the first alone would not move the horizon.
CO_HOLDER_S = 1.0

# Holders whose age is a transaction's (a replication slot has none).
SESSION_KINDS = ("backend", "session", "prepared_xact")

GHOST_SOURCES = (
    ("dead_rows", "pg_stat_user_tables.n_dead_tup"),
    ("history_list_length", "innodb history list length"),
    ("free_pages", "sqlite freelist pages"),
    ("ghost_records_cumulative", "sql server leaf_ghost_count (cumulative)"),
)


@dataclass(frozen=True)
class GhostFacts(Row):
    """The row of ghosts.sql: each engine's own figures of dead (ghost) records."""

    live_rows: Number | None = None  # PostgreSQL
    dead_rows: Number | None = None
    last_autovacuum: Any = None  # a timestamptz
    last_vacuum: Any = None
    autovacuum_count: Number | None = None
    autovacuum_due: bool | None = None
    autovacuum_enabled: bool | None = None
    history_list_length: Number | None = None  # MySQL, MariaDB
    history_list_scope: str | None = None
    free_pages: Number | None = None  # SQLite
    pages: Number | None = None
    ghost_records_cumulative: Number | None = None  # SQL Server
    leaf_deletes_cumulative: Number | None = None
    row_lock_waits_cumulative: Number | None = None
    row_lock_wait_ms_cumulative: Number | None = None

    def __post_init__(self) -> None:
        # The vacuum times in the one form every output uses (ISO 8601 UTC, Z), not the
        # driver's timestamptz text.
        for name in ("last_autovacuum", "last_vacuum"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                object.__setattr__(self, name, iso(value))


@dataclass(frozen=True)
class Holder(Row):
    """A row of horizon.sql: a session or backend holding back cleanup, the oldest first."""

    holder_kind: str = ""
    holder: str | int = ""
    role: str | None = None
    database: str | None = None  # PostgreSQL
    state: str | None = None
    xmin_age_xids: Number | None = None
    holds_own_xid: bool | None = None  # PostgreSQL
    xact_age_s: Number | None = None
    detail: str | None = None


@dataclass
class Ghosts(Result):
    table: GhostFacts = field(default_factory=GhostFacts)
    holders: list[Holder] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    horizon_read: bool = False  # whether the holders list could be read at all
    # Why the holder's age was not read (a privilege missing), else None: check then says
    # UNKNOWN naming it, never OK on an age it could not see.
    age_unread: str | None = None

    def oldest_holder(self) -> tuple[Holder | None, float]:
        """The holder that actually holds the horizon and how long its transaction has been
        open: the first row, since every engine's horizon query puts it first (PostgreSQL: the
        oldest xid held back across all databases, its owner before the sessions whose
        snapshots merely began while it ran; InnoDB, SQL Server: the oldest transaction)."""
        oldest = self.holders[0] if self.holders else None
        # At least 0: a transaction that began after this one's now() reads slightly negative.
        return oldest, max(float(oldest.xact_age_s or 0), 0.0) if oldest else 0.0

    def co_holders(self, min_age_s: float) -> list[Holder]:
        """Backends whose own snapshot is pinned to the same horizon as the first holder's
        (it began while that transaction ran) and has been open at least ``min_age_s``: ending
        the first alone does not move the horizon while they stay (PostgreSQL; elsewhere
        none)."""
        return co_holders(self.holders, min_age_s)

    def vacuumed_while_held(self, age_s: float) -> bool | None:
        """Whether a VACUUM finished after the holder's transaction began (so the dead rows
        still counted are ones it could not remove: held back for certain). None where the
        engine records no VACUUM (InnoDB purges all the time: its history list is the proof);
        False on PostgreSQL when none has run since, as with autovacuum off or not yet due:
        the rows may have died before the holder began, and then it holds none of them."""
        if self.table.autovacuum_count is None:
            return None
        times = [t for t in (self.table.last_vacuum, self.table.last_autovacuum) if t]
        if not times:
            return False
        last = max(datetime.fromisoformat(str(t).replace("Z", "+00:00")) for t in times)
        return (datetime.now(UTC) - last).total_seconds() < age_s

    def snapshot_age_s(self) -> float | None:
        if not self.horizon_read or self.age_unread is not None:
            return None
        return self.oldest_holder()[1]

    def dead_ratio(self) -> float | None:
        dead, live = self.table.dead_rows, self.table.live_rows
        free, pages = self.table.free_pages, self.table.pages
        if dead is not None:
            return float(dead) / max(float(live or 0), 1.0)
        if free is not None and pages:
            return float(free) / float(pages)
        return None

    def ghost_figure(self) -> tuple[int | None, str | None]:
        for key, source in GHOST_SOURCES:
            value = getattr(self.table, key)
            if value is not None:
                return int(value), source
        return None, None


def co_holders(holders: list[Holder], min_age_s: float) -> list[Holder]:
    """The rows after the first that hold back the same xid (``xmin_age_xids``) with a
    transaction open at least ``min_age_s``: a long snapshot taken while the first one's
    transaction ran. A session whose snapshot is younger merely was active, and is left out."""
    if not holders or holders[0].xmin_age_xids is None:
        return []
    first = holders[0].xmin_age_xids
    return [
        h
        for h in holders[1:]
        if h.holder_kind == "backend"
        and h.xmin_age_xids == first
        and float(h.xact_age_s or 0) >= min_age_s
    ]


def collect(ctx: Context) -> Ghosts:
    dead = sql.read(ctx.engine, "ghosts", ctx.params)
    holders = ctx.read("horizon")  # server-wide: one reading for a whole status run
    notes = [p.note for p in (dead, holders) if p.note]
    privilege = ctx.engine.base_hooks.horizon_notes(holders.rows)
    notes += privilege
    typed = holders.typed(Holder)
    # A file this engine has but could not run is a privilege (or version) missing; a file
    # it lacks (SQLite) is a figure the engine never has, noted by check as such.
    note = holders.note if sql.available(ctx.engine, "horizon") else None
    unread = _age_unread(note, typed, privilege)
    return Ghosts(dead.first_typed(GhostFacts), typed, notes, holders.note is None, unread)


def _age_unread(note: str | None, holders: list[Holder], privilege: list[str]) -> str | None:
    """Why the snapshot age is not known: the holders list itself unread (MariaDB without
    PROCESS), or the first holder a session whose transaction start this role cannot see
    (PostgreSQL without pg_read_all_stats: its age reads NULL, never 0)."""
    if note is not None:
        return note
    first = holders[0] if holders else None
    if first is not None and first.holder_kind in SESSION_KINDS and first.xact_age_s is None:
        why = privilege[0] if privilege else "its transaction start is not visible to this role"
        return f"{first.holder_kind} {first.holder} holds cleanup back, its age unread: {why}"
    return None


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None:
        return []
    advice = report.advice.base_hooks
    limit = report.limit("snapshot_age")
    holder, age = part.oldest_holder()
    holding = holder is not None and limit.warn is not None and age >= limit.warn
    out = []
    dead, live = sql.as_int(part.table.dead_rows), sql.as_int(part.table.live_rows)
    held_back = False
    proven = part.vacuumed_while_held(age) is not False
    if dead is not None and dead >= DEAD_ROWS_MIN:
        live = live or 0
        if dead > DEAD_TIMES_LIVE * max(live, 1) or dead > DEAD_SHARE * (live + dead):
            held_back = proven
            named = holder if holding else None
            out.append(_dead_rows(dead, live, named, age, report, proven, part.age_unread))
    hll = sql.as_int(part.table.history_list_length)
    if hll is not None and hll >= PURGE_LAG_UNDO_LOGS:
        held_back = True
        message = (
            f"InnoDB history list length (server-wide, all databases) is {hll}: purge is behind"
        )
        fix = f"{report.command('ghosts')} to see the oldest transaction, then end it"
        if holder is not None and holding:
            message += f"; session {holder.holder} has had a transaction open for "
            message += sql.duration(age)
            fix = f"end that transaction: {advice.end_session(str(holder.holder))}"
        out.append(Finding(WARNING, "purge_lag", message, fix, server_wide=True))
    free, pages = sql.as_int(part.table.free_pages), sql.as_int(part.table.pages)
    if free and pages and free > 0.5 * pages and pages > 1000:
        out.append(
            Finding(
                INFO,
                "free_pages",
                f"{free} of {pages} pages of the file are free",
                advice.vacuum_advice(report.table),
            )
        )
    if holder is not None and holding and (held_back or limit.given):
        critical = limit.crit is not None and age >= limit.crit
        out.append(
            Finding(
                CRITICAL if critical else WARNING,
                "snapshot_held",
                f"{_holding(holder)} for {sql.duration(age)}: it holds back cleanup of dead rows"
                + _also(part.co_holders(CO_HOLDER_S)),
                f"end it ({_ends(advice, holder, part.co_holders(CO_HOLDER_S))}); "
                f"{advice.idle_transaction_advice()}",
            )
        )
    return out


def _also(others: list[Holder]) -> str:
    if not others:
        return ""
    named = ", ".join(f"{h.holder_kind} {h.holder}" for h in others)
    return f" (and so does the snapshot of {named}, taken while it ran)"


def _ends(advice: Any, holder: Holder, others: list[Holder]) -> str:
    return "; ".join(
        advice.end_session(str(h.holder), str(h.holder_kind)) for h in [holder, *others]
    )


def _holding(holder: Holder) -> str:
    """Who holds cleanup back and how: a PostgreSQL backend's snapshot, or a session's open
    transaction (MySQL/MariaDB: the processlist id KILL takes; SQL Server: the session id)."""
    if holder.holder_kind == "session":
        return f"session {holder.holder} has had a transaction open"
    return f"{holder.holder_kind} {holder.holder} has had a snapshot / transaction open"


def _dead_rows(
    dead: int,
    live: int,
    holder: Holder | None,
    age: float,
    report: InspectReport,
    proven: bool = True,
    unread: str | None = None,
) -> Finding:
    """``proven``: a VACUUM ran while the holder was open and left these rows (or the engine
    purges all the time). Else the holder is named as a suspect, and the fix is the VACUUM
    that tells: ending a session that holds nothing back would help no one."""
    advice = report.advice.base_hooks
    if live == 0:
        message = f"{dead} dead rows and no live ones"
    elif dead > DEAD_TIMES_LIVE * live:
        message = f"dead rows are {dead / live:.0f}x the live rows ({dead} dead)"
    else:
        message = f"{dead} dead rows, {100 * dead / (live + dead):.0f} % of the table's rows"
    if holder is None:
        if unread is not None:  # a role without the privilege: say what it could not judge
            message += f"; whether a snapshot holds them back is not known: {unread}"
        return Finding(WARNING, "dead_rows", message, advice.vacuum_advice(report.table))
    who = str(holder.holder)
    end = advice.end_session(who, str(holder.holder_kind))
    if not proven:
        return Finding(
            WARNING,
            "dead_rows",
            f"{message}; {holder.holder_kind} {who} has held a snapshot open for "
            f"{sql.duration(age)}, but no VACUUM has run since it began, so whether it holds "
            "them back is not known (rows that died before it began are not held)",
            f"{report.command('maintain')} --yes (its VACUUM removes what it can); if it "
            f"reports dead rows kept, end the holder it names ({end} if it is abandoned)",
        )
    # a snapshot pinned to the same xid holds the rows as well: ending the first alone would
    # free nothing (maintain names it too)
    part = report.part(ENTRY)
    others = part.co_holders(CO_HOLDER_S) if part is not None else []
    if others:
        end = _ends(advice, holder, others)
    fix = f"end that transaction ({end} if it is abandoned)"
    if report.parts.get("watermark") is not None:
        # Only a queue created --watermark has one; no command adds one later.
        fix += f"; then {report.command('watermark')} advance starts the pops past them"
    return Finding(
        CRITICAL,
        "dead_rows",
        f"{message} while {holder.holder_kind} {who} holds a snapshot open for "
        f"{sql.duration(age)}{_also(others)}",
        fix,
    )


ENTRY: Diagnostic[Ghosts] = Diagnostic(
    name="ghosts",
    order=30,
    sql=("ghosts", "horizon"),
    rows=(("ghosts", GhostFacts), ("horizon", Holder)),
    server_wide=("horizon",),
    collect=collect,
    rule=rule,
    lock_free=True,
    metrics=(
        Metric(
            "dead_ratio",
            "",
            "dead/ghost rows per live row (SQLite: free pages per page)",
            lambda r: p.dead_ratio() if (p := r.part(ENTRY)) else None,
        ),
        Metric(
            "snapshot_age",
            "s",
            "age of the oldest snapshot / open transaction holding back cleanup "
            "(default: named only while it holds back dead rows)",
            lambda r: p.snapshot_age_s() if (p := r.part(ENTRY)) else None,
            warn=60,
            unread=lambda r: p.age_unread if (p := r.part(ENTRY)) else None,
            perf_default=False,
        ),
    ),
    fields=(
        Field(
            "ghosts",
            "rows|undo logs|pages",
            "dead rows (PostgreSQL), history list length (InnoDB, server-wide), "
            "free pages (SQLite), cumulative ghost records (SQL Server); see ghost_source",
            "int64",
            lambda r: p.ghost_figure()[0] if (p := r.part(ENTRY)) else None,
        ),
        Field(
            "ghost_source",
            "",
            "which of those ghosts is",
            "string",
            lambda r: p.ghost_figure()[1] if (p := r.part(ENTRY)) else None,
        ),
        Field(
            "snapshot_age_s",
            "s",
            "age of the oldest snapshot / open transaction holding back cleanup",
            "float64",
            lambda r: p.snapshot_age_s() if (p := r.part(ENTRY)) else None,
        ),
    ),
    sections=(
        Section(
            "what holds cleanup back",
            "ghosts.holders",
            (
                "holder_kind",
                "holder",
                "role",
                "database",
                "state",
                "xact_age_s",
                "xmin_age_xids",
                "detail",
            ),
            shown_with=("dead_rows", "purge_lag", "snapshot_held", "part_blocked"),
        ),
    ),
)
