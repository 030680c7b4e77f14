"""Findings: rules over an inspect report, each saying what is wrong and what to run.

A finding is ``{severity, code, message, fix}``; ``fix`` is a qadmin command or SQL for the
DBA to run, never something qadmin runs by itself.
"""

from __future__ import annotations

from typing import Any

from qadmin.kinds import WATERMARK_EVERY

# A snapshot or transaction open this long is named as the cause of dead rows it holds back.
LONG_SNAPSHOT_S = 60
# A watermark this many ids behind the head, with a candidate this old, is being held back.
WATERMARK_LAG_IDS = 10 * WATERMARK_EVERY
WATERMARK_STUCK_S = 60.0
# A ring message missing while later ones have waited this long: its pusher is gone.
RING_HOLE_AFTER_S = 30


def findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Rules over a report: each finding says what is wrong and the command or SQL to fix it."""
    out: list[dict[str, Any]] = []
    queue = report["queue"]
    engine = report["engine"]
    table = report["ghosts"]["table"]
    holders = report["ghosts"]["holders"]
    oldest_holder = max(holders, key=lambda h: float(h.get("xact_age_s") or 0), default=None)
    holder_age = float(oldest_holder.get("xact_age_s") or 0) if oldest_holder else 0.0
    dead, live = _int(table.get("dead_rows")), _int(table.get("live_rows"))
    if dead is not None and dead >= 1000 and dead > 10 * max(live or 0, 1):
        ratio = dead / max(live or 0, 1)
        message = f"dead rows are {ratio:.0f}x the live rows ({dead} dead)"
        fix = "VACUUM (VERBOSE) the queue table once the horizon moves"
        severity = "warning"
        if oldest_holder and holder_age >= LONG_SNAPSHOT_S:
            who = oldest_holder["holder"]
            message += (
                f" while {oldest_holder['holder_kind']} {who} holds a snapshot open "
                f"for {_duration(holder_age)}"
            )
            fix = (
                f"end that transaction (SELECT pg_terminate_backend({who}) if it is "
                "abandoned); then consider qadmin watermark for this queue"
            )
            severity = "critical"
        out.append({"severity": severity, "code": "dead_rows", "message": message, "fix": fix})
    hll = _int(table.get("history_list_length"))
    if hll is not None and hll >= 100_000:
        message = f"InnoDB history list length is {hll}: purge is behind"
        fix = "find the oldest transaction (qadmin ghosts) and end it"
        if oldest_holder and holder_age >= LONG_SNAPSHOT_S:
            message += (
                f"; thread {oldest_holder['holder']} has had a transaction open for "
                f"{_duration(holder_age)}"
            )
            fix = f"end that transaction: KILL {oldest_holder['holder']}"
        out.append({"severity": "warning", "code": "purge_lag", "message": message, "fix": fix})
    elif oldest_holder and holder_age >= 600:
        out.append(
            {
                "severity": "warning",
                "code": "long_transaction",
                "message": f"{oldest_holder['holder_kind']} {oldest_holder['holder']} has had a "
                f"transaction open for {_duration(holder_age)}: it holds back cleanup",
                "fix": "end it; set idle_in_transaction_session_timeout (PostgreSQL) or "
                "wait_timeout (MySQL) to stop it recurring",
            }
        )
    for wait in report["locks"]["waits"]:
        wait_s = float(wait.get("wait_s") or 0)
        out.append(
            {
                "severity": "critical" if wait_s >= 30 else "warning",
                "code": "lock_wait",
                "message": f"session {wait['waiter']} has waited {_duration(wait_s)} for "
                f"{wait.get('lock')} held by session {wait['blocker']}",
                "fix": f"see what session {wait['blocker']} is doing; end its transaction if stuck",
            }
        )
    stale = report["claims"]["stale"]
    if stale:
        gone = sum(1 for c in stale if c.get("session_alive") is False)
        detail = f" ({gone} from sessions that no longer exist)" if gone else ""
        out.append(
            {
                "severity": "warning",
                "code": "stale_claims",
                "message": f"{len(stale)} claims older than {report['claims']['stale_after_s']} s"
                f"{detail}",
                "fix": f"qadmin requeue {queue} --stale-after {report['claims']['stale_after_s']}",
            }
        )
    size_part = report["size"]
    fill = size_part.get("ring_fill")
    if fill is not None and fill >= 0.9:
        out.append(
            {
                "severity": "warning",
                "code": "ring_nearly_full",
                "message": f"ring is {fill:.0%} full; pushes are refused when it is full",
                "fix": f"add consumers, or resize the ring (qadmin resize {queue} --capacity N)",
            }
        )
    out.extend(_ring_findings(report.get("ring"), queue))
    out.extend(_watermark_findings(report.get("watermark"), queue))
    out.extend(_index_findings(report.get("fragmentation", {}), engine))
    free, pages = _int(table.get("free_pages")), _int(table.get("pages"))
    if engine == "sqlite" and free and pages and free > 0.5 * pages and pages > 1000:
        out.append(
            {
                "severity": "info",
                "code": "free_pages",
                "message": f"{free} of {pages} pages of the file are free",
                "fix": "VACUUM the database file in a quiet moment (it locks the whole file)",
            }
        )
    return out


def _watermark_findings(wm: dict[str, Any] | None, queue: str) -> list[dict[str, Any]]:
    """Rows below the watermark are never dequeued; a watermark far behind the head makes
    every dequeue walk the dead rows between them (usually an open producer holds it)."""
    if not wm:
        return []
    if wm["stranded"]:
        return [
            {
                "severity": "critical",
                "code": "watermark_stranded",
                "message": f"{wm['stranded']} message(s) below the watermark {wm['watermark']} "
                f"are never dequeued (lowest id {wm['stranded_min_id']}, oldest "
                f"{wm['oldest_stranded_s']} s)",
                "fix": f"qadmin watermark {queue} repair",
            }
        ]
    age = wm.get("candidate_age_s")
    if wm["lag_ids"] and wm["lag_ids"] > WATERMARK_LAG_IDS and age and age > WATERMARK_STUCK_S:
        return [
            {
                "severity": "warning",
                "code": "watermark_lagging",
                "message": f"the watermark is {wm['lag_ids']} ids behind the head and has not "
                f"moved for {age:.0f} s: a transaction open since then holds it back, so "
                "dequeues walk the dead rows in between",
                "fix": "find the open transaction (qadmin ghosts / locks) and end it",
            }
        ]
    return []


def _ring_findings(ring: dict[str, Any] | None, queue: str) -> list[dict[str, Any]]:
    """The two ways a ring stalls after a client dies between taking a number and committing;
    the fix names `qadmin repair` and the SQL that does the same by hand."""
    if not ring:
        return []
    out = []
    if ring.get("orphan_id") is not None:
        age = float(ring.get("orphan_age_s") or 0)
        out.append(
            {
                "severity": "critical",
                "code": "ring_orphan",
                "message": f"message {ring['orphan_id']} in slot {ring['orphan_slot']} "
                f"({_duration(age)} old) was taken by a popper that never finished: the "
                "slot the next push needs stays full, so the ring refuses pushes",
                "fix": f"qadmin repair {queue} (by hand: {ring['orphan_fix']})",
            }
        )
    waiting = ring.get("waiting_behind_age_s")
    if (
        ring.get("missing_id") is not None
        and waiting is not None
        and (float(waiting) >= RING_HOLE_AFTER_S)
    ):
        out.append(
            {
                "severity": "critical",
                "code": "ring_push_hole",
                "message": f"pops stop at sequence number {ring['missing_id']}: its pusher took "
                "the number and never wrote the message, while later messages have waited "
                f"{_duration(float(waiting))}",
                "fix": f"qadmin repair {queue} (by hand: {ring['hole_fix']} once; if it "
                f"returns another number, a popper took {ring['missing_id']} meanwhile: park "
                f"the returned one in {queue}_pending)",
            }
        )
    return out


REBUILD = {
    "postgresql": "REINDEX INDEX CONCURRENTLY {index}",
    "mysql": "OPTIMIZE TABLE (rebuilds the table and its indexes online for InnoDB)",
    "mssql": "ALTER INDEX {index} ON the queue table REORGANIZE (or REBUILD WITH (ONLINE = ON))",
    "sqlite": "VACUUM (rewrites the whole file; locks it meanwhile)",
}


def _index_findings(frag: dict[str, Any], engine: str) -> list[dict[str, Any]]:
    """Indexes worth rebuilding: estimated or measured waste above half, on a non-trivial size."""
    out = []
    for row in frag.get("indexes", []) + frag.get("indexes_measured", []):
        index = row.get("index_name")
        waste = None
        if row.get("bloat_pct") is not None and (_int(row.get("pages")) or 0) >= 128:
            waste = f"an estimated {float(row['bloat_pct']):.0f} % bloat"
            worth = float(row["bloat_pct"]) >= 50
        elif row.get("free_pages_pct") is not None and (
            (_int(row.get("leaf_pages")) or 0) + (_int(row.get("deleted_pages")) or 0) >= 128
        ):
            density, free = float(row["avg_leaf_density"] or 0), float(row["free_pages_pct"])
            waste = f"{free:.0f} % empty or deleted pages, leaves {density:.0f} % full (measured)"
            worth = free >= 50 or density < 50
        elif row.get("unused_pct") is not None and (_int(row.get("pages")) or 0) >= 128:
            waste = f"{float(row['unused_pct']):.0f} % unused bytes (measured)"
            worth = float(row["unused_pct"]) >= 50
        elif row.get("fragmentation_pct") is not None and (_int(row.get("pages")) or 0) >= 1000:
            waste = f"{float(row['fragmentation_pct']):.0f} % logical fragmentation"
            worth = float(row["fragmentation_pct"]) >= 30
        else:
            continue
        if worth:
            out.append(
                {
                    "severity": "info",
                    "code": "index_bloat",
                    "message": f"index {index} has {waste}",
                    "fix": REBUILD.get(engine, "rebuild the index").format(index=index),
                }
            )
    return out


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
