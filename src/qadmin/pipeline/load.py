"""``load``: bulk enqueue from a file, in file order, through the queue kind's own semantics.

Row queues (heap, fifo, lifo, pending, claim): the input goes into a staging table
(``<queue>_stage``, by COPY / batched INSERT, or by Spark's parallel JDBC writers), then into
the queue with one ``INSERT ... SELECT`` per chunk, all chunks in one transaction: the load
lands whole or not at all, and ids follow file order. Rings and capped queues are filled
through their push routine (a ring's sequences, never raw slot writes), a batch per
transaction; a full ring stops the load and says how many went in.

``--key COLUMN`` makes a re-run safe: each loaded key is recorded in ``<queue>_loaded`` in the
same transaction as its message, and a key already there is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from qadmin import catalog
from qadmin.engines.base import Engine
from qadmin.errors import QadminError, QueueFull, UsageError
from qadmin.kinds import QueueSpec
from qadmin.pipeline import formats
from qadmin.pipeline.export import Progress

STAGE_BATCH = 10_000
MOVE_CHUNK = 50_000
PUSH_BATCH = 1_000
# What a loaded message's enqueued_at is, said in every result: the input's (an export's) is
# kept where the rows are staged; a ring or capped queue's push routine stamps its own.
ENQUEUED_AT_KEPT = "the input's, where it has one; else the load's time"
ENQUEUED_AT_NEW = "the load's time (the push routine stamps it): the input's is not kept"


def enqueued_at(spec: QueueSpec) -> str:
    return ENQUEUED_AT_NEW if spec.info.load_pushes else ENQUEUED_AT_KEPT


def prepare_stage(engine: Engine, spec: QueueSpec, replace: bool) -> None:
    """Create an empty staging table; one left by a killed run is dropped only when asked."""
    stage = spec.objects()["stage"]
    catalog.ensure(engine)
    if engine.table_exists(stage):
        _refuse_foreign(engine, spec, ("table", stage))
        if not replace:
            raise QadminError(
                f"staging table {stage} exists: a load into {spec.name} is running or one "
                "was killed; when none is running, re-run with --replace-stage"
            )
        engine.run(engine.hooks.data_section(spec, "stage_drop"))
    create_owned(engine, spec, "stage_create", "loaded_create")


def create_owned(engine: Engine, spec: QueueSpec, *sections: str) -> None:
    """Run data sections' CREATEs, each object recorded as the queue's before it is made, so
    that drop takes it with the queue; a table of that name that qadmin did not make for this
    queue is refused before anything is made, never reused (another queue's, or a user's)."""
    statements = [s for section in sections for s in engine.hooks.data_section(spec, section)]
    planned = catalog.planned(engine, spec, statements)
    mine = catalog.owned(engine, spec)
    for _, obj in planned:
        if obj is not None and obj not in mine:
            _refuse_foreign(engine, spec, obj)
    for statement, obj in planned:
        if obj is not None:
            catalog.own(engine, spec, obj)
        engine.run([statement])


def _refuse_foreign(engine: Engine, spec: QueueSpec, obj: tuple[str, str]) -> None:
    if obj in catalog.owned(engine, spec):
        return
    if any(name == obj[1] for _, name in catalog.schema_objects(engine, obj[1])):
        raise UsageError(
            f"{obj[1]} exists and is not queue {spec.name}'s (qadmin did not create it for "
            "this queue): load will not use it; rename or drop it"
        )


def stage_rows(
    engine: Engine, spec: QueueSpec, batches: Iterator[list[dict[str, Any]]], progress: Progress
) -> int:
    """The Python path's staging: the file's records, numbered in file order from 0."""
    statement = engine.hooks.data_section(spec, "stage_insert")[0]
    seq = 0
    for batch in batches:
        rows = []
        for record in batch:
            due = _due(spec, record)
            enqueued = record["enqueued_at"]
            rows.append(  # in stage_insert's column order (PostgreSQL's COPY takes it so)
                {
                    "seq": seq,
                    "payload": record["payload"],
                    "due_at": engine.adapt_time(due) if due is not None else None,
                    "load_key": record["load_key"],
                    "enqueued_at": engine.adapt_time(enqueued) if enqueued is not None else None,
                }
            )
            seq += 1
        with engine.transaction():
            engine.bulk_insert(statement, rows)
        if progress:
            progress(seq, 0)
    return seq


def _due(spec: QueueSpec, record: dict[str, Any]) -> Any:
    """A record's due time, refused on a kind whose messages have none (never dropped)."""
    due = record["due_at"]
    if due is not None:
        spec.require("due", "load", "the input has due_at values")
    return due


