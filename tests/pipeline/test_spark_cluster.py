"""The Spark paths on a real standalone cluster (a master and two one-core workers) and a
Spark Connect server, both from the pip-installed pyspark on 127.0.0.1 (one of each for the
module: ``cluster.Services``): export, load and report through the CLI, as a user runs them,
give what ``local[*]`` gives; a worker lost mid-job changes nothing; failures are one line.

Small data: the point is where the jobs run, not how fast (benchmarks/pipeline.py measures)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from qadmin.errors import EXIT_CONNECTION, EXIT_USAGE
from qadmin.ops import messages, queues
from qadmin.pipeline import export, formats, load, spark_jobs
from tests.conftest import make_target
from tests.engines.test_payloads import PAYLOADS
from tests.helpers import invoke, run_qadmin
from tests.pipeline import history
from tests.pipeline.cluster import FAST_JVM, Services, free_port, silent_port
from tests.pipeline.conftest import SPARK_ENV

# One worker runs these (pytest-xdist's loadgroup): one cluster at a time, and one local
# session for its baselines; tests/pipeline/test_spark.py's session is on another worker.
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("spark_cluster")]
LOCAL = spark_jobs.spark.Where("local[2]")
MESSAGES = 3000
HISTORY_MINUTES = 12 * 60  # the planted anomalies need half a day
# Executors sized to the one-core, 1 GiB workers; everything else as the user would run it.
CLUSTER_CONF = [
    "--spark-conf",
    "spark.executor.memory=512m",
    "--spark-conf",
    f"spark.executor.extraJavaOptions={FAST_JVM}",
]


@pytest.fixture(scope="module")
def services(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Services]:
    pytest.importorskip("pyspark", reason="pip install -e '.[test]' installs pyspark")
    started = Services(tmp_path_factory.mktemp("spark-cluster"))
    try:
        started.start_all()
        request.getfixturevalue("spark_session")  # the local baseline's JVM starts meanwhile
        started.wait_ready()
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def small_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history")
    history.write(root, history.planted(HISTORY_MINUTES), HISTORY_MINUTES)
    return root


def cli_env() -> dict[str, str]:
    return {**os.environ, **SPARK_ENV, "QADMIN_SPARK_DRIVER_MEMORY": "512m"}


# The CLI in its own process: a cluster's driver is a JVM of its own, as for a user.
qadmin = partial(
    run_qadmin, text=True, timeout=240, env={**SPARK_ENV, "QADMIN_SPARK_DRIVER_MEMORY": "512m"}
)


def where_args(services: Services, mode: str) -> list[str]:
    if mode == "cluster":
        return ["--master", services.master, *CLUSTER_CONF]
    return ["--remote", services.remote]


def table_digest(folder: Path) -> tuple[int, str]:
    """Rows and a checksum of every exported value, in id order (part boundaries differ)."""
    import pyarrow.parquet as pq

    table = pq.read_table(formats.parquet_files(folder)).sort_by("id")
    digest = hashlib.sha256()
    for row in table.to_pylist():
        digest.update(repr(sorted(row.items())).encode())
    return table.num_rows, digest.hexdigest()


def queue_digest(engine, spec) -> tuple[int, str]:
    got = messages.peek(engine, spec, count=MESSAGES + 100)
    digest = hashlib.sha256()
    for message in got:
        digest.update(repr((message.payload, message.due_at)).encode())
    return len(got), digest.hexdigest()


def pending_queue(engine, name: str):
    return queues.create(engine, queues.make_spec(name, "pending", None, False))


def source_queue(engine) -> tuple[Any, list[bytes]]:
    spec = pending_queue(engine, "src")
    sent = [*PAYLOADS, *[f"m{i}".encode() for i in range(MESSAGES - len(PAYLOADS))]]
    messages.push(engine, spec, sent)
    return spec, sent


def export_matches_local(services, mode, target, engine, spec, tmp_path) -> Path:
    """Export through the CLI on ``mode``: the same rows and values as local[2], the same
    metadata as the Python export, UTC microsecond times."""
    local = tmp_path / "local"
    spark_jobs.export(engine, spec, local, "parquet", export.Selection(), LOCAL, partitions=2)
    remote = tmp_path / mode
    out = qadmin(
        "export", "src", "--to", str(remote), "--engine", "spark", "--partitions", "2",
        "--format", "json", *where_args(services, mode), *target.cli_args(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rows"] == MESSAGES
    assert table_digest(remote) == table_digest(local)
    _same_parquet_contract(remote, "src", "pending")
    return remote


def local_load(engine, folder: Path):
    baseline = pending_queue(engine, "base")
    load.prepare_stage(engine, baseline, replace=False)
    with load.dropping_stage(engine, baseline):
        spark_jobs.stage(engine, baseline, folder, "parquet", "id", LOCAL)
        load.move(engine, baseline, None)
    return baseline


def test_connect_export_and_load_match_local(services, spark_session, request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec, sent = source_queue(engine)
    folder = export_matches_local(services, "connect", target, engine, spec, tmp_path)
    copy = pending_queue(engine, "dst")
    out = qadmin(
        "load", "dst", "--from", str(folder), "--engine", "spark", "--key", "id",
        "--format", "json", *where_args(services, "connect"), *target.cli_args(),
        "--spark-conf", "spark.driver.memory=512m",  # the server's own: it refuses
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (
        f"qadmin: warning: the Spark Connect server {services.remote} keeps "
        "spark.driver.memory=1g (refused 512m)"
    ) in out.stderr
    assert json.loads(out.stdout)["loaded"] == MESSAGES
    assert queue_digest(engine, copy) == queue_digest(engine, local_load(engine, folder))
    assert [m.payload for m in messages.peek(engine, copy, count=MESSAGES)] == sent


def _same_parquet_contract(folder: Path, queue: str, kind: str) -> None:
    """Every part carries the Python export's key-value metadata, and times are UTC
    microseconds (Parquet TIMESTAMP(isAdjustedToUTC=true, MICROS), not INT96)."""
    import pyarrow.parquet as pq

    parts = formats.parquet_files(folder)
    assert parts
    for part in parts:
        file = pq.ParquetFile(part)
        meta = {k.decode(): v.decode() for k, v in (file.schema_arrow.metadata or {}).items()}
        assert formats.metadata(queue, kind).items() <= meta.items()
        column = file.schema.column(file.schema.names.index("enqueued_at"))
        assert column.physical_type == "INT64"
        logical = json.loads(column.logical_type.to_json())
        assert logical["Type"] == "Timestamp" and logical["isAdjustedToUTC"] is True
        assert logical["timeUnit"] == "microseconds"


@pytest.fixture(scope="module")
def local_report(spark_session, small_history, tmp_path_factory) -> tuple[dict[str, Any], bytes]:
    """The report on local[2]: its JSON document and its HTML page."""
    html = tmp_path_factory.mktemp("local-report") / "r.html"
    result = invoke(
        "report", "--history", str(small_history), "--format", "json", "--html", str(html)
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), html.read_bytes()


@pytest.mark.parametrize("mode", ["cluster", "connect"])
def test_report_matches_local(mode, services, local_report, small_history, tmp_path):
    document, page = local_report
    html = tmp_path / "r.html"
    out = qadmin(
        "report", "--history", str(small_history), "--format", "json", "--html", str(html),
        *where_args(services, mode),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == document
    assert document["findings"]  # the planted anomalies: findings are compared too
    assert html.read_bytes() == page
    assert "Exception" not in out.stderr and "\tat " not in out.stderr


def test_cluster_export_matches_local_and_a_worker_lost_mid_load_changes_nothing(
    services, spark_session, request, tmp_path
):
    """The load's two staging tasks (one per worker) wait on a lock the test holds, so the
    kill (a worker and its executor, as a lost host) lands while a task is mid-write: its
    rows roll back, Spark re-runs it on the other worker, and the queue gets every message
    once, in order, as the local load does."""
    import psycopg

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec, sent = source_queue(engine)
    folder = export_matches_local(services, "cluster", target, engine, spec, tmp_path)
    copy = pending_queue(engine, "dst")
    stage = f'"{target.schema}"."{copy.objects()["stage"]}"'
    proc = subprocess.Popen(
        [sys.executable, "-m", "qadmin", "load", "dst", "--from", str(folder), "--engine",
         "spark", "--format", "json", *where_args(services, "cluster"), *target.cli_args()],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        env=cli_env(),
    )  # fmt: skip
    try:
        with (
            psycopg.connect(target.dsn, autocommit=True) as watcher,
            psycopg.connect(target.dsn) as holder,
        ):
            _wait(lambda: _exists(watcher, stage), proc, "the staging table")
            # SHARE: the driver's SELECT on the table passes, the tasks' INSERTs wait.
            holder.execute(f"LOCK TABLE {stage} IN SHARE MODE")
            _wait(lambda: _waiting_inserts(watcher, stage) >= 2, proc, "two waiting tasks")
            services.kill("worker1")
            holder.rollback()
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        services.start_worker(1)  # for whatever runs next on the cluster
    assert proc.returncode == 0, stderr
    assert json.loads(stdout)["loaded"] == MESSAGES
    assert "\tat " not in stderr  # Spark's lost-executor lines, but no Java stacks
    assert queue_digest(engine, copy) == queue_digest(engine, local_load(engine, folder))
    assert [m.payload for m in messages.peek(engine, copy, count=MESSAGES)] == sent


def _wait(ready, proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 180
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"qadmin ended before {what}: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within 180 s")
        time.sleep(0.1)


def _exists(conn, table: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()[0]


def _waiting_inserts(conn, table: str) -> int:
    """Sessions waiting for a lock on this table (only our load's tasks can be)."""
    row = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE relation = to_regclass(%s) AND NOT granted",
        (table,),
    ).fetchone()
    return int(row[0])


