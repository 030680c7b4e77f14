"""Kinds in one place: what a kind can do and which columns its table has are KindSpec's
(src/qadmin/kinds.py); code elsewhere reads the flags, never asks which kind it has."""

from __future__ import annotations

import ast
from pathlib import Path

import qadmin
from qadmin.kinds import KINDS, Kind, QueueSpec
from qadmin.profiles.resolve import from_spec

SRC = Path(qadmin.__file__).parent
KIND_NAMES = {k.name for k in Kind}
KIND_VALUES = {k.value for k in Kind}


def _is_kind(node: ast.expr) -> bool:
    """``Kind.RING``, a kind's name as a string, or a tuple / list / set of them."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == "Kind" and node.attr in KIND_NAMES
    if isinstance(node, ast.Constant):
        return node.value in KIND_VALUES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_is_kind(e) for e in node.elts)
    return False


def _asks_the_kind(node: ast.expr) -> bool:
    """Something that says which kind a queue is: ``spec.kind``, ``spec.template``."""
    return isinstance(node, ast.Attribute) and node.attr in ("kind", "template")


def kind_checks(source: str) -> list[int]:
    """Lines comparing with a kind member (``spec.kind is Kind.RING``, ``kind in (Kind.A,
    Kind.B)``), or comparing a queue's kind or template with a kind's name."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(isinstance(o, ast.Attribute) and _is_kind(o) for o in operands) or (
            any(_asks_the_kind(o) for o in operands) and any(_is_kind(o) for o in operands)
        ):
            lines.append(node.lineno)
    return lines


def test_the_scan_sees_every_form_of_a_kind_check():
    code = (
        "a = spec.kind is Kind.RING\n"
        "b = spec.kind not in (Kind.CLAIM, Kind.CAPPED)\n"
        "c = spec.template in ('claim', 'ring')\n"
        "d = Kind.FIFO == kind\n"
        "e = spec.info.ring\n"
        "f = QueueSpec(name='q', kind=Kind.RING)\n"
        "g = quality.kind == 'floor'\n"
    )
    assert kind_checks(code) == [1, 2, 3, 4]


def test_no_kind_is_compared_outside_kinds_py():
    found = {
        f"{path.relative_to(SRC)}:{line}"
        for path in SRC.rglob("*.py")
        if path.name != "kinds.py" or path.parent != SRC
        for line in kind_checks(path.read_text())
    }
    assert not found, f"read a KindSpec flag instead of comparing kinds: {sorted(found)}"


def test_a_queues_profile_comes_from_its_kinds_columns():
    for kind, info in KINDS.items():
        profile = from_spec(QueueSpec(name="q", kind=kind))
        assert profile.id_column == info.table.id
        assert profile.order_by == info.table.order
        assert profile.due_column == info.table.due
        assert (profile.release is not None) == info.claims
        assert (profile.claimed_at_column is not None) == info.claims
    assert KINDS[Kind.RING].table.order is None  # a ring is read by its sequences
