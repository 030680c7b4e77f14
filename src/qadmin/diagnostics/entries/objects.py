"""A queue missing some of its objects: a drop that stopped half-way (on an engine without
transactional DDL, MariaDB/MySQL, a drop goes one object at a time, its catalog entry marked
``dropping`` first and removed last; one stopped between leaves a queue whose push fails while
its table and catalog entry remain), or a routine or table dropped by hand, after which every
producer or consumer call fails while the rest looks well. The objects qadmin recorded as the
queue's are looked up in the schema by exact name: two catalog reads, no read of the queue
table. Also here, from the catalog entry alone: routines made from a template older than the
engine's latest change to them (``routines_outdated``), which repair replaces."""

from __future__ import annotations

from dataclasses import dataclass, field

from qadmin import catalog
from qadmin.diagnostics.model import CRITICAL, WARNING, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import Diagnostic, Field
from qadmin.kinds import REVISIONS


@dataclass
class Objects(Result):
    dropping: bool
    missing: list[str] = field(default_factory=list)  # "function q_pop", gone from the schema
    notes: list[str] = field(default_factory=list)
    routines: list[str] = field(default_factory=list)  # those of missing that repair makes
    outdated_from: int | None = None  # the template revision of routines repair would replace
    outdated_since: int | None = None  # the revision that changed this engine's routines last


def collect(ctx: Context) -> Objects | None:
    spec = ctx.spec
    if spec is None:
        return None
    if spec.state == catalog.DROPPING:
        return Objects(True)
    if spec.state != catalog.READY:
        return None
    gone = catalog.missing_objects(ctx.engine, spec)
    notes = []
    if gone.unseen:
        notes.append(
            f"the routines of {spec.name} are not listed for this role (the server lists only "
            "those a role may run: EXECUTE on them shows them); whether they exist was not "
            "checked"
        )
    missing = [f"{kind} {name}" for kind, name in gone.objects]
    outdated = spec.revision if catalog.outdated(ctx.engine, spec) else None
    if not (missing or notes or outdated is not None):
        return None  # whole and current: a healthy report stays short
    routines = [f"{kind} {name}" for kind, name in gone.routines]
    since = ctx.engine.hooks.routines_revised if outdated is not None else None
    return Objects(False, missing, notes, routines, outdated, since)


def _outdated(report: InspectReport, part: Objects) -> list[Finding]:
    if part.outdated_from is None or part.outdated_since is None:
        return []
    repair = report.command("repair")
    return [
        Finding(
            WARNING,
            "routines_outdated",
            f"the routines of {report.queue} come from an older qadmin's template (revision "
            f"{part.outdated_from}, changed in {part.outdated_since}): "
            f"{REVISIONS[part.outdated_since]}",
            f"{repair} --dry-run lists the routines it would replace, then {repair} --yes "
            "(one transaction; callers never find them missing)",
        )
    ]


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None:
        return []
    if not (part.dropping or part.missing):
        return _outdated(report, part)
    drop = report.command("drop")
    if part.dropping:
        return [
            Finding(
                CRITICAL,
                "objects_missing",
                f"a drop of {report.queue} stopped half-way: some of its objects (its routines "
                "first) may be gone while its table and catalog entry remain, so its "
                "applications' calls fail",
                f"{drop} --dry-run lists what a drop would finish, then {drop} --yes to finish it",
            )
        ]
    repair = report.command("repair")
    fix = f"{repair} --dry-run lists the routines it would make again, then {repair} --yes"
    if len(part.routines) < len(part.missing):
        # a table (or sequence) is gone with what it held: nothing qadmin can make again
        fix = (
            f"restore what is missing from a backup; else {drop} --dry-run lists what a drop "
            f"removes, then {drop} --yes and create the queue again (its messages are lost)"
        )
    return [
        Finding(
            CRITICAL,
            "objects_missing",
            f"{', '.join(part.missing)} of queue {report.queue} "
            f"{'is' if len(part.missing) == 1 else 'are'} missing from the schema (dropped by "
            "hand?): its applications' calls to it fail",
            fix,
        ),
        *_outdated(report, part),
    ]


ENTRY: Diagnostic[Objects] = Diagnostic(
    name="objects",
    order=27,
    sql=(),
    collect=collect,
    rule=rule,
    lock_free=True,
    queue_only=True,
    fields=(
        Field(
            "dropping",
            "",
            "1 while a drop of the queue has stopped half-way (objects_missing: its catalog "
            "entry still says dropping); empty while it is whole",
            "int32",
            lambda r: 1 if (p := r.part(ENTRY)) is not None and p.dropping else None,
        ),
    ),
)
