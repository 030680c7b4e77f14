"""Optional dependencies: which pip extra brings each, and the install line that fits how this
qadmin was installed (from the registry, or from a source checkout where ``qadmin[x]`` would
fetch a different copy from PyPI instead of installing the tree in hand)."""

from __future__ import annotations

from pathlib import Path

from qadmin.errors import MissingDependency

# Top-level module -> the extra of pyproject.toml that installs it.
EXTRAS = {
    "pyarrow": "collect",
    "pyspark": "spark",
    "pandas": "spark",
    "py4j": "spark",
    "pyodbc": "mssql",
    "prometheus_client": "metrics",
}


def checkout() -> Path | None:
    """The source tree qadmin runs from (``src/qadmin`` with pyproject.toml two levels up: a
    clone, installed editable or run in place), else None (a wheel in site-packages)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def install_line(extra: str) -> str:
    """``pip install 'qadmin[extra]'``, or from a checkout ``pip install '.[extra]'`` (the
    tree's path when the current folder is elsewhere)."""
    root = checkout()
    where = "qadmin" if root is None else "." if Path.cwd().resolve() == root else str(root)
    return f"pip install '{where}[{extra}]'"


def missing(module: str, needed_for: str, otherwise: str = "") -> MissingDependency:
    """The error for an optional module that will not import: what needs it, and what to run
    (``otherwise``: a way around it, such as another --engine)."""
    top = module.split(".")[0]
    extra = EXTRAS.get(top)
    fix = install_line(extra) if extra else f"pip install {top}"
    tail = f", {otherwise}" if otherwise else ""
    return MissingDependency(f"{needed_for} needs {top}, which is not installed: {fix}{tail}")


def from_import_error(exc: ImportError, command: str | None = None) -> MissingDependency | None:
    """An import of an optional module failing anywhere below a command, as the one-line
    error; None when the module is not one of the optional ones (a real bug)."""
    name = getattr(exc, "name", None) or ""
    top = name.split(".")[0]
    if top not in EXTRAS:
        return None
    return missing(top, f"qadmin {command}" if command else "this command")
