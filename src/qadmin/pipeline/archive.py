"""``archive``: export old messages, prove the file holds them, then delete exactly those.

Order of work, so that a run killed at any point loses and duplicates nothing:

1. Finish what an earlier run left: a complete archive file (complete because it appears only
   by an atomic rename) without its ``.done`` marker has its ids deleted, then gets the marker.
2. Export the selected messages to a new file (hidden until complete).
3. Read the file back: its ids must be exactly the ids exported.
4. Delete those ids in batches of short transactions (a delete of an id already gone is a
   no-op, so a re-run after a kill mid-batch is safe), then write the ``.done`` marker.

A claim-queue row claimed between the export and the delete is being worked on: it is not
deleted and is reported as ``kept``. A lock file stops two runs on one folder and queue.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qadmin.engines.base import Engine
from qadmin.errors import QadminError, UsageError
from qadmin.kinds import QueueSpec
from qadmin.pipeline import formats
from qadmin.pipeline.export import Progress, Selection, export

DELETE_BATCH = 500
DONE_SUFFIX = ".done"


def check(spec: QueueSpec) -> None:
    spec.require(
        "archivable",
        "archive",
        f"a {spec.kind} queue reuses its slots: export {spec.name}, then pop what was exported",
    )


def archive(
    engine: Engine,
    spec: QueueSpec,
    folder: Path,
    fmt: str,
    selection: Selection,
    progress: Progress = None,
) -> dict[str, Any]:
    check(spec)
    if not folder.is_dir():
        formats.require_folder(folder.parent)
        if folder.exists():
            raise UsageError(f"{folder} is a file; archive writes into a folder")
        folder.mkdir()
    with _locked(folder, spec.name):
        finished = [_finish(engine, spec, path) for path in unfinished(folder, spec.name)]
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        suffix = "parquet" if fmt == "parquet" else "jsonl"
        path = folder / f"{spec.name}-{stamp}.{suffix}"
        exported = export(engine, spec, path, fmt, selection, progress, keep_empty=False)
        result: dict[str, Any] = {
            "queue": spec.name,
            "file": None,
            "archived": 0,
            "deleted": 0,
            "kept": 0,
            "resumed": finished,
            "advice": None,
        }
        if any(f["deleted"] for f in finished):
            result["advice"] = reclaim_advice(engine, spec)
        if exported.path is None:
            return result
        written = read_ids(exported.path, fmt)
        if written != list(exported.ids):
            raise QadminError(
                f"{exported.path.name} does not hold the {exported.rows} messages exported "
                "(read back differs); nothing was deleted"
            )
        deleted = delete(engine, spec, written, progress)
        _mark_done(exported.path, len(written), deleted)
        result.update(
            file=str(exported.path),
            archived=len(written),
            deleted=deleted,
            kept=len(written) - deleted,
            first_id=exported.first_id,
            last_id=exported.last_id,
            advice=reclaim_advice(engine, spec) if deleted else result["advice"],
        )
        return result


def plan(engine: Engine, spec: QueueSpec, selection: Selection) -> dict[str, Any]:
    """What a run would archive now: the selected messages' count and id range (one read,
    exact when read; producers, consumers and workers may change it before the run)."""
    check(spec)
    selection.check(spec)
    statements = engine.hooks.kind_data_section(spec, "plan")
    row = engine.run(statements, selection.params(engine), write=False)[0]
    return {
        "messages": int(row["messages"] or 0),
        "first_id": None if row["first_id"] is None else int(row["first_id"]),
        "last_id": None if row["last_id"] is None else int(row["last_id"]),
    }


def reclaim_advice(engine: Engine, spec: QueueSpec) -> str:
    """What to do after the deletes: they leave dead rows (PostgreSQL) or free pages."""
    return engine.base_hooks.deleted_rows_advice(spec.name)


def unfinished(folder: Path, queue: str) -> list[Path]:
    """Archive files of this queue whose deletes may not have run to the end."""
    found = []
    for path in sorted(folder.glob(f"{queue}-*")):
        if path.name.endswith(DONE_SUFFIX) or path.name.startswith("."):
            continue
        if not path.with_name(path.name + DONE_SUFFIX).exists():
            found.append(path)
    return found


def _finish(engine: Engine, spec: QueueSpec, path: Path) -> dict[str, Any]:
    ids = read_ids(path, formats.format_of(path, None))
    deleted = delete(engine, spec, ids, None)
    _mark_done(path, len(ids), deleted)
    return {"file": str(path), "archived": len(ids), "deleted": deleted}


def read_ids(path: Path, fmt: str) -> list[int]:
    if fmt == "parquet":
        formats.pyarrow()
        import pyarrow.parquet as pq

        return [int(i) for i in pq.read_table(path, columns=["id"]).column("id").to_pylist()]
    with open(path, encoding="utf-8") as fh:
        return [int(json.loads(line)["id"]) for line in fh if line.strip()]


def delete(engine: Engine, spec: QueueSpec, ids: Sequence[int], progress: Progress) -> int:
    """Delete these ids (and only these) in short transactions; how many were deleted."""
    statements = engine.hooks.kind_data_section(spec, "archive")
    deleted = 0
    for start in range(0, len(ids), DELETE_BATCH):
        batch = [{"id": i} for i in ids[start : start + DELETE_BATCH]]
        for rows in engine.run_batch(statements, batch):
            deleted += sum(int(r["deleted"]) for r in rows if "deleted" in r)
        if progress:
            progress(start + len(batch), len(ids))
    return deleted


def _mark_done(path: Path, archived: int, deleted: int) -> None:
    marker = path.with_name(path.name + DONE_SUFFIX)
    tmp = path.with_name(f"{formats.TMP_PREFIX}{path.name}{DONE_SUFFIX}")
    tmp.write_text(json.dumps({"archived": archived, "deleted": deleted}) + "\n")
    os.replace(tmp, marker)


@contextmanager
def _locked(folder: Path, queue: str) -> Iterator[None]:
    lock_path = folder / f".qadmin-archive-{queue}.lock"
    with open(lock_path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise QadminError(
                f"another archive of {queue} into {folder} is running; try again later"
            ) from None
        yield
