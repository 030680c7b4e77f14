"""Converting a naive queue into a ring where DDL commits on its own (MariaDB).

The switch cannot be one transaction, so it is a sequence of steps, each safe to repeat, whose
progress is what exists in the schema (``sql/queues/mariadb/convert.sql`` explains them): the
ring is prepared beside the queue, push/pop are gated, then one connection holds the gate while
another renames the tables, and one transaction parks the backlog and flips the gate. A convert
killed anywhere is run again with the same command: it redoes what was not committed, or
finishes a switch that was. Callers of the queue's routines wait, never fail.
"""

from __future__ import annotations

import dataclasses
import time

from qadmin import catalog
from qadmin.engines.base import Engine
from qadmin.errors import Deadlock, LockTimeout, UsageError
from qadmin.kinds import QueueSpec
from qadmin.ops import convert_guard, resize
from qadmin.ops.convert_sql import (
    CHUNK,
    GATE_GRACE_S,
    Converted,
    ConvertPlan,
    ConvertSql,
    Progress,
    Renamed,
    Source,
    Step,
    copy_backlog,
    gate_exists,
    interrupted_backup,
    outcome,
    refusal,
    too_big,
)

# Tries at the switch when open transactions keep the gate or the table (each waits the lock
# timeout), and the pause between them.
SWITCH_ATTEMPTS = 5
RETRY_PAUSE_S = 0.5
_CREATE_ROUTINE = "CREATE PROCEDURE"

STEPS = {
    "measure": "count the backlog (only the waiting rows with --state-column); refuse if it is "
    "larger than the capacity",
    "mark": "refuse if another object has a name the ring needs; create the gate row {gate.bare} "
    "(its existence marks a convert under way: a re-run knows what is its own)",
    "prepare": "drop what an interrupted prepare left, then create the ring beside the queue: "
    "slot table {staged.bare}, routines {staged_push.bare}/{staged_pop.bare}; overflow, "
    "parked list, control row and sequences under their final names (unused until the "
    "switch); slot rows in chunks of {slots}",
    "gate": "a qadmin queue's push/pop are replaced (CREATE OR REPLACE, atomic) by versions "
    "that read the gate row with a share lock held to the end of the "
    "caller's transaction; wait {grace}s for calls that began with the old ones",
    "lock": "connection 1: lock the gate row exclusively (FOR UPDATE, under the lock timeout): "
    "calls in flight finish, new calls wait",
    "rename": "connection 2: RENAME TABLE {queue.bare} TO {backup.bare}, {staged.bare} TO "
    "{queue.bare} (one atomic statement; waits under lock_wait_timeout for transactions still "
    "using {queue.bare}; on a "
    "timeout the gate is released and the switch tried again, {attempts} times in all)",
    "measure_backup": "connection 1: count the backlog in {backup.bare}; refuse (and undo the "
    "rename and the prepared ring) if it outgrew the capacity",
    "start_sequences": "start both ring sequences above every id {backup.bare} ever handed out "
    "(its AUTO_INCREMENT counter)",
    "copy": "park the backlog: messages into the overflow table, their numbers into the parked "
    "list, so pops serve them first, in id order (chunks of {chunk} rows)",
    "catalog": "flip the gate to the ring, record the ring in qadmin's catalog; commit: "
    "waiting calls resume on the ring",
    "finish": "replace push/pop with the ring's own (CREATE OR REPLACE); wait {grace}s",
    "cleanup": "drop {backup_fate}, the staged routines and, last, the gate",
}


def _with_names(spec: QueueSpec, **names: str) -> Renamed:
    fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(QueueSpec)}
    return Renamed(**fields, renamed=tuple(names.items()))


def _code(statement: str) -> str:
    """The statement without the comment lines before it (a routine's explanation)."""
    lines = statement.lstrip().splitlines()
    while lines and lines[0].lstrip().startswith("--"):
        lines.pop(0)
    return "\n".join(lines).lstrip()


