"""The declared-state grammar: a job's state decided by which columns are NULL.

Real tables often keep no state column: a job waits while ``dequeued_at`` is NULL and has
failed once ``failed_at`` is set. A ``[tables.NAME.states]`` entry says so, one condition per
group, in a grammar small enough to check against the catalog and render with quoted names
(never SQL from the user)::

    condition := term ("AND" term)*
    term      := COLUMN "IS" ["NOT"] "NULL"

COLUMN is a bare name or a double-quoted one. The groups are tried in ``ORDER``: the first
that matches is the row's state (a failed job with a claim time is failed, not claimed).
"""

from __future__ import annotations

import re

from qadmin.errors import UsageError

# First match wins: a finished or failed row also carries its claim's columns.
ORDER = ("failed", "done", "claimed", "retrying", "scheduled", "pending")
MAX_TERMS = 8

# (column, is_null): the column IS NULL when true, IS NOT NULL when false.
Term = tuple[str, bool]

_TERM = re.compile(
    r'\s*(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))\s+IS\s+(NOT\s+)?NULL\s*',
    re.IGNORECASE,
)
_AND = re.compile(r"AND\b", re.IGNORECASE)


def parse(text: str, where: str) -> tuple[Term, ...]:
    """The condition's terms, or one line (exit 2) naming what is wrong and the grammar."""
    terms: list[Term] = []
    rest = text
    while True:
        match = _TERM.match(rest)
        if match is None:
            raise UsageError(
                f"{where}: cannot read {text[:60]!r}: write COLUMN IS [NOT] NULL, joined by AND"
            )
        column = match.group(1).replace('""', '"') if match.group(1) else match.group(2)
        terms.append((column, match.group(3) is None))
        rest = rest[match.end() :]
        if not rest:
            break
        joined = _AND.match(rest)
        if joined is None or len(terms) == MAX_TERMS:
            raise UsageError(
                f"{where}: cannot read {text[:60]!r}: write COLUMN IS [NOT] NULL, "
                f"joined by AND (at most {MAX_TERMS})"
            )
        rest = rest[joined.end() :]
    return tuple(terms)


def parse_states(entry: object, where: str) -> tuple[tuple[str, tuple[Term, ...]], ...]:
    """A ``states`` table (group → condition) in ``ORDER``; one line for a bad one."""
    if not isinstance(entry, dict) or not entry:
        raise UsageError(f'{where}: states must be a table of group = "condition"')
    for group, text in entry.items():
        if group not in ORDER:
            known = ", ".join(ORDER)
            raise UsageError(f"{where}: states: unknown group {group!r} (known: {known})")
        if not isinstance(text, str):
            raise UsageError(f"{where}: states.{group} must be a string")
    if "pending" not in entry:
        raise UsageError(f"{where}: states needs pending, the condition of a waiting row")
    return tuple((g, parse(entry[g], f"{where}: states.{g}")) for g in ORDER if g in entry)
