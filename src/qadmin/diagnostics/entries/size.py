"""Depth and the oldest message, each naming where it came from, and bytes on disk.

Never scans the queue, and never walks the dead index entries a held snapshot keeps behind the
head: a ring's depth comes from its sequences; a watermarked queue is counted from its
watermark up (probed below the id high-water mark when the watermark lags far behind); any
other kind is walked from the bottom of its index only when the catalog says few dead entries
can lie on the way (``DEAD_WALK_LIMIT``) and few rows wait, else probed in windows below the id
high-water mark ("at least" for the oldest), the catalog's estimate standing in when it sees
many more rows than the window. No walk counts more than ``EXACT_DEPTH_LIMIT`` + 1 rows, and a
queue the catalog puts above that is not counted. A table read through a profile counts its
waiting rows (and each state's) by bounded probes or an index that fits, else the planner's
estimate, saying which (qadmin.profiles.query)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
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
    Result,
    Row,
    json_safe,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric, Quality, kind_has
from qadmin.engines.base import Engine
from qadmin.errors import PermissionMissing, UsageError
from qadmin.kinds import QueueSpec
from qadmin.profiles import query
from qadmin.profiles.model import Profile, Value
from qadmin.values import iso, to_utc

# A depth is counted only up to this many rows (about 100 buffers on PostgreSQL); a queue the
# catalog puts above it is not counted at all: its estimate is the depth, said so.
EXACT_DEPTH_LIMIT = 10_000
# A walk from the bottom of the index is cheap when at most this many dead entries exist.
DEAD_WALK_LIMIT = 10_000
# A queue the catalog puts above EXACT_DEPTH_LIMIT is walked only this far (for the oldest):
# fewer rows than this mean the estimate lags a drain, and they are the depth.
STALE_CHECK = 100
# The first window below the id high-water mark, widened by a quarter and then doubled while at
# least PROBE_FULL of its ids are waiting rows (the head lies further down; the rest are
# rolled-back ids and the like).
PROBE_FIRST = 1_000
PROBE_FULL = 0.9
# An empty window widens only this far (the catalog saying the table holds rows): an empty
# queue behind dead rows must not walk them window by window.
PROBE_EMPTY_LIMIT = 16_000
# The catalog counting more rows than a window holds (by ESTIMATE_NOISE rows and a tenth)
# means rows lie below it (past a run of rolled-back ids, a lifo's popped top, a pending
# queue's later due times): the window widens on, empty or not, up to PROBE_UNSEEN_LIMIT ids.
# Its count then stands unless the estimate is still above it by ESTIMATE_SLACK rows and half
# the count (the rows lie further down, or the estimate is stale): then the estimate is the
# depth. The half keeps InnoDB's sampled estimates, often a fifth off, from replacing a count.
ESTIMATE_NOISE = 100
ESTIMATE_SLACK = 1_000
PROBE_UNSEEN_LIMIT = 64_000
# A heap this small is cheap to walk whatever dead entries it holds (about as many pages as
# DEAD_WALK_LIMIT entries fill).
SMALL_HEAP_PAGES = 128
BOTTOM = -(2**63)  # below every id: a walk from the first index entry
TOP = 2**63 - 1  # above every id: a walk to the last index entry


@dataclass(frozen=True)
class StateCount:
    """A profile's rows in one state value: its group (pending, claimed, done, failed, or
    other: a value the profile does not name) and whether they were counted exactly."""

    state: str | None
    group: str
    rows: int | None
    exact: bool
    # A planner's estimate (no index on the state to count through): neither exact nor a
    # floor; ``counted`` rows were seen by a count, the only bound below it.
    planner: bool = False
    counted: int = 0


@dataclass(frozen=True)
class SizeFacts(Row):
    """The catalog's figures of the queue table (size.sql; SQLite's estimate from its
    template's ``estimate`` section), sizes and row counts as ints; what a walk learned
    (a reset's estimate, the claimed rows taken off it) is a new row, ``adjusted``."""

    estimated_rows: int | None = None
    estimate_source: str | None = None
    table_bytes: int | None = None
    index_bytes: int | None = None
    free_bytes: int | None = None  # MySQL / MariaDB
    pages: int | None = None
    page_size: int | None = None  # SQLite
    file_bytes: int | None = None  # SQLite
    size_source: str | None = None  # PostgreSQL
    stats_gathered: bool | None = None  # PostgreSQL
    last_analyzed: datetime | None = None  # PostgreSQL
    modified_since_analyze: int | None = None  # PostgreSQL

    @classmethod
    def read(cls, row: Mapping[str, Any]) -> SizeFacts:
        """A driver's row, its sizes and row counts as ints (MySQL gives some as Decimal)."""
        ints = ("_bytes", "_rows", "pages")
        return cls.of({k: (sql.as_int(v) if k.endswith(ints) else v) for k, v in row.items()})

    def adjusted(self, **changes: Any) -> SizeFacts:
        """These figures with ``changes``: a column this engine's SELECT lacked is added after
        its own (as the report then shows it)."""
        added = tuple(c for c in changes if c not in self.columns)
        return replace(self, **changes, columns=self.columns + added)

    @property
    def source(self) -> str:
        """Where the row estimate came from, for a depth's source."""
        return self.estimate_source or "catalog"


@dataclass
class Size(Result):
    depth: int | None  # None: waiting rows could not be counted cheaply (a note says why)
    depth_exact: bool
    oldest_enqueued_at: str | None
    oldest_age_s: float | None
    facts: SizeFacts = field(default_factory=SizeFacts)  # the catalog's figures, as used
    due: int | None = None  # pending queues
    ring_fill: float | None = None  # rings
    ring_capacity: int | None = None  # rings: the slots, for the printed resize
    note: str | None = None
    depth_source: str | None = None  # where depth came from (how it was counted, or estimated)
    oldest_source: str | None = None  # where the oldest message was read
    oldest_at_least: bool = False  # a bounded probe: older rows may lie below what it read
    depth_at_least: bool = False  # a probe stopped counting, and no estimate is higher
    rows_below: bool = False  # the oldest read is a floor: waiting rows lie below the probe
    # Profiles with states: one entry per state value, and the groups' totals.
    states: list[StateCount] | None = None
    # Tables with a due column: waiting rows not due yet, apart from depth.
    scheduled: query.Count | None = None
    retrying: query.Count | None = None
    # A named queue asked about (--queue NAME) that no row names: a typo in a monitoring
    # definition would otherwise read as an idle queue for ever. None: not asked, or rows found.
    queue_unseen: str | None = None
    claimed: int | None = None
    claimed_at_least: bool = False  # a claim queue's claimed count stopped at its limit
    done: int | None = None
    failed: int | None = None
    notes: list[str] = field(default_factory=list)
    estimate_error: float = 0.5  # how far an estimated depth may be off (Dialect.estimate_error)
    depth_counted: int = 0  # the waiting rows a walk saw (an estimated depth is at least this)
    # A claim queue whose claimed rows were not counted: the catalog's estimate includes
    # them, so it is an upper bound of the waiting rows, and only what was counted a lower.
    estimate_includes_claimed: bool = False
    # A claim queue's waiting rows known only as a floor (what the pop index walk counted)
    # and this ceiling: the catalog's estimate minus a floor of its claimed rows. It proves
    # a threshold above it is met, never one below it crossed.
    depth_ceiling: int | None = None
    claim_queue: bool = False  # a qadmin claim queue: its JSON always says its claimed rows
    # A planner's estimate (a profiled table's state, from the last ANALYZE's statistics): its
    # error has no bound; the truth lies between the rows counted (depth_counted) and the
    # table's rows (depth_ceiling, the catalog's estimate, estimate_error off: a profiled
    # table's is the default, every engine's 50 %).
    depth_unbounded: bool = False

    @property
    def claimed_quality(self) -> str | None:
        """A claim queue's claimed count: ``exact``, ``floor`` (it stopped at its limit, or
        another read's listing stands in), None when not counted."""
        if self.claimed is None or not self.claim_queue:  # a profile's: its states' counts
            return None
        return "floor" if self.claimed_at_least else "exact"

    @property
    def depth_quality(self) -> str | None:
        """``exact`` (counted), ``floor`` (at least: the rest was not read) or ``estimate``."""
        if self.depth is None:
            return None
        if self.depth_exact:
            return "exact"
        return "floor" if self.depth_at_least else "estimate"

    @property
    def scheduled_quality(self) -> str | None:
        """The not-due count's: ``exact``, ``floor`` (the count stopped at its limit) or
        ``estimate`` (the planner's), None when not read."""
        counted = self.scheduled
        if counted is None or counted.rows is None:
            return None
        if counted.exact:
            return "exact"
        return "estimate" if counted.planner else "floor"

    @property
    def oldest_quality(self) -> str | None:
        """The oldest age read is exact from a walk that began below every waiting row; a
        probe's is a floor (a message stuck below its window is not read), and so is the 0 of
        a queue that is empty only by an estimate."""
        if self.oldest_age_s is None:
            if self.depth == 0 and self.depth_exact:
                return "exact"  # empty: age 0
            return "floor" if self.depth == 0 and not self.depth_at_least else None
        return "floor" if self.oldest_at_least or self.rows_below else "exact"

    def to_json_dict(self) -> dict[str, Any]:
        data = self.facts.as_dict()
        data.update(depth=self.depth, depth_exact=self.depth_exact, depth_source=self.depth_source)
        data.update(depth_quality=self.depth_quality, oldest_quality=self.oldest_quality)
        data.update(oldest_enqueued_at=self.oldest_enqueued_at, oldest_age_s=self.oldest_age_s)
        if self.oldest_source is not None:
            data["oldest_source"] = self.oldest_source
        if self.oldest_at_least:  # only then: a healthy report stays one screen
            data["oldest_at_least"] = True
        if self.depth_at_least:
            data["depth_at_least"] = True
        if self.depth_ceiling is not None:
            data["depth_at_most"] = self.depth_ceiling
        if self.depth_unbounded and self.depth_quality == "estimate":
            data["depth_error_unbounded"] = True  # a planner's estimate: no error bound
        if self.rows_below:
            data["rows_below_window"] = True
        for key in ("due", "ring_fill", "note"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        for key in ("scheduled", "retrying"):
            count = getattr(self, key)
            if count is not None:
                data[key] = count.rows
                data[f"{key}_exact"] = count.exact
        if self.states is not None:
            data.update(states=[asdict(s) for s in self.states], claimed=self.claimed)
            data["done"] = self.done
            data.update(failed=self.failed)
        elif self.claimed is not None or self.claim_queue:  # apart from depth
            data.update(claimed=self.claimed, claimed_at_least=self.claimed_at_least)
            data["claimed_quality"] = self.claimed_quality
        if self.queue_unseen is not None:
            data["queue_unseen"] = True
        if self.notes:
            data["notes"] = self.notes
        return dict(json_safe(data))

    def all_notes(self) -> list[str]:
        return ([self.note] if self.note else []) + self.notes


def _age(when: datetime | None) -> float | None:
    return round((datetime.now(UTC) - when).total_seconds(), 3) if when else None


@dataclass
class Head:
    """What a walk found: the waiting rows, the oldest, and where each came from."""

    depth: int | None  # None: not readable (a note says why)
    exact: bool
    source: str
    oldest: Any
    oldest_source: str
    at_least: bool = False
    depth_at_least: bool = False
    rows_below: bool = False
    counted: int = 0  # the waiting rows a walk saw, when the depth is an estimate
    ceiling: int | None = None  # a floor's upper bound (a claim queue's estimate)


def measure(engine: Engine, spec: QueueSpec) -> Size:
    """The size of a qadmin queue (also what tail, collect and the conformance harness read)."""
    params = {"schema": engine.schema, "table": spec.name}
    part = sql.read(engine, "size", params)
    facts = SizeFacts.read(part.first)
    if facts.estimated_rows is None:
        for row in sql.template_rows(engine, spec, "estimate"):
            rows = sql.as_int(row["estimated_rows"])
            facts = facts.adjusted(estimated_rows=rows, estimate_source="id range")
    notes: list[str] = []
    counted: dict[str, int] = {}
    scheduled: query.Count | None = None
    if spec.info.ring:
        head = _ring_head(engine, spec, notes)
    elif spec.info.due:  # a pending queue: what a pop can take now, the rest scheduled apart
        head, scheduled = _due_head(engine, spec)
    else:
        head, facts = _head(engine, spec, facts, params, notes, counted)
    claimed = counted.get("claimed")
    if spec.info.claims and (claimed is None or claimed > EXACT_DEPTH_LIMIT):
        head = _waiting_floor(head, _estimate(facts))
    when = to_utc(head.oldest)
    result = Size(
        head.depth,
        head.exact,
        iso(when),
        _age(when),
        facts,
        note=part.note,
        depth_source=head.source,
        oldest_source=head.oldest_source,
        oldest_at_least=head.at_least,
        depth_at_least=head.depth_at_least,
        rows_below=head.rows_below,
        notes=notes,
        estimate_error=engine.hooks.estimate_error,
        depth_counted=head.counted,
        estimate_includes_claimed=spec.info.claims and claimed is None,
        depth_ceiling=head.ceiling,
        claim_queue=spec.info.claims,
        claimed=claimed,
        claimed_at_least=claimed is not None and claimed > EXACT_DEPTH_LIMIT,
    )
    if scheduled is not None:
        result.due, result.scheduled = head.depth, scheduled
    if spec.info.ring and spec.capacity and head.depth is not None:
        result.ring_fill = round(head.depth / spec.capacity, 4)
        result.ring_capacity = int(spec.capacity)
    return result


def _waiting_floor(head: Head, estimate: int | None) -> Head:
    """A claim queue whose claimed rows were not all counted: the catalog's estimate (minus
    those counted) is only an upper bound of its waiting rows (90,000 claimed of 100,000 read
    as ~89,999 waiting for 10,000). The waiting rows the pop index walk counted are the
    depth: a probe's count stands when that bound says no more lie below its window, else
    it is a floor and the estimate its ceiling, never the depth."""
    if head.exact or head.depth is None:
        return head
    counted = head.depth if head.depth_at_least else head.counted
    ceiling = None if estimate is None else max(estimate, counted)
    room = max(ESTIMATE_SLACK, counted // 2)
    if not head.depth_at_least and head.depth <= counted and (ceiling or 0) - counted <= room:
        return head  # the upper bound leaves no more rows below the window than its noise
    source = head.source
    if ceiling is not None:
        source += (
            f"; at most ~{ceiling:,} by the catalog's estimate (claimed rows included: not "
            "all counted)"
        )
    if not head.depth_at_least:
        source = f"at least: {counted:,} waiting rows counted through the pop index ({source})"
    return Head(
        counted,
        False,
        source,
        head.oldest,
        head.oldest_source,
        head.at_least,
        True,
        head.rows_below,
        counted,
        ceiling,
    )


def _claimed(
    engine: Engine, spec: QueueSpec, facts: SizeFacts, dead: Any, skips_dead: bool = False
) -> tuple[int | None, SizeFacts]:
    """A claim queue's claimed rows, counted apart from its depth (the waiting rows) up to
    EXACT_DEPTH_LIMIT + 1, only when the catalog bounds the dead entries the walk of the
    claimed index can meet (acked claims leave theirs first in it: behind 1,000,000 the walk
    read 90,000 buffers). The catalog's row estimate, which counts them too, is lowered by
    them in the ``facts`` returned, said in its source; said too when they were not counted.
    On InnoDB (``skips_dead``) the walk skips delete-marked entries itself: always counted."""
    if not spec.info.claims:
        return None, facts
    if not skips_dead and (dead is None or int(dead) > DEAD_WALK_LIMIT):
        if facts.estimated_rows is not None:
            source = f"{facts.source} (claimed rows included: not counted)"
            facts = facts.adjusted(estimate_source=source)
        return None, facts
    rows = engine.run(
        engine.hooks.section(spec, "claimed_count"), {"limit": EXACT_DEPTH_LIMIT + 1}, write=False
    )
    claimed = int(rows[0]["claimed"]) if rows else 0
    estimate = _estimate(facts)
    if estimate is not None and claimed:
        more = " or more" if claimed > EXACT_DEPTH_LIMIT else ""
        facts = facts.adjusted(
            estimated_rows=max(estimate - claimed, 0),
            estimate_source=f"{facts.source} minus {claimed:,}{more} claimed",
        )
    return claimed, facts


def _due_head(engine: Engine, spec: QueueSpec) -> tuple[Head, query.Count]:
    """A pending queue's depth: its due messages, counted up to EXACT_DEPTH_LIMIT (a floor
    past it) through the (due_at, id) index as its pop walks it; the oldest is the earliest
    due time (an age since it fell due; none when nothing is due). The messages not due yet
    are counted apart, the same way: scheduled."""
    limit = {"limit": EXACT_DEPTH_LIMIT + 1}
    row = engine.run(engine.hooks.section(spec, "due"), limit, write=False)[0]
    n, over = int(row["depth"]), int(row["depth"]) > EXACT_DEPTH_LIMIT
    later = int(
        engine.run(engine.hooks.section(spec, "scheduled"), limit, write=False)[0]["scheduled"]
    )
    how = "due messages counted through the (due_at, id) index"
    if over:
        how = f"due messages: more than {EXACT_DEPTH_LIMIT:,} (counting stopped)"
    head = Head(
        n,
        not over,
        how,
        row["oldest_due_at"],
        "the earliest due message (its due time)",
        depth_at_least=over,
    )
    source = None if later <= EXACT_DEPTH_LIMIT else f"more than {EXACT_DEPTH_LIMIT:,}"
    return head, query.Count(later, later <= EXACT_DEPTH_LIMIT, source)


def _ring_head(engine: Engine, spec: QueueSpec, notes: list[str]) -> Head:
    """A ring's depth from its sequences; none when the role may not read them."""
    try:
        row = engine.run(engine.hooks.section(spec, "depth"), write=False)[0]
    except PermissionMissing as exc:
        sql.template_rows(engine, spec, "readable")  # a role refused the slots too: the error
        notes.append(
            f"depth and holes unavailable ({exc}): needs SELECT or USAGE on the ring's sequences"
        )
        return Head(None, False, "ring sequences (not readable)", None, "not read")
    return Head(
        int(row["depth"]),
        True,
        "ring sequences (pushed - popped, plus parked numbers)",
        row.get("oldest_enqueued_at"),
        "the slot of the next number to pop",
    )


def _walk(
    engine: Engine, spec: QueueSpec, lo: int, limit: int = EXACT_DEPTH_LIMIT + 1, hi: int = TOP
) -> tuple[int, Any]:
    """Rows with ids from ``lo`` up to below ``hi``, at most ``limit``, and the oldest."""
    params = {"lo": lo, "hi": hi, "limit": limit}
    row = engine.run(engine.hooks.section(spec, "depth"), params, write=False)[0]
    return int(row["depth"]), row["oldest_enqueued_at"]


def _below(
    engine: Engine, spec: QueueSpec, lo: int, seen: tuple[int, Any, int] | None
) -> tuple[int, Any]:
    """Rows from ``lo`` up (at most EXACT_DEPTH_LIMIT + 1) given ``seen``, the count and
    oldest of a window from ``seen[2]`` up: only the strip below it is walked again."""
    if seen is None:
        return _walk(engine, spec, lo)
    n, oldest, top_lo = seen
    if n > EXACT_DEPTH_LIMIT:
        return n, oldest
    more, older = _walk(engine, spec, lo, EXACT_DEPTH_LIMIT + 1 - n, top_lo)
    if older is None or oldest is None:
        return n + more, oldest if older is None else older
    return n + more, min(older, oldest)


def _estimate(facts: SizeFacts) -> int | None:
    value = facts.estimated_rows
    return None if value is None else max(int(value), 0)


def _counted(n: int, oldest: Any, facts: SizeFacts, how: str, where: str) -> Head:
    """A walk that saw every waiting row: exact, unless it stopped at the limit."""
    if n <= EXACT_DEPTH_LIMIT:
        return Head(n, True, how, oldest, where)
    estimate = _estimate(facts)
    if estimate is None or estimate <= n:  # the catalog lags a fill, or has no estimate
        source = f"at least: more than {EXACT_DEPTH_LIMIT:,} counted, the catalog knows no more"
        return Head(n, False, source, oldest, where, depth_at_least=True)
    source = f"{facts.source} (more than {EXACT_DEPTH_LIMIT:,} counted)"
    return Head(estimate, False, source, oldest, where, counted=n)


def _top(engine: Engine, spec: QueueSpec, params: dict[str, Any], notes: list[str]) -> int | None:
    """The id high-water mark: every id the queue has issued is at most this. None when the
    role may not read it (PostgreSQL: SELECT or USAGE on the id sequence), said in a note."""
    try:
        rows = sql.template_rows(engine, spec, "counters", params)
    except PermissionMissing as exc:
        notes.append(
            f"id high-water mark unavailable ({exc}): needs SELECT or USAGE on the queue's id "
            "sequence; the depth is not probed below it"
        )
        return None
    return int(rows[0]["enqueued_total"] or 0) if rows else 0


def _head(
    engine: Engine,
    spec: QueueSpec,
    facts: SizeFacts,
    params: dict[str, Any],
    notes: list[str],
    counted: dict[str, int],
) -> tuple[Head, SizeFacts]:
    """Depth and oldest of a kind kept as rows, by the cheapest walk that skips dead entries,
    and the facts used (after a statistics reset the estimate used instead; a claim queue's
    estimate less the claimed rows, which, when cheap to count, go into ``counted``)."""
    top = _top(engine, spec, params, notes)
    if spec.watermark:
        wm = int(sql.template_rows(engine, spec, "wm_value")[0]["wm"])
        # each entry on the way is one of those ids
        if top is None or top - wm < DEAD_WALK_LIMIT + EXACT_DEPTH_LIMIT:
            n, oldest = _walk(engine, spec, wm)
            where = "the first row at or above the watermark"
            how = f"counted from the watermark (id >= {wm})"
            return _counted(n, oldest, facts, how, where), facts
        # The watermark lags far behind the high-water mark (an open writer holds its advance
        # back): the rows above it may be dead entries, so probe below the high-water mark.
        return _probe(engine, spec, facts, top, None, floor=wm), facts
    bound = sql.read(engine, "dead_bound", params)
    if bound.note and sql.available(engine, "dead_bound"):
        notes.append(bound.note)
    first = bound.first
    dead, dead_source = first.get("dead_bound"), first.get("dead_bound_source")
    seen = first.get("ids_seen")
    pages = int(first.get("heap_pages") or 0)
    reset = False  # the counters began after the rows were written: no estimate is trusted
    # ids issued that the counters have not seen: a writer's counters not flushed yet (up to
    # a second, more for a busy one) or a reset. The estimate then cannot rule out rows below
    # a probe's window (100,000 rows pushed under a rolled-back run read as the 5,000 above it).
    missed = top - int(seen) if top is not None and seen is not None else 0
    if top is not None and seen is not None and top - int(seen) > DEAD_WALK_LIMIT:
        # The statistics began after most of the queue's history (a reset, a restore): their
        # dead-row count says nothing of the entries left before.
        notes.append(
            f"statistics saw {int(seen):,} of the {top:,} ids issued (reset since?): the dead "
            "row count is not trusted, the depth is probed"
        )
        dead, reset = None, True
        facts = _analyzed(facts, first)  # what the report shows is what was used
    elif top is None and first.get("counters_short") and pages > SMALL_HEAP_PAGES:
        # The same without the sequence to compare with: counters that saw fewer writes than
        # the heap has pages (and no VACUUM since) began after most of its rows were written.
        notes.append(
            f"statistics have seen fewer writes than this {pages:,}-page table has pages "
            "(reset since?) and there is no id high-water mark: the dead entries it may hold "
            "are not walked"
        )
        dead, reset = None, True
        facts = _analyzed(facts, first)  # what the report shows is what was used
    skips_dead = bool(first.get("walk_skips_dead"))
    claimed, facts = _claimed(engine, spec, facts, dead, skips_dead)
    if claimed is not None:
        counted["claimed"] = claimed
    # A claim queue whose claimed rows were not all counted: the catalog's estimate counts
    # some of them, so it says nothing of rows below a probe's window nor of the depth; the
    # walks count the waiting rows alone (measure then sets the estimate as the ceiling).
    walked = facts
    if spec.info.claims and (claimed is None or claimed > EXACT_DEPTH_LIMIT):
        walked = facts.adjusted(estimated_rows=None)
    if dead is None or int(dead) > DEAD_WALK_LIMIT:
        if top is None:  # nothing to probe below, and a walk would meet the dead entries
            source = (
                f"{facts.source} (no id high-water mark to probe below; dead entries not walked)"
            )
            # an ANALYZE's 0 from before a reset proves nothing: unknown, not empty
            estimate = _estimate(facts) if _estimate(facts) or not reset else None
            return Head(estimate, False, source, None, "not read"), facts
        if missed > ESTIMATE_NOISE and not reset:
            notes.append(
                f"statistics have not seen {missed:,} of the {top:,} ids issued (counters not "
                "flushed yet, or reset): rows below the probe's window are not ruled out"
            )
        lagging = missed > ESTIMATE_NOISE
        return _probe(engine, spec, walked, top, dead, reset=reset, lagging=lagging), facts
    estimate = _estimate(walked)
    # SQLite's id range is only an upper bound (and its walks meet no dead entries): counted.
    if spec.info.claims and estimate is not None and estimate > EXACT_DEPTH_LIMIT:
        # The waiting rows are counted through the pop index (at most EXACT_DEPTH_LIMIT + 1,
        # past at most DEAD_WALK_LIMIT dead entries): a stale estimate never stands for them.
        n, oldest = _walk(engine, spec, BOTTOM)
        how = f"counted through the pop index ({dead_source})"
        return _counted(n, oldest, walked, how, "the first row"), facts
    if estimate is not None and estimate > EXACT_DEPTH_LIMIT and not _upper_bound(facts):
        n, oldest = _walk(engine, spec, BOTTOM, STALE_CHECK + 1)
        if n <= STALE_CHECK:  # the estimate lags a drain (counters reach the catalog late)
            how = f"counted: {n:,} waiting (the catalog's {estimate:,} is stale)"
            return Head(n, True, how, oldest, "the first row"), facts
        source = f"{facts.source} (more than {EXACT_DEPTH_LIMIT:,}: not counted)"
        return Head(estimate, False, source, oldest, "the first row", counted=n), facts
    n, oldest = _walk(engine, spec, BOTTOM)
    how = f"counted ({dead_source})"  # the walk meets at most that many dead entries
    return _counted(n, oldest, walked, how, "the first row"), facts


def _analyzed(facts: SizeFacts, bound: dict[str, Any]) -> SizeFacts:
    """After a statistics reset n_live_tup is 0 too: the last VACUUM / ANALYZE's count stands,
    and a table never vacuumed or analyzed has no estimate at all."""
    analyzed = bound.get("analyzed_rows")
    if analyzed is None or int(analyzed) < 0:
        return facts.adjusted(estimated_rows=None, estimate_source="no estimate")
    source = "pg_class.reltuples (the last VACUUM / ANALYZE; statistics reset since)"
    return facts.adjusted(estimated_rows=int(analyzed), estimate_source=source)


def _upper_bound(facts: SizeFacts) -> bool:
    return facts.estimate_source == "id range"


def _probe(
    engine: Engine,
    spec: QueueSpec,
    facts: SizeFacts,
    top: int,
    dead: Any,
    floor: int | None = None,
    reset: bool = False,
    lagging: bool = False,
) -> Head:
    """Windows below the id high-water mark, widened while they are mostly waiting rows: the
    cost follows the waiting rows, not the dead entries below them, and the answer says it is
    bounded (a row far below the window, a message stuck there, is not read). A watermark is
    a floor: no waiting row lies below it, so a window that reaches it is a full count."""
    estimate = _estimate(facts)
    width = PROBE_FIRST
    seen: tuple[int, Any, int] | None = None  # the last window's count, oldest and low id
    while True:
        lo = top - width + 1
        if floor is not None and lo <= floor:
            n, oldest = _below(engine, spec, floor, seen)
            how = f"counted from the watermark (id >= {floor})"
            return _counted(n, oldest, facts, how, "the first row at or above the watermark")
        if top < 2 * width:  # fewer ids lie below the window than in it: walk them all
            n, oldest = _below(engine, spec, BOTTOM, seen)
            how = f"counted (fewer than {2 * width:,} ids ever issued)"
            return _counted(n, oldest, facts, how, "the first row")
        n, oldest = _below(engine, spec, lo, seen)
        seen = (n, oldest, lo)
        if n > EXACT_DEPTH_LIMIT or width >= PROBE_UNSEEN_LIMIT:
            break
        # Mostly dead or empty below the waiting rows: the head is in the window, unless the
        # catalog counts many more rows. An empty window widens too, a little: the high-water
        # mark can lie above the last row (InnoDB reserves AUTO_INCREMENT values ahead for a
        # bulk insert; a lifo pops from the top).
        # (by more than the estimate's own error: ANALYZE samples a table of 1,000,000 dead
        # ids and 1,000 live ones by pages, and a count 10 % over sent the probe through
        # 1,250 more dead ids: 131 buffers where the run before read 68)
        slack = max(ESTIMATE_NOISE, n // 10, int(n * engine.hooks.estimate_error))
        more = estimate is not None and estimate - n > slack
        if 0 < n < PROBE_FULL * width and not more:
            break
        if n < PROBE_FULL * width and width - n >= max(n, PROBE_FIRST // 2):
            # As many ids without a waiting row as with one: the next window would walk
            # mostly dead entries (a claim queue's several per id), and a statistic saying
            # rows lie below (an ANALYZE's sample: 2,101 for 1,000) does not pay for that.
            break
        if n == 0 and not more and (width >= PROBE_EMPTY_LIMIT or not estimate):
            break
        # A full first window widens by a quarter first: a queue of up to 1,000 behind dead
        # rows (the common case) then pays for 250 dead ids, not 1,000, to show its head.
        width = PROBE_FIRST + PROBE_FIRST // 4 if width == PROBE_FIRST and n else width * 2
    if floor is not None:
        behind = f"the watermark {floor} lags behind: rows below the window not read"
    elif dead is None:
        behind = "dead entries below it not walked"
    else:
        behind = f"{int(dead):,} dead entries"
    window = f"the {width:,} ids below the id high-water mark {top} ({behind})"
    catalog = facts.source
    unseen = estimate is not None and estimate - n > max(ESTIMATE_SLACK, n // 2)
    stopped = n > EXACT_DEPTH_LIMIT  # the walk's limit, not the window's rows
    # no row in the window, and only a reset's estimate (of 0, or none) says none lie below
    unsure = reset and n == 0 and not estimate
    at_least = (stopped and (estimate is None or estimate <= n)) or unsure
    if 0 < n < PROBE_FULL * width and not unseen and not stopped and lagging:
        # the head looks like it is in the window, but counters behind the ids issued cannot
        # say that no rows lie below it: a floor
        source, depth, at_least = f"at least: a bounded probe counted {n:,} in {window}", n, True
    elif 0 < n < PROBE_FULL * width and not unseen and not stopped:
        # the head is in the window: its count beats the catalog's
        source, depth = f"bounded probe: counted in {window}", n
    elif 0 < n < PROBE_FULL * width and not stopped:
        # the catalog counts many more rows than the window holds: they lie below it
        source = f"{catalog}; a bounded probe counted only {n:,} in {window}"
        depth = max(estimate or 0, n)
    elif at_least and unsure:
        source = f"at least: a bounded probe found no row in {window}, and no trusted estimate"
        depth = n
    elif at_least:  # more than the limit wait, and the catalog knows no more (it lags a fill)
        source = f"at least: a bounded probe stopped counting at {n:,} in {window}"
        depth = n
    else:  # more than the limit wait, or none near the high-water mark (a lifo's)
        depth = max(estimate or 0, n)
        source = f"{catalog} (a bounded probe counted {n:,} in {window})"
    if oldest is None:
        where = f"bounded probe: no row in {window}; rows below it not read"
    else:
        where = f"bounded probe: the oldest row in {window}; rows below it not read"
    # rows lie below the window (the catalog counts them, or the walk stopped at its limit):
    # the oldest read is not the oldest
    below = stopped or (0 < n < PROBE_FULL * width and unseen)
    return Head(depth, False, source, oldest, where, oldest is not None, at_least, below, n)


def _no_time_note(profile: Profile) -> str:
    if profile.library is not None and profile.source == "detected":
        # A library that keeps no enqueue time (huey's task, kombu): no column to give.
        return f"{profile.library} keeps no enqueue time in {profile.table}: no oldest age"
    return "give --time-column COLUMN for the oldest waiting row's age"


def _oldest(reader: query.Reader, depth: query.Count) -> tuple[Any, float | None, list[str], bool]:
    """The oldest DUE waiting row's time and age (since its due time; its enqueue time when
    it has none; a library's ``oldest_from`` columns on the rows each picks), as the minimum
    of that column (never the first row by key, never
    negative). Read only where it is bounded: a small table; or at most SMALL_STATE due rows,
    counted, reached through an index leading with the state (and the named queue); or,
    without states, the time column's index. Else a note names the index that would make it
    cheap. The last item says the figure is a floor (rows it could not date)."""
    profile = reader.profile
    due_col, time_col = profile.due_column, profile.time_column
    if due_col is None and time_col is None:
        return None, None, [_no_time_note(profile)], False
    if depth.exact and depth.rows == 0:
        return None, None, [], False  # nothing waits and is due: no oldest to read
    values = profile.waiting if due_col else profile.pending
    if not reader.small:
        column = due_col or time_col or ""
        if reader.state is not None:
            few = depth.exact and depth.rows is not None and depth.rows < query.SMALL_STATE
            if not (few and (reader.state_indexed or reader.queue_indexed)):
                if few or not (reader.state_indexed or reader.queue_indexed):
                    queue = profile.queue_column if profile.queue else None
                    why = reader.index_hint(queue, column)
                else:
                    why = (
                        f"more than {query.SMALL_STATE:,} due rows wait: their minimum is not read"
                    )
                return None, None, [f"oldest waiting row not read: {why}"], False
        elif not reader.shape.index_leading(column):
            hint = reader.index_hint(column, state=False)
            return None, None, [f"oldest row not read: {hint}"], False
    reads: list[tuple[str, str | None]] = []  # (column, extra filter)
    if profile.oldest_from:  # a library's ages from several columns (django-tasks' run_after)
        reads += [(column, reader.template(rows)) for column, rows in profile.oldest_from]
    elif due_col is not None:
        reads.append((due_col, f"{reader.name(due_col)} IS NOT NULL"))
        if time_col is not None:
            reads.append((time_col, f"{reader.name(due_col)} IS NULL"))
    else:
        reads.append((time_col or "", None))
    found: list[tuple[Any, float | None]] = []
    notes: list[str] = []
    for column, extra in reads:
        where, params = reader.where(values, True if due_col else None, extra=extra)
        keywords = {
            "filter": where,
            "age": reader.age("oldest_at"),
            "instant": reader.instant("oldest_at"),
        }
        try:
            rows = reader.run("oldest_min", keywords, params, {"time_col": column})
        except UsageError as exc:  # a value the server cannot subtract (PostgreSQL infinity)
            raise UsageError(f"{profile.table}.{column}: {exc}") from None
        if rows and rows[0]["oldest_at"] is not None:
            found.append((reader.when(rows[0]["oldest_at"], column), sql.seconds(rows[0]["age_s"])))
    floor = False
    if due_col is not None and time_col is None:
        undated, params = reader.where(values, True, extra=f"{reader.name(due_col)} IS NULL")
        rows = reader.run("count", {"filter": undated}, {**params, "limit": 1})
        if rows and int(rows[0]["n"]):
            floor = True
            notes.append(
                f"due rows with no {due_col} have no enqueue time: the oldest age is a floor"
            )
    if not found:
        return None, None, notes, floor
    when, age = max(found, key=lambda f: f[1] if f[1] is not None else -1.0)
    if age is not None and age < 0:
        notes.append(f"{profile.table}'s oldest waiting time lies in the future: age shown as 0")
        age = 0.0
    return when, age, notes, floor


OTHER_STATES_SHOWN = 50


def _other_states(reader: query.Reader) -> list[StateCount]:
    """State values the profile does not name (a new library version's 'cancelled'), read
    only on a small table: the one GROUP BY that would scan a big one."""
    if not reader.small:
        return []
    profile = reader.profile
    known = [v for group in query.GROUPS for v in getattr(profile, group)]
    rows = reader.run("state_values", {"state": reader.state or ""}, {"limit": OTHER_STATES_SHOWN})
    return [
        StateCount(query.state_text(r["state"]), "other", int(r["n"]), exact=True)
        for r in rows
        if r["state"] not in known
    ]


def _not_due(reader: query.Reader) -> tuple[query.Count | None, query.Count | None]:
    """Waiting rows that are not due yet: (scheduled, retrying). Retrying: a retry state,
    or, where the profile names none, a waiting row already attempted (attempts > 0)."""
    profile = reader.profile
    if profile.due_column is None:
        scheduled = reader.count_state(profile.scheduled) if profile.scheduled else None
        retrying = reader.count_state(profile.retrying) if profile.retrying else None
        return scheduled, retrying
    later = (*profile.pending, *profile.scheduled)
    if profile.retrying:
        return reader.count_due(later, False), reader.count_due(profile.retrying, False)
    if profile.attempts_column is not None:
        tries = reader.name(profile.attempts_column)
        return (
            reader.count_due(later, False, extra=f"({tries} IS NULL OR {tries} = 0)"),
            reader.count_due(later, False, extra=f"{tries} > 0"),
        )
    return reader.count_due(later, False), None


def _check_due_values(reader: query.Reader, later: list[query.Count | None]) -> None:
    """A due time qadmin cannot compare (SQLite text that is no date, an epoch in another
    unit than the profile says) would leave its row out of depth and scheduled alike, or call
    it due in the year 58,000: one line naming the value (exit 2) instead of a silent OK.
    On a big table the not-due value is looked for one waiting state at a time, each through
    the state's index (``sample``): a filter over all of them with LIMIT 1 was planned as a
    sequential scan that reads every due job before the first one scheduled for tomorrow."""
    profile = reader.profile
    column = profile.due_column
    assert column is not None
    due = reader.due(column)
    checks: list[tuple[tuple[Value, ...], str, bool]] = []
    if reader.small:
        checks.append(
            (profile.waiting, f"{reader.name(column)} IS NOT NULL AND ({due}) IS NULL", True)
        )
        checks.append((profile.waiting, f"NOT ({due})", False))
    elif any(c is not None and c.exact and c.rows for c in later):
        # the states that hold not-due rows first: the ready state's walk may be a backlog
        states = dict.fromkeys((*profile.scheduled, *profile.retrying, *profile.pending))
        checks += [((value,), f"NOT ({due})", False) for value in states]
    for values, extra, uncomparable in checks:
        where, params = reader.where(values, extra=extra)
        rows = reader.run("sample", {"filter": where}, params, {"col": column})
        if not rows:
            continue
        value = rows[0]["v"]
        reader.when(value, column)  # one line when it is not a time at all
        if uncomparable:
            raise UsageError(
                f"{profile.table}.{column}: {repr(value)[:40]} cannot be compared with the "
                "clock (numbers are epoch seconds: give --time-unit ms, us or ns)"
            )
        if not reader.small:
            return  # one value read: the others are of the same column


def _unseen_queue(reader: query.Reader) -> str | None:
    """The named queue asked about, when no row of the table names it (read where the names
    are cheap: a small table, or an index leading with the queue column or with (state,
    queue)); None when rows name it or it cannot be told cheaply."""
    profile = reader.profile
    if profile.queue is None or profile.queue_column is None:
        return None
    if not (
        reader.small or reader.queue_indexed or reader.shape.index_leading(profile.queue_column)
    ):
        return None
    if reader.queue_indexed and profile.state_column is not None:
        # One probe of the (state, queue) index per state, the finished ones first (most rows
        # are): a filter over every state with LIMIT 1 was planned as a scan of the whole
        # table, whose rows of this queue may all lie at its end.
        section = "count_indexed" if reader.has("count_indexed") else "count"
        states = dict.fromkeys((*profile.done, *profile.waiting, *profile.claimed, *profile.failed))
        for value in states:
            where, params = reader.where((value,))
            if int(reader.run(section, {"filter": where}, {**params, "limit": 1})[0]["n"]):
                return None
        return profile.queue
    where, params = reader.where(())
    rows = reader.run("count", {"filter": where}, {**params, "limit": 1})
    return profile.queue if not int(rows[0]["n"]) else None


def profiled(ctx: Context) -> Size:
    """A table read through its profile: waiting rows that are due, each state's rows, the
    not-due ones apart, the oldest due waiting row, all within the cost rules
    (qadmin.profiles.query)."""
    reader = ctx.reader
    assert reader is not None, "a table qadmin did not create is read through its profile"
    profile = reader.profile
    part = sql.read(ctx.engine, "size", ctx.params)
    facts = SizeFacts.read(part.first)
    notes: list[str] = []
    states: list[StateCount] | None = None
    totals: dict[str, query.Count] = {}
    scheduled = retrying = None
    if reader.state is None:
        due = True if profile.due_column else None
        depth = reader.count_rows(due)
        if profile.due_column:
            scheduled = reader.count_rows(False)
    else:
        states = []
        for group in query.GROUPS:
            counts = []
            for value in getattr(profile, group):
                count = reader.count_state((value,))
                counts.append(count)
                states.append(
                    StateCount(
                        query.state_text(value),
                        group,
                        count.rows,
                        exact=count.exact,
                        planner=count.planner,
                        counted=count.seen,
                    )
                )
            totals[group] = query.total(counts) if counts else query.Count(None, False)
        if profile.due_column is not None:
            depth = reader.count_due(profile.waiting, True)
        else:
            depth = totals["pending"]
        scheduled, retrying = _not_due(reader)
        if profile.due_column is not None:
            _check_due_values(reader, [scheduled, retrying])
        notes += sorted({c.source for c in totals.values() if c.rows is None and c.source})
        states += _other_states(reader)
    oldest, age, oldest_notes, floor = _oldest(reader, depth)
    notes += oldest_notes
    unseen = _unseen_queue(reader) if depth.exact and not depth.rows else None
    # a planner's estimate lies somewhere between what was counted and the table's rows
    whole = facts.estimated_rows if depth.planner else None
    return Size(
        depth.rows,
        depth.exact,
        iso(oldest),
        age,
        facts,
        note=part.note,
        depth_source=depth.source,
        depth_at_least=bool(depth.source and depth.source.startswith("at least")),
        oldest_at_least=floor,
        states=states,
        scheduled=scheduled,
        retrying=retrying,
        claimed=totals["claimed"].rows if totals else None,
        done=totals["done"].rows if totals else None,
        failed=totals["failed"].rows if totals else None,
        notes=notes,
        queue_unseen=unseen,
        depth_counted=depth.seen,
        depth_ceiling=whole,
        depth_unbounded=depth.planner,
    )


def collect(ctx: Context) -> Size:
    return profiled(ctx) if ctx.spec is None else measure(ctx.engine, ctx.spec)


def _resize_fix(report: InspectReport, capacity: int | None) -> str:
    """Double the ring (a dry run first), as commands that run as printed; or add consumers."""
    if not capacity:
        return "add consumers, or grow the ring with qadmin resize (see qadmin resize --help)"
    grown = f"{report.command('resize')} --capacity {2 * capacity}"
    return f"{grown} --dry-run, then {grown} --yes (twice the slots); or add consumers"


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is not None and part.depth is None:
        # A depth that could not be read (an index a profile needs, a privilege) is never a
        # silent OK.
        why = "; ".join(part.notes) or "no cheap way to count the waiting rows"
        fix = _fix(why, report.header.schema, report.advice)
        # a ring's fill is its depth: unread, it may be full (ring_full, CRITICAL)
        ring = kind_has("ring")(report)
        return [
            Finding(WARNING, "depth_unread", f"depth not read: {why}", fix, hides_critical=ring)
        ]
    if part is not None and part.queue_unseen is not None and report.profile is not None:
        profile = report.profile
        # A table that keeps finished rows would show a real queue's history, and a declared
        # one names queues its owner knows: absence is most likely a misspelt name; only a
        # library that deletes its finished jobs may just be idle.
        deletes = profile.source == "detected" and not (profile.done or profile.failed)
        severity = INFO if deletes else WARNING
        return [
            Finding(
                severity,
                "queue_unseen",
                f"no row of {profile.table} names queue {part.queue_unseen!r}: a misspelt "
                "--queue reads as an idle queue",
                f"qadmin inspect {shlex.quote(profile.name)} lists its named queues",
            )
        ]
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
            _resize_fix(report, part.ring_capacity),
        )
    ]


def _fix(why: str, schema: str, engine: Engine) -> str:
    """The fix for a figure not read: the index the note names, made by the DBA, or the
    privilege it names, granted to the role (as a statement to run: SELECT on a sequence
    reads its position and nothing else)."""
    index = query.index_fix(why)
    if index is not None:
        return index
    if "needs SELECT or USAGE" in why:
        role = engine.dsn.user or engine.default_user()
        grantee = engine.quote_ident(role) if role else "<the role qadmin logs in as>"
        return f"GRANT SELECT ON ALL SEQUENCES IN SCHEMA {engine.quote_ident(schema)} TO {grantee}"
    return "see the notes"


def _size(report: InspectReport) -> Size | None:
    part = report.part(ENTRY)
    return part


def _oldest_age(part: Size | None) -> float | None:
    """0 for an empty queue (a floor when only an estimate says it is empty); unknown (never
    0) when messages wait but none could be dated."""
    if part is None:
        return None
    if part.oldest_age_s is None and part.depth == 0 and not part.depth_at_least:
        return 0.0
    return part.oldest_age_s


def _depth_quality(report: InspectReport) -> Quality:
    part = _size(report)
    kind = (part.depth_quality if part else None) or "exact"
    error = part.estimate_error if part else 0.0
    low = part.depth_counted if part and part.estimate_includes_claimed else None
    ceiling = part.depth_ceiling if part else None
    source = part.depth_source if part else None
    # the rows a walk or a probe counted are there, whatever the estimate's error: a probe's
    # 500 counted is over --crit-depth 400, never "333 to 1000"
    counted = part.depth_counted if part is not None and kind == "estimate" else 0
    if low is None and part is not None and part.depth is not None:
        low = counted if counted > part.depth / (1 + error) else None
    if part is not None and part.depth_unbounded and kind == "estimate":
        # no bound on its error: judged only by the rows counted and the table's rows
        return Quality(kind, 1.0, source, part.depth_counted, ceiling, part.estimate_error)
    return Quality(kind, error, source, low, ceiling)


def _oldest_quality(report: InspectReport) -> Quality:
    part = _size(report)
    return Quality((part.oldest_quality if part else None) or "exact")


ENTRY: Diagnostic[Size] = Diagnostic(
    name="size",
    order=10,
    sql=("size", "dead_bound"),
    rows=(("size", SizeFacts),),
    collect=collect,
    rule=rule,
    metrics=(
        Metric(
            "depth",
            "",
            "messages in the queue",
            lambda r: float(p.depth) if (p := _size(r)) and p.depth is not None else None,
            quality=_depth_quality,
        ),
        Metric(
            "oldest_age",
            "s",
            "age of the oldest message in seconds",
            lambda r: _oldest_age(_size(r)),
            quality=_oldest_quality,
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
            "depth_quality",
            "",
            "exact (counted), floor (at least: rows below were not read) or estimate",
            "string",
            lambda r: p.depth_quality if (p := _size(r)) else None,
        ),
        Field(
            "oldest_age_s",
            "s",
            "age of the oldest message",
            "float64",
            lambda r: p.oldest_age_s if (p := _size(r)) else None,
        ),
        Field(
            "oldest_quality",
            "",
            "exact, or floor (at least: an older message below what was read is not seen)",
            "string",
            lambda r: p.oldest_quality if (p := _size(r)) else None,
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
            lambda r: (p.facts.table_bytes or p.facts.file_bytes) if (p := _size(r)) else None,
            tail=False,
        ),
        Field(
            "index_bytes",
            "bytes",
            "index size",
            "int64",
            lambda r: p.facts.index_bytes if (p := _size(r)) else None,
            tail=False,
        ),
    ),
)
