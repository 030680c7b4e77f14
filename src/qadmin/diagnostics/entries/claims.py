"""Claims: claimed messages, which are stale, and whether their session or worker still lives.

A qadmin claim queue reads its template; a table read through a profile reads its claimed
rows (by state, or a non-NULL claim time) with the claim's age, worker, heartbeat, attempts
and error, and a stale claim is given back only through the profile's ``Release``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.entries import locks, size
from qadmin.diagnostics.model import WARNING, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import (
    EXACT,
    Diagnostic,
    Field,
    Metric,
    Quality,
    Section,
    kind_has,
)
from qadmin.engines.base import Engine
from qadmin.errors import (
    Deadlock,
    LockTimeout,
    PermissionMissing,
    StatementTimeout,
    UsageError,
    counted,
)
from qadmin.kinds import QueueSpec
from qadmin.profiles import query
from qadmin.profiles.model import Profile
from qadmin.profiles.shape import read_shape
from qadmin.values import iso

ERROR_SHOWN = 200  # characters of a row's error column (a traceback can be long)

CLAIMS_SHOWN = 1000
# Behind many dead entries the claims are read from a window of ids just below the first
# waiting id (pop claims the lowest waiting ids): CLAIMS_BELOW ids, doubled while they are
# mostly claims, up to WINDOW_LIMIT, read by a bitmap scan (each heap page once: about 12
# buffers for 128 ids behind dead rows; inspect's whole budget there is twice a clean
# queue's). Claims below it are not read: claimed and stale are floors. The first waiting id
# is looked for in windows below the id high-water mark, from HEAD_FIRST ids, doubled up to
# HEAD_LIMIT.
CLAIMS_BELOW = 128
WINDOW_FULL = 0.9
WINDOW_LIMIT = 4_096
HEAD_FIRST = 1_024
HEAD_LIMIT = 65_536


@dataclass
class Claims(Result):
    claimed: int | None = None
    claimed_note: str | None = None
    stale: list[dict[str, Any]] = field(default_factory=list)
    stale_after_s: int | None = None
    notes: list[str] = field(default_factory=list)
    # Where the claims were read when not by the whole claimed index (a window of ids: the
    # claims below it are not read, so claimed and stale are floors).
    claimed_source: str | None = None
    # Claims whose age and worker are both unknown (no claim time, no heartbeat): a stuck one
    # cannot be told from a running one, so they are listed, never read as "none stale".
    undated: list[dict[str, Any]] = field(default_factory=list)

    @property
    def claimed_quality(self) -> str | None:
        """``floor`` when the listing stopped at CLAIMS_SHOWN claims, or read only a window of
        ids ("or more"), else exact."""
        if self.claimed is None:
            return None
        return "floor" if self.claimed_note else "exact"


def best_claimed(*figures: tuple[int | None, str | None]) -> tuple[int | None, str | None]:
    """One claimed figure wherever it is shown, from the reads that counted it (size's
    count up to EXACT_DEPTH_LIMIT + 1, this listing up to CLAIMS_SHOWN or a window): an
    exact one, else the highest floor (size said "10001 or more" where tail said "1000+")."""
    known = [(n, q) for n, q in figures if n is not None and q is not None]
    exact = [f for f in known if f[1] == "exact"]
    if exact:
        return exact[0]
    return max(known, default=(None, None))


def _claimed_figure(report: InspectReport) -> tuple[int | None, str | None]:
    mine, counted = report.part(ENTRY), report.part(size.ENTRY)
    return best_claimed(
        (mine.claimed, mine.claimed_quality) if mine else (None, None),
        (counted.claimed, counted.claimed_quality) if counted else (None, None),
    )


def measure(engine: Engine, spec: QueueSpec, stale_after_s: int) -> Claims:
    """Claims of a claim queue (other kinds have none: an empty result)."""
    if not spec.info.claims:
        return Claims()
    window = _window(engine, spec)
    if window is None:
        rows = sql.template_rows(engine, spec, "claims", {"limit": CLAIMS_SHOWN})
        source = None
    else:
        rows, source = window
    sessions = sql.read(engine, "sessions")
    alive = {str(r["session"]) for r in sessions.rows}
    stale = []
    for row in rows:
        row = dict(row)
        row["processing_started_at"] = iso(row["processing_started_at"])
        row["claimed_for_s"] = round(float(row["claimed_for_s"]), 3)
        session = row.get("claimed_session")
        row["session_alive"] = (str(session) in alive) if session and sessions.rows else None
        if row["claimed_for_s"] >= stale_after_s:
            stale.append(row)
    notes = [sessions.note] if sessions.note else []
    if source is not None:
        notes.append(f"claims read in {source}: claims below it not read")
    return Claims(
        claimed=len(rows),
        claimed_note="or more" if len(rows) == CLAIMS_SHOWN or source else None,
        stale=stale,
        stale_after_s=stale_after_s,
        notes=notes,
        claimed_source=source,
    )


def _window(engine: Engine, spec: QueueSpec) -> tuple[list[dict[str, Any]], str | None] | None:
    """The claims just below the first waiting id, and that window said in words, when the
    catalog does not bound the dead entries a walk of the claimed index can meet (acked claims
    leave theirs first in it; a held snapshot keeps them: 50,000 buffers behind 1,000,000).
    None: the walk is cheap, or this engine has no such bound (InnoDB skips its delete-marked
    entries inside the walk)."""
    if not sql.available(engine, "dead_bound") or not engine.hooks.template(spec).has(
        "claims_window"
    ):
        return None
    params = {"schema": engine.schema, "table": spec.name}
    bound = sql.read(engine, "dead_bound", params).first
    try:
        counters = sql.template_rows(engine, spec, "counters", params)
    except PermissionMissing:
        return None  # no high-water mark to read below: the walk, whatever it meets
    top = int(counters[0]["enqueued_total"] or 0) if counters else 0
    dead, seen = bound.get("dead_bound"), bound.get("ids_seen")
    reset = seen is not None and top - int(seen) > size.DEAD_WALK_LIMIT
    if (dead is not None and int(dead) <= size.DEAD_WALK_LIMIT and not reset) or (
        top <= 2 * HEAD_FIRST
    ):
        return None  # few dead entries, or few ids ever: the walk is bounded by them
    behind = "dead entries not walked"
    if dead is not None and not reset:
        behind = f"{int(dead):,} dead entries not walked"
    head, first = _head(engine, spec, top)
    width = CLAIMS_BELOW
    while True:
        lo = max(head - width, 1)
        rows = engine.run(
            engine.hooks.section(spec, "claims_window"),
            {"lo": lo, "hi": head, "limit": CLAIMS_SHOWN},
            write=False,
        )
        claimed = int(rows[0]["claimed_rows"]) if rows else 0
        claims = [
            {k: v for k, v in r.items() if k != "claimed_rows"} for r in rows if r["id"] is not None
        ]
        if claimed < WINDOW_FULL * width or width >= WINDOW_LIMIT or lo == 1:
            break
        width *= 2  # mostly claims: more lie below
    where = first or f"the first waiting id {head}"
    return claims, f"the {head - lo:,} ids below {where} ({behind})"


def _head(engine: Engine, spec: QueueSpec, top: int) -> tuple[int, str | None]:
    """The first waiting id (pop's next), found in windows below the id high-water mark
    ``top`` through the pop index; with none waiting, the id after the high-water mark (the
    last claims are the last ids). Its description when it is not a first waiting id."""
    width = HEAD_FIRST
    while True:
        lo = top - width + 1
        rows = engine.run(
            engine.hooks.section(spec, "claims_head"), {"lo": lo, "hi": top + 1}, write=False
        )
        head = rows[0]["head"] if rows else None
        if head is None:
            return top + 1, f"the id high-water mark {top} (none waiting near it)"
        if int(head) > lo or width >= HEAD_LIMIT:
            if int(head) == lo:
                return int(head), f"the {width:,} ids below the id high-water mark {top}"
            return int(head), None
        width *= 2  # waiting rows down to the window's bottom: the head lies further down


@dataclass(frozen=True)
class Requeued:
    """What a requeue did: the claims released, and the stale claims at their last allowed
    attempt moved to the dead table instead (a message that kills its consumer every time
    never calls fail, so releasing it would go on forever)."""

    requeued: list[int]
    dead: list[int]


def requeue(
    engine: Engine, spec: QueueSpec, stale_after_s: int, skip_live: bool = False
) -> Requeued:
    """Release claims older than ``stale_after_s`` (the messages are served again), or move
    those at max_attempts to the dead table, in one transaction. ``skip_live`` leaves a claim
    whose session is still connected, where the engine can tell (guards_sessions). Not the
    default: a connected session proves no consumer still works on the claim (a pooled
    connection outlives the worker; an ack that failed leaves the claim behind), and a claim
    nobody finishes would never be served again."""
    params = {"stale_s": int(stale_after_s), "include_live": int(not skip_live)}
    try:
        rows = engine.run(engine.hooks.section(spec, "requeue"), params)
    except LockTimeout as exc:  # a table lock (the rows' own are passed): name its holder
        if isinstance(exc, StatementTimeout | Deadlock):
            raise
        raise LockTimeout(locks.blocked_line(engine, spec, exc, "requeue")) from None
    outcome: dict[int, bool] = {}
    for row in rows:  # MySQL/MariaDB: the locked rows first, then what happened to them
        if row.get("id") is not None:
            outcome[int(row["id"])] = bool(row.get("dead"))
    return Requeued(
        requeued=sorted(i for i, dead in outcome.items() if not dead),
        dead=sorted(i for i, dead in outcome.items() if dead),
    )


def guards_sessions(engine: Engine, spec: QueueSpec) -> bool:
    """Whether this claim queue's requeue can keep the claims of sessions still connected
    (--skip-live): its statements read the server's sessions (PostgreSQL pg_stat_activity,
    MariaDB/MySQL PROCESSLIST). SQLite has no sessions; SQL Server's requeue does not check
    them."""
    return any(":include_live" in text for text in engine.hooks.section(spec, "requeue"))


def live(stale: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stale claims whose claiming session is still connected (a slow consumer, or a
    pooled connection whose worker lost track of its claim)."""
    return [c for c in stale if c.get("session_alive") is True]


