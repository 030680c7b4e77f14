"""tail and collect against real workloads: rates, lock waits, signals, the Parquet history."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from qadmin.cli.tail import COLUMNS
from qadmin.engines import Timeouts, open_engine
from qadmin.errors import QueueEmpty
from qadmin.ops import messages, queues
from tests.conftest import make_target
from tests.engines.holding import finish, hold_pop
from tests.engines.sockets import client_ports
from tests.helpers import run_qadmin

TOLERANCE = 0.35  # rates averaged over the steady samples must be within 35 % of the truth


qadmin = partial(run_qadmin, text=True)


class Workload:
    """A producer at ``push_rate`` and a consumer at ``pop_rate`` messages per second."""

    def __init__(self, target, spec, push_rate: int, pop_rate: int) -> None:
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._run, args=(target, spec, "push", push_rate)),
            threading.Thread(target=self._run, args=(target, spec, "pop", pop_rate)),
        ]

    def _run(self, target, spec, what: str, rate: int) -> None:
        engine = target.engine()
        tick, per_tick = 0.1, rate // 10
        next_at = time.monotonic()
        while not self.stop.is_set():
            if what == "push":
                messages.push(engine, spec, [b"w"] * per_tick)
            else:
                with contextlib.suppress(QueueEmpty):
                    messages.pop(engine, spec, per_tick)
            next_at += tick
            time.sleep(max(0.0, next_at - time.monotonic()))
        engine.close()

    def __enter__(self) -> Workload:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_tail_json_lines_report_the_true_rates(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("rate_q", "fifo", None, False))
    with Workload(target, spec, push_rate=40, pop_rate=20):
        time.sleep(1.5)
        result = qadmin(
            "tail",
            "rate_q",
            "--interval",
            "1",
            "--count",
            "7",
            "--format",
            "json",
            *target.cli_args(),
        )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 7 and rows[0]["enqueue_per_s"] is None
    steady = rows[2:]
    enq = sum(r["enqueue_per_s"] for r in steady) / len(steady)
    deq = sum(r["dequeue_per_s"] for r in steady) / len(steady)
    assert abs(enq - 40) <= 40 * TOLERANCE, (enq, steady[0]["enqueue_source"])
    assert abs(deq - 20) <= 20 * TOLERANCE, (deq, steady[0]["dequeue_source"])
    actual = len(messages.peek(engine, spec, 10_000))
    assert abs(rows[-1]["depth"] - actual) <= 60, (rows[-1]["depth"], actual)
    assert 0 < rows[-1]["oldest_age_s"] < 30
    engine.close()


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_blocked_consumer_shows_as_lock_waits_within_two_samples(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("blocked_q", "fifo", None, True))
    messages.push(engine, spec, [b"a", b"b"])
    holder, _, _ = hold_pop(target, spec)
    waiter = open_engine(target.dsn, target.engine_schema, Timeouts(lock_ms=30_000))
    thread = threading.Thread(target=lambda: messages.pop(waiter, spec))
    thread.start()
    time.sleep(0.3)
    result = qadmin(
        "tail",
        "blocked_q",
        "--interval",
        "1",
        "--count",
        "2",
        "--format",
        "json",
        *target.cli_args(),
    )
    finish(holder, commit=True)
    thread.join(timeout=30)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert max(r["lock_waits"] for r in rows) >= 1, rows
    assert max(r["max_lock_wait_s"] for r in rows) > 0
    for eng in (holder, waiter, engine):
        eng.close()


def test_tail_stops_cleanly_on_sigint(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    qadmin("create", "q", "--kind", "fifo", "--dsn", db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "qadmin", "tail", "q", "--interval", "0.3", "--dsn", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = json.loads(proc.stdout.readline())
    assert first["queue"] == "q"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "Traceback" not in err


def _collect(db: str, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return qadmin("collect", "--all", "--to", str(path), "--dsn", db, "--format", "json", *extra)


def test_collect_writes_a_versioned_history_and_never_overwrites(tmp_path):
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from qadmin.ops.collect import arrow_schema

    db = f"sqlite:///{tmp_path / 'q.db'}"
    qadmin("create", "a_q", "--kind", "fifo", "--dsn", db)
    qadmin("create", "r_q", "--kind", "ring", "--capacity", "10", "--dsn", db)
    qadmin("push", "a_q", "x", "y", "--dsn", db)
    history = tmp_path / "history"
    first = _collect(db, history, "--resolution", "1")
    assert first.returncode == 0, first.stderr
    written = json.loads(first.stdout)[0]
    assert written["status"] == "written" and written["queues"] == 2
    before = Path(written["file"]).stat().st_mtime_ns
    again = json.loads(_collect(db, history, "--resolution", "86400").stdout)[0]
    assert again["status"] in ("written", "slot already collected")
    repeated = _collect(db, history, "--resolution", "86400")
    same_slot = json.loads(repeated.stdout)[0]
    assert same_slot["status"] == "slot already collected"
    assert repeated.returncode == 1 and "already collected" in repeated.stderr
    assert Path(written["file"]).stat().st_mtime_ns == before
    time.sleep(1.1)
    assert json.loads(_collect(db, history, "--resolution", "1").stdout)[0]["status"] == "written"
    files = sorted(history.rglob("*.parquet"))
    assert len(files) >= 3 and all(f.parent.name.startswith("date=") for f in files)
    table = pq.read_table(files[0])
    assert table.schema.equals(arrow_schema(), check_metadata=False)
    assert table.schema.metadata[b"qadmin_schema_version"] == b"5"
    rows = {r["queue"]: r for r in table.to_pylist()}
    assert rows["a_q"]["depth"] == 2 and rows["a_q"]["enqueued_total"] == 2
    assert rows["a_q"]["depth_quality"] == "exact"
    assert (
        rows["r_q"]["ring_fill"] == 0.0
        and rows["a_q"]["connection"] == f"sqlite {tmp_path / 'q.db'}"
    )
    assert str(table.schema.field("time").type) == "timestamp[us, tz=UTC]"
    whole = ds.dataset(history, format="parquet", partitioning="hive").to_table()
    assert whole.num_rows == 2 * len(files)


def test_collect_killed_mid_write_leaves_no_partial_file(tmp_path):
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    db = f"sqlite:///{tmp_path / 'q.db'}"
    qadmin("create", "a_q", "--kind", "fifo", "--dsn", db)
    history = tmp_path / "history"
    rng = random.Random(7)
    for _ in range(12):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "qadmin",
                "collect",
                "--all",
                "--to",
                str(history),
                "--dsn",
                db,
                "--resolution",
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.2, 0.9))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    for path in history.rglob("*.parquet"):
        if not path.name.startswith("."):
            assert pq.read_table(path).num_rows == 1
    if history.exists():
        ds.dataset(history, format="parquet", partitioning="hive").to_table()


def test_collect_samples_a_fleet_from_one_line(tmp_path, request):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("fleet_q", "claim", None, False))
    # the bloat estimate needs statistics: a never-analyzed table has none (null, not 0.0)
    engine.run([f"ANALYZE {engine.qualified('fleet_q')}"])
    engine.close()
    config = tmp_path / "c.toml"
    local = f"sqlite:///{tmp_path / 'local.db'}"
    qadmin("create", "local_q", "--kind", "heap", "--dsn", local)
    config.write_text(
        f'[connections.pg]\ndsn = "{target.dsn}"\nschema = "{target.schema}"\n'
        f'[connections.local]\ndsn = "{local}"\n'
        '[connections.down]\ndsn = "postgresql://nobody:pw-x@127.0.0.1:1/db"\n'
    )
    result = qadmin(
        "collect",
        "--all",
        "--to",
        str(tmp_path / "h"),
        "--all-connections",
        "--config",
        str(config),
        "--format",
        "json",
    )
    status = {r["connection"]: r["status"] for r in json.loads(result.stdout)}
    assert status == {"down": "failed", "local": "written", "pg": "written"}
    assert result.returncode == 1 and "pw-x" not in result.stderr
    import pyarrow.parquet as pq

    pg_file = next((tmp_path / "h").rglob("qadmin-pg-*.parquet"))
    row = pq.read_table(pg_file).to_pylist()[0]
    assert row["queue"] == "fleet_q" and row["claimed"] == 0
    assert row["index_bloat_pct"] is not None and row["server"].startswith("postgresql ")


def test_tail_reconnects_after_the_server_ends_its_session(request, tmp_path):
    import psycopg

    from tests.conftest import PG_ADMIN

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("kill_q", "fifo", None, False))
    engine.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qadmin",
            "tail",
            "kill_q",
            "--interval",
            "0.5",
            "--count",
            "5",
            "--format",
            "json",
            *target.cli_args(),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert json.loads(proc.stdout.readline())["queue"] == "kill_q"
    ports = sorted(client_ports(proc.pid))  # this tail's sessions only: the server is shared
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'qadmin' AND client_port = ANY(%s)",
            (ports,),
        ).fetchone()[0]
    assert killed >= 1
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "reconnecting" in err and "Traceback" not in err
    assert len(out.splitlines()) == 4, "the remaining samples arrive after the reconnect"


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_tail_count_ends_while_the_table_is_locked(label, request, tmp_path):
    """Each failed sample is printed as a row with an error and counts: --count 2 ends after
    two samples while another session holds the queue table locked; the exit code is the last
    sample's (8, lock timeout)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("locked_q", "fifo", None, False))
    messages.push(engine, spec, [b"a"])
    engine.close()
    holder = target.engine()
    cursor = holder.conn.cursor()
    table = holder.qualified(spec.name)
    if label == "postgresql":
        cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    else:
        cursor.execute(f"LOCK TABLES {table} WRITE")
    try:
        started = time.monotonic()
        result = qadmin(
            "tail",
            "locked_q",
            "--interval",
            "0.5",
            "--count",
            "2",
            "--format",
            "json",
            "--lock-timeout",
            "300",
            *target.cli_args(),
            timeout=60,
        )
        took = time.monotonic() - started
    finally:
        if label == "postgresql":
            holder.conn.rollback()
        else:
            cursor.execute("UNLOCK TABLES")
        holder.close()
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 8, result.stderr
    assert len(rows) == 2 and took < 30
    for row in rows:
        assert list(row) == COLUMNS and row["queue"] == "locked_q" and row["kind"] == "fifo"
        assert "lock" in row["error"] and row["depth"] is None
    after = qadmin("tail", "locked_q", "--count", "1", "--format", "json", *target.cli_args())
    assert after.returncode == 0 and json.loads(after.stdout)["error"] is None


def test_docs_list_the_tail_keys():
    doc = (Path(__file__).parents[2] / "docs" / "diagnostics.md").read_text()
    section = doc.split("## `tail`", 1)[1].split("\n## ", 1)[0]
    listed = section.split("with the keys `", 1)[1].split("`", 1)[0]
    keys = [k.strip() for k in " ".join(listed.split()).split(",")]
    assert [k for k in keys if k in COLUMNS] == COLUMNS  # every key, in order
