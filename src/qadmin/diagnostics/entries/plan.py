"""Why is dequeue slow? The plan of the real dequeue's head, and what is wrong with it.

The head is the SELECT a pop runs to find its message (the kind's ``head`` section beside its
pop routine; for a profiled table, the first waiting row in the library's order), without
FOR UPDATE, so it takes no row lock. Its plan is read with the engine's explain
(``sql/diagnostics/<engine>/explain.sql``): PostgreSQL and MariaDB plan it first, and run it
(ANALYZE: it reads what one dequeue reads to reach the head, inside a READ ONLY transaction
under the statement timeout and a part's 1 s lock timeout) only when that estimate reaches
the head through an index at a bounded cost: a head that would scan or sort a big table is
reported as estimated, never run. MySQL 8 and SQLite only plan it, SQL Server's SHOWPLAN is
written and parse-gated. Beside the plan: the indexes left INVALID (``invalid_indexes.sql``)
and whether the statistics are stale (``maintenance.sql``; SQLite's ``statistics.sql``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.entries import invalid_indexes, locks
from qadmin.diagnostics.entries.maintenance import STATS_MIN_ROWS
from qadmin.diagnostics.model import (
    INFO,
    PART_LOCK_MS,
    WARNING,
    BlockedPart,
    Context,
    Finding,
    Number,
    Result,
    Row,
)
from qadmin.errors import (
    LockTimeout,
    PermissionMissing,
    StatementTimeout,
    UnsupportedError,
    UsageError,
    counted,
)
from qadmin.profiles.model import Value
from qadmin.profiles.query import CLOCK, Reader
from qadmin.sqlfiles import header_fields

# Pages (PostgreSQL buffers, InnoDB pages accessed) read to return one head row past which
# dead entries are in the way: a seek or walk to the head reads the index's few levels and a
# heap page or two, while a few thousand dead entries in front of it span a dozen pages or more
# (measured: 5,000 held back span 30 PostgreSQL pages and 15 InnoDB pages).
DEAD_BUFFERS = 12
# Rows examined but not returned (removed by the filter) past which rows of other states sit
# in front of the head in the index the dequeue walks.
FILTERED_ROWS = 1000
# PostgreSQL's estimated total cost (about one sequential page read each) and MariaDB's
# estimated rows examined past which the head is not run: a scan or a sort of that much is
# the full read a diagnostic must not do (1,000 pages is 8 MB, some 30,000 queue rows).
RUN_COST = 1000.0
RUN_ROWS = 10_000
# Rows removed per row returned past which a walk of an index is called a walk, not a seek.
WALK_RATIO = 10
# Rows modified since the last ANALYZE, beyond this share of the table (plus 50, as
# autovacuum's analyze threshold), call the statistics outdated.
OUTDATED_SHARE = 0.2
_ORDERED = re.compile(r"\bORDER\s+BY\b", re.IGNORECASE)
_DESC = re.compile(r"^([A-Za-z_][A-Za-z0-9_$]*)(\s+DESC)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Head:
    """The dequeue's head as SQL: the statement and its bound values, the index that would
    make it a seek (printed as the fix), and whether it has an order to keep."""

    statement: str
    params: dict[str, Any]
    index_fix: str | None
    ordered: bool


@dataclass(frozen=True)
class PlanNode(Row):
    """One step of the plan as explain shows it: PostgreSQL's and MariaDB's every column,
    SQLite's its detail line only (``columns`` keeps which, so JSON shows what it did)."""

    node: str
    relation: str | None = None
    index: str | None = None
    rows: Number | None = None
    removed: Number | None = None
    buffers: Number | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Statistics(Row):
    """What the catalog says of the table's planner statistics: ``maintenance.sql``'s
    figures (the engine's own columns of them) or SQLite's sqlite_stat1 row count."""

    reltuples: Number | None = None
    modified_since_analyze: Number | None = None
    last_analyzed: Any = None
    inserted_rows: Number | None = None
    table_rows: Number | None = None
    next_id: Number | None = None
    stats_present: Any = None
    stats_rows: Number | None = None
    stats_updated: Any = None
    stat_rows: int | None = None


