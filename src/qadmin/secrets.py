"""The secrets seen in this process, so every line qadmin prints can be scrubbed of them.

Drivers sometimes echo connection parameters in their messages; masking DSNs alone is not
enough. Every password qadmin parses (and, for a DSN that does not parse, whatever could be
one) is registered here, and every path that prints errors or notes replaces each with ``***``.
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


def scrub(text: str) -> str:
    """The text with every DSN masked and every secret seen replaced by ``***``."""
    from qadmin.dsn import mask_text

    for secret in sorted(_SEEN, key=len, reverse=True):
        if len(secret) >= SHORT:
            text = text.replace(secret, "***")
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", text)
    return mask_text(text)


def forget_all() -> None:
    """For tests: each starts with no secrets seen."""
    _SEEN.clear()
