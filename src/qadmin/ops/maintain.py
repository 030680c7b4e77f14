"""Maintenance a queue's table needs, proposed from cheap reads and run online.

A queue table churns: every message is a row inserted and deleted (or a slot updated in
place), so its dead rows, free pages and index bloat grow with traffic, not with its depth.
``plan`` reads what each engine already exposes (dead tuples, the index bloat estimate, invalid
indexes, autovacuum settings, MariaDB's free bytes, SQLite's free pages) and proposes the
engine's online action for each, with the lock it takes; ``run`` then runs them one at a time,
each outside any transaction with a short lock wait, so a DDL never queues behind a long
transaction while producers and consumers queue behind it: it is skipped and says so.

An action whose lock blocks producers or consumers (SQLite's VACUUM, a copying rebuild on
MariaDB, PostgreSQL's ACCESS EXCLUSIVE truncation) is refused unless ``allow_blocking``: qadmin
cannot know that a queue will stay idle while it runs. The SQL lives in
``sql/maintenance/<engine>.sql``; the reads it reuses in ``sql/diagnostics/<engine>/``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from qadmin import sqlfiles
from qadmin.diagnostics.entries.ghosts import Holder, co_holders
from qadmin.diagnostics.entries.invalid_indexes import duplicate_keys
from qadmin.diagnostics.entries.maintenance import MaintenanceFacts
from qadmin.diagnostics.entries.maintenance import stale_reason as _stale
from qadmin.engines.base import Engine, Row
from qadmin.errors import LockTimeout, PermissionMissing, QadminError, UnsupportedError

# Dead rows past which a VACUUM is worth proposing (a queue's table holds few live rows, so a
# share of them says little).
DEAD_ROWS = 1_000
# Rows written (inserted + updated + deleted) since the statistics reset past which a table
# "churns": a queue whose autovacuum should follow a fixed threshold, not 20 % of its size.
CHURN_ROWS = 10_000
# Share of a MariaDB/MySQL table's space that is free, and the least free space, for a rebuild.
FREE_SHARE = 0.25
FREE_BYTES = 4 * 1024 * 1024
# SQLite free pages (a share of the file, and a least number) worth giving back.
FREE_PAGES_SHARE = 0.1
FREE_PAGES = 100
# SQL Server: reorganize from this logical fragmentation, rebuild from the second (the usual
# 5 % / 30 % rule), on indexes of at least this many pages.
REORGANIZE_PCT, REBUILD_PCT, MSSQL_PAGES = 5.0, 30.0, 1000
# PostgreSQL's leftovers of a failed REINDEX CONCURRENTLY: the new copy or the old index.
LEFTOVER = re.compile(r"_cc(new|old)[0-9]*$")
NOT_OWNER = (
    "this role does not own the table: it needs the table's owner (or a member of that role), "
    "the database's owner or a superuser"
)
# A snapshot open this long is named, before a VACUUM, as what would keep its dead rows.
HELD_S = 1.0
# After a VACUUM, dead rows still counted (VACUUM sets n_dead_tup to those it had to keep) past
# this many and this share of those it found: it was held back, and says by whom.
KEPT_SHARE = 0.5

SUE = "SHARE UPDATE EXCLUSIVE on the table: does not block reads or writes (pushes, pops)"


@dataclass(frozen=True)
class Action:
    """One maintenance step: what it does, why (the read that called for it), the lock it takes
    and whether that lock blocks producers or consumers; its status once planned or run."""

    action: str
    target: str
    why: str
    lock: str
    statements: tuple[str, ...]
    blocking: bool = False
    note: str = ""
    after: str = ""  # the action this one only makes sense after (its name): skipped with it
    status: str = "proposed"
    seconds: float | None = None
    # The privilege whose lack failed it (a VACUUM of a table the role does not own): the
    # command then exits 7, as every refused privilege does.
    privilege: str | None = None


@dataclass
class Plan:
    """The proposals for one table, with the figures they came from."""

    queue: str
    table: str
    engine: str
    reads: dict[str, Any] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    dry_run: bool = True

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def skipped(self) -> list[Action]:
        return [a for a in self.actions if a.status.startswith("skipped")]

    @property
    def failed(self) -> list[Action]:
        return [a for a in self.actions if a.status.startswith("failed")]

    @property
    def incomplete(self) -> list[Action]:
        """Refused as blocking, or done but held back (a VACUUM whose dead rows a snapshot
        keeps): nothing failed, yet the table is not as maintain would leave it."""
        return [a for a in self.actions if a.status.startswith(("refused", "done, "))]


def _file(engine: Engine) -> sqlfiles.SqlFile:
    return sqlfiles.load(f"maintenance/{engine.base_dialect}.sql")


def _sql(engine: Engine, section: str, **names: str) -> tuple[str, ...]:
    return tuple(engine.hooks.render_text(s, names) for s in _file(engine).statements(section))


def _read(engine: Engine, section: str, table: str) -> Row:
    rows = engine.query(_file(engine).statements(section)[0], _params(engine, section, table))
    return rows[0] if rows else {}


def _params(engine: Engine, section: str, table: str) -> dict[str, Any]:
    statement = _file(engine).statements(section)[0]
    return {} if ":table" not in statement else {"schema": engine.schema, "table": table}


def _diagnostic(engine: Engine, name: str, table: str) -> list[Row]:
    return engine.diagnostic(name, {"schema": engine.schema, "table": table})


def _postgresql(engine: Engine, table: str, updated_in_place: bool) -> tuple[Row, list[Action]]:
    ghosts = (_diagnostic(engine, "ghosts", table) or [{}])[0]
    stats = (_diagnostic(engine, "maintenance", table) or [{}])[0]
    settings = _read(engine, "settings", table)
    actions: list[Action] = []
    for index in _diagnostic(engine, "invalid_indexes", table):
        name = str(index["index_name"])
        if LEFTOVER.search(name):
            actions.append(_drop_leftover(engine, name))
        elif duplicate_keys(engine, index):
            # Its REINDEX would fail on them and leave an INVALID copy: not proposed.
            actions.append(
                Action(
                    "reindex",
                    name,
                    "INVALID (a failed CREATE INDEX CONCURRENTLY) and UNIQUE, while rows share "
                    "a key: rebuilding it fails the same way",
                    SUE + "; waits for transactions that use the table to end",
                    (),
                    status="refused: rows share a key of this UNIQUE index; list them with "
                    f"{index['duplicates_query']}, remove them, then run maintain again",
                )
            )
        else:
            actions.append(
                Action(
                    "reindex",
                    name,
                    "INVALID (a failed CREATE INDEX CONCURRENTLY): maintained by every write, "
                    "used by no query",
                    SUE + "; waits for transactions that use the table to end",
                    _sql(engine, "reindex", index=name),
                    note="cannot run in a transaction block: runs in autocommit; if it gives up "
                    "it leaves an INVALID _ccnew copy, which the same run drops",
                )
            )
    churn = sum(
        int(settings.get(k) or 0) for k in ("inserted_rows", "updated_rows", "deleted_rows")
    )
    if settings and settings.get("vacuum_scale_factor") is None and churn >= CHURN_ROWS:
        actions.append(
            Action(
                "autovacuum",
                table,
                f"{churn:,} rows written since the statistics reset and autovacuum at the "
                "server's default (a share of the table, which a queue's table never reaches "
                "for long)",
                SUE,
                _sql(engine, "autovacuum", table=table),
                note="per-table settings: autovacuum then runs every 1,000 dead rows, unthrottled "
                "by cost",
            )
        )
    updates = int(settings.get("updated_rows") or 0)
    if settings and settings.get("fillfactor") is None and updated_in_place:
        hot = int(settings.get("hot_updated_rows") or 0)
        share = (
            f"{100.0 * hot / updates:.0f} % of {updates:,} updates HOT" if updates else "none yet"
        )
        actions.append(
            Action(
                "fillfactor",
                table,
                f"rows are updated in place ({share}) and pages are filled to 100 %",
                SUE,
                _sql(engine, "fillfactor", table=table),
                note="applies to pages written from now on, not to existing ones",
            )
        )
    dead = int(ghosts.get("dead_rows") or 0)
    if dead >= DEAD_ROWS:
        analyze = stats.get("reltuples") is not None and float(stats["reltuples"]) < 0
        holder = _holder(engine, HELD_S)
        held = (
            f"; the horizon is held by {holder}: VACUUM keeps every row that died after that "
            "began (rows that died before it are removed)"
            if holder
            else ""
        )
        actions.append(
            Action(
                "vacuum",
                table,
                f"{dead:,} dead rows" + (" and never analyzed" if analyze else "") + held,
                SUE,
                _sql(engine, "vacuum", table=table),
                note="plain VACUUM (never FULL), with ANALYZE; leaves out the end-of-file "
                "truncation, whose ACCESS EXCLUSIVE lock stalls the queue (--allow-blocking "
                "keeps it)",
            )
        )
    stale = _stale(MaintenanceFacts.of(stats)) if stats else None
    if stale and dead < DEAD_ROWS:  # the VACUUM above analyzes too
        actions.append(
            Action(
                "analyze",
                table,
                f"statistics missing ({stale}): the finding stale_statistics",
                SUE,
                _sql(engine, "analyze", table=table),
            )
        )
    for index in _diagnostic(engine, "fragmentation", table):
        name = str(index["index_name"])
        waste = engine.base_hooks.index_waste(index)
        if index.get("valid") is False or waste is None or not waste[1]:
            continue
        actions.append(
            Action(
                "reindex",
                name,
                waste[0],
                SUE + "; waits for transactions that use the table to end",
                _sql(engine, "reindex", index=name),
                note="builds a new copy beside the old one, then swaps them; in autocommit",
            )
        )
    reads = {
        "dead_rows": dead,
        "live_rows": ghosts.get("live_rows"),
        "rows_written": churn,
        "fillfactor": settings.get("fillfactor"),
        "autovacuum_scale_factor": settings.get("vacuum_scale_factor"),
        # False: the role may not VACUUM, ANALYZE, REINDEX or ALTER the table (VACUUM would
        # only warn and skip it): every action is refused, naming what it needs
        "may_maintain": stats.get("may_vacuum"),
    }
    return reads, actions


def _holder(engine: Engine, min_age_s: float) -> str | None:
    """Who holds back the horizon: the first row of the horizon diagnostic (the one ghosts
    reads), which is the holder of the oldest xid held back in any database, never a session
    whose snapshot merely began while that one ran; with it the sessions whose snapshots,
    open at least ``min_age_s``, are pinned to the same xid (ending the first alone would not
    move it). None when there is none, when that holder is a backend whose transaction is
    younger than ``min_age_s``, or when the role cannot read the list."""
    try:
        rows = [Holder.of(r) for r in engine.diagnostic("horizon")]
    except PermissionMissing:
        return None
    if not rows:
        return None
    first = rows[0]
    if first.holder_kind == "backend" and float(first.xact_age_s or 0) < min_age_s:
        return None
    also = co_holders(rows, max(min_age_s, HELD_S))
    return " and ".join(_one_holder(row) for row in [first, *also])


def _one_holder(row: Holder) -> str:
    where = f" in database {row.database}" if row.database else ""
    if row.holder_kind != "backend":
        return f"{row.holder_kind.replace('_', ' ')} {row.holder}{where}"
    query = " ".join(str(row.detail or "").split())[:80]
    if row.xact_age_s is None:  # another role's session: its state and start are hidden
        since = "state and age not visible to this role (pg_read_all_stats shows them)"
    else:
        since = f"{row.state or 'state unknown'} for {float(row.xact_age_s):.0f} s"
    return f"pid {row.holder} ({row.role}{where}, {since}: {query})"


def _drop_leftover(engine: Engine, name: str) -> Action:
    return Action(
        "drop_invalid",
        name,
        "INVALID leftover of a failed REINDEX CONCURRENTLY (the index it copied still exists)",
        SUE + "; waits for transactions that use the table to end",
        _sql(engine, "drop_index", index=name),
        note="cannot run in a transaction block: runs in autocommit",
    )


def _mysql(engine: Engine, table: str, updated_in_place: bool) -> tuple[Row, list[Action]]:
    size = (_diagnostic(engine, "size", table) or [{}])[0]
    online = _read(engine, "online", table)
    try:
        stats = (_diagnostic(engine, "maintenance", table) or [{}])[0]
    except PermissionMissing:  # mysql.innodb_table_stats needs its own grant: then unknown
        stats = {}
    data, index = int(size.get("table_bytes") or 0), int(size.get("index_bytes") or 0)
    free = int(size.get("free_bytes") or 0)
    actions: list[Action] = []
    server = engine.hooks.title
    rows, pages = int(size.get("estimated_rows") or 0), data // int(online.get("page_size") or 1)
    sparse = data + index >= FREE_BYTES and rows < pages
    if sparse or (free >= FREE_BYTES and free >= FREE_SHARE * (data + index + free)):
        why = (
            f"{data + index:,} bytes of rows and indexes and {free:,} free for about {rows:,} rows"
        )
        blocker = _online_blocker(online)
        if blocker is None:
            actions.append(
                Action(
                    "rebuild",
                    table,
                    why,
                    f"{server}: an in-place rebuild with LOCK=NONE: reads and writes go on; an "
                    "exclusive metadata lock for a moment at its start and end (waits at most "
                    "the lock timeout, during which new statements on the table queue)",
                    _sql(engine, "rebuild", table=table),
                    note="the server refuses it (nothing changes) rather than block writes",
                )
            )
        else:
            actions.append(
                Action(
                    "optimize",
                    table,
                    f"{why}; online rebuild impossible: {blocker}",
                    f"{server}: a copying rebuild: writes to the table wait until it ends",
                    _sql(engine, "optimize", table=table),
                    blocking=True,
                )
            )
    stale = _stale(MaintenanceFacts.of(stats)) if stats else None
    never = bool(stats) and (not stats.get("stats_present") or stale is not None)
    if actions or never:
        actions.append(
            Action(
                "analyze",
                table,
                f"statistics missing ({stale or 'never gathered'})"
                if never
                else "statistics after the rebuild",
                f"{server}: a shared metadata lock: reads and writes go on",
                _sql(engine, "analyze", table=table),
                after=actions[-1].action if actions and stats.get("stats_present") else "",
            )
        )
    reads = {
        "table_bytes": data,
        "index_bytes": index,
        "free_bytes": free,
        "estimated_rows": rows,
        "storage_engine": online.get("storage_engine"),
    }
    return reads, actions


def _online_blocker(online: Row) -> str | None:
    """Why this table cannot be rebuilt with LOCK=NONE, or None when it can."""
    storage = str(online.get("storage_engine") or "").lower()
    if storage != "innodb":
        return f"storage engine {online.get('storage_engine')} (only InnoDB rebuilds online)"
    if int(online.get("blocking_indexes") or 0):
        return "it has a FULLTEXT or SPATIAL index"
    return None


def _sqlite(engine: Engine, table: str, updated_in_place: bool) -> tuple[Row, list[Action]]:
    state = _read(engine, "state", table)
    free, pages = int(state.get("free_pages") or 0), int(state.get("pages") or 0)
    mode = int(state.get("auto_vacuum") or 0)
    actions: list[Action] = []
    why = f"{free:,} free pages of {pages:,} in the file"
    if free and mode == 2:
        actions.append(
            Action(
                "incremental_vacuum",
                "database",
                why,
                "the database's write lock while free pages are cut from the end of the file "
                "(short: no page is rewritten)",
                _sql(engine, "incremental_vacuum"),
            )
        )
    elif free >= FREE_PAGES and free >= FREE_PAGES_SHARE * pages:
        actions.append(
            Action(
                "vacuum",
                "database",
                f"{why}; auto_vacuum is {('NONE', 'FULL')[min(mode, 1)]}, so only a full "
                "VACUUM gives them back",
                "the database's write lock for the whole rewrite of the file: every push and "
                "pop of every queue in it waits",
                _sql(engine, "vacuum"),
                blocking=True,
                note="sets auto_vacuum = INCREMENTAL first, so later maintenance needs no VACUUM",
            )
        )
    actions.append(
        Action(
            "optimize",
            "database",
            "refreshes the planner's statistics where they are missing or stale",
            "the database's write lock while it runs ANALYZE on the tables that need it "
            "(usually none: milliseconds)",
            _sql(engine, "optimize"),
        )
    )
    return {"free_pages": free, "pages": pages, "auto_vacuum": mode}, actions


def _mssql(engine: Engine, table: str, updated_in_place: bool) -> tuple[Row, list[Action]]:
    actions: list[Action] = []
    for index in _diagnostic(engine, "fragmentation", table):
        pct, pages = float(index.get("fragmentation_pct") or 0), int(index.get("pages") or 0)
        name = str(index["index_name"])
        if pages < MSSQL_PAGES or pct < REORGANIZE_PCT:
            continue
        why = f"{pct:.0f} % logical fragmentation over {pages:,} pages"
        if pct < REBUILD_PCT:
            lock = "row and page locks, briefly: online in every edition"
            statements = _sql(engine, "reorganize", index=name, table=table)
            actions.append(Action("reorganize", name, why, lock, statements))
        else:
            actions.append(
                Action(
                    "rebuild_online",
                    name,
                    why,
                    "a schema-modification lock for a moment at the end: online otherwise",
                    _sql(engine, "rebuild_online", index=name, table=table),
                    note="ONLINE = ON needs Enterprise or Developer edition (or Azure SQL)",
                )
            )
    if actions:
        lock = "a schema-stability lock: reads and writes go on"
        statements = _sql(engine, "statistics", table=table)
        actions.append(Action("statistics", table, "after the index work", lock, statements))
    return {}, actions


# The planners by what they read and propose; an engine's dialect names its own
# (``Dialect.maintenance_planner``), and one that names none has no maintain.
PLANNERS: dict[str, Callable[[Engine, str, bool], tuple[Row, list[Action]]]] = {
    "vacuum": _postgresql,
    "innodb_rebuild": _mysql,
    "file_vacuum": _sqlite,
    "index_rebuild": _mssql,
}


def plan(
    engine: Engine,
    queue: str,
    table: str,
    *,
    updated_in_place: bool = False,
    allow_blocking: bool = False,
) -> Plan:
    """What maintain would do to ``table`` (the queue ``queue``'s), from cheap reads only.

    ``updated_in_place``: the kind writes its rows in place (a claim, a ring's slots), so it
    gains from free room on each page. Blocking actions are marked refused unless allowed."""
    planner = PLANNERS.get(engine.hooks.maintenance_planner or "")
    if planner is None:
        raise engine.hooks.unsupported("maintain")
    reads, actions = planner(engine, table, updated_in_place)
    if reads.get("may_maintain") is False:
        actions = [replace(a, status=f"refused: {NOT_OWNER}", privilege="OWNER") for a in actions]
    if allow_blocking and engine.hooks.vacuum_truncates:
        actions = [
            replace(
                a,
                statements=_sql(engine, "vacuum_truncate", table=table),
                lock=SUE + "; then ACCESS EXCLUSIVE to cut empty pages off the end of the file "
                "(taken only when free, given up as soon as another session waits for the table)",
                note="plain VACUUM (never FULL), with ANALYZE and the end-of-file truncation",
                blocking=True,
            )
            if a.action == "vacuum"
            else a
            for a in actions
        ]
    if not allow_blocking:
        actions = [
            replace(a, status="refused: its lock blocks the queue (--allow-blocking runs it)")
            if a.blocking
            else a
            for a in actions
        ]
        refused = {a.action for a in actions if a.status != "proposed"}
        actions = [
            replace(a, status=f"refused: it follows the {a.after}, refused")
            if a.after in refused
            else a
            for a in actions
        ]
    return Plan(queue, table, engine.label, reads, actions)


def check_runnable(engine: Engine) -> None:
    """An engine whose statements passed the T-SQL gate only (SQL Server) has them printed,
    never run."""
    if not engine.hooks.maintenance_runs:
        raise UnsupportedError(
            f"maintain: on {engine.hooks.title} --dry-run prints the statements to run by hand; "
            "qadmin does not run them (not verified live)"
        )


def run(
    engine: Engine,
    proposed: Plan,
    lock_ms: int,
    starting: Callable[[Action], None] | None = None,
) -> Plan:
    """Run the proposed actions in order, each outside a transaction and waiting at most
    ``lock_ms`` for its lock: one not granted in time is skipped, and the rest still run.

    ``starting`` is told of each action before it runs (the CLI states its lock). A REINDEX
    CONCURRENTLY that gives up leaves its INVALID copy: it is dropped in the same run, else
    the reindex failed (never "skipped": it changed the table). A VACUUM whose dead rows a
    snapshot keeps says so, naming the holder."""
    check_runnable(engine)
    lock_ms = max(1, min(lock_ms, engine.timeouts.lock_ms))
    done: list[Action] = []
    for action in proposed.actions:
        previous = next((a for a in done if a.action == action.after), None)
        if action.status != "proposed":
            done.append(action)
        elif previous is not None and previous.status != "done":
            reason = previous.status.split(":")[0]
            done.append(replace(action, status=f"skipped: it follows the {action.after}, {reason}"))
        else:
            if starting is not None:
                starting(action)
            ran = _run_one(engine, action, lock_ms)
            if engine.hooks.concurrent_reindex and action.action == "reindex":
                ran = _clean_up(engine, proposed, ran, lock_ms)
            elif engine.hooks.concurrent_reindex and action.action == "vacuum":
                ran = _kept(engine, proposed, ran)
            done.append(ran)
    return replace(proposed, actions=done, dry_run=False)


def _clean_up(engine: Engine, proposed: Plan, ran: Action, lock_ms: int) -> Action:
    """After a REINDEX CONCURRENTLY that did not finish: drop the INVALID copy it left
    (``<index>_ccnew``), bounded by the same lock wait; failing that, say it is left."""
    if ran.status == "done":
        return ran
    known = {a.target for a in proposed.actions if a.action == "drop_invalid"}
    left = [
        str(row["index_name"])
        for row in _diagnostic(engine, "invalid_indexes", proposed.table)
        if str(row["index_name"]) not in known
        and LEFTOVER.search(str(row["index_name"]))
        and str(row["index_name"]).startswith(ran.target + "_cc")
    ]
    kept = [
        name
        for name in left
        if _run_one(engine, _drop_leftover(engine, name), lock_ms).status != "done"
    ]
    if kept:
        return replace(
            ran,
            status=f"failed: left invalid index {', '.join(kept)} ({ran.status}); the next "
            "maintain drops it",
        )
    if left:
        return replace(ran, status=f"{ran.status}; its copy {', '.join(left)} dropped")
    return ran


def _kept(engine: Engine, proposed: Plan, ran: Action) -> Action:
    """A VACUUM that ran but kept most dead rows (a snapshot older than them holds the
    horizon): ``done, N dead rows kept: held by ...``, so a cron job sees it."""
    if ran.status != "done":
        return ran
    before = int(proposed.reads.get("dead_rows") or 0)
    after = int((_diagnostic(engine, "ghosts", proposed.table) or [{}])[0].get("dead_rows") or 0)
    if after < max(DEAD_ROWS, KEPT_SHARE * before):
        return ran
    holder = _holder(engine, 0.0) or (
        "a snapshot that ended before qadmin could name it, or one its role cannot see "
        "(run maintain again; qadmin ghosts names a holder that stays)"
    )
    return replace(ran, status=f"done, {after:,} dead rows kept: held by {holder}")


def _run_one(engine: Engine, action: Action, lock_ms: int) -> Action:
    start = time.monotonic()
    try:
        with engine.lock_timeout(lock_ms):
            for statement in action.statements:
                engine.run_outside_transaction(statement)
    except LockTimeout as exc:
        text = str(exc)
        granted = "lock wait" in text or "locked" in text
        status = f"skipped: lock not granted in {lock_ms} ms" if granted else f"skipped: {text}"
        return replace(action, status=status, seconds=_since(start))
    except PermissionMissing as exc:
        missing = exc.privilege or "a privilege"
        return replace(action, status=f"failed: {exc}", seconds=_since(start), privilege=missing)
    except QadminError as exc:
        return replace(action, status=f"failed: {exc}", seconds=_since(start))
    return replace(action, status="done", seconds=_since(start))


def _since(start: float) -> float:
    return round(time.monotonic() - start, 3)
