"""Depth (the engine's estimate, made exact only when cheap), the oldest message, bytes on disk.

Never scans a big queue: depth is counted only below ``EXACT_DEPTH_LIMIT`` estimated rows. A
table read through a profile counts its waiting rows (and each state's) by bounded probes or
an index that fits, else the planner's estimate, saying which (qadmin.profiles.query).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from qadmin.diagnostics import sql
from qadmin.diagnostics.model import (
    CRITICAL,
    WARNING,
    Context,
    Finding,
    InspectReport,
    Result,
    json_safe,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric, kind_has
from qadmin.engines.base import Engine
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops.values import iso, to_utc
from qadmin.profiles import query

EXACT_DEPTH_LIMIT = 100_000


@dataclass
class Size(Result):
    depth: int | None  # None: waiting rows could not be counted cheaply (a note says why)
    depth_exact: bool
    oldest_enqueued_at: str | None
    oldest_age_s: float | None
    facts: dict[str, Any] = field(default_factory=dict)  # the catalog's figures, as read
    due: int | None = None  # pending queues
    ring_fill: float | None = None  # rings
    note: str | None = None
    depth_source: str | None = None  # where an estimate came from; None when counted
    # Profiles with states: one entry per state value, and the groups' totals.
    states: list[dict[str, Any]] | None = None
    claimed: int | None = None
    done: int | None = None
    failed: int | None = None
    notes: list[str] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        data = dict(self.facts)
        data.update(depth=self.depth, depth_exact=self.depth_exact, depth_source=self.depth_source)
        data.update(oldest_enqueued_at=self.oldest_enqueued_at, oldest_age_s=self.oldest_age_s)
        for key in ("due", "ring_fill", "note"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.states is not None:
            data.update(states=self.states, claimed=self.claimed, done=self.done)
            data.update(failed=self.failed)
        if self.notes:
            data["notes"] = self.notes
        return dict(json_safe(data))

    def all_notes(self) -> list[str]:
        return ([self.note] if self.note else []) + self.notes


def _age(when: datetime | None) -> float | None:
    return round((datetime.now(UTC) - when).total_seconds(), 3) if when else None


def measure(engine: Engine, spec: QueueSpec) -> Size:
    """The size of a qadmin queue (also what tail, collect and the conformance harness read)."""
    part = sql.read(engine, "size", {"schema": engine.schema, "table": spec.name})
    facts = part.first
    if facts.get("estimated_rows") is None:
        for row in sql.template_rows(engine, spec, "estimate"):
            facts.update(estimated_rows=row["estimated_rows"], estimate_source="id range")
    estimate = facts.get("estimated_rows")
    facts = {
        k: (sql.as_int(v) if k.endswith(("_bytes", "_rows", "pages")) else v)
        for k, v in facts.items()
    }
    exact = spec.kind is Kind.RING or estimate is None or int(estimate) < EXACT_DEPTH_LIMIT
    oldest: Any = None
    if exact:
        row = engine.run(engine.section(spec, "depth"), write=False)[0]
        depth = int(row["depth"])
        oldest = row.get("oldest_enqueued_at")
    else:
        depth = int(estimate or 0)
        rows = sql.template_rows(engine, spec, "oldest")
        oldest = rows[0]["oldest_enqueued_at"] if rows else None
    when = to_utc(oldest)
    result = Size(depth, exact, iso(when), _age(when), facts, note=part.note)
    if spec.kind is Kind.PENDING:
        result.due = int(sql.template_rows(engine, spec, "due")[0]["due"])
    if spec.kind is Kind.RING and spec.capacity:
        result.ring_fill = round(depth / spec.capacity, 4)
    return result


def _total(counts: list[query.Count]) -> query.Count:
    """The sum of some counts: unknown if one is, exact only if all are."""
    if any(c.rows is None for c in counts):
        return query.Count(None, False, next(c.source for c in counts if c.rows is None))
    sources = sorted({c.source for c in counts if c.source})
    total = sum(c.rows or 0 for c in counts)
    return query.Count(total, all(c.exact for c in counts), "; ".join(sources) or None)


def _oldest(reader: query.Reader) -> tuple[Any, float | None, str | None]:
    """The oldest waiting row's time and age, when an index (or the table's size) makes it
    cheap; else a note naming the index that would."""
    profile = reader.profile
    time_col = profile.time_column
    if time_col is None:
        return None, None, "give --time-column COLUMN for the oldest waiting row's age"
    shape, names = reader.shape, {"time_col": time_col}
    where, params = reader.where(profile.pending)
    keywords = {"filter": where, "age": reader.age("oldest_at")}
    if reader.state is not None:
        if not (reader.small or reader.state_indexed):
            return None, None, f"oldest waiting row not read: {reader.index_hint(time_col)}"
        rows = reader.run("oldest_min", keywords, params, names)
    elif profile.order_by and (reader.small or shape.index_leading(profile.order_by)):
        rows = reader.run(
            "oldest_first", keywords, params, {**names, "order_col": profile.order_by}
        )
    elif reader.small or shape.index_leading(time_col):
        rows = reader.run("oldest_min", keywords, params, names)
    else:
        hint = f"an index on {profile.table} ({time_col}) would make it cheap"
        return None, None, f"oldest row not read: {hint}"
    if not rows or rows[0]["oldest_at"] is None:
        return None, None, None
    return rows[0]["oldest_at"], sql.seconds(rows[0]["age_s"]), None


OTHER_STATES_SHOWN = 50


def _other_states(reader: query.Reader) -> list[dict[str, Any]]:
    """State values the profile does not name (a new library version's 'cancelled'), read
    only on a small table: the one GROUP BY that would scan a big one."""
    if not reader.small:
        return []
    profile = reader.profile
    known = [v for group in query.GROUPS for v in getattr(profile, group)]
    rows = reader.run("state_values", {"state": reader.state or ""}, {"limit": OTHER_STATES_SHOWN})
    return [
        {
            "state": query.state_text(r["state"]),
            "group": "other",
            "rows": int(r["n"]),
            "exact": True,
        }
        for r in rows
        if r["state"] not in known
    ]


def profiled(ctx: Context) -> Size:
    """A table read through its profile: waiting rows, each state's rows, the oldest waiting
    row, all within the cost rules (qadmin.profiles.query)."""
    reader = ctx.reader
    assert reader is not None, "a table qadmin did not create is read through its profile"
    profile = reader.profile
    part = sql.read(ctx.engine, "size", ctx.params)
    facts = {
        k: (sql.as_int(v) if k.endswith(("_bytes", "_rows", "pages")) else v)
        for k, v in part.first.items()
    }
    notes: list[str] = []
    states: list[dict[str, Any]] | None = None
    totals: dict[str, query.Count] = {}
    if reader.state is None:
        depth = reader.count_rows()
    else:
        states = []
        for group in query.GROUPS:
            counts = []
            for value in getattr(profile, group):
                count = reader.count_state((value,))
                counts.append(count)
                states.append(
                    {
                        "state": query.state_text(value),
                        "group": group,
                        "rows": count.rows,
                        "exact": count.exact,
                    }
                )
            totals[group] = _total(counts) if counts else query.Count(None, False)
        depth = totals["pending"]
        notes += sorted({c.source for c in totals.values() if c.rows is None and c.source})
        states += _other_states(reader)
    oldest, age, note = _oldest(reader)
    if note:
        notes.append(note)
    when = to_utc(oldest)
    return Size(
        depth.rows,
        depth.exact,
        iso(when),
        age,
        facts,
        note=part.note,
        depth_source=depth.source,
        states=states,
        claimed=totals["claimed"].rows if totals else None,
        done=totals["done"].rows if totals else None,
        failed=totals["failed"].rows if totals else None,
        notes=notes,
    )


def collect(ctx: Context) -> Size:
    return profiled(ctx) if ctx.spec is None else measure(ctx.engine, ctx.spec)


def rule(report: InspectReport) -> list[Finding]:
    part: Size | None = report.part("size")
    profile = report.profile
    if part is not None and part.depth is None and profile and profile.source != "qadmin":
        # A figure the profile promises that could not be read is never a silent OK.
        why = "; ".join(part.notes) or "no cheap way to count the waiting rows"
        return [Finding(WARNING, "depth_unread", f"depth not read: {why}", _index_fix(why))]
    if part is None or part.ring_fill is None:
        return []
    limit = report.limit("ring_fill")
    if limit.warn is None and limit.crit is None:
        return []
    first = limit.warn if limit.warn is not None else limit.crit
    if first is None or part.ring_fill < first:
        return []
    critical = limit.crit is not None and part.ring_fill >= limit.crit
    return [
        Finding(
            CRITICAL if critical else WARNING,
            "ring_nearly_full",
            f"ring is {part.ring_fill:.0%} full; pushes are refused when it is full",
            f"add consumers, or resize the ring (qadmin resize {report.queue} --capacity N)",
        )
    ]


def _index_fix(why: str) -> str:
    """The fix for a figure not read: the index the note names, made by the DBA."""
    found = re.search(r"an index on \S+ \([^)]*\)", why)
    return f"create {found.group(0)}" if found else "see the notes"


def _size(report: InspectReport) -> Size | None:
    part: Size | None = report.part("size")
    return part


def _oldest_age(part: Size | None) -> float | None:
    """0 for an empty queue; unknown (never 0) when messages wait but none could be dated."""
    if part is None:
        return None
    if part.oldest_age_s is None and part.depth == 0:
        return 0.0
    return part.oldest_age_s


ENTRY = Diagnostic(
    name="size",
    order=10,
    sql=("size",),
    collect=collect,
    rule=rule,
    metrics=(
        Metric(
            "depth",
            "",
            "messages in the queue",
            lambda r: float(p.depth) if (p := _size(r)) and p.depth is not None else None,
        ),
        Metric(
            "oldest_age",
            "s",
            "age of the oldest message in seconds",
            lambda r: _oldest_age(_size(r)),
        ),
        Metric(
            "ring_fill",
            "",
            "ring depth / capacity (rings)",
            lambda r: p.ring_fill if (p := _size(r)) else None,
            warn=0.9,
            crit=1.0,
            applies=kind_has("ring"),
        ),
    ),
    fields=(
        Field(
            "depth",
            "messages",
            "messages in the queue (estimate when depth_exact is false)",
            "int64",
            lambda r: p.depth if (p := _size(r)) else None,
        ),
        Field(
            "depth_exact",
            "",
            "whether depth was counted",
            "bool",
            lambda r: p.depth_exact if (p := _size(r)) else None,
        ),
        Field(
            "oldest_age_s",
            "s",
            "age of the oldest message",
            "float64",
            lambda r: p.oldest_age_s if (p := _size(r)) else None,
        ),
        Field(
            "ring_fill",
            "fraction",
            "ring depth / capacity (rings)",
            "float64",
            lambda r: p.ring_fill if (p := _size(r)) else None,
        ),
        Field(
            "table_bytes",
            "bytes",
            "table size",
            "int64",
            lambda r: (
                (p.facts.get("table_bytes") or p.facts.get("file_bytes"))
                if (p := _size(r))
                else None
            ),
            tail=False,
        ),
        Field(
            "index_bytes",
            "bytes",
            "index size",
            "int64",
            lambda r: p.facts.get("index_bytes") if (p := _size(r)) else None,
            tail=False,
        ),
    ),
)
