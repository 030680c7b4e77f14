"""The files export writes and load reads: Parquet, JSON lines and (load only) CSV.

One record per message, in queue order. Columns (stable; ``EXPORT_SCHEMA_VERSION`` in the
Parquet metadata): ``id``, ``enqueued_at`` (UTC), ``payload`` (bytes), and by kind ``due_at``
(pending), ``state``/``attempts``/``last_error`` (claim). JSON lines and CSV carry the payload
as ``payload_base64`` so every byte survives; load also takes a text ``payload`` column (UTF-8).
A file is written under a hidden name and renamed into place, so a killed run leaves no file.
"""

from __future__ import annotations

import base64
import csv
import json
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qadmin import extras
from qadmin.errors import NotFound, UsageError
from qadmin.kinds import KindSpec

EXPORT_SCHEMA_VERSION = 1
FORMATS = ("parquet", "jsonl", "csv")
TMP_PREFIX = ".qadmin-tmp-"
# What export writes of a message's claim, on kinds with claims.
CLAIM_COLUMNS = ("state", "attempts", "last_error")
TIME_COLUMNS = ("enqueued_at", "due_at")


def columns(info: KindSpec) -> tuple[str, ...]:
    """The columns export writes for a kind, in order: a due time where messages carry one,
    the claim state where they are claimed."""
    due = ("due_at",) if info.due else ()
    claim = CLAIM_COLUMNS if info.claims else ()
    return ("id", "enqueued_at", *due, *claim, "payload")


def pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet  # Writer and readers use the submodule
    except ImportError:
        raise extras.missing("pyarrow", "Parquet") from None
    return pa


def require_folder(folder: Path) -> None:
    """The folder a file goes in exists: a typo in --to must not leave a chain of new folders
    behind (as for a SQLite DSN, qadmin makes files, not the folders above them)."""
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(
            f"folder {folder} {what} (qadmin makes the file, not the folders above it)"
        )


def require_writable(folder: Path) -> None:
    """The folder exists and this process can create entries in it, found out by creating
    (and removing) a hidden one: permissions, a read-only mount and root's exemptions all
    answer truly. Checked before Spark starts, which would fail only after its start-up."""
    require_folder(folder)
    probe = folder / f"{TMP_PREFIX}probe-{uuid.uuid4().hex}"
    try:
        probe.mkdir()
    except OSError as exc:
        raise UsageError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    probe.rmdir()


def format_of(path: Path, given: str | None) -> str:
    """The file format: as given, else from the name's suffix."""
    if given:
        return given
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("parquet", "pq"):
        return "parquet"
    if suffix in ("jsonl", "ndjson", "json"):
        return "jsonl"
    if suffix == "csv":
        return "csv"
    if path.is_dir() or not suffix:
        return "parquet"
    raise UsageError(f"cannot tell the format of {path.name}: name it .parquet/.jsonl/.csv or --as")


def as_utc(value: Any) -> datetime | None:
    """A time as the drivers return it (aware, naive UTC, or SQLite's text) made aware UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    moment: datetime = value
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def arrow_schema(columns: Sequence[str], queue: str, kind: str) -> Any:
    pa = pyarrow()
    types = {
        "id": pa.int64(),
        "enqueued_at": pa.timestamp("us", "UTC"),
        "due_at": pa.timestamp("us", "UTC"),
        "payload": pa.binary(),
        "state": pa.string(),
        "attempts": pa.int32(),
        "last_error": pa.string(),
    }
    return pa.schema([pa.field(c, types[c]) for c in columns], metadata=metadata(queue, kind))


def metadata(queue: str, kind: str) -> dict[str, str]:
    """The key-value metadata of every exported Parquet file, whichever path wrote it."""
    return {
        "qadmin_export_schema": str(EXPORT_SCHEMA_VERSION),
        "qadmin_queue": queue,
        "qadmin_kind": kind,
    }


def stamp(folder: Path, queue: str, kind: str) -> None:
    """Add the export metadata to each part file Spark wrote in ``folder``, one row group at a
    time (memory stays one row group); Spark's checksum files of the parts go with them."""
    pyarrow()
    import pyarrow.parquet as pq

    extra = {k.encode(): v.encode() for k, v in metadata(queue, kind).items()}
    for file in parquet_files(folder):
        source = pq.ParquetFile(file)
        schema = source.schema_arrow
        schema = schema.with_metadata({**(schema.metadata or {}), **extra})
        tmp = file.with_name(f"{TMP_PREFIX}{file.name}")
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for group in range(source.num_row_groups):
                writer.write_table(source.read_row_group(group))
        source.close()
        os.replace(tmp, file)
        file.with_name(f".{file.name}.crc").unlink(missing_ok=True)


