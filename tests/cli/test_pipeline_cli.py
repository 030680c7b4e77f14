"""The pipeline commands as a script sees them: stable JSON keys, one-line errors with their
exit codes, and clear messages for what Spark needs (no JVM is started to find them out)."""

from __future__ import annotations

import json
import sys

import pytest

from qadmin import extras
from tests.helpers import one_line, run


@pytest.fixture
def db(tmp_path) -> list[str]:
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    run("create", "orders_q", "--kind", "fifo", *dsn)
    run("push", "orders_q", "a", "b", "c", *dsn)
    run("create", "copy_q", "--kind", "fifo", *dsn)
    return dsn


def test_export_load_archive_print_stable_json(db, tmp_path):
    out = tmp_path / "o.jsonl"
    exported = json.loads(
        run("export", "orders_q", "--to", str(out), "--format", "json", *db).stdout
    )
    assert exported == {
        "file": str(out),
        "format": "jsonl",
        "rows": 3,
        "first_id": 1,
        "last_id": 3,
        "queue": "orders_q",
        "engine": "python",
    }
    loaded = run("load", "copy_q", "--from", str(out), "--key", "id", "--format", "json", *db)
    assert json.loads(loaded.stdout) == {
        "read": 3,
        "loaded": 3,
        "skipped": 0,
        "queue": "copy_q",
        "engine": "python",
        "enqueued_at": "the input's, where it has one; else the load's time",
    }
    archived = run(
        "archive",
        "orders_q",
        "--to",
        str(tmp_path / "a"),
        "--older-than",
        "0s",
        "--yes",
        "--format",
        "json",
        *db,
    )
    document = json.loads(archived.stdout)
    assert (document["archived"], document["deleted"], document["kept"]) == (3, 3, 0)
    assert set(document) >= {"queue", "file", "resumed", "first_id", "last_id", "dry_run"}


