"""Pause: a queue stopped by ``qadmin pause`` takes no pops (pushes go on) until ``qadmin
resume``. Read from the catalog entry inspect has already read: no query of its own. A pause
is a warning by default (``--warn-paused-age``, default 0 s): a queue nobody pops is what a
forgotten pause looks like; ``--crit-paused-age 1h`` pages on one left behind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from qadmin.diagnostics.model import (
    CRITICAL,
    INFO,
    WARNING,
    Context,
    Finding,
    InspectReport,
    Result,
)
from qadmin.diagnostics.registry import Diagnostic, Field, Metric
from qadmin.values import to_utc


@dataclass
class Pause(Result):
    paused: bool
    paused_at: str | None
    paused_for_s: float | None
    # False: the queue's routines predate pause (qadmin pause upgrades its pop first).
    pausable: bool


def collect(ctx: Context) -> Pause | None:
    spec = ctx.spec
    if spec is None:
        return None
    since = spec.paused_at
    age = None
    if since is not None:
        when = to_utc(since)
        age = round(max((datetime.now(UTC) - when).total_seconds(), 0.0), 1) if when else None
    pausable = spec.pausable or not ctx.engine.hooks.has_routines
    return Pause(since is not None, since, age, pausable)


def _age(report: InspectReport) -> float | None:
    part = report.part(ENTRY)
    return None if part is None or not part.paused else part.paused_for_s


def rule(report: InspectReport) -> list[Finding]:
    part = report.part(ENTRY)
    if part is None or not part.paused:
        return []
    limit = report.limit("paused_age")
    age = part.paused_for_s or 0.0
    if limit.crit is not None and age >= limit.crit:
        severity = CRITICAL
    elif limit.warn is not None and age >= limit.warn:
        severity = WARNING
    else:
        severity = INFO
    queue = report.queue
    return [
        Finding(
            severity,
            "paused",
            f"{queue} is paused since {part.paused_at} ({age:g} s): pops take nothing "
            "(claim queues: nothing new is claimed; acks and fails work), pushes go on",
            f"qadmin resume {queue} --yes once its consumers are ready",
        )
    ]


ENTRY: Diagnostic[Pause] = Diagnostic(
    name="pause",
    order=26,
    sql=(),
    collect=collect,
    rule=rule,
    lock_free=True,
    queue_only=True,
    metrics=(
        Metric(
            "paused_age",
            "s",
            "how long the queue has been paused (qadmin pause); any pause warns by default",
            _age,
            warn=0,
            applies=lambda r: _age(r) is not None,
        ),
    ),
    fields=(
        Field(
            "paused_for_s",
            "s",
            "how long the queue has been paused (qadmin pause); empty while it serves",
            "float64",
            _age,
        ),
    ),
)
