"""A ring's sequences, parked numbers, and the two holes that stall it: an orphan (a popper
took its number and died: its message stays in its slot, out of the depth, and the ring
refuses pushes once it laps onto that slot) and a missing message (a pusher took its number
and died: every pop stops there). Cheap: primary-key lookups of the slots around the two
sequences, at most min(capacity, 10,000) each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.model import (
    CRITICAL,
    WARNING,
    Context,
    Finding,
    InspectReport,
    Number,
    Result,
    Row,
    json_safe,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric, kind_has
from qadmin.engines.base import Engine
from qadmin.errors import PermissionMissing
from qadmin.kinds import QueueSpec


@dataclass(frozen=True)
class RingState(Row):
    """The row of the ring template's ``ring_state`` section: the two sequences, the parked
    numbers and the two holes (the fixes' SQL is kept apart, on ``Ring``)."""

    push_next: Number | None = None
    pop_next: Number | None = None
    parked: Number | None = None
    oldest_parked_s: Number | None = None
    overflow: Number | None = None
    orphan_id: Number | None = None
    orphans: Number | None = None  # PostgreSQL
    orphans_searched: Number | None = None  # PostgreSQL: the numbers whose slots were searched
    orphan_blocks_push: bool | None = None  # PostgreSQL, MySQL, MariaDB
    orphan_fix: str | None = None
    hole_fix: str | None = None
    orphan_slot: Number | None = None
    orphan_age_s: Number | None = None
    missing_id: Number | None = None
    waiting_behind_age_s: Number | None = None


# The numbers behind the pop sequence whose slots are searched for an orphan, at most.
ORPHAN_LOOKUPS = 10_000


@dataclass
class Ring(Result):
    state: RingState  # the template's ring_state row, without the fixes' SQL
    hole_fix_sql: str  # the SQL that skips a missing number (by hand, as repair does)
    orphan_fix_sql: str
    notes: list[str] = field(default_factory=list)

    @property
    def stall_s(self) -> float:
        """How long pops have been stopped at a missing number (0: no hole)."""
        waiting = self.state.waiting_behind_age_s
        if self.state.missing_id is None or waiting is None:
            return 0.0
        return float(waiting)

    @property
    def orphan_age_s(self) -> float:
        if self.state.orphan_id is None:
            return 0.0
        return float(self.state.orphan_age_s or 0)

    def to_json_dict(self) -> dict[str, Any]:
        """The state row; each fix's SQL only while its hole exists."""
        data = self.state.as_dict()
        data["hole_fix"] = self.hole_fix_sql if self.state.missing_id is not None else None
        data["orphan_fix"] = self.orphan_fix_sql if self.state.orphan_id is not None else None
        return dict(json_safe(data))


def measure(engine: Engine, spec: QueueSpec) -> Ring | None:
    """None for another kind, or when the role may not read the sequences (size's note says
    so and names the privilege)."""
    if not spec.info.ring:
        return None
    try:
        row = dict(sql.template_rows(engine, spec, "ring_state")[0])
    except PermissionMissing:
        return None
    for key in ("oldest_parked_s", "orphan_age_s", "waiting_behind_age_s"):
        if row.get(key) is not None:
            row[key] = round(float(row[key]), 3)
    if row.get("orphan_id") is None:
        row["orphan_slot"] = None
    if "orphan_blocks_push" in row:
        row["orphan_blocks_push"] = (
            None if row["orphan_id"] is None else bool(row["orphan_blocks_push"])
        )
    notes = []
    searched, lap = row.get("orphans_searched"), min(int(spec.capacity or 0), ORPHAN_LOOKUPS)
    if searched is not None and int(searched) < min(lap, int(row.get("pop_next") or 0)):
        # a held snapshot's dead row versions (or a heap of many pages per slot) cut the
        # search short: an orphan further behind is found when the ring laps onto its slot
        notes.append(
            f"orphans looked for in the slots of the {int(searched):,} numbers behind the pop "
            f"sequence, not {lap:,}: the ring's dead row versions make each slot dear to read "
            "(an orphan further behind is reported when pushes reach its slot)"
        )
    hole, orphan = str(row.pop("hole_fix", None) or ""), str(row.pop("orphan_fix", None) or "")
    return Ring(RingState.of(row), hole, orphan, notes)


def collect(ctx: Context) -> Ring | None:
    return None if ctx.spec is None else measure(ctx.engine, ctx.spec)


def _repair(queue: str, age_s: float) -> str:
    """``qadmin repair`` as it must be typed to repair this very hole: a dry run, then the
    run, taking a number or slot as old as the one seen (whole seconds, rounded down) as left
    by a dead client (repair's default waits 60 s)."""
    older = f"--older-than {max(int(age_s), 0)}"
    return f"qadmin repair {queue} {older} --dry-run, then qadmin repair {queue} {older} --yes"


def rule(report: InspectReport) -> list[Finding]:
    """The two ways a ring stalls after a client dies between taking a number and committing;
    the fix names `qadmin repair` and the SQL that does the same by hand."""
    ring = report.part(ENTRY)
    if ring is None:
        return []
    queue, state = report.queue, ring.state
    out = []
    limit = report.limit("ring_stall")
    first = limit.warn if limit.warn is not None else limit.crit
    if state.orphan_id is not None and (
        state.orphan_blocks_push or (first is not None and ring.orphan_age_s >= first)
    ):
        where = (
            "in the overflow table" if state.orphan_slot is None else f"in slot {state.orphan_slot}"
        )
        effect = (
            "the slot the next push needs stays full, so the ring refuses pushes"
            if state.orphan_blocks_push
            else "no pop will deliver it and depth leaves it out"
            + (
                ""
                if state.orphan_slot is None
                else "; the ring will refuse pushes when it laps onto its slot"
            )
        )
        out.append(
            Finding(
                CRITICAL,
                "ring_orphan",
                f"message {state.orphan_id} {where} "
                f"({sql.duration(ring.orphan_age_s)} old) was taken by a popper that never "
                f"finished: {effect}",
                f"{_repair(queue, ring.orphan_age_s)} (by hand: {ring.orphan_fix_sql})",
            )
        )
    if state.missing_id is not None and first is not None and ring.stall_s >= first:
        critical = limit.crit is not None and ring.stall_s >= limit.crit
        missing = state.missing_id
        out.append(
            Finding(
                CRITICAL if critical else WARNING,
                "ring_push_hole",
                f"pops stop at sequence number {missing}: its pusher took the number and never "
                f"wrote the message, while later messages have waited "
                f"{sql.duration(ring.stall_s)}",
                f"{_repair(queue, ring.stall_s)} (by hand: {ring.hole_fix_sql} once; if it returns "
                f"another number, a popper took {missing} meanwhile: park the returned one in "
                f"{queue}_pending)",
            )
        )
    return out


def _ring(report: InspectReport) -> Ring | None:
    ring = report.part(ENTRY)
    return ring


ENTRY: Diagnostic[Ring] = Diagnostic(
    name="ring",
    order=50,
    sql=(),
    collect=collect,
    rule=rule,
    queue_only=True,
    metrics=(
        Metric(
            "ring_stall",
            "s",
            "how long pops have stopped at a number whose pusher died (rings)",
            lambda r: p.stall_s if (p := _ring(r)) else None,
            crit=30,
            applies=kind_has("ring"),
        ),
    ),
    fields=(
        Field(
            "ring_stall_s",
            "s",
            "how long pops have stopped at a missing message (rings; 0: no hole)",
            "float64",
            lambda r: p.stall_s if (p := _ring(r)) else None,
        ),
        Field(
            "ring_orphan_age_s",
            "s",
            "age of a message whose popper died: no pop delivers it (rings; 0: none)",
            "float64",
            lambda r: p.orphan_age_s if (p := _ring(r)) else None,
        ),
    ),
)