def test_archive_dry_run_changes_nothing(db, tmp_path):
    plan = run(
        "archive",
        "orders_q",
        "--to",
        str(tmp_path / "a"),
        "--older-than",
        "0s",
        "--dry-run",
        "--format",
        "json",
        *db,
    )
    assert json.loads(plan.stdout)["dry_run"] is True
    assert not (tmp_path / "a").exists()
    assert len(json.loads(run("peek", "orders_q", "--format", "json", *db).stdout)) == 3


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["export", "orders_q", "--to", "x.txt"], 2, "cannot tell the format"),
        (["export", "orders_q", "--to", "x.parquet", "--state", "ready"], 2, "claim queues"),
        (["archive", "orders_q", "--to", "a", "--yes"], 2, "--older-than"),
        (["load", "copy_q", "--from", "missing.jsonl"], 2, "does not exist"),
        (["export", "orders_q", "--to", "x", "--engine", "spark"], 2, "JDBC path to sqlite"),
        (["export", "nope_q", "--to", "x.parquet"], 5, "no queue"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(db, tmp_path, monkeypatch, args, code, says):
    monkeypatch.chdir(tmp_path)
    result = run(*args, *db)
    assert result.exit_code == code, result.stderr
    assert says in one_line(result)


def test_a_bad_input_line_is_named(db, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"payload": "ok"}\n{"payload_base64": "***"}\n')
    result = run("load", "copy_q", "--from", str(bad), *db)
    assert result.exit_code == 2
    assert "bad.jsonl line 2: payload_base64 is not base64" in one_line(result)
    assert json.loads(run("peek", "copy_q", "--format", "json", *db).stdout) == []


def test_missing_pyspark_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    result = run("report", "--history", str(tmp_path))
    assert result.exit_code == 9
    assert extras.install_line("spark") in one_line(result)


def test_a_missing_jdbc_driver_is_one_line(request, tmp_path):
    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    run("create", "jq", "--kind", "fifo", *target.cli_args())
    result = run(
        "export",
        "jq",
        "--to",
        str(tmp_path / "out"),
        "--engine",
        "spark",
        *target.cli_args(),
        env={"QADMIN_SPARK_JARS": "/nonexistent/driver.jar"},
    )
    assert result.exit_code == 2  # a bad setting
    assert "QADMIN_SPARK_JARS names a missing file: /nonexistent/driver.jar" in one_line(result)


def test_export_picks_spark_only_past_the_crossover_for_a_folder(request, tmp_path):
    from qadmin.cli.pipeline import _spark_pays_off
    from qadmin.kinds import Kind, QueueSpec
    from tests.conftest import make_target

    pg = make_target("postgresql", request, tmp_path).engine()
    lite = make_target("sqlite", request, tmp_path).engine()
    fifo = QueueSpec(name="q", kind=Kind.FIFO)
    ring = QueueSpec(name="r", kind=Kind.RING, capacity=10)
    big, folder = pg.JDBC.spark_export_from_rows, tmp_path / "out"
    assert _spark_pays_off(pg, fifo, big, folder)
    assert not _spark_pays_off(pg, fifo, big - 1, folder)
    assert not _spark_pays_off(pg, fifo, big, tmp_path / "out.parquet")  # a file: python
    assert not _spark_pays_off(pg, ring, big, folder)
    assert not _spark_pays_off(lite, fifo, big, folder)


def test_load_picks_spark_only_for_a_big_parquet_input_on_a_server(request, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from qadmin.cli.pipeline import _spark_load_pays_off
    from qadmin.kinds import Kind, QueueSpec
    from tests.conftest import make_target

    my = make_target("mariadb", request, tmp_path).engine()
    lite = make_target("sqlite", request, tmp_path).engine()
    threshold = my.JDBC.spark_load_from_rows
    folder = tmp_path / "in"
    folder.mkdir()
    part = pa.table({"payload": pa.array([b"x"] * (threshold // 2 + 1))})
    pq.write_table(part, folder / "part-0.parquet", row_group_size=1_000_000)
    fifo = QueueSpec(name="q", kind=Kind.FIFO)
    assert not _spark_load_pays_off(my, fifo, folder)  # half the crossover
    pq.write_table(part, folder / "part-1.parquet", row_group_size=1_000_000)
    assert _spark_load_pays_off(my, fifo, folder)
    assert not _spark_load_pays_off(my, QueueSpec(name="r", kind=Kind.RING, capacity=9), folder)
    assert not _spark_load_pays_off(lite, fifo, folder)


@pytest.mark.parametrize("seconds", ["nan", "inf", "0", "-5", "abc", "1e9"])
def test_a_spark_timeout_that_is_not_a_sensible_duration_is_a_usage_error(seconds, tmp_path):
    result = run("report", "--history", str(tmp_path), "--spark-timeout", seconds)
    assert result.exit_code == 2
    assert "--spark-timeout" in one_line(result)


def test_an_unwritable_target_is_refused_before_spark_starts(request, tmp_path, monkeypatch):
    """/sys refuses new entries even to root: the answer comes from trying, before Spark."""
    from qadmin.pipeline import spark
    from tests.conftest import make_target

    def no_spark(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(spark, "session", no_spark)
    target = make_target("postgresql", request, tmp_path)
    run("create", "wq", "--kind", "fifo", *target.cli_args())
    exported = run(
        "export", "wq", "--to", "/sys/qadmin-out", "--engine", "spark", *target.cli_args()
    )
    assert exported.exit_code == 2, exported.stderr
    assert "cannot write in /sys" in one_line(exported)
    reported = run("report", "--history", str(tmp_path), "--html", "/sys/qadmin.html")
    assert reported.exit_code == 2, reported.stderr
    assert "cannot write in /sys" in one_line(reported)


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_archive_dry_run_counts_and_archive_advises_on_the_deleted_rows(label, request, tmp_path):
    from tests.conftest import make_target

    target = make_target(label, request, tmp_path)
    args = target.cli_args()
    run("create", "aq", "--kind", "claim", *args)
    run("push", "aq", "a", "b", "c", "d", *args)
    claimed = json.loads(run("pop", "aq", "--format", "json", *args).stdout)[0]["id"]
    ids = [m["id"] for m in json.loads(run("peek", "aq", "--format", "json", *args).stdout)]
    ids.remove(claimed)  # archive leaves a claimed message to its worker
    folder = ["--to", str(tmp_path / "a"), "--older-than", "0s", "--format", "json"]
    plan = json.loads(run("archive", "aq", *folder, "--dry-run", *args).stdout)
    assert (plan["messages"], plan["first_id"], plan["last_id"]) == (3, min(ids), max(ids))
    assert f"export the 3 selected messages (ids {min(ids)} to {max(ids)}" in plan["steps"][1]
    assert "exact when read" in plan["figures"]
    done = json.loads(run("archive", "aq", *folder, "--yes", *args).stdout)
    assert done["deleted"] == 3
    engine = target.engine()
    want = "VACUUM" if label == "postgresql" else "OPTIMIZE TABLE"
    assert f"{want} {engine.qualified('aq')}" in done["advice"]
    assert f"{want} {engine.qualified('aq')}" in plan["steps"][-1]
