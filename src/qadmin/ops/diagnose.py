"""What is wrong with a queue: its parts (size, ghosts, locks, claims) and the findings.

Every part reads the server's catalog and statistics through ``sql/diagnostics`` read-only,
under the connection's lock and statement timeouts, and never scans a big queue: depth is the
engine's estimate, made exact only below ``EXACT_DEPTH_LIMIT`` rows. A part the role may not
read is switched off once with a note naming the privilege (from the SQL file's header), and
the rest goes on: a missing privilege never reads as "nothing wrong".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from qadmin.engines.base import Engine
from qadmin.errors import LockTimeout, NotFound, PermissionMissing, QadminError
from qadmin.kinds import Kind, QueueSpec
from qadmin.names import validate_schema_name
from qadmin.ops import findings, watermark
from qadmin.ops.values import iso, to_utc
from qadmin.sqlfiles import header_fields

# Every file under sql/diagnostics/<engine>/ is one of these (a test holds both ways).
DIAGNOSTICS = (
    "size",
    "ghosts",
    "horizon",
    "locks",
    "sessions",
    "counters",
    "fragmentation",
    "fragmentation_deep",
    "ghosts_deep",
    "primary_key",
)
DEFAULT_MAX_PAGES = 131_072  # 1 GiB of 8 KiB pages: --deep refuses larger tables
EXACT_DEPTH_LIMIT = 100_000
CLAIMS_SHOWN = 1000
DEFAULT_STALE_AFTER_S = 300


@dataclass
class Part:
    """One part of a diagnosis: its rows, or a note saying why it is missing or partial."""

    name: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None


def run_part(engine: Engine, name: str, params: dict[str, Any] | None = None) -> Part:
    file = engine.diagnostic_file(name)
    if file is None:
        return Part(name, note=f"{name}: not available on {engine.dialect}")
    try:
        return Part(name, engine.diagnostic(name, params))
    except PermissionMissing:
        privilege = header_fields(file.header).get("privilege", "a privilege qadmin lacks")
        return Part(name, note=f"{name} unavailable: needs {privilege}")
    except LockTimeout as exc:
        return Part(name, note=f"{name} skipped: {exc}")
    except QadminError as exc:
        version = header_fields(file.header).get("min version", "")
        return Part(name, note=f"{name} unavailable ({version}): {exc}")


def _params(engine: Engine, spec: QueueSpec | str) -> dict[str, Any]:
    return {"schema": engine.schema, "table": spec if isinstance(spec, str) else spec.name}


def _template_rows(
    engine: Engine, spec: QueueSpec, section: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    if not engine.template(spec).has(section):
        return []
    return engine.run(engine.section(spec, section), params, write=False)


def size(engine: Engine, spec: QueueSpec) -> dict[str, Any]:
    """Depth (estimate, exact when cheap), oldest message, and bytes on disk."""
    part = run_part(engine, "size", _params(engine, spec))
    facts: dict[str, Any] = dict(part.rows[0]) if part.rows else {}
    if facts.get("estimated_rows") is None:
        for row in _template_rows(engine, spec, "estimate"):
            facts.update(estimated_rows=row["estimated_rows"], estimate_source="id range")
    estimate = facts.get("estimated_rows")
    exact_cheap = spec.kind is Kind.RING or estimate is None or int(estimate) < EXACT_DEPTH_LIMIT
    out: dict[str, Any] = {
        k: (_int(v) if k.endswith(("_bytes", "_rows", "pages")) else v) for k, v in facts.items()
    }
    oldest: Any = None
    if exact_cheap:
        row = engine.run(engine.section(spec, "depth"), write=False)[0]
        out["depth"], out["depth_exact"] = int(row["depth"]), True
        oldest = row.get("oldest_enqueued_at")
    else:
        out["depth"], out["depth_exact"] = int(estimate or 0), False
        rows = _template_rows(engine, spec, "oldest")
        oldest = rows[0]["oldest_enqueued_at"] if rows else None
    when = to_utc(oldest)
    out["oldest_enqueued_at"] = iso(when)
    out["oldest_age_s"] = round((datetime.now(UTC) - when).total_seconds(), 3) if when else None
    if spec.kind is Kind.PENDING:
        out["due"] = int(_template_rows(engine, spec, "due")[0]["due"])
    if spec.kind is Kind.RING and spec.capacity:
        out["ring_fill"] = round(out["depth"] / spec.capacity, 4)
    if part.note:
        out["note"] = part.note
    return out


def ghosts(engine: Engine, spec: QueueSpec | str) -> dict[str, Any]:
    """Dead / ghost records and what holds their cleanup back."""
    dead = run_part(engine, "ghosts", _params(engine, spec))
    holders = run_part(engine, "horizon")
    notes = [p.note for p in (dead, holders) if p.note]
    if any(h.get("detail") == "<insufficient privilege>" for h in holders.rows):
        notes.append(
            "partial view: pg_read_all_stats (or pg_monitor) is needed to see what "
            "other roles' sessions are doing"
        )
    return {
        "table": dict(dead.rows[0]) if dead.rows else {},
        "holders": holders.rows,
        "notes": notes,
    }


def locks(engine: Engine, spec: QueueSpec | str) -> Part:
    return run_part(engine, "locks", _params(engine, spec))


def claims(engine: Engine, spec: QueueSpec, stale_after_s: int) -> dict[str, Any]:
    """Claimed messages, which are stale, and whether their claiming session still exists."""
    if spec.kind is not Kind.CLAIM:
        return {"claimed": None, "stale": [], "notes": []}
    rows = _template_rows(engine, spec, "claims", {"limit": CLAIMS_SHOWN})
    sessions = run_part(engine, "sessions")
    alive = {str(r["session"]) for r in sessions.rows}
    notes = [sessions.note] if sessions.note else []
    stale = []
    for row in rows:
        row = dict(row)
        row["processing_started_at"] = iso(row["processing_started_at"])
        row["claimed_for_s"] = round(float(row["claimed_for_s"]), 3)
        session = row.get("claimed_session")
        row["session_alive"] = (str(session) in alive) if session and sessions.rows else None
        if row["claimed_for_s"] >= stale_after_s:
            stale.append(row)
    more = " or more" if len(rows) == CLAIMS_SHOWN else ""
    return {
        "claimed": len(rows),
        "claimed_note": more.strip() or None,
        "stale": stale,
        "stale_after_s": stale_after_s,
        "notes": notes,
    }


def ring_state(engine: Engine, spec: QueueSpec) -> dict[str, Any] | None:
    """A ring's sequences, parked numbers, overflow, and the two holes that stall it: an
    orphan (a popper took its number and died: the slot the next push needs stays full) and a
    missing message (a pusher took its number and died: every pop stops there). Cheap: a few
    primary-key lookups around the two sequences."""
    if spec.kind is not Kind.RING:
        return None
    row = dict(_template_rows(engine, spec, "ring_state")[0])
    for key in ("oldest_parked_s", "orphan_age_s", "waiting_behind_age_s"):
        if row.get(key) is not None:
            row[key] = round(float(row[key]), 3)
    if row.get("orphan_id") is None:
        row["orphan_slot"] = None
    return row


def requeue(engine: Engine, spec: QueueSpec, stale_after_s: int) -> list[int]:
    """Release claims older than ``stale_after_s``: the messages are served again."""
    rows = engine.run(engine.section(spec, "requeue"), {"stale_s": int(stale_after_s)})
    return sorted(int(r["id"]) for r in rows if r.get("id") is not None)


def fragmentation(
    engine: Engine, spec: QueueSpec | str, deep: bool = False, max_pages: int = DEFAULT_MAX_PAGES
) -> dict[str, Any]:
    """Index size and bloat estimate from the catalog; with ``deep``, measured (it reads the
    indexes), and refused for a table of more than ``max_pages`` pages."""
    params = dict(_params(engine, spec), max_pages=max_pages)
    cheap = run_part(engine, "fragmentation", params)
    out: dict[str, Any] = {"indexes": cheap.rows, "notes": [cheap.note] if cheap.note else []}
    if deep:
        facts = run_part(engine, "size", _params(engine, spec)).rows
        pages = _int(facts[0].get("pages")) if facts else 0
        pages = pages or 0
        if pages > max_pages:
            out["notes"].append(
                f"--deep refused: the table has {pages} pages, more than --max-pages {max_pages}"
            )
        else:
            for name, key in (
                ("fragmentation_deep", "indexes_measured"),
                ("ghosts_deep", "table_measured"),
            ):
                part = run_part(engine, name, params)
                out[key] = part.rows
                if part.note and engine.diagnostic_file(name) is not None:
                    out["notes"].append(part.note)
    return out


@dataclass
class Sample:
    """Counters at one moment, for rates: what the template and the engine tell cheaply."""

    at: float
    size: dict[str, Any]
    enqueued_total: int | None
    dequeued_total: int | None
    deleted: int | None
    notes: list[str] = field(default_factory=list)

    @property
    def depth(self) -> int:
        return int(self.size["depth"])


def sample(engine: Engine, spec: QueueSpec) -> Sample:
    notes = []
    try:
        rows = _template_rows(engine, spec, "counters", _params(engine, spec))
    except PermissionMissing as exc:
        rows = []
        notes.append(f"id counters unavailable: {exc}")
    counters = rows[0] if rows else {}
    server = run_part(engine, "counters", _params(engine, spec))
    stats = server.rows[0] if server.rows else {}
    if server.note and engine.diagnostic_file("counters") is not None:
        notes.append(server.note)
    return Sample(
        at=time.monotonic(),
        size=size(engine, spec),
        enqueued_total=_int(counters.get("enqueued_total")),
        dequeued_total=_int(counters.get("dequeued_total")),
        deleted=_int(stats.get("deleted")),
        notes=notes,
    )


def rates(before: Sample, after: Sample, spec: QueueSpec) -> dict[str, Any]:
    """Enqueue and dequeue rates between two samples, each with the source it came from."""
    elapsed = max(after.at - before.at, 1e-6)
    out: dict[str, Any] = {"interval_s": round(elapsed, 3)}
    enq = _delta(before.enqueued_total, after.enqueued_total)
    out["enqueued"] = enq
    out["enqueue_per_s"] = round(enq / elapsed, 2) if enq is not None else None
    out["enqueue_source"] = "push sequence" if spec.kind is Kind.RING else "id high-water mark"
    deq = _delta(before.dequeued_total, after.dequeued_total)
    source = "pop sequence"
    if deq is None and spec.kind not in (Kind.CLAIM, Kind.CAPPED):
        deq = _delta(before.deleted, after.deleted)
        source = "server delete counter"
    if deq is None and enq is not None:
        deq = enq - (after.depth - before.depth)
        source = "enqueued minus depth change"
    out["dequeued"] = max(deq, 0) if deq is not None else None
    out["dequeue_per_s"] = round(max(deq, 0) / elapsed, 2) if deq is not None else None
    out["dequeue_source"] = source
    out["notes"] = sorted(set(before.notes + after.notes))
    return out


def _delta(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else b - a


def inspect(
    engine: Engine,
    spec: QueueSpec,
    stale_after_s: int = DEFAULT_STALE_AFTER_S,
    sample_s: float = 0.0,
    deep: bool = False,
    max_pages: int = DEFAULT_MAX_PAGES,
) -> dict[str, Any]:
    """Everything at once, plus findings: the one screen a DBA reads during an incident.

    With ``sample_s`` > 0 the counters are read twice that far apart to give rates.
    """
    report: dict[str, Any] = {
        "queue": spec.name,
        "schema": engine.schema,
        "engine": engine.name,
        "dialect": engine.dialect,
        "server_version": engine.server_version(),
        "kind": spec.kind.value,
        "capacity": spec.capacity,
        "strict": spec.strict,
        "created_at": spec.created_at,
    }
    if sample_s > 0:
        first = sample(engine, spec)
        time.sleep(sample_s)
        report["rates"] = rates(first, sample(engine, spec), spec)
    report["size"] = size(engine, spec)
    report["ghosts"] = ghosts(engine, spec)
    lock_part = locks(engine, spec)
    report["locks"] = {"waits": lock_part.rows, "notes": [lock_part.note] if lock_part.note else []}
    report["claims"] = claims(engine, spec, stale_after_s)
    report["ring"] = ring_state(engine, spec)
    report["fragmentation"] = fragmentation(engine, spec, deep, max_pages)
    report["watermark"] = watermark.show(engine, spec) if spec.watermark else None
    report["not_covered"] = []
    report["findings"] = findings.findings(report)
    return report


def inspect_table(
    engine: Engine,
    table: str,
    order_by: str | None = None,
    time_column: str | None = None,
    deep: bool = False,
    max_pages: int = DEFAULT_MAX_PAGES,
) -> dict[str, Any]:
    """Inspect a table qadmin did not create: the parts that need qadmin's catalog (kind,
    claims, ring fill, due counts, rates from its sequences) are left out, and said so."""
    for name in filter(None, (table, order_by, time_column)):
        validate_schema_name(name)
    if not engine.table_exists(table):
        raise NotFound(f"no table {table!r} in schema {engine.schema}")
    notes = [
        "not a qadmin queue: inspected as a hand-built table; kind, claims, ring fill, due "
        "counts and rates need qadmin's catalog and are not shown"
    ]
    if order_by is None:
        keys = [
            r["column_name"] for r in run_part(engine, "primary_key", _params(engine, table)).rows
        ]
        if len(keys) == 1:
            order_by = keys[0]
            notes.append(f"ordering key detected: primary key column {order_by}")
        else:
            notes.append("no single-column primary key: give --order-by COLUMN for the oldest row")
    facts_part = run_part(engine, "size", _params(engine, table))
    facts = dict(facts_part.rows[0]) if facts_part.rows else {}
    estimate = _int(facts.get("estimated_rows"))
    size_out: dict[str, Any] = dict(facts)
    if estimate is None or estimate < EXACT_DEPTH_LIMIT:
        depth = engine.run(engine.table_sql("depth", table, {}), write=False)[0]["depth"]
        size_out.update(depth=int(depth), depth_exact=True)
    else:
        size_out.update(depth=estimate, depth_exact=False)
    oldest = None
    if order_by and time_column:
        columns = {"order_col": order_by, "time_col": time_column}
        rows = engine.run(engine.table_sql("oldest", table, columns), write=False)
        oldest = to_utc(rows[0]["oldest_enqueued_at"]) if rows else None
    elif order_by:
        notes.append("give --time-column COLUMN for the oldest message's age")
    size_out["oldest_enqueued_at"] = iso(oldest)
    size_out["oldest_age_s"] = (
        round((datetime.now(UTC) - oldest).total_seconds(), 3) if oldest else None
    )
    lock_part = locks(engine, table)
    report: dict[str, Any] = {
        "queue": table,
        "schema": engine.schema,
        "engine": engine.name,
        "dialect": engine.dialect,
        "server_version": engine.server_version(),
        "kind": None,
        "order_by": order_by,
        "time_column": time_column,
        "size": size_out,
        "ghosts": ghosts(engine, table),
        "locks": {"waits": lock_part.rows, "notes": [lock_part.note] if lock_part.note else []},
        "claims": {"claimed": None, "stale": [], "notes": []},
        "fragmentation": fragmentation(engine, table, deep, max_pages),
        "not_covered": notes,
    }
    report["findings"] = findings.findings(report)
    return report


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
