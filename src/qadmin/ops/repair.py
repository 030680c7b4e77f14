"""Making a queue's routines again when someone dropped them, and getting a stalled ring
moving again, with nothing lost or duplicated.

A routine (push, pop, push_many...) that the catalog records as the queue's and the schema no
longer holds is created again from the queue's template: the same statement create ran (the
current one: a queue from an earlier qadmin gets today's routine). A missing table is not:
its messages went with it. Routines made from an older template where this engine's have
changed since (``routines_outdated``) are replaced by today's, all in one transaction with the
catalog's record of the revision, each in one statement (CREATE OR REPLACE), so a caller never
finds one missing.

A client that dies between taking a sequence number and committing leaves a hole (see
``diagnostics.entries.ring``). Three fixes, each safe while producers and consumers keep running:

- **park orphans**: a message whose number the pop sequence has passed, and that no parked
  number covers, is added to ``<queue>_pending``, which pops serve first. Always safe: the
  message can only leave its slot (or the overflow) through the same guarded UPDATE, so a slow
  but live popper and the parked number can never both deliver it;
- **void stale parked numbers**: a parked number older than ``older_than_s`` whose message is
  nowhere was taken from a pusher that died. If that pusher was only slow and writes later, its
  message becomes an orphan and the next repair parks it;
- **skip a missing number**: when pops stop at a number whose message is absent while later
  messages have waited ``older_than_s``, one value is taken off the pop sequence: the missing
  number (voided), or, if a popper got there first, a number whose message is present (parked).
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any

from qadmin import catalog
from qadmin.diagnostics.entries import ring
from qadmin.engines.base import Engine
from qadmin.errors import NotFound, QadminError
from qadmin.kinds import PAUSABLE, REVISION, ROUTINES_REVISION, QueueSpec

DEFAULT_OLDER_THAN_S = 60


@dataclass(frozen=True)
class Skipped:
    """A number taken off the pop sequence: its message missing (voided) or present (parked)."""

    id: int
    action: str


@dataclass(frozen=True)
class RingRepair:
    """What repair would do (``skip``: the number it would take off the pop sequence) or did
    (``skip``: the numbers it took off); ``note`` when the engine's rings never have holes."""

    queue: str
    park: list[int] = field(default_factory=list)
    void: list[int] = field(default_factory=list)
    skip: int | list[Skipped] | None = None
    note: str | None = None
    restore: list[str] = field(default_factory=list)  # routines made again ("function q_pop")
    upgrade: list[str] = field(default_factory=list)  # routines replaced by today's template's

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ids(rows: list[dict[str, Any]]) -> list[int]:
    return sorted(int(r["id"]) for r in rows if r.get("id") is not None)


def _ring_fixes(engine: Engine, spec: QueueSpec) -> bool:
    """Whether the queue is a ring whose engine can leave holes (one that moves both
    sequences in one transaction never has any)."""
    return spec.info.ring and engine.hooks.template(spec).has("repair_park")


def _routines(engine: Engine, spec: QueueSpec) -> tuple[list[tuple[str, str]], str | None]:
    """(object, statement) for each of the queue's routines the schema no longer holds, from
    one catalog read; and why none can be named when this role cannot tell (MySQL, SQL Server
    list only those a role may run), said rather than an empty list that reads as "nothing
    missing"."""
    gone = catalog.missing_objects(engine, spec)
    lost = [f"{kind} {name}" for kind, name in gone.objects if kind not in catalog.ROUTINE_TYPES]
    if lost:
        # a table (or sequence) went with what it held: nothing repair can make again, and
        # every part that reads it would fail on it
        raise NotFound(
            f"repair: {', '.join(lost)} of queue {spec.name} "
            f"{'is' if len(lost) == 1 else 'are'} missing (dropped by hand?): repair makes only "
            f"routines again; restore it from a backup, else qadmin drop {spec.name} --dry-run, "
            f"qadmin drop {spec.name} --yes and create the queue again (its messages are lost)"
        )
    unseen = None
    if gone.unseen:
        unseen = (
            f"the routines of {spec.name} are not all listed for this role (no EXECUTE on the "
            "database): whether one is missing was not checked; run repair as a role that may "
            "see and create them"
        )
    made = catalog.planned(engine, spec, engine.hooks.section(spec, "create"))
    wanted = set(gone.routines)
    return [(f"{o[0]} {o[1]}", st) for st, o in made if o is not None and o in wanted], unseen


Step = tuple[catalog.Obj, str]