def test_unreachable_master_and_connect_fail_in_bounded_time_with_exit_6(tmp_path):
    nobody = free_port()
    (tmp_path / "h").mkdir()
    for where in (f"--master=spark://127.0.0.1:{nobody}", f"--remote=sc://127.0.0.1:{nobody}"):
        started = time.monotonic()
        result = invoke("report", "--history", str(tmp_path / "h"), where, "--spark-timeout", "5")
        assert result.exit_code == EXIT_CONNECTION, result.output
        assert time.monotonic() - started < 30
        line = result.stderr.strip()
        assert "\n" not in line and "cannot reach the Spark" in line and str(nobody) in line


def test_a_master_port_that_never_answers_fails_within_the_timeout(tmp_path):
    """Something not Spark listens there: Spark would wait 60 s for its master, then fail
    with scheduler errors and a Java exception."""
    (tmp_path / "h").mkdir()
    with silent_port() as port:
        started = time.monotonic()
        result = invoke(
            "report",
            "--history",
            str(tmp_path / "h"),
            "--master",
            f"spark://127.0.0.1:{port}",
            "--spark-timeout",
            "2",
        )
        assert time.monotonic() - started < 15
    assert result.exit_code == EXIT_CONNECTION, result.output
    assert result.stderr.strip().splitlines() == [
        f"qadmin: error: the Spark master spark://127.0.0.1:{port} did not answer within "
        "2 s (--spark-timeout)"
    ]