@dataclass
class Explain(Result):
    queue: str
    engine: str
    statement: str
    analyzed: bool  # the head was executed (ANALYZE), not only planned
    access: str | None = None  # seek, scan, index walk
    estimated_cost: float | None = None  # the planner's (PostgreSQL) or rows (MariaDB)
    fitting_index: str | None = None  # an index that serves the order the plan left unused
    index: str | None = None
    sorts: bool = False
    rows_returned: int | None = None
    rows_examined: int | None = None
    rows_removed: int | None = None
    buffers: int | None = None
    planning_ms: float | None = None
    execution_ms: float | None = None
    statistics: Statistics = field(default_factory=Statistics)
    nodes: list[PlanNode] = field(default_factory=list)
    invalid_indexes: list[invalid_indexes.InvalidIndex] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plan: Any = None  # the server's own plan document

    def to_json_dict(self) -> dict[str, Any]:
        data = super().to_json_dict()
        data["findings"] = [f.to_json_dict() for f in self.findings]
        return data


def _strip_comment(text: str) -> str:
    """A section's statement without its leading comment lines (shown to the user)."""
    lines = text.splitlines()
    while lines and lines[0].lstrip().startswith("--"):
        lines.pop(0)
    return "\n".join(lines).strip()


def head(ctx: Context) -> Head:
    """The head of a qadmin queue (its template) or of a profiled table (its profile)."""
    engine = ctx.engine
    if ctx.spec is not None:
        template = engine.hooks.template(ctx.spec)
        if not template.has("head"):
            raise UnsupportedError(
                f"explain: a {ctx.spec.kind} queue's dequeue is not explained on {engine.dialect}"
            )
        statement = _strip_comment(engine.hooks.section(ctx.spec, "head")[0])
        fix = None
        if template.has("head_index"):
            fix = _strip_comment(engine.hooks.section(ctx.spec, "head_index")[0])
        return Head(statement, {}, fix, _ORDERED.search(statement) is not None)
    assert ctx.reader is not None, "a profiled table has its reader"
    return _profiled_head(ctx)


def _profiled_head(ctx: Context) -> Head:
    """First waiting row in the library's order: the profile's ``dequeue_order`` (else its
    order key ascending), every column checked against the catalog."""
    reader, engine = ctx.reader, ctx.engine
    assert reader is not None
    profile, shape = reader.profile, reader.shape
    if profile.queue_column is not None and profile.queue is None:
        # A library's dequeue always names its queue: plan the first named queue's (its
        # (state, queue, ...) index fits; the table-wide head would ask for another index).
        queues, _ = reader.queue_names()
        if queues:
            parent = reader
            reader = Reader(engine, dataclasses.replace(profile, queue=queues[0]), shape)
            reader.adopt(parent)
            profile = reader.profile
    order: list[tuple[str, bool]] = []
    given = profile.dequeue_order
    if profile.order_by and profile.order_by not in (i.split()[0] for i in given):
        given = (profile.order_by,)  # an --order-by / order_by of the user's own wins
    for item in given:
        match = _DESC.match(item.strip())
        column = shape.column(match.group(1)) if match else None
        if match is None or column is None:
            order = []
            break
        order.append((column.name, bool(match.group(2))))
    if not order and profile.order_by and shape.column(profile.order_by):
        order = [(profile.order_by, False)]  # the library's order names a missing column
    if not order:
        raise UsageError(
            f"explain: {profile.name} has no dequeue order qadmin can see: give --order-by"
        )
    keys = ", ".join(reader.name(c) + (" DESC" if desc else "") for c, desc in order)
    where, params = reader.where(profile.pending)
    # A state read against the clock (a run-at time still ahead: GoodJob's, django-tasks')
    # cannot be an index predicate (PostgreSQL takes only immutable ones): no WHERE then.
    template = profile.state_sql or ""
    clocked = f"{{{CLOCK}}}" in template or "CURRENT_TIMESTAMP" in template.upper()
    printed = _printed_filter(reader.state, profile.pending, engine.quote_literal)
    if clocked:
        printed = ""
    leading = [profile.state_column] if profile.state_column else []
    if profile.queue is not None and profile.queue_column is not None:
        leading.append(profile.queue_column)  # the queue's own rows, as the library's index
    state_keys = ", ".join(reader.name(c) for c in [*leading, *(c for c, _ in order)])
    words = {
        "filter": where,
        "order": keys,
        "keys": keys,
        "state_keys": state_keys,
        "where": f" WHERE {printed}" if printed else "",
    }
    id_column = profile.id_column or order[-1][0]
    names = {"table": profile.table, "id_col": id_column, "head_idx": f"{profile.table}_head"}
    statement = engine.hooks.render_text(_strip_comment(reader.section_text("head")), names, words)
    fix = None
    if reader.has("head_index"):
        text = _strip_comment(reader.section_text("head_index"))
        fix = engine.hooks.render_text(text, names, words)
    return Head(statement, params, fix, True)


