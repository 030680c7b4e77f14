"""Index size and waste: estimated from the catalog; measured with --deep (it reads the
indexes), and refused for a table of more than --max-pages pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qadmin.catalog import sql
from qadmin.diagnostics.model import (
    DEFAULT_MAX_PAGES,
    INFO,
    Context,
    Finding,
    InspectReport,
    Number,
    Options,
    Result,
    Row,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Section
from qadmin.engines.base import Engine


@dataclass(frozen=True)
class IndexFigures(Row):
    """A row of fragmentation.sql: an index's size and waste from the catalog's statistics."""

    index_name: str = ""
    index_bytes: Number | None = None  # PostgreSQL, MySQL
    pages: Number | None = None
    entries: Number | None = None  # PostgreSQL
    expected_pages: Number | None = None
    bloat_pct: Number | None = None
    scans: Number | None = None
    valid: bool | None = None
    leaf_pages: Number | None = None  # MySQL
    stats_updated: Any = None
    fragmentation_pct: Number | None = None  # SQL Server
    fill_factor: Number | None = None


@dataclass(frozen=True)
class IndexMeasured(Row):
    """A row of fragmentation_deep.sql (--deep): an index read to measure its waste."""

    index_name: str = ""
    leaf_pages: Number | None = None  # PostgreSQL (pgstatindex)
    empty_pages: Number | None = None
    deleted_pages: Number | None = None
    avg_leaf_density: Number | None = None
    leaf_fragmentation: Number | None = None
    free_pages_pct: Number | None = None
    pages: Number | None = None  # SQL Server, SQLite
    page_density_pct: Number | None = None  # SQL Server
    fragmentation_pct: Number | None = None
    ghost_records: Number | None = None
    version_ghost_records: Number | None = None
    unused_bytes: Number | None = None  # SQLite (dbstat)
    index_bytes: Number | None = None
    unused_pct: Number | None = None


@dataclass(frozen=True)
class TableMeasured(Row):
    """The row of ghosts_deep.sql (--deep, PostgreSQL's pgstattuple_approx)."""

    dead_tuples_exact: Number | None = None
    live_tuples_approx: Number | None = None
    free_percent: Number | None = None
    scanned_percent: Number | None = None


@dataclass
class Fragmentation(Result):
    indexes: list[IndexFigures] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    indexes_measured: list[IndexMeasured] | None = None  # --deep
    table_measured: list[TableMeasured] | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data = super().to_json_dict()
        return {k: v for k, v in data.items() if v is not None}

    def max_bloat_pct(self) -> float | None:
        bloat = [float(i.bloat_pct) for i in self.indexes if i.bloat_pct is not None]
        return max(bloat, default=None)


def measure(
    engine: Engine, table: str, deep: bool = False, max_pages: int = DEFAULT_MAX_PAGES
) -> Fragmentation:
    params = {"schema": engine.schema, "table": table, "max_pages": max_pages}
    cheap = sql.read(engine, "fragmentation", params)
    out = Fragmentation(cheap.typed(IndexFigures), [cheap.note] if cheap.note else [])
    if not deep:
        return out
    facts = sql.read(engine, "size", params).first
    pages = sql.as_int(facts.get("pages")) or 0
    if pages > max_pages:
        out.notes.append(
            f"--deep refused: the table has {pages} pages, more than --max-pages {max_pages}"
        )
        return out
    indexes = sql.read(engine, "fragmentation_deep", params)
    table_rows = sql.read(engine, "ghosts_deep", params)
    out.indexes_measured = indexes.typed(IndexMeasured)
    out.table_measured = table_rows.typed(TableMeasured)
    for name, part in (("fragmentation_deep", indexes), ("ghosts_deep", table_rows)):
        if part.note and sql.available(engine, name):
            out.notes.append(part.note)
    return out


def collect(ctx: Context) -> Fragmentation:
    options: Options = ctx.options
    return measure(ctx.engine, ctx.table, options.deep, options.max_pages)


def rule(report: InspectReport) -> list[Finding]:
    """Indexes worth rebuilding: how to read each engine's figures is the engine's knowledge."""
    part = report.part(ENTRY)
    if part is None:
        return []
    out = []
    rows: list[IndexFigures | IndexMeasured] = [*part.indexes, *(part.indexes_measured or [])]
    for row in rows:
        waste = report.advice.base_hooks.index_waste(row.as_dict())
        if waste is not None and waste[1]:
            index = row.index_name
            out.append(
                Finding(
                    INFO,
                    "index_bloat",
                    f"index {index} has {waste[0]}",
                    report.advice.base_hooks.rebuild_index_advice(index, report.table),
                )
            )
    return out


ENTRY: Diagnostic[Fragmentation] = Diagnostic(
    name="fragmentation",
    order=80,
    sql=("fragmentation", "fragmentation_deep", "ghosts_deep"),
    rows=(
        ("fragmentation", IndexFigures),
        ("fragmentation_deep", IndexMeasured),
        ("ghosts_deep", TableMeasured),
    ),
    collect=collect,
    rule=rule,
    fields=(
        Field(
            "index_bloat_pct",
            "%",
            "largest estimated index bloat (catalog estimate; collect only)",
            "float64",
            lambda r: p.max_bloat_pct() if (p := r.part(ENTRY)) else None,
            collect_only=True,
        ),
    ),
    sections=(
        Section(
            "indexes",
            "fragmentation.indexes",
            (
                "index_name",
                "index_bytes",
                "pages",
                "entries",
                "expected_pages",
                "bloat_pct",
                "leaf_pages",
                "fragmentation_pct",
            ),
        ),
        Section(
            "indexes measured (--deep)",
            "fragmentation.indexes_measured",
            (
                "index_name",
                "pages",
                "leaf_pages",
                "avg_leaf_density",
                "free_pages_pct",
                "leaf_fragmentation",
                "unused_pct",
                "page_density_pct",
                "ghost_records",
            ),
        ),
    ),
)
