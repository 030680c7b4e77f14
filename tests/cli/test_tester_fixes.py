"""Issue 16's second round: what an independent tester broke after the CLI conventions landed
(docs/cli.md states each rule these hold the tool to)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import one_line, run


@pytest.fixture
def db(tmp_path) -> list[str]:
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert run("create", "q", "--kind", "fifo", *dsn).exit_code == 0
    assert run("push", "q", "a", "b", *dsn).exit_code == 0
    return dsn


@pytest.mark.parametrize(
    "given", [["--lock-timeout", "abc"], ["--connect-timeout", "0"], ["--statement-timeout", "x"]]
)
def test_check_is_unknown_for_a_bad_option_given_before_it(given, db):
    result = run(*given, "check", "q", *db)
    assert result.exit_code == 3
    assert result.stdout.startswith("QADMIN UNKNOWN - usage: Invalid value")


def test_a_bad_user_path_is_one_line_naming_it_with_exit_2(db, tmp_path):
    cases = [
        (["collect", "q", "--to", "/etc/passwd/x"], "/etc/passwd"),
        (["export", "q", "--to", "/etc/passwd/x.jsonl"], "/etc/passwd"),
        (["export", "q", "--to", "/etc/passwd/x.parquet"], "/etc/passwd"),
        (["export", "q", "--to", "/proc/version"], "/proc"),
        (["archive", "q", "--to", "/etc/passwd", "--older-than", "1s", "--yes"], "/etc/passwd"),
        (["load", "q", "--from", "/etc/passwd"], "not a Parquet file"),
    ]
    for args, said in cases:
        result = run(*args, *db)
        assert result.exit_code == 2, (args, result.stderr)
        assert said in one_line(result) and "internal error" not in result.stderr


def test_export_and_archive_never_make_missing_parent_folders(db, tmp_path):
    missing = tmp_path / "nonexistent"
    export = run("export", "q", "--to", str(missing / "d" / "x.jsonl"), *db)
    assert export.exit_code == 2 and "does not exist" in one_line(export)
    archive = run("archive", "q", "--to", str(missing / "x"), "--older-than", "1s", "--yes", *db)
    assert archive.exit_code == 2 and "does not exist" in one_line(archive)
    assert not missing.exists()
    made = run("archive", "q", "--to", str(tmp_path / "arch"), "--older-than", "0", "--yes", *db)
    assert made.exit_code == 0 and (tmp_path / "arch").is_dir()  # the last folder is made


def test_load_from_an_empty_folder_says_no_input_files(db, tmp_path):
    (tmp_path / "empty").mkdir()
    result = run("load", "q", "--from", str(tmp_path / "empty"), *db)
    assert result.exit_code == 5 and "no input files" in one_line(result)


def test_internal_error_hint_only_without_debug(capsys):
    from qadmin.cli import _internal

    _internal(RuntimeError("boom"), debug=True)
    with_debug = capsys.readouterr().err
    assert "boom" in with_debug and "run with --debug" not in with_debug
    _internal(RuntimeError("boom"), debug=False)
    assert "run with --debug" in capsys.readouterr().err


def test_read_only_commands_leave_a_foreign_sqlite_file_alone(tmp_path):
    import sqlite3

    foreign, empty = tmp_path / "foreign.db", tmp_path / "empty.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    empty.touch()
    for file in (foreign, empty):
        before = file.read_bytes()
        assert run("ping", "--dsn", f"sqlite:///{file}").exit_code == 0
        listed = run("list", "--dsn", f"sqlite:///{file}")
        assert listed.exit_code == 0 and listed.stdout.strip() == ""
        assert one_line(listed) == f"qadmin: no qadmin queues in {file}"
        assert file.read_bytes() == before  # the journal mode (a header byte) included
    mine = tmp_path / "mine.db"
    assert run("create", "q", "--kind", "fifo", "--dsn", f"sqlite:///{mine}").exit_code == 0
    with sqlite3.connect(mine) as conn:  # qadmin's own database: readers never wait
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_schema_or_database_that_does_not_exist_is_not_found(label, request, tmp_path):
    from tests.conftest import make_target

    server = make_target(label, request, tmp_path)
    missing = ["--dsn", server.dsn, "--schema", "fix16_nonexist"]
    for args in (["list"], ["create", "q", "--kind", "fifo"]):
        result = run(*args, *missing)
        assert result.exit_code == 5 and "fix16_nonexist does not exist" in one_line(result)
    base = server.dsn.split("?")[0].rsplit("/", 1)[0]
    no_database = run("list", "--dsn", f"{base}/fix16_nonexistdb")
    assert no_database.exit_code == 5, no_database.stderr
    assert "fix16_nonexistdb" in one_line(no_database)


def test_collect_labels_a_given_schema_so_two_schemas_do_not_collide(request, tmp_path):
    import uuid

    import psycopg

    from tests.conftest import make_target

    server = make_target("postgresql", request, tmp_path)
    second = f"fix16_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{second}"')
    try:
        out = tmp_path / "history"
        collect = ["collect", "--all", "--to", str(out), "--dsn", server.dsn]
        collect += ["--resolution", "86400"]  # one slot for the whole test
        for schema in (server.schema, second):
            made = run("create", "q", "--kind", "fifo", "--dsn", server.dsn, "--schema", schema)
            assert made.exit_code == 0
            written = run(*collect, "--schema", schema)
            assert written.exit_code == 0 and f"schema {schema}" in written.stdout
        missing = run(*collect, "--schema", "fix16_nonexist")
        assert missing.exit_code == 5 and "fix16_nonexist does not exist" in missing.stderr
        again = run(*collect, "--schema", second)
        assert again.exit_code == 1 and "already collected" in again.stderr
        assert len(list(out.rglob("*.parquet"))) == 2  # the missing schema wrote no slot
    finally:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{second}" CASCADE')


def test_empty_connection_values_are_usage_errors_not_the_embedded_file(tmp_path):
    env = {"QADMIN_HOME": str(tmp_path / "home")}
    for args, said in (
        (["--dsn", ""], "--dsn is empty"),
        (["-c", ""], "-c/--connection is empty"),
        (["--config", ""], "--config is empty"),
    ):
        result = run(*args, "list", env=env)
        assert result.exit_code == 2 and said in one_line(result)
    assert not (tmp_path / "home").exists()


def test_unknown_config_keys_are_named(tmp_path):
    top = tmp_path / "top.toml"
    top.write_text('defualt = "a"\n')
    conn = tmp_path / "conn.toml"
    conn.write_text('[connections.a]\ndsn = "sqlite:///x.db"\nshema = "s"\n')
    for file, key in ((top, "defualt"), (conn, "shema")):
        result = run("--config", str(file), "list")
        assert result.exit_code == 2 and f"unknown key '{key}'" in one_line(result)


def test_conn_takes_config_after_conn_too(tmp_path):
    file = tmp_path / "c.toml"
    file.write_text('[connections.prod]\ndsn = "sqlite:///x.db"\n')
    for args in (
        ["conn", "--config", str(file), "list"],
        ["--config", str(file), "conn", "list"],
        ["conn", "list", "--config", str(file)],
    ):
        result = run(*args, "--format", "csv")
        assert result.exit_code == 0 and "prod" in result.stdout, args


def _reader_gone(args: list[str], stdin: bytes = b"") -> tuple[int, str]:
    """Run qadmin into a pipe whose reader has gone before the first line (head -1, grep -q,
    a monitoring wrapper that stopped reading): its exit code and stderr."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(
        [sys.executable, "-m", "qadmin", *args],
        input=stdin,
        stdout=write,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    os.close(write)
    return done.returncode, done.stderr.decode()


