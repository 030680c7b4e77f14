"""Pausing and resuming a queue: pops take nothing while it is paused, pushes go on.

The pause is ``paused_at`` in the queue's catalog options, and the queue's pop routines (on
SQLite, its pop statements) read it on every call: one primary-key read of the catalog that
takes no lock a push could wait on (pushes never read it). So qadmin's ``pop`` and every
application calling the routines stop together, acks and fails of claims already made go on,
and the pause survives restarts. A call already past its read of the pause completes; the
pause holds for calls whose snapshot is taken after it commits (docs/kinds.md).

A queue created by a qadmin from before pause has a pop routine that never reads it: pause
first replaces that routine by the current template's, atomically where the engine can
(PostgreSQL's CREATE OR REPLACE, MariaDB's, SQL Server's CREATE OR ALTER); MySQL 8 cannot
replace a procedure without a moment where it is missing, so there pause refuses in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from qadmin import catalog
from qadmin.engines.base import Engine
from qadmin.errors import NotFound, UsageError
from qadmin.kinds import PAUSABLE, QueueSpec
from qadmin.profiles.resolve import Resolved
from qadmin.values import iso


@dataclass
class Outcome:
    """What pause or resume did (or, dry, would do)."""

    queue: str
    action: str
    paused: bool  # after the command
    paused_at: str | None
    changed: bool  # False: it already was so
    upgraded: list[str] = field(default_factory=list)  # routines replaced to read the pause
    statements: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "queue": self.queue,
            "action": self.action,
            "paused": self.paused,
            "paused_at": self.paused_at,
            "changed": self.changed,
            "upgraded": self.upgraded,
            "statements": self.statements,
        }


def _pausable(engine: Engine, spec: QueueSpec) -> bool:
    """An engine without routines (SQLite) runs the current templates' pop statements."""
    return spec.pausable or not engine.hooks.has_routines


def upgrade(engine: Engine, spec: QueueSpec) -> list[tuple[str, str]]:
    """(routine, statement) replacing each pop routine of a queue from before pause with the
    current template's, which reads the pause; [] when it already does."""
    if _pausable(engine, spec):
        return []
    pop = spec.objects()["pop"]
    out = [(obj[1], statement) for obj, statement in catalog.replacements(engine, spec, [pop])]
    if engine.hooks.replace_routine is None:
        raise UsageError(
            f"pause: queue {spec.name} was created by a qadmin from before pause, so its pop "
            f"procedure never reads the pause, and {engine.label} cannot replace a procedure "
            "without a moment where callers find it missing; nothing changed (create a new "
            "queue to pause, or stop its consumers)"
        )
    if not out:
        raise UsageError(f"pause: no pop routine of {spec.name} found in its template")
    return out


def _now() -> str:
    return iso(datetime.now(UTC)) or ""


def pause(engine: Engine, spec: QueueSpec, *, dry_run: bool = False) -> Outcome:
    """Pause the queue (its pop routine upgraded first if it predates pause)."""
    steps = upgrade(engine, spec)
    at = spec.paused_at or _now()
    marks = catalog.mark_sql(engine, "pause")
    statements = [s for _, s in steps] + marks
    outcome = Outcome(spec.name, "pause", True, at, spec.paused_at is None, [r for r, _ in steps])
    if dry_run or not outcome.changed:
        outcome.statements = statements if outcome.changed else []
        return outcome
    with engine.transaction() as execute:
        if steps:
            catalog.merge_options(engine, spec, {PAUSABLE: True}, execute)
        for _, statement in steps:
            execute(statement)
        execute(marks[0], {"name": spec.name, "at": at})
    after = catalog.get(engine, spec.name)
    outcome.paused_at = after.paused_at
    outcome.statements = statements
    return outcome


def resume(engine: Engine, spec: QueueSpec, *, dry_run: bool = False) -> Outcome:
    """Resume the queue: its pops take messages again from their next call."""
    marks = catalog.mark_sql(engine, "resume")
    outcome = Outcome(spec.name, "resume", False, None, spec.paused_at is not None)
    outcome.statements = marks if outcome.changed else []
    if dry_run or not outcome.changed:
        return outcome
    engine.run(marks, {"name": spec.name})
    return outcome


# Libraries that keep a queue's pause in a table, and that table (beside their job table).
LIBRARY_PAUSES = {"river": "river_queue", "solid-queue": "solid_queue_pauses"}


def library(engine: Engine, resolved: Resolved, action: str, *, dry_run: bool = False) -> Outcome:
    """Pause or resume a library's named queue with the row change of the library's own API
    (River's QueuePause/QueueResume, Solid Queue's Queue#pause/#resume); any other library is
    refused in one line (exit 2): qadmin cannot stop its workers."""
    profile, shape = resolved.profile, resolved.shape
    lib = profile.library or "hand-built"
    name = profile.name
    if lib not in LIBRARY_PAUSES or shape is None:
        raise UsageError(
            f"{action}: {name} is a {lib} table: qadmin pauses its own queues, and River's and "
            f"Solid Queue's named queues (the library's pause row); pause {lib}'s workers "
            "through the library"
        )
    queue = profile.queue
    if queue is None:
        raise UsageError(f"{action}: {lib} pauses one named queue at a time: give --queue NAME")
    engine.use_schema(shape.schema)
    table = LIBRARY_PAUSES[lib]
    if not engine.table_exists(table):
        raise NotFound(f"{action}: {lib}'s table {table} is not in schema {shape.schema}")
    sql = engine.hooks.queue_file("library_pause")
    prefix = "river" if lib == "river" else "solid_queue"
    names = {"river_queue": table, "pauses": table}

    def section(part: str) -> list[str]:
        if not sql.has(f"{prefix}_{part}"):
            raise UsageError(f"{action}: {lib}'s pause is not available on {engine.label}")
        return [engine.hooks.render_text(s, names) for s in sql.statements(f"{prefix}_{part}")]

    state = section("state")
    rows = engine.run(state, {"queue": queue}, write=False)
    if lib == "river" and not rows:
        raise NotFound(
            f"{action}: River has no queue {queue!r} in {table} (a River client adds the row "
            "when it starts working the queue)"
        )
    before = iso(rows[0]["paused_at"]) if rows and rows[0]["paused_at"] is not None else None
    label = f"{name}[{queue}]"
    pausing = action == "pause"
    statements = section(action)
    outcome = Outcome(label, action, pausing, before, (before is None) == pausing)
    outcome.statements = statements if outcome.changed else []
    if dry_run or not outcome.changed:
        return outcome
    at = datetime.now(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    payload = json.dumps({"action": action, "queue": queue}, separators=(",", ":"))
    engine.run(statements, {"queue": queue, "at": at, "payload": payload})
    after = engine.run(state, {"queue": queue}, write=False)
    outcome.paused_at = iso(after[0]["paused_at"]) if after and after[0]["paused_at"] else None
    return outcome
