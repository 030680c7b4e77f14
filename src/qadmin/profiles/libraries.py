"""The job-queue libraries qadmin recognises: one ``LibraryShape`` per library and table.

Each entry is the library's documented table (name, the columns that identify it) and how its
rows are read as a queue (states, claim and heartbeat columns, how a stale claim is released).
"""

from __future__ import annotations

from qadmin.profiles.model import LibraryShape

SHAPES: tuple[LibraryShape, ...] = ()
