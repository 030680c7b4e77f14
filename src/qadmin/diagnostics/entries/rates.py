"""Enqueue and dequeue rates from counters read twice (``--sample``), each naming its source,
and whether the backlog grows."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.entries import size
from qadmin.diagnostics.model import (
    CRITICAL,
    WARNING,
    Context,
    Finding,
    InspectReport,
    Result,
    json_safe,
)
from qadmin.diagnostics.registry import EXACT, Diagnostic, Field, Metric, Quality
from qadmin.engines.base import Engine
from qadmin.errors import PermissionMissing
from qadmin.kinds import QueueSpec

# A growth worked out from estimated depths: any value either side of a threshold is possible.
GROWTH_ESTIMATED = Quality("estimate", error=1.0, source="from estimated depths", low=float("-inf"))


@dataclass
class Sample:
    """Counters at one moment: what the template and the engine tell cheaply."""

    at: float
    depth: int | None
    enqueued_total: int | None
    dequeued_total: int | None
    deleted: int | None
    notes: list[str] = field(default_factory=list)
    enqueue_source: str | None = None  # a profiled table's: which counter enqueued_total is
    depth_exact: bool = True  # False: the depth was the catalog's estimate (a big queue)


def sample(engine: Engine, spec: QueueSpec) -> Sample:
    notes = []
    params = {"schema": engine.schema, "table": spec.name}
    try:
        rows = sql.template_rows(engine, spec, "counters", params)
    except PermissionMissing as exc:
        rows = []
        notes.append(f"id counters unavailable: {exc}")
    counters = rows[0] if rows else {}
    server = sql.read(engine, "counters", params)
    if server.note and sql.available(engine, "counters"):
        notes.append(server.note)
    measured = size.measure(engine, spec)
    return Sample(
        at=time.monotonic(),
        depth=measured.depth or 0,
        depth_exact=bool(measured.depth_exact),
        enqueued_total=sql.as_int(counters.get("enqueued_total")),
        dequeued_total=sql.as_int(counters.get("dequeued_total")),
        deleted=sql.as_int(server.first.get("deleted")),
        notes=notes,
    )


def sample_profile(ctx: Context) -> Sample:
    """A profiled table's counters: the integer order key's high-water mark (one index probe)
    or else the server's insert counter for enqueues; the server's delete counter for
    dequeues when rows leave by being deleted (no states), else what entered minus the
    growth of the waiting rows (counted within the cost rules)."""
    reader = ctx.reader
    assert reader is not None, "a table qadmin did not create is read through its profile"
    profile, notes = reader.profile, []
    server = sql.read(ctx.engine, "counters", ctx.params)
    high, source = None, None
    order = profile.order_by
    column = reader.shape.column(order) if order else None
    if order and column and column.family == "integer" and reader.shape.index_leading(order):
        rows = reader.run("high_water", {}, {}, {"order_col": order})
        high, source = (sql.as_int(rows[0]["high"]) if rows else None), "order key high-water mark"
    elif server.first.get("inserted") is not None:
        high, source = sql.as_int(server.first["inserted"]), "server insert counter"
    else:
        notes.append("enqueue rate not derivable: no indexed integer order key, no insert counter")
    depth = reader.count_state(profile.pending) if reader.state else reader.count_rows()
    if depth.rows is None:
        notes.append("backlog growth not derivable: waiting rows are not counted cheaply")
    deleted = None if reader.state else sql.as_int(server.first.get("deleted"))
    return Sample(time.monotonic(), depth.rows, high, None, deleted, notes, source, depth.exact)


@dataclass
class Rates(Result):
    latest: Sample  # not in JSON: the counters the next rate starts from
    interval_s: float | None = None
    enqueued: int | None = None
    enqueue_per_s: float | None = None
    enqueue_source: str | None = None
    dequeued: int | None = None
    dequeue_per_s: float | None = None
    dequeue_source: str | None = None
    depth_change: int | None = None
    backlog_growth_per_s: float | None = None
    # False: a depth it came from was an estimate (MariaDB's sampled statistics move by
    # hundreds on an idle table), so the growth proves nothing either way
    growth_exact: bool | None = None
    notes: list[str] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "latest"}
        return dict(json_safe(data))


def _delta(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else b - a


def between(before: Sample, after: Sample, spec: QueueSpec | None) -> Rates:
    """Rates between two samples, each with the counter it came from (``spec`` None: a
    profiled table, whose enqueues are its order key's high-water mark)."""
    elapsed = max(after.at - before.at, 1e-6)
    enq = _delta(before.enqueued_total, after.enqueued_total)
    deq = _delta(before.dequeued_total, after.dequeued_total)
    change = _delta(before.depth, after.depth)
    source = "pop sequence"
    if deq is None and (spec is None or spec.info.deletes_are_dequeues):
        deq = _delta(before.deleted, after.deleted)
        source = "server delete counter"
    if deq is None and enq is not None and change is not None:
        deq = enq - change
        source = "enqueued minus depth change"
    if spec is None:
        enqueue_source = after.enqueue_source
    else:
        enqueue_source = "push sequence" if spec.info.ring else "id high-water mark"
    return Rates(
        latest=after,
        interval_s=round(elapsed, 3),
        enqueued=enq,
        enqueue_per_s=round(enq / elapsed, 2) if enq is not None else None,
        enqueue_source=enqueue_source if enq is not None else None,
        dequeued=max(deq, 0) if deq is not None else None,
        dequeue_per_s=round(max(deq, 0) / elapsed, 2) if deq is not None else None,
        dequeue_source=source if deq is not None else None,
        depth_change=change,
        backlog_growth_per_s=round(change / elapsed, 2) if change is not None else None,
        growth_exact=None if change is None else before.depth_exact and after.depth_exact,
        notes=sorted(set(before.notes + after.notes)),
    )


def collect(ctx: Context) -> Rates | None:
    """Inspect and check: two samples ``--sample`` apart (none with 0); tail and collect: one
    sample, the rate comes from the previous snapshot."""
    if ctx.options.sample_s <= 0 and not ctx.options.telemetry:
        return None
    first = _take(ctx)
    if ctx.options.telemetry or ctx.options.rates_later:
        return Rates(latest=first, notes=first.notes)
    time.sleep(ctx.options.sample_s)
    return between(first, _take(ctx), ctx.spec)


def _take(ctx: Context) -> Sample:
    return sample_profile(ctx) if ctx.spec is None else sample(ctx.engine, ctx.spec)


def finish(ctx: Context, started: Rates) -> Rates:
    """The second read of a sample whose first was taken earlier (inspect on a terminal shows
    its first screen meanwhile): what is left of ``--sample`` waited out, then the rates."""
    time.sleep(max(ctx.options.sample_s - (time.monotonic() - started.latest.at), 0.0))
    return between(started.latest, _take(ctx), ctx.spec)


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None or part.backlog_growth_per_s is None or part.enqueue_per_s is None:
        return []
    growth, enq = part.backlog_growth_per_s, part.enqueue_per_s
    if part.growth_exact is False:
        return []  # from estimated depths: not a finding either way
    deq = part.dequeue_per_s or 0.0
    limit = report.limit("backlog_growth")
    first = limit.warn if limit.warn is not None else limit.crit
    if not (growth > 0 and enq > deq and (part.enqueued or 0) > 0):
        return []
    if first is not None and growth < first:
        return []
    critical = limit.crit is not None and growth >= limit.crit
    return [
        Finding(
            CRITICAL if critical else WARNING,
            "backlog_growing",
            f"the backlog grew by {part.depth_change} in {part.interval_s} s: "
            f"{enq}/s enqueued, {deq}/s dequeued",
            f"{report.command('tail')} --count 5 to watch the rates; then add consumers, or "
            "find why they are slow (lock waits above)",
        )
    ]


def _rates(report: InspectReport) -> Rates | None:
    part = report.part(ENTRY)
    return part


ENTRY: Diagnostic[Rates] = Diagnostic(
    name="rates",
    order=15,
    sql=("counters",),
    collect=collect,
    rule=rule,
    metrics=(
        Metric(
            "backlog_growth",
            "",
            "growth of the backlog in messages per second over --sample",
            lambda r: p.backlog_growth_per_s if (p := _rates(r)) else None,
            quality=lambda r: (
                GROWTH_ESTIMATED
                if (p := _rates(r)) is not None and p.growth_exact is False
                else EXACT
            ),
        ),
    ),
    fields=(
        Field(
            "enqueued_total",
            "messages",
            "cumulative enqueue counter (id high-water or push sequence)",
            "int64",
            lambda r: p.latest.enqueued_total if (p := _rates(r)) else None,
            tail=False,
        ),
        Field(
            "dequeued_total",
            "messages",
            "cumulative dequeue counter where the queue keeps one (ring)",
            "int64",
            lambda r: p.latest.dequeued_total if (p := _rates(r)) else None,
            tail=False,
        ),
        Field(
            "deleted_total",
            "rows",
            "server's cumulative delete counter (PostgreSQL, SQL Server)",
            "int64",
            lambda r: p.latest.deleted if (p := _rates(r)) else None,
            tail=False,
        ),
        Field(
            "backlog_growth_per_s",
            "messages/s",
            "depth change per second since the previous sample (tail; null in collect)",
            "float64",
            lambda r: p.backlog_growth_per_s if (p := _rates(r)) else None,
        ),
    ),
)
