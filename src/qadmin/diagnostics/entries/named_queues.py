"""Named queues: one line per queue of a table that holds several (a job-queue library's
shared table: procrastinate's queue_name, Oban's queue, River's queue, pg-boss's name).

A DBA asks about the ``orders`` queue, not the table: each line is that queue read through
the same profile, filtered to its name (``--queue NAME`` reads one of them alone, with every
other command). The names come from a bounded read through an index leading with the queue
column, or on a small table; else from the planner's statistics (said so), else not at all
(a note names the index). Each queue's figures keep the profile's cost rules.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from qadmin.diagnostics.entries import claims, size
from qadmin.diagnostics.model import Context, Result
from qadmin.diagnostics.registry import Diagnostic, Section
from qadmin.profiles import query, queue_names


@dataclass
class NamedQueue:
    """One named queue's line: waiting-and-due depth, the not-due ones apart, claims, failures
    and the oldest due waiting job. ``*_exact`` False: an estimate or a floor (notes say)."""

    queue: str | None
    depth: int | None
    depth_exact: bool
    scheduled: int | None
    retrying: int | None
    running: int | None
    stale: int | None
    failed: int | None
    oldest_age_s: float | None
    oldest_at_least: bool = False
    exact: bool = True  # every count above was counted, none estimated


@dataclass
class NamedQueues(Result):
    column: str
    queues: list[NamedQueue] = field(default_factory=list)
    names_source: str | None = None  # None: every name, read exactly
    notes: list[str] = field(default_factory=list)


def one(ctx: Context, name: str | None, label: str | None = None) -> tuple[NamedQueue, list[str]]:
    """The named queue ``name`` of ctx's table (None: the rows that name no queue), and its
    notes; ``label``: its name where the table keeps keys (kombu's queue_id), shown."""
    assert ctx.reader is not None
    parent = ctx.reader
    profile = dataclasses.replace(
        parent.profile, queue=name, queue_label=label, queue_null=name is None
    )
    reader = query.Reader(ctx.engine, profile, parent.shape)
    reader.adopt(parent)
    sub = dataclasses.replace(ctx, profile=reader.profile, reader=reader)
    sized = size.profiled(sub)
    claimed = claims.measure_profile(sub)

    def rows(count: query.Count | None) -> int | None:
        return None if count is None else count.rows

    counts = [sized.scheduled, sized.retrying]
    exact = sized.depth_exact and all(c is None or c.exact for c in counts)
    stale = None if claimed.claimed is None or claimed.undated else len(claimed.stale)
    line = NamedQueue(
        queue=profile.queue_shown,  # null: the rows that name no queue (--queue-null)
        depth=sized.depth,
        depth_exact=sized.depth_exact,
        scheduled=rows(sized.scheduled),
        retrying=rows(sized.retrying),
        running=sized.claimed,
        stale=stale,
        failed=sized.failed,
        oldest_age_s=sized.oldest_age_s,
        oldest_at_least=sized.oldest_at_least,
        exact=exact,
    )
    return line, [*sized.notes, *claimed.notes]


def collect(ctx: Context) -> NamedQueues | None:
    reader = ctx.reader
    profile = reader.profile if reader is not None else None
    if reader is None or profile is None or profile.queue_column is None:
        return None
    if profile.queue is not None or profile.queue_null:
        return None
    names, source = reader.queue_names()
    notes = [source] if source else []
    part = NamedQueues(profile.queue_column, names_source=source, notes=notes)
    unnamed: list[str | None] = [None] if reader.holds_unnamed() else []
    labels = queue_names.labels(ctx.engine, profile, reader.shape.schema)
    for name in [*names, *unnamed]:
        line, more = one(ctx, name, labels.get(name) if name is not None else None)
        part.queues.append(line)
        part.notes += [n for n in more if n not in part.notes]
    return part


ENTRY: Diagnostic[NamedQueues] = Diagnostic(
    name="named_queues",
    order=12,
    sql=(),  # its reads are the profile's (sql/queues/<dialect>/profile.sql: queue_names)
    collect=collect,
    sections=(
        Section(
            "named queues",
            "named_queues.queues",
            (
                "queue",
                "depth",
                "scheduled",
                "retrying",
                "running",
                "stale",
                "failed",
                "oldest_age_s",
            ),
        ),
    ),
)