LIVE_KEPT = "their consumer's session is still connected (--skip-live)"


def outcome(spec: QueueSpec, attempts: Any, kept: bool = False) -> str:
    """What requeue does with a stale claim of a qadmin claim queue at ``attempts``
    (``kept``: its session is still connected and requeue leaves it)."""
    if kept:
        return "skipped"
    limit = spec.options.get("max_attempts")
    if spec.dead_table and limit is not None and int(attempts or 0) >= int(limit):
        return "dead"
    return "requeued"


def _claim_filter(reader: query.Reader) -> tuple[str, dict[str, Any]] | None:
    profile = reader.profile
    if reader.state is not None and profile.claimed:
        return reader.where(profile.claimed)
    if reader.state is None and profile.claimed_at_column is not None:
        return f"{reader.name(profile.claimed_at_column)} IS NOT NULL", {}
    return None


def _claim_time(reader: query.Reader) -> tuple[str | None, str | None]:
    """SQL for a claim's start and its age in seconds: the claim-time column, else the
    library's claim event (Profile.claim_event), else none."""
    p = reader.profile
    if p.claimed_at_column:
        return reader.instant(p.claimed_at_column), reader.age(p.claimed_at_column)
    event, key = p.claim_event, p.id_column or p.order_by
    if event is None or key is None or not reader.has("claim_event_at"):
        return None, None
    names = {"table": p.table, "id_col": key, "ev_table": event.table}
    names.update(ev_job=event.job_column, ev_type=event.type_column, ev_at=event.at_column)
    at = reader.engine.hooks.render_text(reader.section_text("claim_event_at"), names)
    age = reader.engine.hooks.render_text(reader.section_text("claim_event_age"), {}, {"at": at})
    return at, age


