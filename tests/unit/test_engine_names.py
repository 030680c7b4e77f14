"""No engine name is compared outside the engines: a difference between engines is a hook of
the engine's dialect (``qadmin.engines.dialect``), asked by the layers above, so a new engine
answers it in one place and never borrows another's by falling through an ``else``.

The scan reads every module of ``src/qadmin`` outside ``engines/`` and the engine table: a
comparison (``==``, ``!=``, ``in``) with an engine's name or scheme, a dict keyed by one, or a
``case`` on one, is a branch on the engine. Data that lists engines (a job-queue library's
dialects) is not a branch and is not flagged."""

from __future__ import annotations

import ast
from pathlib import Path

from qadmin.engine_table import ENGINES

SRC = Path(__file__).resolve().parents[2] / "src" / "qadmin"
# Where engine names belong: the engines and their table.
OWNERS = (SRC / "engines", SRC / "engine_table.py")
NAMES = frozenset({"mariadb"} | {n for e in ENGINES for n in (e.name, *e.schemes, *e.aliases)})


def _names_in(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value.lower() in NAMES else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for element in node.elts for n in _names_in(element)]
    return []


def engine_branches(source: str) -> list[tuple[int, str]]:
    """Each place the module branches on an engine's name: (line, the name)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                found += [(node.lineno, name) for name in _names_in(side)]
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    found += [(key.lineno, name) for name in _names_in(key)]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, name) for name in _names_in(node.value)]
    return found


def _modules() -> list[Path]:
    return [
        path
        for path in sorted(SRC.rglob("*.py"))
        if not any(path == owner or owner in path.parents for owner in OWNERS)
    ]


def test_the_scan_finds_a_branch_on_an_engine_name():
    source = (
        'if engine.name == "postgresql":\n    pass\n'
        'x = {"mysql": 1}\n'
        'y = dialect in ("sqlite", "mssql")\n'
        "match engine.name:\n    case 'mariadb':\n        pass\n"
    )
    assert [n for _, n in engine_branches(source)] == [
        "postgresql",
        "mysql",
        "sqlite",
        "mssql",
        "mariadb",
    ]
    assert engine_branches('LIBRARIES = ("postgresql", "mysql")\nif kind == "fifo": pass') == []


def test_no_engine_name_is_compared_outside_the_engines():
    assert len(_modules()) > 50  # the scan still reads the product
    branches = [
        f"{path.relative_to(SRC)}:{line}: {name}"
        for path in _modules()
        for line, name in engine_branches(path.read_text())
    ]
    assert branches == [], "ask the engine's dialect (engines/dialect.py) instead:\n" + "\n".join(
        branches
    )
