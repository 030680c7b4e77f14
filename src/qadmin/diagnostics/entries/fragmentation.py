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
    Options,
    Result,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Section
from qadmin.engines.base import Engine


@dataclass
class Fragmentation(Result):
    indexes: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    indexes_measured: list[dict[str, Any]] | None = None  # --deep
    table_measured: list[dict[str, Any]] | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data = super().to_json_dict()
        return {k: v for k, v in data.items() if v is not None}

    def max_bloat_pct(self) -> float | None:
        bloat = [float(i["bloat_pct"]) for i in self.indexes if i.get("bloat_pct") is not None]
        return max(bloat, default=None)


def measure(
    engine: Engine, table: str, deep: bool = False, max_pages: int = DEFAULT_MAX_PAGES
) -> Fragmentation:
    params = {"schema": engine.schema, "table": table, "max_pages": max_pages}
    cheap = sql.read(engine, "fragmentation", params)
    out = Fragmentation(cheap.rows, [cheap.note] if cheap.note else [])
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
    out.indexes_measured, out.table_measured = indexes.rows, table_rows.rows
    for name, part in (("fragmentation_deep", indexes), ("ghosts_deep", table_rows)):
        if part.note and sql.available(engine, name):
            out.notes.append(part.note)
    return out


def collect(ctx: Context) -> Fragmentation:
    options: Options = ctx.options
    return measure(ctx.engine, ctx.table, options.deep, options.max_pages)


def rule(report: InspectReport) -> list[Finding]:
    """Indexes worth rebuilding: how to read each engine's figures is the engine's knowledge."""
    part: Fragmentation | None = report.part("fragmentation")
    if part is None:
        return []
    out = []
    for row in part.indexes + (part.indexes_measured or []):
        waste = report.advice.index_waste(row)
        if waste is not None and waste[1]:
            index = str(row.get("index_name"))
            out.append(
                Finding(
                    INFO,
                    "index_bloat",
                    f"index {index} has {waste[0]}",
                    report.advice.rebuild_index_advice(index, report.table),
                )
            )
    return out


ENTRY = Diagnostic(
    name="fragmentation",
    order=80,
    sql=("fragmentation", "fragmentation_deep", "ghosts_deep"),
    collect=collect,
    rule=rule,
    fields=(
        Field(
            "index_bloat_pct",
            "%",
            "largest estimated index bloat (catalog estimate; collect only)",
            "float64",
            lambda r: p.max_bloat_pct() if (p := r.part("fragmentation")) else None,
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