def _columns(reader: query.Reader) -> str:
    """The claims query's select list: each column the profile has, NULL for the others."""
    p = reader.profile
    key = p.id_column or p.order_by
    hb_key = p.heartbeat.job_column if p.heartbeat else None
    if p.heartbeat is not None and p.heartbeat.key_sql is not None:
        hb_sql: str | None = reader.template(p.heartbeat.key_sql)
    else:
        hb_sql = reader.name(hb_key) if hb_key else None
    claimed_at, claimed_for = _claim_time(reader)
    picks = {
        "id": reader.name(key) if key else None,
        "state": reader.state,
        "claimed_at": claimed_at,
        "claimed_for_s": claimed_for,
        "worker": reader.name(p.worker_column) if p.worker_column else None,
        "session": reader.name(p.session_column) if p.session_column else None,
        "heartbeat_age_s": reader.age(p.heartbeat_column) if p.heartbeat_column else None,
        "heartbeat_key": hb_sql,
        "attempts": reader.name(p.attempts_column) if p.attempts_column else None,
        "error": reader.name(p.error_column) if p.error_column else None,
        "alive": reader.template(p.claim_alive_sql) if p.claim_alive_sql else None,
    }
    return ", ".join(f"{sql_ or 'NULL'} AS {alias}" for alias, sql_ in picks.items())