def _is_routine(statement: str) -> bool:
    """Whether a rendered statement creates a routine (rendered: a template may write a whole
    routine as a fragment, ``{pop_rows()}``)."""
    return _code(statement).startswith(_CREATE_ROUTINE)


class _Staging:
    """The ring as it is built beside the queue, and the naive queue's leftovers after it."""

    def __init__(self, engine: Engine, src: Source, ring: QueueSpec, sql: ConvertSql):
        self.engine, self.src, self.ring, self.sql = engine, src, ring, sql
        staged = sql.staged
        self.tables = _with_names(ring, **staged)
        self.routines = _with_names(
            ring, push=staged["push"], push_many=staged["push_many"], pop=staged["pop"]
        )

    def create(self) -> list[str]:
        """The ring's create section: tables under the staged slot table's name, routines under
        staged names but reading the final table names (they only run after the rename)."""
        out = []
        for raw in self.engine.hooks.template(self.ring).statements("create"):
            routine = _is_routine(self.engine.hooks.render(raw, self.ring))
            out.append(self.engine.hooks.render(raw, self.routines if routine else self.tables))
        return out

    def discard(self) -> list[str]:
        """Drop whatever a previous, interrupted prepare left (none of it is in use yet)."""
        return self.engine.hooks.section(self.tables, "drop")

    def routines_of(self, spec: QueueSpec) -> list[str]:
        """``spec``'s push/pop (and helpers) as CREATE OR REPLACE: swapped atomically, so no
        caller ever finds the routine missing."""
        rendered = [
            self.engine.hooks.render(raw, spec)
            for raw in self.engine.hooks.template(spec).statements("create")
        ]
        return [
            "CREATE OR REPLACE PROCEDURE" + _code(statement)[len(_CREATE_ROUTINE) :]
            for statement in rendered
            if _is_routine(statement)
        ]

    def leftovers(self) -> list[str]:
        """After the switch: the renamed naive table and its extras (a watermark), the staged
        routines, then the gate, last, as it marks a convert under way."""
        out = []
        if self.src.managed is not None:
            naive = _with_names(
                self.src.managed,
                table=self.sql.backup,
                push=self.sql.staged["push"],
                push_many=self.sql.staged["push_many"],
                pop=self.sql.staged["pop"],
            )
            out += self.engine.hooks.section(naive, "drop")
        return out + self.sql.section("drop_staged") + self.sql.section("gate_drop")


def _ctl_capacity(engine: Engine, ring: QueueSpec) -> int:
    return int(engine.run(engine.hooks.section(ring, "resize_state"), write=False)[0]["capacity"])


def _state(engine: Engine, sql: ConvertSql) -> str:
    """How far an earlier run got: fresh, gated (prepared, maybe part-way), renamed (the switch
    began but did not commit) or switched (committed; the clean-up may be unfinished)."""
    if not gate_exists(engine, sql.src.table):
        return "fresh"
    if engine.run(sql.section("gate_state"), write=False)[0]["switched"] == 1:
        return "switched"
    return "renamed" if engine.table_exists(sql.backup) else "gated"


