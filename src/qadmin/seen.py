"""The secrets seen in this process, so every line qadmin prints can be scrubbed of them.

Drivers sometimes echo connection parameters in their messages; masking DSNs alone is not
enough. Every password qadmin parses (and, for a DSN that does not parse, whatever could be
one) is registered here, and ``secrets.scrub`` replaces each with ``***``. A leaf: the DSN
parser registers here, and ``secrets`` (which masks DSNs too) sits above both.
"""

from __future__ import annotations

import re
from urllib.parse import quote

_SEEN: set[str] = set()


def register(secret: str | None) -> None:
    """Remember a secret in the forms it can be printed in: as given and percent-encoded."""
    if secret:
        _SEEN.add(secret)
        _SEEN.add(quote(secret, safe=""))


# Shorter secrets are replaced only as whole tokens, so "p" does not mangle "empty".
SHORT = 4


def replace(text: str) -> str:
    """The text with every secret seen replaced by ``***``."""
    for secret in sorted(_SEEN, key=len, reverse=True):
        if len(secret) >= SHORT:
            text = text.replace(secret, "***")
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", text)
    return text


def forget_all() -> None:
    """For tests: each starts with no secrets seen."""
    _SEEN.clear()
