"""Telemetry rows: ``Figures`` has exactly the base fields and the diagnostics registry's
telemetry fields, in their order and with their Parquet types, and a tail row prints the
keys tail's columns name."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

import pytest

from qadmin.cli.tail import COLUMNS
from qadmin.diagnostics import registry
from qadmin.ops import telemetry
from qadmin.ops.telemetry import BASE_FIELDS, Figures, TailRow

# A Parquet type's Python type: a field's annotation is this or None.
PYTHON_TYPES = {"int32": "int", "int64": "int", "float64": "float", "string": "str", "bool": "bool"}
# Base fields collect adds at its edge (the connection's, not the snapshot's).
COLLECT_ADDS = ("connection", "server")


def test_figures_has_the_base_and_the_registrys_fields_in_order():
    have = [f.name for f in fields(Figures) if f.name != "columns"]
    base = [name for name, *_ in BASE_FIELDS if name not in COLLECT_ADDS]
    assert have == base + [f.name for f in registry.fields()]


@pytest.mark.parametrize("field", registry.fields(), ids=lambda f: f.name)
def test_a_figures_type_is_its_parquet_type(field):
    annotation = {f.name: f.type for f in fields(Figures)}[field.name]
    assert annotation == f"{PYTHON_TYPES[field.arrow]} | None", field.name


def test_collect_only_figures_are_columns_only_when_collecting():
    base = {"schema_version": 5, "time": datetime.now(UTC), "engine": "sqlite"}
    figures = Figures.of({**base, "queue": "q", "kind": "fifo", "depth": 3})
    assert figures.as_dict() == {**base, "queue": "q", "kind": "fifo", "depth": 3}
    assert figures.index_bloat_pct is None and not figures.has("index_bloat_pct")
    with pytest.raises(TypeError, match="surprise"):
        Figures.of({**base, "queue": "q", "kind": "fifo", "surprise": 1})


def test_a_tail_row_gives_every_column_tail_prints():
    names = [name for name, *_ in BASE_FIELDS if name not in COLLECT_ADDS]
    figures = Figures.of(
        {
            **{name: None for name in names},
            **{f.name: None for f in registry.fields() if not f.collect_only},
        }
    )
    row = TailRow("t", "q", "fifo", None, figures).to_json_dict()
    assert set(COLUMNS) <= set(row) and "schema_version" not in row


def test_a_failed_sample_is_its_time_queue_kind_and_error():
    row = TailRow("t", "q", "fifo", "lock timeout")
    assert row.to_json_dict() == {
        "time": "t",
        "queue": "q",
        "kind": "fifo",
        "error": "lock timeout",
    }
    assert tuple(f.name for f in fields(TailRow))[5:] == telemetry.RATE_KEYS