def plan(engine: Engine, src: Source, ring: QueueSpec) -> ConvertPlan:
    """Every step still to do, the locks it takes and the SQL (read-only)."""
    backup = interrupted_backup(engine, src.table) or ""
    sql = ConvertSql(engine, src, ring, backup)
    staging = _Staging(engine, src, ring, sql)
    state = _state(engine, sql)
    capacity = int(ring.capacity or 0)
    names = dict(
        staged=sql.staged["table"],
        staged_push=sql.staged["push"],
        staged_pop=sql.staged["pop"],
        gate=sql.gate,
        queue=src.table,
        backup=sql.backup,
    )
    fate = "{backup.bare}" if src.managed else "nothing of the table (kept as {backup.bare})"
    words = dict(
        backup_fate=engine.hooks.render_text(fate, names),
        grace=str(GATE_GRACE_S),
        attempts=str(SWITCH_ATTEMPTS),
        chunk=f"{CHUNK:,}",
        slots=f"{resize.CHUNK:,}",
    )
    statements: list[str] = []
    messages: int | None = None
    rows_left: int | None = None
    steps = list(STEPS)
    if state == "switched":
        steps = steps[steps.index("finish") :]
    else:
        if state == "renamed":
            steps = steps[steps.index("lock") :]
            steps.remove("rename")
            measured = engine.run(sql.section("measure_backup"), sql.params, write=False)[0]
        else:
            measured = engine.run(sql.section("measure"), sql.params, write=False)[0]
            statements += sql.section("collisions") + sql.section("gate_table")
            statements += staging.discard() + staging.create()
            statements += engine.hooks.section(staging.tables, "resize_grow")
            if src.managed is not None:
                statements += sql.section("gate")
        messages, rows_left = int(measured["messages"]), int(measured["rows_left"])
        for name in ("gate_lock", "rename", "measure_backup", "start_sequences", "copy"):
            if name != "rename" or state != "renamed":
                statements += sql.section(name)
        statements += sql.section("gate_switched") + engine.hooks.catalog_sql("insert")
    statements += staging.routines_of(ring) + staging.leftovers()
    return ConvertPlan(
        queue=src.table,
        origin=src.origin,
        to_capacity=capacity,
        resuming=None if state == "fresh" else state,
        messages=messages,
        rows_left=rows_left,
        fits=messages is None or messages <= capacity,
        refused=tuple(convert_guard.refusals(engine, src, sql, backup)),
        steps=tuple(engine.hooks.render_text(STEPS[name], names, words) for name in steps),
        statements=tuple(statements),
    )


def convert(
    engine: Engine, src: Source, ring: QueueSpec, step: Step, progress: Progress | None
) -> Converted:
    catalog.ensure(engine)
    backup = interrupted_backup(engine, src.table)
    sql = ConvertSql(engine, src, ring, backup or "")
    staging = _Staging(engine, src, ring, sql)
    capacity = int(ring.capacity or 0)
    state = _state(engine, sql)
    messages = rows_left = None
    if state != "switched":
        reasons = convert_guard.refusals(engine, src, sql, backup or "")
        if reasons:
            if state == "gated":
                _abandon(engine, staging)
            raise UsageError(refusal(src.table, reasons))
    if state in ("renamed", "switched"):
        started = _ctl_capacity(engine, ring)
        if state == "renamed" and started != capacity:
            raise UsageError(
                f"an interrupted convert of {src.table} to a ring of {started:,} slots is "
                f"under way: run it again with --capacity {started}"
            )
        capacity = started
    if state in ("fresh", "gated"):
        step("measure")
        measured = engine.run(sql.section("measure"), sql.params, write=False)[0]
        backlog = int(measured["messages"])
        if backlog > capacity:
            if state == "gated":
                _abandon(engine, staging)
            raise _too_big(src, backlog, capacity)
        step("mark")
        if state == "fresh":
            _mark(engine, sql)
        step("prepare")
        _prepare(engine, staging, capacity)
        step("gate")
        if src.managed is not None:
            engine.run(sql.section("gate"))
            time.sleep(GATE_GRACE_S)
    if state != "switched":
        messages, rows_left = _switch(
            engine, staging, renamed=state == "renamed", step=step, progress=progress
        )
    step("finish")
    # A queue made before push_many had none to carry its record: the ring's is its own.
    catalog.own(engine, ring, ("procedure", ring.objects()["push_many"]))
    engine.run(staging.routines_of(ring))
    if src.managed is not None:
        time.sleep(GATE_GRACE_S)
    step("cleanup")
    engine.run(staging.leftovers())
    next_id = engine.run(sql.section("sequences"), write=False)[0]["push_next"]
    return outcome(src, capacity, messages, int(next_id), rows_left)