def test_a_connect_server_that_never_answers_fails_and_the_process_exits(tmp_path):
    """pyspark's exit hook would retry its clean-up call against the silent server for
    minutes: the process must end with the error."""
    (tmp_path / "h").mkdir()
    with silent_port() as port:
        started = time.monotonic()
        out = qadmin(
            "report", "--history", str(tmp_path / "h"),
            "--remote", f"sc://127.0.0.1:{port}", "--spark-timeout", "3",
            timeout=60,
        )  # fmt: skip
        assert time.monotonic() - started < 20
    assert out.returncode == EXIT_CONNECTION
    assert out.stderr.strip().splitlines() == [
        f"qadmin: error: the Spark Connect server sc://127.0.0.1:{port} did not answer "
        "within 3 s (--spark-timeout)"
    ]


def test_a_bad_master_url_is_a_usage_error(tmp_path):
    (tmp_path / "h").mkdir()
    result = invoke("report", "--history", str(tmp_path / "h"), "--master", "foo://bar")
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.strip().count("\n") == 0 and "spark://HOST:PORT" in result.stderr


def test_no_free_cores_is_one_line_after_the_timeout(services, small_history):
    """Executors asking two cores never fit a one-core worker: Spark would wait for ever."""
    out = qadmin(
        "report", "--history", str(small_history), "--master", services.master,
        "--spark-conf", "spark.executor.cores=2", "--spark-timeout", "3",
    )  # fmt: skip
    assert out.returncode == EXIT_CONNECTION, out.stderr
    lines = [x for x in out.stderr.splitlines() if x.startswith("qadmin: error")]
    assert len(lines) == 1 and "no executor within 3 s" in lines[0]
    assert "\tat " not in out.stderr


def test_a_connect_server_killed_mid_load_is_exit_6_and_the_process_ends_at_once(
    services, request, tmp_path
):
    """The load's staging task waits on a lock the test holds, so the server dies mid-job:
    pyspark's client would retry for over ten minutes and its exit hook again after that;
    qadmin sees the port refuse, says so in one line and is gone within seconds."""
    import psycopg

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec, _ = source_queue(engine)
    source = tmp_path / "in.parquet"
    export.export(engine, spec, source, "parquet", export.Selection())
    copy = pending_queue(engine, "dst")
    stage = f'"{target.schema}"."{copy.objects()["stage"]}"'
    proc = subprocess.Popen(
        [sys.executable, "-m", "qadmin", "load", "dst", "--from", str(source), "--engine",
         "spark", *where_args(services, "connect"), *target.cli_args()],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        env=cli_env(),
    )  # fmt: skip
    try:
        with (
            psycopg.connect(target.dsn, autocommit=True) as watcher,
            psycopg.connect(target.dsn) as holder,
        ):
            _wait(lambda: _exists(watcher, stage), proc, "the staging table")
            holder.execute(f"LOCK TABLE {stage} IN SHARE MODE")
            _wait(lambda: _waiting_inserts(watcher, stage) >= 1, proc, "a waiting task")
            services.kill("connect")
            killed = time.monotonic()
            holder.rollback()
        _, stderr = proc.communicate(timeout=120)  # on main: still retrying after 10 minutes
        took = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        services.start_connect()  # for whatever runs next (the teardown stops it)
    assert proc.returncode == EXIT_CONNECTION, stderr
    assert stderr.strip().splitlines() == [
        f"qadmin: error: lost the Spark Connect server {services.remote}: it stopped accepting "
        f"connections at 127.0.0.1:{services.connect_port} while the job ran; what the job "
        "wrote is not kept"
    ]
    assert took < 30, f"the process took {took:.1f} s to end after the server was killed"
    assert messages.peek(engine, copy, count=1) == []  # nothing half-loaded
