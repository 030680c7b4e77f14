"""Scrubbing every line qadmin prints: the secrets seen in this process (``qadmin.seen``, where
the DSN parser registers each password it parses) replaced by ``***``, then every DSN masked.

Drivers sometimes echo connection parameters in their messages; masking DSNs alone is not
enough, and a DSN that never parsed is masked by its shape.
"""

from __future__ import annotations

from qadmin.dsn import mask_text
from qadmin.seen import SHORT, forget_all, register, replace

__all__ = ["SHORT", "forget_all", "register", "scrub"]


def scrub(text: str) -> str:
    """The text with every DSN masked and every secret seen replaced by ``***``."""
    return mask_text(replace(text))
