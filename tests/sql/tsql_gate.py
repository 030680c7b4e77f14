"""The T-SQL gate: sqlfluff's tsql parser plus a deny-list for what it lets through.

sqlfluff's tsql dialect accepts valid queue T-SQL and rejects most foreign constructs; a few
(PostgreSQL casts, ILIKE, nextval, RETURNING, TOP without parentheses) parse anyway, so they
are refused by pattern. Statements are checked exactly as qadmin sends them: rendered with
quoted identifiers and with parameters turned into pyodbc's ``?``.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

DENY = {
    "PostgreSQL cast '::'": re.compile(r"::"),
    "ILIKE": re.compile(r"\bILIKE\b", re.I),
    "nextval()": re.compile(r"\bnextval\s*\(", re.I),
    "SKIP LOCKED": re.compile(r"\bSKIP\s+LOCKED\b", re.I),
    "FOR UPDATE": re.compile(r"\bFOR\s+UPDATE\b", re.I),
    "backtick quoting": re.compile(r"`"),
    "TOP without parentheses": re.compile(r"\bTOP\s+(?!\()", re.I),
    "LIMIT": re.compile(r"\bLIMIT\b", re.I),
    "RETURNING": re.compile(r"\bRETURNING\b", re.I),
    "ON CONFLICT": re.compile(r"\bON\s+CONFLICT\b", re.I),
}


@cache
def _linter() -> Any:
    from sqlfluff.core import FluffConfig, Linter

    config = FluffConfig(
        configs={
            "core": {"dialect": "tsql", "templater": "placeholder"},
            "templater": {"placeholder": {"param_style": "question_mark"}},
        }
    )
    return Linter(config=config)


def problems(statement: str) -> list[str]:
    """Why the statement is not valid T-SQL for qadmin to send; empty when it is."""
    found = [name for name, pattern in DENY.items() if pattern.search(statement)]
    parsed = _linter().parse_string(statement)
    found += [v.desc() for v in parsed.violations]
    if parsed.tree is not None:
        found += [
            f"unparsable: {seg.raw[:60]!r}" for seg in parsed.tree.recursive_crawl("unparsable")
        ]
    return found
