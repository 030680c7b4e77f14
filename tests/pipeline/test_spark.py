"""The Spark paths, on one shared local[2] session: export and load through JDBC against real
PostgreSQL and MariaDB, and the report over a generated history with planted anomalies."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from qadmin.ops import messages
from qadmin.pipeline import export, load, report, report_html, spark, spark_jobs
from tests.conftest import make_target
from tests.engines.test_payloads import PAYLOADS
from tests.helpers import invoke, make_queue
from tests.pipeline import history

# One worker runs every Spark test (pytest-xdist's loadgroup): one local session for all.
pytestmark = pytest.mark.xdist_group("spark")
HOURS = 12
LOCAL = spark.Where("local[2]")


@pytest.mark.parametrize("kind", ["fifo", "pending", "claim"])
@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_spark_export_and_spark_load_keep_every_byte_in_order(
    label, kind, spark_session, request, tmp_path
):
    engine = make_target(label, request, tmp_path).engine()
    source = make_queue(engine, "sp_src", kind)
    sent = [*PAYLOADS, *[f"m{i}".encode() for i in range(200)]]
    messages.push(engine, source, sent)
    folder = tmp_path / "out"
    result = spark_jobs.export(
        engine, source, folder, "parquet", export.Selection(), LOCAL, partitions=2
    )
    assert result["rows"] == len(sent)
    parts = sorted(folder.glob("part-*.parquet"))
    assert len(parts) == (2 if label == "postgresql" else 1)  # MariaDB: one snapshot, one read

    copy = make_queue(engine, "sp_dst", kind)
    load.prepare_stage(engine, copy, replace=False)
    with load.dropping_stage(engine, copy):
        assert spark_jobs.stage(engine, copy, folder, "parquet", "id", LOCAL) == len(sent)
        assert load.move(engine, copy, None)["loaded"] == len(sent)
    got = messages.peek(engine, copy, count=len(sent) + 1)
    assert [m.payload for m in got] == sent
    # the exported enqueued_at is kept through Spark's staging too
    import pyarrow.parquet as pq

    kept = tmp_path / "kept.parquet"
    export.export(engine, copy, kept, "parquet", export.Selection())
    times = pq.read_table(kept).column("enqueued_at").to_pylist()
    assert times == pq.read_table(folder).sort_by("id").column("enqueued_at").to_pylist()
    # and the python path reads Spark's folder the same way
    again = make_queue(engine, "sp_py", kind)
    load.load_python(engine, again, folder, "parquet", None)
    assert [m.payload for m in messages.peek(engine, again, count=500)] == sent


def test_spark_load_reads_jsonl_written_by_the_python_export(spark_session, request, tmp_path):
    engine = make_target("postgresql", request, tmp_path).engine()
    source = make_queue(engine, "js_src", "fifo")
    messages.push(engine, source, PAYLOADS)
    path = tmp_path / "out.jsonl"
    export.export(engine, source, path, "jsonl", export.Selection())
    copy = make_queue(engine, "js_dst", "fifo")
    load.prepare_stage(engine, copy, replace=False)
    with load.dropping_stage(engine, copy):
        spark_jobs.stage(engine, copy, path, "jsonl", None, LOCAL)
        load.move(engine, copy, None)
    assert [m.payload for m in messages.peek(engine, copy, count=10)] == PAYLOADS


@pytest.fixture(scope="module")
def planted_history(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("history")
    minutes = HOURS * 60
    history.write(root, history.planted(minutes), minutes)
    return root


@pytest.fixture(scope="module")
def planted_report(spark_session, planted_history) -> report.Report:
    return report.run(spark_session, str(planted_history), chart_queues=3)


def test_report_finds_the_planted_anomalies_and_no_others(planted_report):
    found = {(f["queue"], f["finding"]) for f in planted_report.findings}
    assert found == history.EXPECTED
    backlog = next(f for f in planted_report.findings if f["queue"] == "backlog")
    assert backlog["hours"] == 5 and backlog["start"].hour == 4


def test_report_rates_survive_a_counter_reset(planted_report):
    hours = planted_report.frames["hourly"].where("queue = 'steady'").orderBy("hour").collect()
    assert len(hours) == HOURS
    for hour in hours[1:]:  # the first hour has no sample before its first one
        assert 49 < hour["enqueue_rate"] < 51
        assert 49 < hour["dequeue_rate"] < 51
        assert 95 <= hour["depth_p50"] <= 105


def test_report_recommends_a_ring_capacity(planted_report):
    ring = next(q for q in planted_report.queues if q["queue"] == "ring")
    # 2 x the worst p99 backlog (952) is below a minute at 50/s (3,000): next power of two
    assert ring["recommended_ring_capacity"] == 4096
    assert report.recommended_capacity(3000, 10) == 8192


def test_report_html_renders_in_a_headless_browser(planted_report, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("chromium is missing: scripts/services installs it")
    page = tmp_path / "report.html"
    page.write_text(report_html.render(planted_report), encoding="utf-8")
    dom = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--window-size=900,1200",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    charts = len(report_html.CHARTS) * len(planted_report.charted)
    assert f'data-charts="{charts}"' in dom
    assert 'data-rendered="ok"' in dom
    assert "backlog grew for 5 h" in dom
    widest = int(re.search(r'data-widest="(\d+)"', dom)[1])
    assert 0 < widest <= 900, f"a table or chart reaches {widest} px on a 900 px page"


def test_report_html_marks_times_whole_counts_and_each_finding_window(planted_report):
    page = report_html.render(planted_report)
    charts = re.findall(r'<svg class="chart".*?</svg>', page)
    assert charts
    for chart in charts:
        title = re.search(r'aria-label="([^"]+)"', chart)[1]
        top = re.search(r'<text x="4" y="\d+" font-size="10">([^<]+)</text>', chart)[1]
        if title.endswith(("(messages)", "(rows)")):
            assert re.fullmatch(r"[\d,]+", top), f"{title}: axis top {top}"
        hours = re.findall(r'font-size="10"(?: text-anchor="end")?>(\d{4}-[^<]+)</text>', chart)
        assert hours and all(h.endswith(" UTC") for h in hours), hours
    backlog = next(f for f in planted_report.findings if f["queue"] == "backlog")
    assert backlog["start"].utcoffset() is not None  # an aware time, in JSON too
    queue_charts = page.split("<h2>backlog ")[1].split("<h2>")[0]
    bands = re.findall(r'<rect class="finding-window"[^>]*><title>([^<]+)</title>', queue_charts)
    assert len(bands) == len(report_html.CHARTS)
    assert bands[0].startswith(f"backlog_growing: {backlog['start']:%Y-%m-%d %H:%M} UTC to ")


def test_report_cli_writes_json_parquet_and_html(spark_session, planted_history, tmp_path):
    import pyarrow.parquet as pq

    result = invoke(
        "report",
        "--history",
        str(planted_history),
        "--parquet",
        str(tmp_path / "pq"),
        "--html",
        str(tmp_path / "r.html"),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert {(f["queue"], f["finding"]) for f in document["findings"]} == history.EXPECTED
    assert document["samples"] == HOURS * 60 * 6
    hourly = pq.read_table(tmp_path / "pq" / "hourly")
    assert set(report.HOURLY_COLUMNS) <= set(hourly.column_names)
    assert hourly.num_rows == HOURS * 6
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_report_on_a_missing_history_is_one_line(spark_session, tmp_path):
    result = invoke("report", "--history", str(tmp_path / "none"))
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "collect" in result.stderr


def test_spark_export_on_postgresql_reads_one_snapshot_in_parallel(
    spark_session, request, tmp_path, monkeypatch
):
    """Messages pushed and popped after the export took its snapshot (and before Spark's
    partitions read) are not in the file: every partition imported the same snapshot."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = make_queue(engine, "snap_q", "fifo")
    messages.push(engine, spec, [f"m{i}".encode() for i in range(100)])
    before = [m.id for m in messages.peek(engine, spec, count=200)]
    other = target.engine()
    plan = spark_jobs._select

    def meanwhile(frame, *args):
        messages.push(other, spec, [b"late"] * 10)
        messages.pop(other, spec, count=30)
        return plan(frame, *args)

    monkeypatch.setattr(spark_jobs, "_select", meanwhile)
    folder = tmp_path / "snap"
    spark_jobs.export(engine, spec, folder, "parquet", export.Selection(), LOCAL, partitions=2)
    ids = sorted(i for part in folder.glob("part-*.parquet") for i in _ids(part))
    assert ids == before
    assert len(messages.peek(other, spec, count=200)) == 80
    other.close()


