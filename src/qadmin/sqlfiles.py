"""Loading the SQL that qadmin ships: queue templates and diagnostic queries.

Files live in the top-level ``sql/`` folder of the repository (installed as ``qadmin/sql`` in
the wheel). A file is split into named sections by lines ``-- name: SECTION``; a name may repeat,
and each repetition is one more statement of that section, run in order. Text before the first
``-- name:`` line is the file's header comment. A file with no ``-- name:`` line is one statement,
section ``main``. Statements are sent as written: comments inside them are kept (stripping
``--`` naively would cut string literals).

Queue and engine SQL take ``{...}`` placeholders in one grammar, filled by ``qadmin.sqltext``
only (its docstring is the reference): ``{x}`` a quoted schema-qualified name, ``{x.bare}``
the quoted name alone, ``{x.lit}`` / ``{x.bare_lit}`` / ``{x.schema_lit}`` string literals,
``{keyword}`` fixed SQL, ``{fragment(x)}`` a dialect fragment. Diagnostic SQL takes none: only
bound ``:params``.

So that each statement is written once, a file may build on others: each header line
``-- extends: queues/common/data.sql`` names a base (relative to ``sql/``; a base may extend
others in turn). The bases are laid one over the other in the order named, then the file
itself: a section replaces the same-named section below it whole. ``sql/queues/common/``
holds what several engines share; an engine's ``claim.sql`` extends its ``basic.sql``. A
section identical to one it replaces is a defect (``tests/unit/test_sqlfiles.py`` checks every
chain). Within an engine, shared pieces of statements are fragments (``fragments.sql``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_SECTION = re.compile(r"^--\s*name:\s*([a-z_]+)\s*$", re.MULTILINE)
_EXTENDS = re.compile(r"^--\s*extends:\s*(\S+)", re.MULTILINE)


@cache
def sql_root() -> Path:
    """The installed copy when running from a wheel, else the repository's ``sql/`` folder."""
    packaged = Path(__file__).parent / "sql"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "sql"


@dataclass(frozen=True)
class SqlFile:
    path: Path
    header: str
    sections: dict[str, tuple[str, ...]]

    def statements(self, section: str) -> tuple[str, ...]:
        try:
            return self.sections[section]
        except KeyError:
            raise KeyError(f"{self.path.name} has no section {section!r}") from None

    def has(self, section: str) -> bool:
        return section in self.sections

    def overlay(self, other: SqlFile) -> SqlFile:
        """``other`` laid over this file: its sections replace ours, except ``create`` and
        ``drop``, whose statements run after ours."""
        sections = dict(self.sections)
        for name, statements in other.sections.items():
            extend = name in ("create", "drop")
            sections[name] = (*sections.get(name, ()), *statements) if extend else statements
        return SqlFile(path=self.path, header=self.header, sections=sections)

    def extended_by(self, other: SqlFile) -> SqlFile:
        """``other`` built on this file (its ``-- extends:``): its sections replace ours whole,
        its header and path are the result's."""
        return SqlFile(
            path=other.path, header=other.header, sections={**self.sections, **other.sections}
        )


def extends(header: str) -> list[str]:
    """The files a header's ``-- extends:`` lines name (relative to ``sql/``), in order."""
    return _EXTENDS.findall(header)


def parse(text: str, path: Path) -> SqlFile:
    matches = list(_SECTION.finditer(text))
    if not matches:
        body = text.strip()
        return SqlFile(path=path, header=_leading_comment(body), sections={"main": (body,)})
    header = text[: matches[0].start()].strip()
    sections: dict[str, list[str]] = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        statement = text[match.end() : end].strip()
        if statement:
            sections.setdefault(match.group(1), []).append(statement)
    return SqlFile(path=path, header=header, sections={k: tuple(v) for k, v in sections.items()})


_FIELD = re.compile(r"^--\s*([a-z][a-z ]*):\s*(.*)$")


def header_fields(header: str) -> dict[str, str]:
    """``-- key: value`` lines of a header (indented ``--`` lines continue the value)."""
    fields: dict[str, str] = {}
    key = None
    for line in header.splitlines():
        match = _FIELD.match(line)
        if match:
            key = match.group(1)
            fields[key] = match.group(2).strip()
        elif key and line.startswith("--  "):
            fields[key] += " " + line[2:].strip()
    return fields


def _leading_comment(body: str) -> str:
    lines = []
    for line in body.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line)
    return "\n".join(lines)


@cache
def load(relative: str) -> SqlFile:
    """Load ``sql/<relative>`` laid over the files it extends; cached, since the files do not
    change while qadmin runs."""
    own = own_file(relative)
    bases = [load(base) for base in extends(own.header)]
    if not bases:
        return own
    merged = bases[0]
    for base in bases[1:]:
        merged = merged.extended_by(base)
    return merged.extended_by(own)


def own_file(relative: str) -> SqlFile:
    """``sql/<relative>`` as written, without the files it extends."""
    path = sql_root() / relative
    return parse(path.read_text(encoding="utf-8"), path)


@cache
def exists(relative: str) -> bool:
    """Cached as ``load`` is: status asks thousands of times which diagnostics an engine
    has a file for."""
    return (sql_root() / relative).is_file()
