"""export, archive and load on the Python path, against real SQLite, PostgreSQL and MariaDB
(and the MySQL 8 templates on MariaDB): byte-for-byte round trips in order, one snapshot per
export, archive and load killed part-way and run again."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from qadmin import catalog
from qadmin.errors import QadminError, QueueFull
from qadmin.ops import messages
from qadmin.pipeline import archive, export, formats, load
from tests.conftest import make_target
from tests.engines.test_payloads import PAYLOADS
from tests.helpers import drain, make_queue

LABELS = ["sqlite", "postgresql", "mariadb", "mysql8"]
KINDS = ["fifo", "lifo", "pending", "claim", "capped", "ring"]


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("label", LABELS)
def test_export_then_load_keeps_every_byte_in_order(label, kind, fmt, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    source = make_queue(engine, "src_q", kind, 64 if kind in ("ring", "capped") else None)
    sent = [*PAYLOADS, *[f"m{i}".encode() for i in range(20)]]
    messages.push(engine, source, sent)
    path = tmp_path / f"out.{fmt}"
    result = export.export(engine, source, path, fmt, export.Selection())
    assert result.rows == len(sent)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(formats.TMP_PREFIX)]
    copy = make_queue(engine, "dst_q", kind, 64 if kind in ("ring", "capped") else None)
    counts = load.load_python(engine, copy, path, fmt, None)
    assert counts == {"read": len(sent), "loaded": len(sent), "skipped": 0}
    received = [m.payload for m in drain(engine, copy, 50, ack=True)]
    expected = list(reversed(sent)) if kind == "lifo" else sent
    assert received == expected
    # export read the source; it did not consume it
    assert len(messages.peek(engine, source, count=100)) == len(sent)


@pytest.mark.parametrize("label", LABELS)
def test_pending_keeps_due_times_and_claim_exports_states(label, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    pending = make_queue(engine, "due_q", "pending")
    from datetime import UTC, datetime, timedelta

    later = datetime.now(UTC) + timedelta(hours=2)
    messages.push(engine, pending, [b"later"], due=later)
    export.export(engine, pending, tmp_path / "due.parquet", "parquet", export.Selection())
    copy = make_queue(engine, "due_copy", "pending")
    load.load_python(engine, copy, tmp_path / "due.parquet", "parquet", None)
    due = formats.as_utc(messages.peek(engine, copy)[0].due_at)
    assert abs((due - later).total_seconds()) < 0.01

    claim = make_queue(engine, "cl_q", "claim")
    messages.push(engine, claim, [b"a", b"b", b"c"])
    first = messages.pop(engine, claim)[0]
    second = messages.pop(engine, claim)[0]
    messages.fail(engine, claim, second.id, "boom")
    path = tmp_path / "claims.jsonl"
    export.export(engine, claim, path, "jsonl", export.Selection())
    import json

    states = {r["id"]: r["state"] for r in map(json.loads, path.read_text().splitlines())}
    assert states == {first.id: "claimed", second.id: "failed", first.id + 2: "ready"}
    only_failed = export.export(
        engine, claim, tmp_path / "f.jsonl", "jsonl", export.Selection(states=("failed",))
    )
    assert list(only_failed.ids) == [second.id]


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_export_is_one_snapshot_while_the_queue_moves(label, request, tmp_path, monkeypatch):
    """Pages are read in one snapshot: messages pushed and popped by others while the export
    runs change nothing in the file."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "live_q", "fifo")
    messages.push(engine, spec, [f"m{i}".encode() for i in range(50)])
    before = [m.id for m in messages.peek(engine, spec, count=100)]
    other = target.engine()
    monkeypatch.setattr(export, "PAGE_ROWS", 10)

    def meanwhile(done: int, total: int) -> None:
        messages.push(other, spec, [b"new"])
        messages.pop(other, spec, count=3)

    result = export.export(
        engine, spec, tmp_path / "snap.parquet", "parquet", export.Selection(), meanwhile
    )
    assert list(result.ids) == before
    assert archive.read_ids(tmp_path / "snap.parquet", "parquet") == before
    other.close()


def _archive_child(dsn, schema, folder, pause):
    """A child process that archives slowly enough to be killed in a chosen phase."""
    from qadmin.engines import open_engine

    archive.DELETE_BATCH = 10
    export.PAGE_ROWS = 50
    engine = open_engine(dsn, schema)
    spec = catalog.get(engine, "arch_q")

    def slow(done, total):
        time.sleep(pause)

    archive.archive(engine, spec, Path(folder), "parquet", export.Selection(older_than_s=0), slow)


def _kill_when(process, condition, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.is_alive(), "the archive finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.join()


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["exporting", "deleting"])
@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_archive_killed_then_rerun_loses_and_duplicates_nothing(label, phase, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "arch_q", "fifo")
    messages.push(engine, spec, [f"m{i}".encode() for i in range(600)])
    original = [m.id for m in messages.peek(engine, spec, count=1000)]
    folder = tmp_path / "archive"
    child = mp.get_context("fork").Process(
        target=_archive_child, args=(target.dsn, target.engine_schema, str(folder), 0.02)
    )
    child.start()
    if phase == "exporting":
        _kill_when(child, lambda: any(p.name.startswith(".qadmin-tmp") for p in _ls(folder)))
        assert archive.unfinished(folder, "arch_q") == []
    else:
        _kill_when(child, lambda: _depth(target) < len(original) - 50)
        assert len(archive.unfinished(folder, "arch_q")) == 1
    engine.close()
    engine = target.engine()
    result = archive.archive(engine, spec, folder, "parquet", export.Selection(older_than_s=0))
    archived = [
        i for p in sorted(folder.glob("arch_q-*.parquet")) for i in archive.read_ids(p, "parquet")
    ]
    assert sorted(archived) == original, "every message archived exactly once"
    assert messages.peek(engine, spec) == []
    assert archive.unfinished(folder, "arch_q") == []
    assert result["deleted"] + sum(r["deleted"] for r in result["resumed"]) <= len(original)