class Writer:
    """Writes records page by page to a hidden file; ``commit`` renames it into place."""

    def __init__(self, path: Path, fmt: str, columns: Sequence[str], queue: str, kind: str):
        if fmt not in ("parquet", "jsonl"):
            raise UsageError("export writes parquet or jsonl")
        self.path = path
        self.fmt = fmt
        self.columns = tuple(columns)
        require_folder(path.parent)
        self.tmp = path.parent / f"{TMP_PREFIX}{uuid.uuid4().hex}{path.suffix}"
        try:
            self._fh = open(self.tmp, "wb")  # noqa: SIM115 - closed in commit/abort
        except OSError as exc:  # the user's folder, not the hidden name, is what to fix
            raise UsageError(f"cannot write in {path.parent}: {exc.strerror}") from None
        self._parquet: Any = None
        if fmt == "parquet":
            import pyarrow.parquet as pq

            self.schema = arrow_schema(self.columns, queue, kind)
            self._parquet = pq.ParquetWriter(self._fh, self.schema, compression="zstd")

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        if not records:
            return
        rows = [_normalise(r) for r in records]
        if self._parquet is not None:
            pa = pyarrow()
            self._parquet.write_table(pa.Table.from_pylist(rows, schema=self.schema))
            return
        for row in rows:
            self._fh.write(json.dumps(_jsonable(row, self.columns)).encode() + b"\n")

    def commit(self) -> Path:
        if self._parquet is not None:
            self._parquet.close()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self.tmp, self.path)
        _fsync_dir(self.path.parent)
        return self.path

    def abort(self) -> None:
        if self._parquet is not None:
            with suppress(Exception):  # the file is being thrown away
                self._parquet.close()
        self._fh.close()
        self.tmp.unlink(missing_ok=True)


def _normalise(record: dict[str, Any]) -> dict[str, Any]:
    row = dict(record)
    for column in TIME_COLUMNS:
        if column in row:
            row[column] = as_utc(row[column])
    if "payload" in row and not isinstance(row["payload"], bytes):
        row["payload"] = bytes(row["payload"])
    return row


def _jsonable(row: dict[str, Any], columns: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column in columns:
        value = row.get(column)
        if column == "payload":
            out["payload_base64"] = base64.b64encode(value or b"").decode("ascii")
        elif isinstance(value, datetime):
            out[column] = value.isoformat().replace("+00:00", "Z")
        else:
            out[column] = value
    return out


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- reading ---------------------------------------------------------------------------------


def parquet_files(path: Path) -> list[Path]:
    """A file, or a folder of part files (Spark's output) in name order, hidden files skipped."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*.parquet") if not p.name.startswith((".", "_")))
    return [path]


def check_source(path: Path, fmt: str) -> None:
    """A load's input is there and is what its name says: a folder with Parquet parts in it,
    a Parquet file that starts with Parquet's magic bytes (a name with no suffix is read as
    Parquet, so /etc/passwd must not reach pyarrow's own error)."""
    if path.is_dir():
        if fmt != "parquet" or not parquet_files(path):
            raise NotFound(f"no input files found in {path} (load reads *.parquet parts there)")
        return
    if fmt == "parquet":
        with open(path, "rb") as fh:
            if fh.read(4) != b"PAR1":
                raise UsageError(
                    f"{path} is not a Parquet file: name it .jsonl or .csv, or give --as"
                )


def parquet_rows(path: Path) -> int:
    """Rows in a Parquet file or folder, from the footers (nothing else is read)."""
    pyarrow()
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in parquet_files(path))