def _beats(reader: query.Reader) -> dict[str, float | None] | None:
    """Worker -> seconds since its last heartbeat, from the profile's workers table."""
    beat = reader.profile.heartbeat
    if beat is None:
        return None
    if read_shape(reader.engine, beat.table, reader.profile.schema) is None:
        # No workers table (Elixir Oban without Pro keeps no oban_producers): liveness is
        # unknown and a claim is judged by its age, as for a library without heartbeats.
        return None
    rows = reader.run(
        "heartbeats",
        {"age": reader.age(beat.beat_column)},
        {"limit": query.HEARTBEATS_READ},
        {"hb_table": beat.table, "hb_worker": beat.worker_column},
    )
    return {str(r["worker"]): sql.seconds(r["beat_age_s"]) for r in rows}


def _alive(age: float | None, stale_after_s: float) -> bool | None:
    return None if age is None else age < stale_after_s


def measure_profile(ctx: Context) -> Claims:
    """Claimed rows of a profiled table: read when an index fits (or the table is small),
    each with whether its worker (heartbeat) or session is still alive."""
    reader, stale_after = ctx.reader, ctx.options.stale_after_s
    if reader is None:
        return Claims()
    found = _claim_filter(reader)
    if found is None:
        return Claims()
    profile = reader.profile
    indexed = reader.state_indexed or (
        reader.state is None
        and profile.claimed_at_column is not None
        and reader.shape.index_leading(profile.claimed_at_column) is not None
    )
    if not (reader.small or indexed):
        hint = reader.index_hint(None if reader.state else profile.claimed_at_column)
        return Claims(stale_after_s=stale_after, notes=[f"claims not read: {hint}"])
    where, params = found
    if profile.claim_event is not None:
        params["ev_type"] = profile.claim_event.type_value
    rows = reader.run(
        "claims",
        {"filter": where, "columns": _columns(reader)},
        {**params, "limit": CLAIMS_SHOWN},
    )
    beats = _beats(reader)
    sessions = sql.read(ctx.engine, "sessions") if profile.session_column else None
    alive = {str(r["session"]) for r in sessions.rows} if sessions else set()
    stale, undated = [], []
    for row in rows:
        item = _claim_row(dict(row), profile, beats, stale_after)
        if item["claimed_at"] is not None:
            item["processing_started_at"] = iso(reader.when(item.pop("claimed_at"), "claim"))
        else:
            item.pop("claimed_at")
        known = sessions is not None and bool(sessions.rows) and row["session"] is not None
        item["session_alive"] = str(row["session"]) in alive if known else None
        if _is_stale(item, stale_after):
            stale.append(item)
        elif all(item[k] is None for k in ("claimed_for_s", "worker_alive", "session_alive")):
            undated.append(item)
    notes = [sessions.note] if sessions and sessions.note else []
    return Claims(
        claimed=len(rows),
        claimed_note="or more" if len(rows) == CLAIMS_SHOWN else None,
        stale=sorted(stale, key=lambda r: -(r["claimed_for_s"] or 0)),
        stale_after_s=stale_after,
        notes=notes,
        undated=undated,
    )


def _is_stale(item: dict[str, Any], stale_after: int) -> bool:
    """A claim whose worker's liveness is known is stale when that worker is dead (a long job
    with a beating worker is not); otherwise when it is older than the limit."""
    if item["worker_alive"] is not None:
        return not item["worker_alive"]
    age = item["claimed_for_s"]
    return age is not None and age >= stale_after