def _ls(folder: Path) -> list[Path]:
    return list(folder.iterdir()) if folder.is_dir() else []


def _depth(target) -> int:
    engine = target.engine()
    try:
        spec = catalog.get(engine, "arch_q")
        return len(messages.peek(engine, spec, count=1000))
    finally:
        engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_archive_leaves_a_message_claimed_since_the_export(label, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    spec = make_queue(engine, "cl_arch", "claim")
    messages.push(engine, spec, [b"a", b"b"])
    ids = [m.id for m in messages.peek(engine, spec)]
    claimed = messages.pop(engine, spec)[0]  # a worker takes it after the export ran
    assert archive.delete(engine, spec, ids, None) == 1
    remaining = messages.peek(engine, spec)
    assert [m.id for m in remaining] == [claimed.id]


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_load_with_a_key_is_idempotent_and_a_full_ring_stops(label, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    rows = "\n".join(f'{{"order": "o{i}", "payload": "p{i}"}}' for i in range(6))
    path = tmp_path / "in.jsonl"
    path.write_text(rows + "\n")
    fifo = make_queue(engine, "kq", "fifo")
    assert load.load_python(engine, fifo, path, "jsonl", "order")["loaded"] == 6
    assert load.load_python(engine, fifo, path, "jsonl", "order") == {
        "read": 6,
        "loaded": 0,
        "skipped": 6,
    }
    assert len(messages.peek(engine, fifo, count=20)) == 6
    assert not engine.table_exists("kq_stage")

    ring = make_queue(engine, "kr", "ring", 4)
    with pytest.raises(QueueFull, match="loaded 4"):
        load.load_python(engine, ring, path, "jsonl", "order")
    assert [m.payload for m in messages.pop(engine, ring, count=2)] == [b"p0", b"p1"]
    assert load.load_python(engine, ring, path, "jsonl", "order") == {
        "read": 6,
        "loaded": 2,
        "skipped": 4,
    }
    assert [m.payload for m in messages.pop(engine, ring, count=10)] == [
        b"p2",
        b"p3",
        b"p4",
        b"p5",
    ]


def _load_child(dsn, schema, path):
    from qadmin.engines import open_engine

    load.STAGE_BATCH = 20
    engine = open_engine(dsn, schema)
    spec = catalog.get(engine, "lq")

    def slow(done, total):
        time.sleep(0.05)

    load.load_python(engine, spec, Path(path), "csv", "ref", progress=slow)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_load_killed_while_staging_then_rerun_loads_each_row_once(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "lq", "fifo")
    path = tmp_path / "in.csv"
    path.write_text("ref,payload\n" + "".join(f"r{i},p{i}\n" for i in range(400)))
    child = mp.get_context("fork").Process(
        target=_load_child, args=(target.dsn, target.engine_schema, str(path))
    )
    child.start()
    _kill_when(child, lambda: _staged(target) >= 60)
    with pytest.raises(QadminError, match="--replace-stage"):
        load.load_python(engine, spec, path, "csv", "ref")
    assert messages.peek(engine, spec) == []
    result = load.load_python(engine, spec, path, "csv", "ref", replace_stage=True)
    assert result == {"read": 400, "loaded": 400, "skipped": 0}
    got = [m.payload for m in messages.pop(engine, spec, count=1000)]
    assert got == [f"p{i}".encode() for i in range(400)]


def _staged(target) -> int:
    engine = target.engine()
    try:
        if not engine.table_exists("lq_stage"):
            return 0
        table = engine.qualified("lq_stage")
        return int(engine.query(f"SELECT count(*) AS n FROM {table}")[0]["n"])
    finally:
        engine.close()


def test_archive_refuses_a_ring(tmp_path, request):
    engine = make_target("sqlite", request, tmp_path).engine()
    spec = make_queue(engine, "ar", "ring", 64)
    with pytest.raises(QadminError, match="reuses its slots"):
        archive.archive(engine, spec, tmp_path / "a", "parquet", export.Selection(older_than_s=0))


def _enqueued(path, fmt):
    import json

    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path, columns=["enqueued_at"]).column("enqueued_at").to_pylist()
    return [json.loads(line)["enqueued_at"] for line in path.read_text().splitlines()]


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "pending", "claim"])
@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_load_keeps_the_exported_enqueued_at(label, kind, fmt, request, tmp_path):
    """An archive restored, or a queue moved, keeps its messages' ages (oldest, --older-than)."""
    engine = make_target(label, request, tmp_path).engine()
    source = make_queue(engine, "old_q", kind, 64 if kind in ("ring", "capped") else None)
    messages.push(engine, source, [b"a", b"b", b"c"])
    time.sleep(0.05)  # the load's own time is later than every enqueue: a stamp would differ
    first = tmp_path / f"first.{fmt}"
    export.export(engine, source, first, fmt, export.Selection())
    copy = make_queue(engine, "new_q", kind, 64 if kind in ("ring", "capped") else None)
    load.load_python(engine, copy, first, fmt, None)
    again = tmp_path / f"again.{fmt}"
    export.export(engine, copy, again, fmt, export.Selection())
    assert _enqueued(again, fmt) == _enqueued(first, fmt)
