"""Claim queues: claimed messages, which are stale, and whether their session still exists."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qadmin.diagnostics import sql
from qadmin.diagnostics.model import WARNING, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import Diagnostic, Field, Metric, Section, kind_has
from qadmin.engines.base import Engine
from qadmin.errors import counted
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops.values import iso

CLAIMS_SHOWN = 1000


@dataclass
class Claims(Result):
    claimed: int | None = None
    claimed_note: str | None = None
    stale: list[dict[str, Any]] = field(default_factory=list)
    stale_after_s: int | None = None
    notes: list[str] = field(default_factory=list)


def measure(engine: Engine, spec: QueueSpec, stale_after_s: int) -> Claims:
    """Claims of a claim queue (other kinds have none: an empty result)."""
    if spec.kind is not Kind.CLAIM:
        return Claims()
    rows = sql.template_rows(engine, spec, "claims", {"limit": CLAIMS_SHOWN})
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
    return Claims(
        claimed=len(rows),
        claimed_note="or more" if len(rows) == CLAIMS_SHOWN else None,
        stale=stale,
        stale_after_s=stale_after_s,
        notes=[sessions.note] if sessions.note else [],
    )


def requeue(engine: Engine, spec: QueueSpec, stale_after_s: int) -> list[int]:
    """Release claims older than ``stale_after_s``: the messages are served again."""
    rows = engine.run(engine.section(spec, "requeue"), {"stale_s": int(stale_after_s)})
    return sorted(int(r["id"]) for r in rows if r.get("id") is not None)


def collect(ctx: Context) -> Claims:
    if ctx.spec is None:
        return Claims()
    return measure(ctx.engine, ctx.spec, ctx.options.stale_after_s)


def rule(report: InspectReport) -> list[Finding]:
    part: Claims | None = report.part("claims")
    limit = report.limit("stale_claims")
    threshold = limit.warn if limit.warn is not None else limit.crit
    if part is None or not part.stale or (threshold is not None and len(part.stale) < threshold):
        return []
    gone = sum(1 for c in part.stale if c.get("session_alive") is False)
    detail = f" ({gone} from sessions that no longer exist)" if gone else ""
    severity = "critical" if limit.crit is not None and len(part.stale) >= limit.crit else WARNING
    return [
        Finding(
            severity,
            "stale_claims",
            f"{counted(len(part.stale), 'claim')} older than {part.stale_after_s} s{detail}",
            f"qadmin requeue {report.queue} --stale-after {part.stale_after_s}",
        )
    ]


def _stale(report: InspectReport) -> int | None:
    part: Claims | None = report.part("claims")
    return None if part is None or part.claimed is None else len(part.stale)


ENTRY = Diagnostic(
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
            applies=kind_has("claims"),
        ),
    ),
    fields=(
        Field(
            "claimed",
            "messages",
            "claimed, not yet acked (claim queues)",
            "int64",
            lambda r: p.claimed if (p := r.part("claims")) else None,
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