def _printed_filter(state: str | None, values: tuple[Value, ...], quote: Any) -> str:
    """The waiting filter with its values written out: the printed index's WHERE only (the
    statement that runs binds them)."""
    if state is None or not values:
        return ""

    def literal(value: Value) -> str:
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        return str(value) if isinstance(value, int) else str(quote(value))

    return " OR ".join(f"{state} = {literal(v)}" for v in values)


# -- the plan -------------------------------------------------------------------------------


def explain(ctx: Context) -> Explain:
    """The head's plan, its findings and their fixes."""
    engine = ctx.engine
    the_head = head(ctx)
    result = Explain(ctx.table, engine.label, the_head.statement, analyzed=False)
    blocked: list[Finding] = []
    try:
        with engine.lock_timeout(PART_LOCK_MS):
            _plan(ctx, the_head, result)
    except PermissionMissing:
        file = engine.hooks.diagnostic_file("explain")
        privilege = header_fields(file.header).get("privilege") if file else None
        result.notes.append(f"explain unavailable: needs {privilege or 'SELECT on the table'}")
    except StatementTimeout as exc:
        result.notes.append(f"the plan was not read: {exc} (a statement timeout, not a lock)")
    except LockTimeout as exc:  # who holds it, read at once while the lock is still held
        text, session, certain = locks.blocker_of(ctx, None, [])
        part = BlockedPart(f"explain skipped: {exc}", text, session, certain)
        result.notes.append(part.note)
        name = ctx.profile.command("locks") if ctx.profile else f"qadmin locks {ctx.table}"
        blocked.append(locks.part_blocked("explain", part, engine.base_hooks, name))
    _invalid(ctx, result)
    _statistics(ctx, result)
    result.findings = blocked + _findings(ctx, the_head, result)
    return result


