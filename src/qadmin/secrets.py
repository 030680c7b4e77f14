"""The secrets seen in this process, so every line qadmin prints can be scrubbed of them.

Drivers sometimes echo connection parameters in their messages; masking DSNs alone is not
enough. Every password qadmin parses is registered here, and the one print path for errors
replaces each with ``***``.
"""

from __future__ import annotations

import re

_SEEN: set[str] = set()


def register(secret: str | None) -> None:
    if secret and len(secret) >= 1:
        _SEEN.add(secret)


# Shorter secrets are replaced only as whole tokens, so "p" does not mangle "empty".
SHORT = 4


def scrub(text: str) -> str:
    from qadmin.dsn import mask

    text = mask(text)
    for secret in sorted(_SEEN, key=len, reverse=True):
        if len(secret) >= SHORT:
            text = text.replace(secret, "***")
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", text)
    return text


def forget_all() -> None:
    """For tests: each starts with no secrets seen."""
    _SEEN.clear()