def read(path: Path, fmt: str, key: str | None, batch_rows: int) -> Iterator[list[dict[str, Any]]]:
    """Records in file order as ``{"payload", "due_at", "load_key", "enqueued_at"}``, in
    batches (``enqueued_at``: the input's, an export's, kept by load; None when absent)."""
    if not path.exists():
        raise UsageError(f"{path} does not exist")
    if fmt == "parquet":
        yield from _read_parquet(path, key, batch_rows)
    elif fmt == "jsonl":
        yield from _batched(_read_jsonl(path), batch_rows, key)
    elif fmt == "csv":
        yield from _batched(_read_csv(path), batch_rows, key)
    else:
        raise UsageError(f"load reads {', '.join(FORMATS)}, not {fmt}")


def _read_parquet(path: Path, key: str | None, batch_rows: int) -> Iterator[list[dict[str, Any]]]:
    pyarrow()
    import pyarrow.parquet as pq

    for file in parquet_files(path):
        reader = pq.ParquetFile(file)
        names = set(reader.schema_arrow.names)
        wanted = [c for c in ("payload", "payload_base64", "due_at", "enqueued_at") if c in names]
        if key:
            if key not in names:
                raise UsageError(f"{file.name} has no column {key!r} for --key")
            wanted.append(key)
        line = 0
        for batch in reader.iter_batches(batch_size=batch_rows, columns=sorted(set(wanted))):
            records = batch.to_pylist()
            out = []
            for record in records:
                line += 1
                out.append(_record(record, key, f"{file.name} row {line}"))
            yield out


def _read_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path.name} line {number}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise UsageError(f"{path.name} line {number}: not a JSON object")
            yield f"{path.name} line {number}", record


def _read_csv(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(path, encoding="utf-8", newline="") as fh:
        for number, record in enumerate(csv.DictReader(fh), 2):
            cleaned = {k: (v if v != "" else None) for k, v in record.items()}
            yield f"{path.name} line {number}", cleaned


def _batched(
    records: Iterator[tuple[str, dict[str, Any]]], batch_rows: int, key: str | None
) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for where, record in records:
        batch.append(_record(record, key, where))
        if len(batch) >= batch_rows:
            yield batch
            batch = []
    if batch:
        yield batch


def _record(record: dict[str, Any], key: str | None, where: str) -> dict[str, Any]:
    if record.get("payload_base64") is not None:
        try:
            payload = base64.b64decode(record["payload_base64"], validate=True)
        except ValueError:
            raise UsageError(f"{where}: payload_base64 is not base64") from None
    elif isinstance(record.get("payload"), bytes):
        payload = record["payload"]
    elif isinstance(record.get("payload"), str):
        payload = record["payload"].encode("utf-8")
    else:
        raise UsageError(f"{where}: no payload (a payload or payload_base64 column)")
    load_key = None
    if key:
        if record.get(key) is None:
            raise UsageError(f"{where}: no value in the --key column {key!r}")
        load_key = str(record[key])
        if len(load_key) > 255:
            raise UsageError(f"{where}: the --key value is longer than 255 characters")
    times = {}
    for column in ("due_at", "enqueued_at"):
        value = record.get(column)
        try:
            times[column] = as_utc(value) if value is not None else None
        except (TypeError, ValueError):
            raise UsageError(f"{where}: {column} {value!r} is not an ISO time") from None
    return {
        "payload": payload,
        "due_at": times["due_at"],
        "load_key": load_key,
        "enqueued_at": times["enqueued_at"],
    }