def _plan(ctx: Context, the_head: Head, result: Explain) -> None:
    engine = ctx.engine
    file = engine.hooks.diagnostic_file("explain")
    if file is None:
        result.notes.append(f"explain is not available on {engine.dialect}")
        return
    if file.has("on"):  # SQL Server: SHOWPLAN_XML around the statement, which it only plans
        rows = engine.run(
            [*file.statements("on"), the_head.statement, *file.statements("off")],
            the_head.params,
            write=False,
        )
        result.plan = next(iter(rows[0].values()), None) if rows else None
        result.notes.append("estimated plan (SHOWPLAN_XML): the head was not run")
        return
    hooks = engine.hooks
    parse = _PARSERS.get(hooks.plan_format or "")
    if parse is None:  # never another engine's parser: a plan read wrong misleads
        result.notes.append(f"explain: reading the plan is not supported on {engine.label}")
        return
    if not file.has("estimate"):  # MySQL 8, SQLite: the plan is an estimate already
        parse(_explained(ctx, the_head, "plan"), result, ctx.table, analyzed=False)
        if hooks.plan_only_note:
            result.notes.append(hooks.plan_only_note)
        return
    parse(_explained(ctx, the_head, "estimate"), result, ctx.table, analyzed=False)
    why = _would_scan(result, hooks.plan_measure)
    if why is None:
        parse(_explained(ctx, the_head, "plan"), result, ctx.table, analyzed=True)
    else:
        result.notes.append(
            f"estimated plan only: the head was not run, because it {why}; running it would "
            "read most of the table (qadmin's diagnostics do no full scans)"
        )
    if file.has("fits") and result.sorts:  # an index the planner passed over, priced back in
        fits = _document(_explained(ctx, the_head, "fits"))
        nodes = list(_walk(fits[0]["Plan"]))
        if not any(n["Node Type"] in _SORTS for n in nodes):
            result.fitting_index = next((n["Index Name"] for n in nodes if "Index Name" in n), None)


_SORTS = ("Sort", "Incremental Sort")


def _explained(ctx: Context, the_head: Head, section: str) -> list[dict[str, Any]]:
    """One section of explain.sql around the head, in one READ ONLY transaction."""
    engine = ctx.engine
    file = engine.hooks.diagnostic_file("explain")
    assert file is not None
    statements = [
        engine.hooks.render_text(s, {}, {"statement": the_head.statement})
        for s in file.statements(section)
    ]
    return engine.run(statements, the_head.params, write=False)


def _would_scan(result: Explain, measure: str) -> str | None:
    """Why the estimated plan must not be run (a scan or a sort of a large input), or None
    when it reaches the head through an index at a bounded cost. ``measure``: what the
    estimate counts (the dialect's ``plan_measure``: ``cost`` or ``rows examined``)."""
    cost = result.estimated_cost
    bound = RUN_COST if measure == "cost" else RUN_ROWS
    if cost is None or cost <= bound:
        return None
    what = "sorts the waiting rows" if result.sorts else None
    if result.access == "scan":
        what = "scans the table" + (" and sorts the waiting rows" if result.sorts else "")
    if what is None and measure != "cost":
        return None  # MariaDB: an index read in order stops at the head whatever rows says
    return f"{what or 'walks a large share of an index'} (estimated {measure} {cost:,.0f})"


def _document(rows: list[dict[str, Any]]) -> Any:
    value = next(iter(rows[0].values()))
    return json.loads(value) if isinstance(value, str | bytes) else value


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _walk(child)


def _postgresql(document: Any, result: Explain, table_name: str, *, analyzed: bool) -> None:
    """EXPLAIN (FORMAT JSON): node types, the index, the estimated cost; with ANALYZE and
    BUFFERS, rows, buffers and times as they were."""
    top = document[0]
    root = top["Plan"]
    nodes = list(_walk(root))
    rows_key = "Actual Rows" if analyzed else "Plan Rows"
    result.plan, result.analyzed = document, analyzed
    result.nodes = [
        PlanNode.of(
            {
                "node": n["Node Type"],
                "relation": n.get("Relation Name"),
                "index": n.get("Index Name"),
                "rows": n.get(rows_key),
                "removed": n.get("Rows Removed by Filter"),
                "buffers": n.get("Shared Hit Blocks", 0) + n.get("Shared Read Blocks", 0)
                if analyzed
                else None,
                "detail": ", ".join(n.get("Sort Key", []))
                or n.get("Filter")
                or n.get("Index Cond"),
            }
        )
        for n in nodes
    ]
    types = [n["Node Type"] for n in nodes]
    result.estimated_cost = float(root.get("Total Cost", 0))
    result.index = next((n["Index Name"] for n in nodes if n.get("Index Name")), None)
    result.access = None
    if any("Index" in t for t in types):
        result.access = "seek"
    elif "Seq Scan" in types:
        result.access = "scan"
    result.sorts = any(t in _SORTS for t in types)
    if not analyzed:
        return
    result.rows_returned = int(root.get("Actual Rows", 0))
    result.rows_removed = sum(int(n.get("Rows Removed by Filter", 0)) for n in nodes)
    scanned = [int(n.get("Actual Rows", 0)) for n in nodes if "Scan" in n["Node Type"]]
    result.rows_examined = max(scanned, default=0) + result.rows_removed
    result.buffers = int(root.get("Shared Hit Blocks", 0)) + int(root.get("Shared Read Blocks", 0))
    result.planning_ms = top.get("Planning Time")
    result.execution_ms = top.get("Execution Time")
    _walked(result)