def releasable(stale: list[dict[str, Any]], skip_live: bool = False) -> list[dict[str, Any]]:
    """The stale claims requeue may give back: never one whose worker still beats, nor (with
    ``skip_live``) one whose session is still connected."""
    return [
        c
        for c in stale
        if (not skip_live or c["session_alive"] is not True) and c["worker_alive"] is not True
    ]


def _beat_limit(profile: Profile, stale_after: int) -> float:
    """How old a worker's last beat must be for it to be dead (see Profile.heartbeat_floor_s)."""
    return max(float(stale_after), profile.heartbeat_floor_s)


def _claim_row(
    row: dict[str, Any],
    profile: Profile,
    beats: dict[str, float | None] | None,
    stale_after: int,
) -> dict[str, Any]:
    """One claimed row as claims prints it: the contract's keys, and qadmin's own names for
    the same facts (processing_started_at, claimed_by, claimed_session)."""
    limit = _beat_limit(profile, stale_after)
    heartbeat = sql.seconds(row.get("heartbeat_age_s"))
    worker_alive = _alive(heartbeat, limit) if profile.heartbeat_column else None
    if beats is not None:
        # A worker key that is NULL or names no worker row is a dead worker's claim: the
        # library pruned the row (procrastinate's ON DELETE SET NULL) and the job stayed.
        key = row.get("heartbeat_key")
        heartbeat = None if key is None else beats.get(str(key))
        worker_alive = heartbeat is not None and heartbeat < limit
    if profile.claim_alive_sql is not None:
        worker_alive = bool(row.get("alive"))
    error = row.get("error")
    return {
        "id": row["id"],
        "state": query.state_text(row.get("state")),
        "claimed_at": row.get("claimed_at"),
        "processing_started_at": None,
        "claimed_for_s": sql.seconds(row.get("claimed_for_s")),
        "worker": row.get("worker"),
        "claimed_by": row.get("worker"),
        "claimed_session": row.get("session"),
        "worker_alive": worker_alive,
        "heartbeat_age_s": heartbeat,
        "attempts": row.get("attempts"),
        "error": None if error is None else str(error)[:ERROR_SHOWN],
    }


@dataclass(frozen=True)
class Released:
    """What a requeue of a profiled table did: the claims given back, and those whose row
    stayed locked past the lock timeout (a worker's ack in progress), left for the next run."""

    done: list[Any]
    busy: list[Any]


def requeue_profile(ctx: Context, ids: list[Any], skip_live: bool = False) -> Released:
    """Give back the stale claims ``ids`` through the profile's Release: each UPDATE checks
    again that its row is still claimed and still stale, so a row a live worker finished (or
    a claim renewed) since it was listed is left alone. A row whose lock is not granted in
    time is passed (one busy row must not stop a cron requeue releasing the rest)."""
    reader = ctx.reader
    profile = reader.profile if reader else None
    if reader is None or profile is None or profile.release is None:
        raise UsageError(f"requeue: {ctx.table}: {why_no_release(profile)}")
    release = profile.release
    found = _claim_filter(reader)
    key = profile.id_column or profile.order_by
    stale = _still_stale(reader, skip_live)
    if found is None or key is None or stale is None:
        raise UsageError(f"requeue: {ctx.table}: {why_no_release(profile)}")
    where, params = found
    sets = [f"{reader.name(c)} = NULL" for c in release.clear]
    if release.state is not None:
        if profile.state_column is None:
            raise UsageError(f"requeue: {ctx.table}: {why_no_release(profile)}")
        sets.insert(0, f"{reader.name(profile.state_column)} = :release_state")
        params["release_state"] = release.state
    stale_s = ctx.options.stale_after_s
    beat_s = _beat_limit(profile, stale_s)
    done, busy = [], []
    for row_id in ids:
        try:
            rows = reader.run(
                "release",
                {"filter": where, "assignments": ", ".join(sets), "stale": stale},
                {**params, "id": row_id, "stale_s": stale_s, "beat_s": beat_s},
                {"id_col": key},
                write=True,
            )
        except LockTimeout:
            busy.append(row_id)
            continue
        if rows and int(rows[0].get("released", 1) or 0) > 0:
            done.append(row_id)
    return Released(done, busy)


