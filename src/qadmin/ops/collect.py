"""Appending telemetry snapshots to a Parquet history, safely from cron.

Layout: ``PATH/date=YYYY-MM-DD/qadmin-<connection>-<slot>.parquet``, one file per connection
and sample slot (the sample time rounded down to ``resolution_s``), so a second run in the same
slot finds the file and writes nothing: one sample per slot, never two, never overwritten. A file
is written under a hidden temporary name in the same folder and renamed into place, so a run
killed mid-write leaves no partial ``.parquet`` file; Parquet readers (pyarrow, Spark) skip
hidden files, and the next run removes stale ones.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qadmin import extras
from qadmin.ops.telemetry import ARROW_TYPES, FIELDS, SCHEMA_VERSION

TMP_PREFIX = ".qadmin-tmp-"
STALE_TMP_S = 600


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise extras.missing("pyarrow", "collect (Parquet)") from None
    return pyarrow


def arrow_schema() -> Any:
    pa = _pyarrow()
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", "UTC"),
    }
    return pa.schema(
        [pa.field(name, types[ARROW_TYPES[name]]) for name, _, _ in FIELDS],
        metadata={"qadmin_schema_version": str(SCHEMA_VERSION)},
    )


def slot_of(moment: datetime, resolution_s: int) -> datetime:
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % resolution_s, UTC)


def target_path(root: Path, connection: str, slot: datetime) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", connection)
    return root / f"date={slot:%Y-%m-%d}" / f"qadmin-{safe}-{slot:%Y%m%dT%H%M%SZ}.parquet"


def write(
    root: Path, connection: str, slot: datetime, records: list[dict[str, Any]]
) -> Path | None:
    """Write one slot's records; None when that slot is already in the history."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    path = target_path(root, connection, slot)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(path.parent)
    if path.exists():
        return None
    table = pa.Table.from_pylist(records, schema=arrow_schema())
    tmp = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}.parquet"
    try:
        with open(tmp, "wb") as fh:
            pq.write_table(table, fh, coerce_timestamps="us")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def _remove_stale_tmp(folder: Path) -> None:
    cutoff = time.time() - STALE_TMP_S
    for leftover in folder.glob(f"{TMP_PREFIX}*"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except FileNotFoundError:
            continue
