"""A qadmin queue's recorded objects, each still there: a drop that stopped half-way on an
engine without transactional DDL (MariaDB/MySQL: its routines gone, a lock timeout on the
table) leaves a queue whose push fails while its table and catalog entry remain. Read from
the catalog's record and the schema's object list: catalog queries only."""

from __future__ import annotations

from dataclasses import dataclass, field

from qadmin import catalog
from qadmin.diagnostics.model import CRITICAL, Context, Finding, InspectReport, Result
from qadmin.diagnostics.registry import Diagnostic

# Indexes are not in every engine's schema object list (MySQL names them per table).
UNLISTED = ("index",)


@dataclass
class Objects(Result):
    recorded: int = 0
    missing: list[str] = field(default_factory=list)  # "function q_push", ...


def collect(ctx: Context) -> Objects | None:
    spec = ctx.spec
    if spec is None or spec.state == catalog.CREATING:
        return None  # a create under way has not made them all yet
    owned = catalog.owned(ctx.engine, spec)
    present = set(catalog.schema_objects(ctx.engine, spec.name))
    missing = [f"{k} {n}" for k, n in owned if k not in UNLISTED and (k, n) not in present]
    # Nothing to show while whole: a healthy report stays one screen.
    return Objects(len(owned), missing) if missing else None


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None or not part.missing:
        return []
    drop = report.command("drop")
    return [
        Finding(
            CRITICAL,
            "objects_missing",
            f"{len(part.missing)} of the {part.recorded} objects recorded as {report.queue}'s "
            f"are gone ({', '.join(part.missing)}): a drop that stopped half-way? Its "
            "applications' calls fail",
            f"{drop} --dry-run lists what a drop would finish, {drop} --yes finishes it",
        )
    ]


ENTRY: Diagnostic[Objects] = Diagnostic(
    name="objects",
    order=27,
    sql=(),
    collect=collect,
    rule=rule,
    queue_only=True,
)
