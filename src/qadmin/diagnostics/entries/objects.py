"""A drop that stopped half-way: on an engine without transactional DDL (MariaDB/MySQL) a
drop goes one object at a time, its catalog entry marked ``dropping`` first and removed last;
one stopped between (a lock timeout on the table after its routines went) leaves a queue whose
push fails while its table and catalog entry remain. Read from the catalog entry inspect has
already read: no query of its own, whatever the role may see."""

from __future__ import annotations

from dataclasses import dataclass

from qadmin import catalog
from qadmin.diagnostics.model import CRITICAL, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import Diagnostic, Field


@dataclass
class Objects(Result):
    dropping: bool


def collect(ctx: Context) -> Objects | None:
    spec = ctx.spec
    if spec is None or spec.state != catalog.DROPPING:
        return None  # whole: nothing to show (a healthy report stays one screen)
    return Objects(True)


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None or not part.dropping:
        return []
    drop = report.command("drop")
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