def move(engine: Engine, spec: QueueSpec, progress: Progress) -> dict[str, int]:
    """Staging table -> queue, in one transaction; then the staging table is dropped."""
    duplicate = engine.run(engine.hooks.data_section(spec, "stage_duplicate_key"), write=False)
    if duplicate:
        raise UsageError(f"--key value {duplicate[0]['load_key']!r} appears twice in the input")
    span = engine.run(engine.hooks.data_section(spec, "stage_range"), write=False)[0]
    staged = int(span["staged"] or 0)
    loaded = 0
    if staged:
        first, last = int(span["first_seq"]), int(span["last_seq"])
        statements = engine.hooks.kind_data_section(spec, "load")
        with engine.transaction() as execute:
            for low in range(first, last + 1, MOVE_CHUNK):
                params = {"from_seq": low, "to_seq": low + MOVE_CHUNK}
                for statement in statements:
                    for row in execute(statement, params):
                        loaded += int(row.get("loaded") or 0)
                if progress:
                    progress(min(low + MOVE_CHUNK, last + 1) - first, staged)
    return {"read": staged, "loaded": loaded, "skipped": staged - loaded}


def push_all(
    engine: Engine,
    spec: QueueSpec,
    batches: Iterator[list[dict[str, Any]]],
    keyed: bool,
    progress: Progress,
) -> dict[str, int]:
    """Rings and capped queues: each batch through the push routine in one transaction."""
    if keyed:
        catalog.ensure(engine)
        create_owned(engine, spec, "loaded_create")
    push = engine.hooks.section(spec, "push")
    seen = engine.hooks.data_section(spec, "key_seen") if keyed else []
    record_key = engine.hooks.data_section(spec, "key_record") if keyed else []
    read = loaded = skipped = 0
    for batch in batches:
        full = False
        with engine.transaction() as execute:
            for record in batch:
                _due(spec, record)
                key = {"load_key": record["load_key"]}
                if keyed and any(execute(s, key) for s in seen):
                    skipped += 1
                    read += 1
                    continue
                rows = [r for s in push for r in execute(s, {"payload": record["payload"]})]
                if not any(r.get("id") is not None for r in rows):
                    full = True
                    break
                for statement in record_key:
                    execute(statement, key)
                loaded += 1
                read += 1
        if progress:
            progress(read, 0)
        if full:
            raise QueueFull(
                f"ring {spec.name} is full (capacity {spec.capacity}): loaded {loaded}, "
                f"skipped {skipped}; the rest of the file was not loaded",
                [],
            )
    return {"read": read, "loaded": loaded, "skipped": skipped}


def load_python(
    engine: Engine,
    spec: QueueSpec,
    source: Path,
    fmt: str,
    key: str | None,
    *,
    replace_stage: bool = False,
    progress: Progress = None,
) -> dict[str, int]:
    if spec.info.load_pushes:
        batches = formats.read(source, fmt, key, PUSH_BATCH)
        return push_all(engine, spec, batches, key is not None, progress)
    batches = formats.read(source, fmt, key, STAGE_BATCH)
    prepare_stage(engine, spec, replace_stage)
    with dropping_stage(engine, spec):
        stage_rows(engine, spec, batches, progress)
        return move(engine, spec, progress)


@contextmanager
def dropping_stage(engine: Engine, spec: QueueSpec) -> Iterator[None]:
    """The staging table this run made goes when it ends, however it ends (a dead connection
    cannot drop it: the next run's --replace-stage does)."""
    try:
        yield
    finally:
        with suppress(QadminError):
            engine.run(engine.hooks.data_section(spec, "stage_drop"))