def _still_stale(reader: query.Reader, skip_live: bool = False) -> str | None:
    """SQL that is true while a claim is stale, by the server's clock, judged as the listing
    judged it: no heartbeat of its worker newer than :beat_s (a workers table, or a beat on
    its own row), else its claim time older than :stale_s; and, where the profile records
    the claiming session and ``skip_live`` asks, that session is gone (so a race cannot
    release a live one)."""
    profile = reader.profile
    beat = profile.heartbeat
    if beat is not None and beat.key_sql is not None:
        return None  # no library with a key template lets qadmin release its claims
    if beat is not None:
        names = {"table": profile.table, "hb_table": beat.table, "hb_worker": beat.worker_column}
        names.update(hb_job=beat.job_column, hb_beat=beat.beat_column)
        stale = reader.dead_worker(names)
    elif profile.heartbeat_column is not None:
        stale = f"{reader.age(profile.heartbeat_column)} >= :beat_s"
    elif profile.claim_alive_sql is not None:
        stale = f"NOT ({reader.template(profile.claim_alive_sql)})"
    elif profile.claimed_at_column is not None:
        stale = f"{reader.age(profile.claimed_at_column)} >= :stale_s"
    else:
        return None
    if profile.session_column is not None and reader.has("session_gone") and skip_live:
        gone = reader.section_text("session_gone")
        stale += " AND " + reader.engine.hooks.render_text(gone, {"sess": profile.session_column})
    return stale


def why_no_release(profile: Profile | None) -> str:
    if profile is not None and profile.no_release:
        return profile.no_release
    if profile is None or not profile.has_claims:
        return "this table has no claims qadmin can see (no claimed state or claim-time column)"
    if profile.library:
        return f"{profile.library} keeps state qadmin cannot reset safely: use its own tooling"
    if profile.claimed_at_column is None and profile.heartbeat_column is None:
        return "a claim needs its claim-time column (claimed_at_column) to be judged stale"
    return "the profile does not say how to release a claim (pending, claimed and requeue)"


def collect(ctx: Context) -> Claims:
    if ctx.spec is None:
        return measure_profile(ctx)
    return measure(ctx.engine, ctx.spec, ctx.options.stale_after_s)


def _phrase(profile: Profile, row: dict[str, Any]) -> str:
    """One stale claim as a DBA reads it: "procrastinate job 109 has been doing for 11 min;
    its worker's last heartbeat is 10 min old"."""
    doing = row.get("state") or "claimed"
    age = row.get("claimed_for_s")
    text = profile.label(row.get("id")) + f" has been {doing}"
    text += f" for {sql.duration(age)}" if age is not None else " since an unknown time"
    beat = row.get("heartbeat_age_s")
    if beat is not None:
        text += f"; its worker's last heartbeat is {sql.duration(beat)} old"
    elif row.get("worker_alive") is False and profile.claim_alive_sql is not None:
        text += "; no session holds its lock"
    elif row.get("worker_alive") is False:
        text += "; its worker has no heartbeat left"
    if row.get("session_alive") is False:
        text += "; its session is gone"
    elif row.get("session_alive") is True:
        text += f"; session {row.get('claimed_session')} is still connected"
    return text


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is not None and part.claimed is None and _has_claims(report) and part.notes:
        # Claims the profile promises that could not be read are never a silent OK.
        why = "; ".join(part.notes).removeprefix("claims not read: ")
        fix = query.index_fix(why) or "see the notes"
        return [Finding(WARNING, "claims_unread", f"claims not read: {why}", fix)]
    found = _undated(report, part)
    limit = report.limit("stale_claims")
    threshold = limit.warn if limit.warn is not None else limit.crit
    if part is None or not part.stale or (threshold is not None and len(part.stale) < threshold):
        return found
    severity = "critical" if limit.crit is not None and len(part.stale) >= limit.crit else WARNING
    # the stale claims are counted among those listed: when that stopped at its limit, a floor
    floor = _stale_quality(report).kind == "floor"
    profile = report.profile
    if profile is not None and profile.source != "qadmin":
        first = _phrase(profile, part.stale[0])
        more = len(part.stale) - 1
        many = f"at least {more:,}" if floor else str(more)
        message = first + (
            f" (and {many} more claims older than {part.stale_after_s} s)" if more else ""
        )
        fix = (
            requeue_fix(report.command("requeue"), part.stale_after_s)
            if profile.release is not None
            else why_no_release(profile)
        )
        return [Finding(severity, "stale_claims", message, fix), *found]
    gone = sum(1 for c in part.stale if c.get("session_alive") is False)
    connected = len(live(part.stale))
    details = [f"{gone} from sessions that no longer exist"] if gone else []
    if connected:
        details.append(f"{connected} from sessions still connected")
    detail = f" ({'; '.join(details)})" if details else ""
    return [
        Finding(
            severity,
            "stale_claims",
            f"{_how_many(len(part.stale), floor)} older than {part.stale_after_s} s{detail}",
            requeue_fix(report.command("requeue"), part.stale_after_s),
        )
    ]