def _ids(path: Path) -> list[int]:
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=["id"]).column("id").to_pylist()


def test_a_spark_job_feeds_the_progress_bar(spark_session, monkeypatch):
    monkeypatch.setattr(spark, "TRACK_S", 0.02)
    seen: list[tuple[int, int]] = []
    with spark.tracked(spark_session, lambda done, total: seen.append((done, total))):
        spark_session.range(0, 20_000_000, numPartitions=8).selectExpr("sum(id * 7 % 13)").collect()
    assert seen, "the tracker reported nothing while the job ran"
    assert all(0 <= done <= total for done, total in seen)


def test_a_spark_job_past_job_timeout_is_exit_6_and_the_process_ends(request, tmp_path):
    """The staging table is locked before Spark writes to it: the job cannot finish, and
    --job-timeout ends it (exit 6, one line) whatever Spark is doing."""
    import os
    import sys

    import psycopg

    from tests.pipeline.conftest import SPARK_ENV

    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    source = make_queue(engine, "jt_src", "fifo")
    messages.push(engine, source, [b"a", b"b", b"c"])
    path = tmp_path / "in.parquet"
    export.export(engine, source, path, "parquet", export.Selection())
    copy = make_queue(engine, "jt_dst", "fifo")
    stage = f'"{target.schema}"."{copy.objects()["stage"]}"'
    proc = subprocess.Popen(
        [sys.executable, "-m", "qadmin", "load", "jt_dst", "--from", str(path), "--engine",
         "spark", "--master", "local[1]", "--job-timeout", "3", *target.cli_args()],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        env={**os.environ, **SPARK_ENV},
    )  # fmt: skip
    try:
        with psycopg.connect(target.dsn) as holder:
            for _ in range(1200):
                found = holder.execute("SELECT to_regclass(%s) IS NOT NULL", (stage,))
                if found.fetchone()[0] or proc.poll() is not None:
                    break
                holder.rollback()
                time.sleep(0.1)
            holder.execute(f"LOCK TABLE {stage} IN SHARE MODE")
            _, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 6, stderr
    lines = [x for x in stderr.splitlines() if x.startswith("qadmin:")]
    assert lines == [
        "qadmin: error: the Spark job did not finish within 3 s (--job-timeout) on the Spark "
        "master local[1]; what it wrote is not kept"
    ], stderr
    assert messages.peek(engine, copy, count=1) == []