def test_a_reader_that_goes_away_is_exit_0(db):
    for args in (["inspect", "q", "--format", "plain", "--sample", "0"], ["peek", "q"]):
        assert _reader_gone([*args, *db]) == (0, ""), args


def test_a_reader_that_goes_away_keeps_a_verdict_and_says_what_a_change_lost(db):
    """check's CRITICAL stays exit 2 (a wrapper that stopped reading must not read OK), as
    does status's verdict; push and a destructive command exit 11 saying their printout
    (the ids) is lost while what they did is done."""
    assert _reader_gone(["check", "q", "--crit-depth", "1", *db])[0] == 2
    assert _reader_gone(["check", "--all", "--crit-depth", "1", *db])[0] == 2
    assert _reader_gone(["status", "--crit-depth", "1", *db])[0] == 2
    code, err = _reader_gone(["push", "q", "--lines", *db], b"a\nb\n")
    assert code == 11 and "output failed (the reader closed the pipe)" in err, err
    code, err = _reader_gone(["purge", "q", "--yes", *db])
    assert code == 11 and "what was done is done" in err, err
    assert run("peek", "q", "--format", "json", *db).stdout.strip() == "[]"  # purged all the same


def test_figures_in_text_are_rounded_and_never_none():
    from decimal import Decimal

    from qadmin import render
    from qadmin.cli.inspect import _headline
    from qadmin.diagnostics.check import CheckResult

    assert render.text_row({"xact_age_s": Decimal("73.600512")}, ["xact_age_s"]) == ["73.6"]
    verdict = CheckResult(status="OK", code=0, queue="q", line="")
    data = {"queue": "q", "kind": "fifo", "schema": "s", "engine": "postgresql"}
    data["size"] = {"depth": 12, "depth_exact": False, "oldest_age_s": 1.23456}
    data["rates"] = {"enqueue_per_s": 0.3333333, "dequeue_per_s": None}
    line = _headline(data, verdict)[1]
    assert "None" not in line and "oldest 1.235 s" in line and "in 0.3333/s, out unknown/s" in line


