"""Print the typing figures of issue 28 (items 4 and 5) for the tree it is run in.

Run from the repository root: ``PYTHONPATH=src python scripts/type_figures.py``. The figures
are recorded, with this command, in docs/layout.md.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "qadmin"
sys.path.insert(0, str(ROOT))

from tests.unit.test_kinds_in_one_place import kind_checks  # noqa: E402


def raw_dicts() -> str:
    files = list(SRC.rglob("*.py"))
    texts = {f: f.read_text() for f in files}
    count = sum(t.count("dict[str, Any]") for t in texts.values())
    modules = sum("dict[str, Any]" in t for t in texts.values())
    return f"`dict[str, Any]`: {count} in {modules} of {len(files)} modules"


def raw_row_fields() -> str:
    """Fields of the diagnostics' results (``Result`` subclasses) that hold a raw row."""
    import qadmin
    from qadmin.diagnostics.model import Result

    total = raw = 0
    for info in pkgutil.walk_packages(qadmin.__path__, "qadmin."):
        if info.name.endswith("__main__") or ".pipeline." in info.name:
            continue
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if not (inspect.isclass(cls) and cls.__module__ == module.__name__):
                continue
            if not (dataclasses.is_dataclass(cls) and issubclass(cls, Result)):
                continue
            for one in dataclasses.fields(cls):
                total += 1
                raw += "dict[str, Any]" in str(one.type)
    return f"result fields that are raw rows: {raw} of {total}"


def untyped_parts() -> str:
    calls = sum(len(re.findall(r"\.part\(\"", f.read_text())) for f in SRC.rglob("*.py"))
    return f'`report.part("name")` calls (untyped, `Any`): {calls}'


def ops_dicts() -> str:
    """Public ops functions returning a dict or a list of them (serialisers left out)."""
    total = dicts = 0
    for file in sorted((SRC / "ops").glob("*.py")):
        for node in ast.walk(ast.parse(file.read_text())):
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            if node.name in ("to_json_dict", "as_dict"):
                continue
            total += 1
            dicts += "dict[" in (ast.unparse(node.returns) if node.returns else "")
    return f"public ops functions returning dicts: {dicts} of {total}"


def kind_comparisons() -> str:
    found = [
        (path, line)
        for path in SRC.rglob("*.py")
        if not (path.name == "kinds.py" and path.parent == SRC)
        for line in kind_checks(path.read_text())
    ]
    files = len({path for path, _ in found})
    return f"kind comparisons outside kinds.py: {len(found)} in {files} files"


if __name__ == "__main__":
    for figure in (raw_dicts, raw_row_fields, untyped_parts, ops_dicts, kind_comparisons):
        print(figure())