def _upgrades(engine: Engine, spec: QueueSpec, restore: list[str]) -> tuple[list[Step], str | None]:
    """(routine, statement) replacing each routine of an outdated queue that is not missing
    (one missing is made from today's template anyway); none, and why, when today's template
    needs a table or sequence the queue does not have (one an older qadmin did not make: its
    routines would fail on every call)."""
    if not catalog.outdated(engine, spec):
        return [], None
    made = catalog.planned(engine, spec, engine.hooks.section(spec, "create"))
    have = set(catalog.owned(engine, spec))
    lacking = [
        o for _, o in made if o is not None and o[0] not in catalog.ROUTINE_TYPES and o not in have
    ]
    if lacking:
        return [], (
            f"the routines of {spec.name} were not replaced: today's template's need "
            f"{', '.join(f'{kind} {name}' for kind, name in lacking)}, which an older qadmin "
            f"did not make for it; drain it and create it again to have them"
        )
    gone = {name.split(" ", 1)[1] for name in restore}
    return [(o, st) for o, st in catalog.replacements(engine, spec) if o[1] not in gone], None


def _names(steps: list[Step]) -> list[str]:
    return list(dict.fromkeys(obj[1] for obj, _ in steps))


def _upgrade(engine: Engine, spec: QueueSpec, steps: list[Step]) -> None:
    """Replace the routines, record any the queue lacked (its drop removes them) and the
    revision, all or nothing; the entry's row locked first, so a pause or another repair
    meanwhile is neither lost nor raced."""
    changes = {PAUSABLE: True, REVISION: ROUTINES_REVISION}
    with engine.transaction() as execute:
        catalog.merge_options(engine, spec, changes, execute)
        for obj, statement in steps:
            catalog.own(engine, spec, obj, execute)
            execute(statement)


def _joined(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _hole(engine: Engine, spec: QueueSpec, older_than_s: int) -> tuple[int | None, str | None]:
    """The missing number repair would skip, or why one seen is left alone: a hole younger
    than --older-than may be a push still in flight (said, not silently passed over)."""
    measured = ring.measure(engine, spec)
    state = measured.state if measured is not None else ring.RingState()
    waited = state.waiting_behind_age_s
    if state.missing_id is None:
        return None, None
    if waited is not None and waited >= older_than_s:
        return int(state.missing_id), None
    behind = (
        "nothing waits behind it yet"
        if waited is None
        else f"the messages behind it have waited {waited:g} s"
    )
    return None, (
        f"number {int(state.missing_id)} is missing but {behind}, less than --older-than "
        f"{older_than_s} s: it may be a push in flight, so it is left alone (run again later, "
        "or with a smaller --older-than)"
    )


def _missing(engine: Engine, spec: QueueSpec, older_than_s: int) -> int | None:
    return _hole(engine, spec, older_than_s)[0]


def plan(engine: Engine, spec: QueueSpec, older_than_s: int) -> RingRepair:
    """What repair would do now (read-only)."""
    missing_routines, unseen = _routines(engine, spec)
    restore = [name for name, _ in missing_routines]
    steps, kept = _upgrades(engine, spec, restore)
    upgrade = _names(steps)
    if not _ring_fixes(engine, spec):
        note = (
            None
            if not spec.info.ring
            else (f"{engine.label} rings move both sequences in one transaction: no holes")
        )
        notes = _joined(note, unseen, kept)
        return RingRepair(spec.name, note=notes, restore=restore, upgrade=upgrade)
    park = _ids(engine.run(engine.hooks.section(spec, "repair_orphans"), write=False))
    void = _ids(
        engine.run(
            engine.hooks.section(spec, "repair_stale"), {"older_s": older_than_s}, write=False
        )
    )
    missing, note = _hole(engine, spec, older_than_s)
    notes = _joined(note, unseen, kept)
    return RingRepair(spec.name, park, void, missing, notes, restore, upgrade)


def repair(engine: Engine, spec: QueueSpec, older_than_s: int) -> RingRepair:
    """Make the missing routines again and replace outdated ones, then (a ring) apply the
    three fixes; each runs in its own short transaction."""
    restored = []
    missing_routines, unseen = _routines(engine, spec)
    for name, statement in missing_routines:
        try:
            engine.run([statement])
        except QadminError:
            # another repair made it meanwhile (MariaDB: "already exists"): done, not failed
            if name in [n for n, _ in _routines(engine, spec)[0]]:
                raise
            continue
        restored.append(name)
    steps, kept = _upgrades(engine, spec, restored)
    if steps:
        _upgrade(engine, spec, steps)
    upgraded = _names(steps)
    if not _ring_fixes(engine, spec):
        after = plan(engine, catalog.get(engine, spec.name), older_than_s)
        return dataclasses.replace(after, restore=restored, upgrade=upgraded)
    parked = _ids(engine.run(engine.hooks.section(spec, "repair_park")))
    voided = _ids(engine.run(engine.hooks.section(spec, "repair_void"), {"older_s": older_than_s}))
    skipped: list[Skipped] = []
    for _ in range(int(spec.capacity or 1)):
        if _missing(engine, spec, older_than_s) is None:
            break
        row = engine.run(engine.hooks.section(spec, "repair_skip"))[-1]
        skipped.append(Skipped(int(row["id"]), str(row["action"])))
    note = _joined(_hole(engine, spec, older_than_s)[1], unseen, kept)
    return RingRepair(spec.name, parked, voided, skipped, note, restored, upgraded)