def _walked(result: Explain) -> None:
    """A "seek" that read far more index entries than it returned walked the index past
    rows of other states: call it what it was."""
    removed, returned = result.rows_removed or 0, max(1, result.rows_returned or 0)
    if result.access == "seek" and removed >= WALK_RATIO * returned:
        result.access = "index walk"


def _mysql_tables(block: Any) -> Iterator[tuple[dict[str, Any], bool]]:
    """(table node, whether a filesort is above it) anywhere in a MySQL/MariaDB plan."""
    if isinstance(block, dict):
        sorting = "filesort" in block or bool(block.get("using_filesort"))
        for key, value in block.items():
            if key == "table" and isinstance(value, dict):
                yield value, sorting
            for table, sorted_above in _mysql_tables(value):
                yield table, sorting or sorted_above
    elif isinstance(block, list):
        for value in block:
            yield from _mysql_tables(value)


def _mysql(document: Any, result: Explain, table_name: str, *, analyzed: bool) -> None:
    """MariaDB's ANALYZE FORMAT=JSON (r_rows: rows examined; r_engine_stats: pages), or MySQL
    8's EXPLAIN FORMAT=JSON (estimates only)."""
    result.plan, result.analyzed = document, analyzed
    block = document.get("query_block", {})
    found = list(_mysql_tables(block))
    result.sorts = any(sorted_above for _, sorted_above in found)
    result.nodes = []
    for table, sorted_above in found:
        access = str(table.get("access_type", ""))
        rows = table.get("r_rows" if analyzed else "rows_examined_per_scan", table.get("rows"))
        pages = (table.get("r_engine_stats") or {}).get("pages_accessed")
        result.nodes.append(
            PlanNode.of(
                {
                    "node": access + (" + filesort" if sorted_above else ""),
                    "relation": table.get("table_name"),
                    "index": table.get("key"),
                    "rows": rows,
                    "removed": None,
                    "buffers": pages,
                    "detail": table.get("attached_condition") or table.get("message"),
                }
            )
        )
    # The queue table's own access (a ring's head also reads its sequence and control rows).
    own = [t for t, _ in found if t.get("table_name") == table_name]
    first = own[0] if own else found[0][0] if found else {}
    result.index = first.get("key")
    access = str(first.get("access_type", ""))
    result.access = {"ALL": "scan", "index": "index walk"}.get(access, "seek" if access else None)
    if analyzed and first:
        examined = float(first.get("r_rows") or 0)
        kept = float(first.get("r_filtered", 100) or 0) / 100
        result.rows_examined = round(examined)
        result.rows_removed = round(examined * (1 - kept))
        pages = (first.get("r_engine_stats") or {}).get("pages_accessed")
        result.buffers = None if pages is None else int(pages)
        result.execution_ms = block.get("r_total_time_ms")
        _walked(result)
    elif first:
        rows = first.get("rows_examined_per_scan", first.get("rows"))
        result.rows_examined = None if rows is None else int(rows)
        result.estimated_cost = result.rows_examined