def _too_big(src: Source, messages: int, capacity: int) -> UsageError:
    return UsageError(refusal(src.table, [too_big(messages, capacity)]))


def _mark(engine: Engine, sql: ConvertSql) -> None:
    taken = [r["name"] for r in engine.run(sql.section("collisions"), write=False)]
    if taken:
        raise UsageError(
            f"cannot convert {sql.src.table}: {', '.join(sorted(taken))} already exist(s), and "
            "the ring needs those names (rename or drop them first)"
        )
    catalog.own(engine, sql.ring, ("table", sql.gate))  # recorded, then made
    engine.run(sql.section("gate_table"))


def _prepare(engine: Engine, staging: _Staging, capacity: int) -> None:
    engine.run(staging.discard())
    for statement, obj in catalog.planned(engine, staging.tables, staging.create()):
        if obj is not None:
            catalog.own(engine, staging.tables, obj)
        engine.run([statement])
    with engine.transaction() as execute:
        resize.grow(engine, staging.tables, execute, 0, capacity)


def _abandon(engine: Engine, staging: _Staging) -> None:
    """Put a prepared, unswitched convert back: the queue's own routines, no ring, no gate."""
    if staging.src.managed is not None:
        engine.run(staging.routines_of(staging.src.managed))
        time.sleep(GATE_GRACE_S)
    engine.run(staging.discard() + staging.sql.section("gate_drop"))


def _switch(
    engine: Engine, staging: _Staging, *, renamed: bool, step: Step, progress: Progress | None
) -> tuple[int, int]:
    """Hold the gate in this connection, rename in another, then park the backlog and flip the
    gate in one transaction. Open transactions that outlast the lock timeout make it let go
    and try again; after the last try the queue keeps working as it was."""
    sql, src, ring = staging.sql, staging.src, staging.ring
    other = engine.sibling()
    attempt = 0
    try:
        while True:
            attempt += 1
            try:
                with engine.transaction() as execute:
                    step("lock")
                    execute(sql.section("gate_lock")[0])
                    if not renamed:
                        step("rename")
                        other.run(sql.section("rename"))
                        renamed = True
                    step("measure_backup")
                    measured = execute(sql.section("measure_backup")[0], sql.params)[0]
                    messages = int(measured["messages"])
                    if messages > int(ring.capacity or 0):
                        other.run(sql.section("unrename"))
                        renamed = False
                        raise _too_big(src, messages, int(ring.capacity or 0))
                    step("start_sequences")
                    execute(sql.section("start_sequences")[0], {"next": int(measured["next_id"])})
                    step("copy")
                    copy_backlog(sql, execute, int(measured["min_id"] or 0), messages, progress)
                    step("catalog")
                    execute(sql.section("gate_switched")[0])
                    if src.managed is not None:
                        execute(engine.hooks.catalog_sql("delete")[0], {"name": src.table})
                    for statement in engine.hooks.catalog_sql("insert"):
                        execute(statement, catalog.row(ring))
                    catalog.own_all(engine, ring, execute)
                    if src.managed is not None:  # the clean-up drops it; until then, drop does
                        catalog.own(engine, ring, ("table", sql.backup), execute)
                return messages, int(measured["rows_left"])
            except (LockTimeout, Deadlock):
                # The server may also break a wait between the rename's metadata lock and the
                # gate's row lock as a deadlock: the same situation, the same retry.
                if attempt == SWITCH_ATTEMPTS:
                    raise LockTimeout(
                        f"convert could not switch {src.table}: open transactions held it past "
                        f"the lock timeout {SWITCH_ATTEMPTS} times; it still works as before "
                        "(through the gate): run convert again"
                    ) from None
                time.sleep(RETRY_PAUSE_S)
            except UsageError:
                _abandon(engine, staging)
                raise
    finally:
        other.close()
