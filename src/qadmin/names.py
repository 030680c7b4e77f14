"""Validation of the names users give for queues and schemas.

Every name is checked here before any SQL is built, and is then quoted by its engine's single
quoting function. The rules are deliberately narrow (lower-case ASCII letters, digits and
underscores) so that the same name means the same object on every engine, whatever its case
folding, and so that the derived object names (``<queue>_push`` and so on) stay within every
engine's identifier length.
"""

from __future__ import annotations

import re

from qadmin.errors import InvalidName

MAX_QUEUE_NAME = 48
MAX_SCHEMA_NAME = 63
RESERVED_PREFIX = "qadmin_"

_QUEUE_RE = re.compile(r"[a-z_][a-z0-9_]*")
_SCHEMA_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _describe(name: str) -> str:
    shown = name if len(name) <= 40 else name[:37] + "..."
    return repr(shown)


def validate_queue_name(name: str) -> str:
    """Return the name if it can be a queue, else raise InvalidName saying why."""
    if not name:
        raise InvalidName("queue name is empty")
    if len(name) > MAX_QUEUE_NAME:
        raise InvalidName(
            f"queue name {_describe(name)} is {len(name)} characters; the limit is {MAX_QUEUE_NAME}"
        )
    if not _QUEUE_RE.fullmatch(name):
        raise InvalidName(
            f"invalid queue name {_describe(name)}: use lower-case letters, digits and _, "
            "starting with a letter or _"
        )
    if name.startswith(RESERVED_PREFIX):
        raise InvalidName(f"queue names starting with {RESERVED_PREFIX!r} are reserved for qadmin")
    return name


def schema_option(text: str) -> str:
    """A --schema value as the schema's name: ``"Mixed-Sch"`` quoted (any existing name),
    else a bare name, validated; InvalidName otherwise."""
    if quoted(text):
        return validate_quoted_schema(text)
    return validate_schema_name(text)


def quoted(text: str) -> bool:
    """Whether a schema is given in its quoted form (``"Mixed-Sch"``)."""
    return len(text) > 2 and text[0] == text[-1] == '"'


def validate_quoted_schema(text: str) -> str:
    """``"Mixed-Sch"`` -> ``Mixed-Sch`` (``""`` is a quote): a schema the catalog has under a
    name no bare identifier spells; InvalidName for an empty, too long or NUL-bearing one."""
    name = text[1:-1]
    if '"' in name.replace('""', ""):
        raise InvalidName(f"invalid schema name {_describe(text)}: a quote inside must be doubled")
    name = name.replace('""', '"')
    if not name or len(name) > MAX_SCHEMA_NAME or "\x00" in name:
        raise InvalidName(f"invalid schema name {_describe(text)}")
    return name


def validate_schema_name(name: str) -> str:
    """Schemas already exist, so mixed case is allowed; they are always quoted."""
    if not name:
        raise InvalidName("schema name is empty")
    if len(name) > MAX_SCHEMA_NAME:
        raise InvalidName(
            f"schema name {_describe(name)} is {len(name)} characters; "
            f"the limit is {MAX_SCHEMA_NAME}"
        )
    if not _SCHEMA_RE.fullmatch(name):
        raise InvalidName(
            f"invalid schema name {_describe(name)}: use letters, digits and _, "
            "starting with a letter or _"
        )
    return name
