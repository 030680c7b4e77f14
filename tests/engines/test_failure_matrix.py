"""The failure-state matrix (tests/engines/matrix.py): each state created for real on each
engine where it exists, then qadmin run black-box on it. inspect must exit 0 and name the
finding, check must exit with the contract's code and name it, tail must show the field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import make_target
from tests.engines.matrix import DOC, Row, cells, render
from tests.helpers import invoke


def _run(args: list[str], target_args: list[str]) -> tuple[int, str]:
    result = invoke(*args, *target_args)
    return result.exit_code, result.stdout


def _codes(document: dict[str, Any]) -> set[str]:
    return {f["code"] for f in document.get("findings", [])}


@pytest.mark.parametrize(
    "row,label",
    cells(),
    ids=[f"{row.state.replace(' ', '_')}-{label}" for row, label in cells()],
)
def test_failure_state(row: Row, label: str, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    create = row.cells[label]
    assert callable(create)
    with create(target, engine) as queue:
        where = target.cli_args()
        code, out = _run(row.inspect_args(queue), where)
        assert code == 0, out
        assert row.code in _codes(json.loads(out)), out
        assert not _figures_as_text(json.loads(out)), out
        code, out = _run(row.check_args(queue), where)
        assert row.code in _codes(json.loads(out)), out
        assert code == row.check_exit, out
        if row.tail_field:
            code, out = _run(row.tail_args(queue), where)
            assert code == row.tail_exit, out
            last = json.loads(out.strip().splitlines()[-1])
            value = last.get(row.tail_field)
            assert isinstance(value, int | float) and not isinstance(value, bool), last
            if row.tail_min is None:
                assert float(value) > 0, last
            else:
                assert float(value) >= row.tail_min, last
    engine.close()


def _figures_as_text(data: object, key: str = "") -> list[str]:
    """Keys of seconds and percentages whose value came out as a string (MySQL's DECIMAL
    through str): a script's ``jq '.wait_s > 5'`` needs numbers."""
    if isinstance(data, dict):
        return [k for name, v in data.items() for k in _figures_as_text(v, name)]
    if isinstance(data, list):
        return [k for v in data for k in _figures_as_text(v, key)]
    return [key] if key.endswith(("_s", "_pct")) and isinstance(data, str) else []


def test_the_document_is_the_rendered_declaration():
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/failure-matrix.md is stale: python -m tests.engines.matrix --write"
    )