def _sqlite(rows: list[dict[str, Any]], result: Explain, table_name: str) -> None:
    """EXPLAIN QUERY PLAN: SEARCH ... USING INDEX, SCAN, USE TEMP B-TREE FOR ORDER BY."""
    details = [str(r["detail"]) for r in rows]
    result.plan = details
    result.nodes = [PlanNode.of({"node": d}) for d in details]
    result.sorts = any("TEMP B-TREE FOR ORDER BY" in d for d in details)
    reads = [d for d in details if d.startswith(("SEARCH", "SCAN"))]
    # The queue table's own access (a ring's head also reads its control row).
    own = [d for d in reads if re.search(rf"\b{re.escape(table_name)}\b", d)]
    head = (own or reads or [""])[0]
    index = re.search(r"USING (?:COVERING )?INDEX (\S+)", head)
    if index:
        result.index = index.group(1)
    elif "INTEGER PRIMARY KEY" in head or (head.startswith("SCAN") and not result.sorts):
        result.index = "rowid"
    if head.startswith("SEARCH"):
        result.access = "seek"
    elif head:
        # A SCAN without a sort walks the index (or the rowid b-tree) in the dequeue's order
        # and stops at the head; with one, it reads every row and sorts them.
        result.access = "scan" if result.sorts else "index walk"
    result.notes.append("SQLite: the plan only (EXPLAIN QUERY PLAN); rows read are not measured")


# -- beside the plan -------------------------------------------------------------------------


def _invalid(ctx: Context, result: Explain) -> None:
    if not sql.available(ctx.engine, "invalid_indexes"):
        return
    part = sql.read(ctx.engine, "invalid_indexes", ctx.params)
    result.invalid_indexes = [
        invalid_indexes.probed(ctx.engine, row) for row in part.typed(invalid_indexes.InvalidIndex)
    ]
    result.notes.extend([part.note] if part.note else [])


def _statistics(ctx: Context, result: Explain) -> None:
    engine = ctx.engine
    if sql.available(engine, "maintenance"):
        part = sql.read(engine, "maintenance", ctx.params)
        result.notes.extend([part.note] if part.note else [])
        keep = (
            "reltuples",
            "modified_since_analyze",
            "last_analyzed",
            "inserted_rows",
            "table_rows",
            "next_id",
            "stats_present",
            "stats_rows",
            "stats_updated",
        )
        result.statistics = Statistics.of({k: v for k, v in part.first.items() if k in keep})
    elif sql.available(engine, "statistics"):
        file = engine.hooks.diagnostic_file("statistics")
        assert file is not None
        present = engine.diagnostic("statistics")
        rows = 0
        if int(present[0]["present"]):
            found = engine.run(list(file.statements("rows")), {"table": ctx.table}, write=False)
            rows = int(found[0]["stat_rows"])
        result.statistics = Statistics.of({"stat_rows": rows})
        if not rows:
            result.notes.append(
                f"no sqlite_stat1 rows for {ctx.table}: the planner uses fixed guesses "
                f"({engine.base_hooks.analyze_advice(ctx.table)} gathers them)"
            )


# -- findings --------------------------------------------------------------------------------