def _how_many(stale: int, floor: bool) -> str:
    """``2 claims``, or a floor as status's ``1000+`` says it: ``at least 1,000 claims``."""
    return f"at least {stale:,} claims" if floor else counted(stale, "claim")


def _undated(report: InspectReport, part: Claims | None) -> list[Finding]:
    """Claims no figure can age: never a silent OK (persist-queue's unacked rows, saq's
    active jobs: a killed consumer's rows look like a running one's)."""
    if part is None or not part.undated or report.profile is None:
        return []
    profile = report.profile
    n = len(part.undated)
    message = (
        f"{counted(n, 'claim')} with no claim time and no worker heartbeat: qadmin cannot "
        "tell a stuck one from a running one"
    )
    fix = (
        f"{report.command('claims')} lists them; declare the claim time (claimed_at_column) "
        "or the workers' heartbeat table in [tables.NAME] so their age can be read"
    )
    if profile.library is not None:
        fix = f"{report.command('claims')} lists them; check {profile.library}'s consumers"
    return [Finding(WARNING, "claims_unread", message, fix)]


def requeue_fix(requeue: str, stale_after_s: int | None) -> str:
    """The command (``qadmin requeue NAME``) as it runs off a terminal (--yes), with the look
    first."""
    command = f"{requeue} --stale-after {stale_after_s}"
    return f"{command} --dry-run to see them, then {command} --yes"


def _has_claims(report: InspectReport) -> bool:
    profile = report.profile
    if profile is not None and profile.source != "qadmin":
        return profile.has_claims
    return kind_has("claims")(report)


def _stale(report: InspectReport) -> int | None:
    part = report.part(ENTRY)
    return None if part is None or part.claimed is None else len(part.stale)


def _stale_quality(report: InspectReport) -> Quality:
    """The stale claims are counted among the claims listed: a floor when the listing
    stopped at its limit (more claims, stale or not, lie past it)."""
    part = report.part(ENTRY)
    if part is not None and part.claimed_quality == "floor":
        source = part.claimed_source or f"the first {CLAIMS_SHOWN:,} claims read"
        return Quality("floor", source=source)
    return EXACT


ENTRY: Diagnostic[Claims] = Diagnostic(
    name="claims",
    order=20,
    sql=("sessions",),
    collect=collect,
    rule=rule,
    metrics=(
        Metric(
            "stale_claims",
            "",
            "claims older than --stale-after",
            lambda r: float(n) if (n := _stale(r)) is not None else None,
            warn=1,
            applies=_has_claims,
            quality=_stale_quality,
        ),
    ),
    fields=(
        Field(
            "claimed",
            "messages",
            "claimed, not yet acked (claim queues)",
            "int64",
            lambda r: _claimed_figure(r)[0],
        ),
        Field(
            "claimed_quality",
            "",
            "exact, or floor (the count stopped at its limit: that many or more)",
            "string",
            lambda r: _claimed_figure(r)[1],
        ),
        Field(
            "stale_claims", "messages", "claims older than the stale-after limit", "int64", _stale
        ),
    ),
    sections=(
        Section(
            "stale claims",
            "claims.stale",
            (
                "id",
                "processing_started_at",
                "claimed_for_s",
                "claimed_by",
                "claimed_session",
                "session_alive",
                "attempts",
            ),
        ),
    ),
)
