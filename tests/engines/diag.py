"""The diagnostics as the engine tests read them: inspect's JSON document, and a few parts."""

from __future__ import annotations

from typing import Any

from qadmin.diagnostics import run
from qadmin.diagnostics.entries import locks
from qadmin.diagnostics.model import Context, Limit, Options


def inspect(
    engine: Any, spec: Any, stale_after_s: int = 300, deep: bool = False, **limits: Any
) -> dict[str, Any]:
    """inspect's JSON document; ``limits`` as ``metric=(warn, crit)``, as the options give."""
    given = {name: Limit(warn, crit, True) for name, (warn, crit) in limits.items()}
    options = Options(stale_after_s=stale_after_s, deep=deep, limits=given)
    return run.inspect(engine, spec, options).to_json_dict()


def lock_waits(engine: Any, spec: Any) -> list[dict[str, Any]]:
    waits = locks.collect(Context(engine, spec.name, spec, Options())).waits
    return [w.as_dict() for w in waits]  # the rows as JSON shows them
