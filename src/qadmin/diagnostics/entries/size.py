"""Depth (the engine's estimate, made exact only when cheap), the oldest message, bytes on disk.

Never scans a big queue: depth is counted only below ``EXACT_DEPTH_LIMIT`` estimated rows.
"""

from __future__ import annotations

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

EXACT_DEPTH_LIMIT = 100_000


@dataclass
class Size(Result):
    depth: int
    depth_exact: bool
    oldest_enqueued_at: str | None
    oldest_age_s: float | None
    facts: dict[str, Any] = field(default_factory=dict)  # the catalog's figures, as read
    due: int | None = None  # pending queues
    ring_fill: float | None = None  # rings
    note: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data = dict(self.facts)
        data.update(depth=self.depth, depth_exact=self.depth_exact)
        data.update(oldest_enqueued_at=self.oldest_enqueued_at, oldest_age_s=self.oldest_age_s)
        for key in ("due", "ring_fill", "note"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return dict(json_safe(data))

    def all_notes(self) -> list[str]:
        return [self.note] if self.note else []


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


def _table(ctx: Context) -> Size:
    """A hand-built table: counted below the limit, its oldest row by the columns given."""
    engine, options = ctx.engine, ctx.options
    part = sql.read(engine, "size", ctx.params)
    facts = part.first
    estimate = sql.as_int(facts.get("estimated_rows"))
    if estimate is None or estimate < EXACT_DEPTH_LIMIT:
        depth = int(engine.run(engine.table_sql("depth", ctx.table, {}), write=False)[0]["depth"])
        exact = True
    else:
        depth, exact = estimate, False
    oldest = None
    if options.order_by and options.time_column:
        columns = {"order_col": options.order_by, "time_col": options.time_column}
        rows = engine.run(engine.table_sql("oldest", ctx.table, columns), write=False)
        oldest = to_utc(rows[0]["oldest_enqueued_at"]) if rows else None
    return Size(depth, exact, iso(oldest), _age(oldest), facts, note=part.note)


def collect(ctx: Context) -> Size:
    return _table(ctx) if ctx.spec is None else measure(ctx.engine, ctx.spec)


def rule(report: InspectReport) -> list[Finding]:
    part: Size | None = report.part("size")
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
            lambda r: float(p.depth) if (p := _size(r)) else None,
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