def _findings(ctx: Context, the_head: Head, result: Explain) -> list[Finding]:
    out: list[Finding] = []
    engine, table = ctx.engine, ctx.table
    filtered = (result.rows_removed or 0) >= FILTERED_ROWS and (result.rows_returned or 0) <= 1
    if the_head.ordered and (result.sorts or filtered):
        fix = the_head.index_fix or "an index on the dequeue's WHERE and ORDER BY columns"
        if result.sorts and result.fitting_index:  # no duplicate: the one there is unused
            how = (
                "sorts the waiting rows to find the head, though index "
                f"{result.fitting_index} serves its WHERE and ORDER BY: the planner chose not "
                "to use it (its statistics or costs make the sort look cheaper)"
            )
            fix = f"{engine.base_hooks.analyze_advice(table)}; no new index is needed"
        elif result.sorts:
            how = "sorts the waiting rows to find the head: no index serves the dequeue's ORDER BY"
        else:
            how = (
                f"walks {result.index or 'an index'} past {result.rows_removed} rows the "
                "dequeue's WHERE removes (rows of other states in front of the head)"
            )
        examined = result.rows_examined
        small = examined is not None and examined < FILTERED_ROWS and not filtered
        out.append(
            Finding(
                INFO if small else WARNING,
                "dequeue_index_misfit",
                f"the dequeue's plan {how}"
                + (f"; {examined} rows examined" if examined is not None else ""),
                fix,
            )
        )
    if (result.buffers or 0) >= DEAD_BUFFERS and (result.rows_returned or 0) <= 1 and not filtered:
        returned = (
            "(rows returned unknown)"
            if result.rows_returned is None
            else f"to return {counted(result.rows_returned, 'row')}"
        )
        out.append(
            Finding(
                WARNING,
                "dequeue_dead_entries",
                f"reaching the head took {result.buffers} page accesses {returned}: dead "
                "entries in front of the head (deleted or claimed rows cleanup has not removed "
                "yet) that every dequeue walks",
                f"{ctx.profile.command('ghosts') if ctx.profile else 'qadmin ghosts ' + table} "
                "to see who holds cleanup back; end it, then "
                + engine.base_hooks.vacuum_advice(table),
            )
        )
    out.extend(invalid_indexes.finding(row, engine.base_hooks) for row in result.invalid_indexes)
    out.extend(_stale(ctx, result))
    return out


def _stale(ctx: Context, result: Explain) -> list[Finding]:
    facts, engine, table = result.statistics, ctx.engine, ctx.table
    seen = max(int(facts.inserted_rows or 0), int(facts.next_id or 1) - 1)
    if facts.has("reltuples"):
        reltuples = float(facts.reltuples if facts.reltuples is not None else -1)
        modified = int(facts.modified_since_analyze or 0)
        if reltuples < 0 and seen >= STATS_MIN_ROWS:
            why = f"never gathered (reltuples -1) though {seen} rows were inserted"
            return [_stale_finding(WARNING, "stale_statistics", why, engine, table)]
        if reltuples >= 0 and modified > 50 + OUTDATED_SHARE * reltuples:
            why = (
                f"last gathered {facts.last_analyzed or 'at an unknown time'}; "
                f"{modified} rows changed since, against {int(reltuples)} rows then"
            )
            return [_stale_finding(INFO, "statistics_outdated", why, engine, table)]
    if facts.has("stats_present") and seen >= STATS_MIN_ROWS and not facts.stats_present:
        why = f"missing (no persistent statistics row) though {seen} rows were inserted"
        return [_stale_finding(WARNING, "stale_statistics", why, engine, table)]
    return []


def _stale_finding(severity: str, code: str, why: str, engine: Any, table: str) -> Finding:
    if code == "stale_statistics":
        return Finding(
            severity,
            "stale_statistics",
            f"the queue table's statistics are {why}: the planner may pick a scan or a sort",
            engine.base_hooks.analyze_advice(table),
        )
    return Finding(
        severity,
        "statistics_outdated",
        f"the queue table's statistics are outdated: {why}",
        engine.base_hooks.analyze_advice(table),
    )


# The plan parsers by the format they read; an engine's dialect names its own
# (``Dialect.plan_format``). Each takes explain.sql's rows.
_PARSERS: dict[str, Callable[..., None]] = {
    "plan_tree_json": lambda rows, result, table, *, analyzed: _postgresql(
        _document(rows), result, table, analyzed=analyzed
    ),
    "query_block_json": lambda rows, result, table, *, analyzed: _mysql(
        _document(rows), result, table, analyzed=analyzed
    ),
    "query_plan_rows": lambda rows, result, table, *, analyzed: _sqlite(rows, result, table),
}