def test_a_java_home_that_points_nowhere_is_one_line_exit_9(tmp_path):
    (tmp_path / "h").mkdir()
    result = run("report", "--history", str(tmp_path / "h"), env={"JAVA_HOME": "/nonexistent"})
    assert result.exit_code == 9
    assert "JAVA_HOME=/nonexistent has no bin/java" in one_line(result)


def test_missing_pyspark_offers_engine_python_only_where_there_is_one(monkeypatch, db, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "pyspark.sql", None)
    (tmp_path / "h").mkdir()
    report = run("report", "--history", str(tmp_path / "h"))
    assert report.exit_code == 9 and "--engine" not in one_line(report)
    from qadmin.pipeline import spark

    with pytest.raises(Exception, match="or use --engine python"):
        spark.session(spark.Where.resolve(None, None))


def test_a_missing_spark_jar_setting_is_a_usage_error(monkeypatch):
    from qadmin.errors import UsageError
    from qadmin.pipeline import spark

    monkeypatch.setenv("QADMIN_SPARK_JARS", "/nonexistent.jar")
    with pytest.raises(UsageError, match=r"/nonexistent\.jar"):
        spark.jars(["postgresql.jar"])


def test_blank_input_is_not_a_message_unless_asked(db, tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_bytes(b"\n  \n\t\n")
    for args, stdin in (
        (["push", "q"], "\n"),
        (["push", "q", "--file", str(blank)], None),
        (["push", "q", ""], None),
        (["push", "q", "  "], None),
    ):
        result = run(*args, *db, input=stdin)
        assert result.exit_code == 2 and "--allow-empty" in one_line(result), args
    assert run("push", "q", "--lines", *db, input="c\n   \n\nd\n").exit_code == 0
    peeked = run("peek", "q", "-n", "10", "--format", "json", *db)
    assert [m["payload"] for m in json.loads(peeked.stdout)] == ["a", "b", "c", "d"]
    asked = run("push", "q", "", "--allow-empty", *db)
    assert asked.exit_code == 0


def test_sqlite_dsn_mistakes_say_what_is_wrong(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_text("not a database\n")
    short = run("list", "--dsn", "sqlite:x.db")
    assert short.exit_code == 2 and "sqlite:///relative/path.db" in one_line(short)
    for dsn, said in (
        (f"sqlite:///{garbage}", f"{garbage} is not a SQLite database file"),
        ("sqlite:////dev/null", "/dev/null is not a regular file"),
    ):
        for command in ("list", "ping"):
            result = run(command, "--dsn", dsn)
            assert result.exit_code == 6 and said in one_line(result), (dsn, command)
    assert garbage.read_text() == "not a database\n"


def test_requeue_with_nothing_stale_says_so(tmp_path):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'c.db'}"]
    assert run("create", "cq", "--kind", "claim", *dsn).exit_code == 0
    for extra in (["--yes"], ["--dry-run"]):
        result = run("requeue", "cq", "--stale-after", "1h", *extra, *dsn)
        assert result.exit_code == 0 and "no claim is stale" in one_line(result)


def test_a_snapshot_begun_after_the_probe_is_age_0_not_negative():
    from qadmin.diagnostics.entries.ghosts import Ghosts, Holder

    ghosts = Ghosts(holders=[Holder.of({"xact_age_s": -0.0048})], horizon_read=True)
    assert ghosts.snapshot_age_s() == 0.0


def test_a_convert_dry_run_that_would_not_fit_says_why_in_every_format(db):
    args = ["convert", "q", "--to", "ring", "--capacity", "1", "--dry-run", *db]
    as_json = run(*args, "--format", "json")
    plan = json.loads(as_json.stdout)
    assert as_json.exit_code == 2 and plan["fits"] is False
    assert any("does not fit a ring of 1" in r for r in plan["refused"])
    for fmt in ("plain", "table"):
        shown = run(*args, "--format", fmt)
        assert shown.exit_code == 2 and "does not fit a ring of 1" in shown.stdout
    assert "does not fit" in one_line(as_json)


def test_a_printed_requeue_fix_runs_as_printed(tmp_path):
    import shlex
    import time

    file = tmp_path / "c.db"
    config = tmp_path / "c.toml"
    config.write_text(f'[connections.loc]\ndsn = "sqlite:///{file}"\n')
    dsn = ["--dsn", f"sqlite:///{file}"]
    assert run("create", "cq", "--kind", "claim", *dsn).exit_code == 0
    assert run("push", "cq", "a", *dsn).exit_code == 0
    assert run("pop", "cq", *dsn).exit_code == 0
    time.sleep(1.2)  # the claim is now older than --stale-after 1
    inspect = ["inspect", "cq", "--stale-after", "1", "--sample", "0", "--format", "json"]

    def fix(*args: str) -> str:
        report = json.loads(run(*args, *inspect).stdout)
        return next(f["fix"] for f in report["findings"] if f["code"] == "stale_claims")

    # A DSN without a password is printed with the command, quoted for the shell: it runs as
    # printed (one with a password is never printed: the fix says "add your --dsn").
    given = fix(*dsn)
    assert given.endswith(f"qadmin --dsn {shlex.quote(dsn[1])} requeue cq --stale-after 1 --yes")
    assert "add your --dsn" not in given
    named = fix("--config", str(config), "-c", "loc")
    assert "--dry-run to see them, then " in named
    command = shlex.split(named.split(", then ")[0].rsplit(" --dry-run", 1)[0])
    assert command[:5] == ["qadmin", "--config", str(config), "-c", "loc"]
    released = run(*command[1:], "--yes", "--format", "json")
    assert released.exit_code == 0
    assert json.loads(released.stdout) == [{"id": 1, "outcome": "requeued"}]


def test_reports_refuse_csv_rather_than_print_something_else(db):
    inspect = run("inspect", "q", "--format", "csv", "--sample", "0", *db)
    assert inspect.exit_code == 0 and inspect.stdout.startswith("section,row,key,value\n")
    check = run("check", "q", "--format", "csv", *db)
    assert check.exit_code == 3 and check.stdout.startswith("QADMIN UNKNOWN - usage:")
    assert run("check", "q", *db).stdout.startswith("QADMIN OK - q")


def test_the_measured_fragmentation_keys_appear_with_deep_as_documented(db):
    from tests.cli.test_conventions import REPO

    documented = (REPO / "docs" / "commands.md").read_text()
    assert "with `--deep` also indexes_measured, table_measured" in documented
    inspect = ["inspect", "q", "--sample", "0", "--format", "json", *db]
    cheap = json.loads(run(*inspect).stdout)["fragmentation"]
    deep = json.loads(run(*inspect, "--deep").stdout)["fragmentation"]
    assert "indexes_measured" not in cheap and "table_measured" not in cheap
    assert {"indexes_measured", "table_measured"} <= set(deep)


@pytest.mark.parametrize("capacity", ["0", "-1", "100000000000000000000"])
def test_convert_refuses_a_bad_capacity_before_asking_for_yes(capacity, db):
    """Issue 17's tester: the missing --yes was reported first, the real mistake only after."""
    result = run("convert", "q", "--to", "ring", "--capacity", capacity, *db)
    assert result.exit_code == 2
    line = one_line(result)
    assert "--capacity" in line and "--yes" not in line


@pytest.mark.parametrize("command", ["pop", "peek", "push"])
def test_a_sqlite_command_that_meets_a_convert_reads_the_queue_again(command, tmp_path):
    """SQLite has no routines: a pop that read the catalog just before a convert rewrote the
    table met "no such column: id", exit 1. The statement fails whole, so the command reads
    the queue again and runs once more, on the ring (the convert made here, between the two,
    from another connection, as a cron convert would)."""
    from qadmin import catalog
    from qadmin.engines import open_engine
    from qadmin.ops import convert, messages, queues

    dsn = f"sqlite:///{tmp_path / 'q.db'}"
    admin = open_engine(dsn)
    queues.create(admin, queues.make_spec("cq", "fifo", None, False))
    messages.push(admin, catalog.get(admin, "cq"), [b"a", b"b"])
    client = open_engine(dsn)
    kinds = []

    def op(spec):
        kinds.append(spec.kind.value)
        if len(kinds) == 1:  # the catalog was read: now the convert
            convert.convert(admin, convert.source(admin, "cq"), 8)
        if command == "push":
            return messages.push(client, spec, [b"c"])
        if command == "peek":
            return messages.peek(client, spec, 5)
        return messages.pop(client, spec, 5)

    got = messages.on_queue(client, "cq", op)
    assert kinds == ["fifo", "ring"]
    if command == "push":
        got = messages.pop(admin, catalog.get(admin, "cq"), 5)
        assert [m.payload for m in got] == [b"a", b"b", b"c"]
    else:
        assert [m.payload for m in got] == [b"a", b"b"]
    client.close()
    admin.close()


def test_a_printed_fix_carries_the_dsn_only_without_a_secret():
    from qadmin.cli.options import Target
    from qadmin.engines import Timeouts

    def runnable(dsn: str) -> str:
        target = Target(dsn, None, None, "my schema", Timeouts())
        return target.runnable("qadmin requeue q --dry-run, then qadmin requeue q --yes")

    plain = runnable("postgresql://app@db:5432/prod")
    assert plain == (
        "qadmin --dsn postgresql://app@db:5432/prod --schema 'my schema' requeue q --dry-run, "
        "then qadmin --dsn postgresql://app@db:5432/prod --schema 'my schema' requeue q --yes"
    )
    secret = runnable("postgresql://app:s3cret@db:5432/prod")
    assert "s3cret" not in secret and "--dsn" not in secret.removesuffix(" (add your --dsn)")
    assert secret.endswith("requeue q --yes (add your --dsn)")


def test_collect_of_queues_that_do_not_exist_writes_nothing_and_says_one_line(tmp_path):
    """Every queue named refused: one line per refusal, no empty sample written (a second run
    used to add 'slot already collected' on a second line), exit 1."""
    dsn = f"sqlite:///{tmp_path / 'c.db'}"
    assert run("--dsn", dsn, "create", "other", "--kind", "fifo").exit_code == 0
    for _ in range(2):
        result = run("--dsn", dsn, "collect", "nosuch", "--to", str(tmp_path / "history"))
        assert result.exit_code == 1
        assert "no queue or table 'nosuch'" in one_line(result)
    assert not (tmp_path / "history").exists()
