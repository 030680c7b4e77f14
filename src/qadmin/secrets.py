"""The secrets seen in this process, so every line qadmin prints can be scrubbed of them.

Drivers sometimes echo connection parameters in their messages; masking DSNs alone is not
enough. Every password qadmin parses is registered here, and the one print path for errors
replaces each with ``***``.
"""

from __future__ import annotations

_SEEN: set[str] = set()


def register(secret: str | None) -> None:
    if secret and len(secret) >= 1:
        _SEEN.add(secret)


def scrub(text: str) -> str:
    from qadmin.dsn import mask

    text = mask(text)
    for secret in sorted(_SEEN, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
