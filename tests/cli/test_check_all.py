"""check --all: one Nagios plugin run for every queue status finds. The worst state is the
exit code; the first line sums up, one long-text line per queue follows, and each queue's
performance data (labels NAME_METRIC) after them; thresholds come from the registry, the
config's [check], the options and [check.queues."PATTERN"] in that order; combinations that
make no sense are refused in one line, exit 2."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import run


@pytest.fixture
def db(tmp_path) -> list[str]:
    """orders: a fifo of three messages; full: a ring at capacity (CRITICAL by default)."""
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert run("create", "orders", "--kind", "fifo", *dsn).exit_code == 0
    assert run("push", "orders", "a", "b", "c", *dsn).exit_code == 0
    assert run("create", "spare", "--kind", "heap", *dsn).exit_code == 0
    return dsn


def _config(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "qadmin.toml"
    path.write_text(text)
    return ["--config", str(path)]


def test_all_within_thresholds_is_ok_with_a_line_and_perfdata_per_queue(db):
    result = run("check", "--all", *db)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("QADMIN OK - 2 queues: 0 critical, 0 warning, 0 unknown, 2 ok")
    assert lines[0].endswith("| queues=2 critical=0 warning=0 unknown=0 ok=2")
    assert lines[1].startswith("OK main.orders: ") and lines[2].startswith("OK main.spare: ")
    # the perfdata of the first queue follows the last long-text line's |, one line each
    assert " | main.orders_depth=3;;;0 " in lines[2]
    assert lines[3].startswith("main.spare_depth=0;;;0")
    assert len(lines) == 4


def test_the_worst_queue_sets_the_exit_code_and_leads(db, tmp_path):
    dsn = db
    assert run("create", "full", "--kind", "ring", "--capacity", "2", *dsn).exit_code == 0
    assert run("push", "full", "x", "y", *dsn).exit_code == 0
    result = run("check", "--all", "--warn-depth", "2", *dsn)
    assert result.exit_code == 2, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("QADMIN CRITICAL - 3 queues: 1 critical, 1 warning, 0 unknown")
    assert "; worst main.full: " in lines[0] and "ring_nearly_full" in lines[0]
    assert lines[1].startswith("CRITICAL main.full: ")
    assert lines[2].startswith("WARNING main.orders: depth 3 >= 2")
    assert lines[3].startswith("OK main.spare")
    assert "main.full_ring_fill=1;0.9;1;0" in result.stdout
    assert "main.orders_depth=3;2;;0" in result.stdout


def test_thresholds_come_from_the_config_the_options_and_then_each_pattern(db, tmp_path):
    config = _config(
        tmp_path,
        """
[check]
warn_depth = 1
crit_oldest_age = "1h"

[check.queues."main.sp*"]
warn_depth = 100
""",
    )
    result = run("check", "--all", *config, *db)
    assert result.exit_code == 1, result.output
    assert "WARNING main.orders: depth 3 >= 1" in result.stdout
    assert "main.orders_oldest_age=" in result.stdout and ";;3600;0" in result.stdout
    assert "main.spare_depth=0;100;;0" in result.stdout  # the pattern's, over [check]'s
    # an option given wins over [check], and a pattern still wins over the option
    calm = run("check", "--all", "--warn-depth", "10", *config, *db)
    assert calm.exit_code == 0, calm.output
    assert "main.orders_depth=3;10;;0" in calm.stdout
    assert "main.spare_depth=0;100;;0" in calm.stdout


@pytest.mark.parametrize(
    "text,said",
    [
        ("[check]\nwarn_deph = 1\n", "unknown key 'warn_deph'"),
        ('[check]\ncrit_oldest_age = "soon"\n', "is not a duration"),
        ("[check]\nwarn_backlog_growth = 1\n", "no rate sample"),
        ("[check]\nwarn_depth = 10\ncrit_depth = 5\n", "inverted"),
        ('[check.queues."main.*"]\nwarn_depth = "ten"\n', "is not a number"),
    ],
)
def test_a_bad_check_section_is_unknown_on_one_line(db, tmp_path, text, said):
    result = run("check", "--all", *_config(tmp_path, text), *db)
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("QADMIN UNKNOWN - all queues: ") and said in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args,said",
    [
        (["--all", "orders"], "leave out NAME"),
        (["--all", "--sample", "2"], "no rate sample"),
        (["--all", "--warn-backlog-growth", "5"], "--warn-backlog-growth"),
        (["--all", "--library", "oban"], "--library applies to check NAME"),
        (["orders", "--queue-timeout", "1"], "--queue-timeout applies to check --all"),
    ],
)
def test_combinations_that_make_no_sense_are_refused_exit_2(db, args, said):
    result = run("check", *args, *db)
    assert result.exit_code == 2, result.output
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_no_name_and_no_all_is_still_the_plugin_usage_line(db):
    result = run("check", *db)
    assert result.exit_code == 3
    assert result.stdout.startswith("QADMIN UNKNOWN - usage: Missing argument 'NAME'")


def test_no_queue_found_is_unknown(tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    result = run("check", "--all", "--dsn", f"sqlite:///{path}")
    assert result.exit_code == 3
    assert result.stdout.startswith("QADMIN UNKNOWN - no queues found")


def test_named_queues_are_labelled_table_and_queue(tmp_path):
    path = tmp_path / "jobs.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, "
            "status TEXT NOT NULL, created_at TIMESTAMP NOT NULL)"
        )
        conn.execute("CREATE INDEX jobs_q ON jobs (queue, status, id)")
        conn.executemany(
            "INSERT INTO jobs (queue, status, created_at) VALUES (?, 'new', datetime('now'))",
            [("mail",), ("mail",), ("sms",)],
        )
    config = _config(
        tmp_path,
        '[tables.jobs]\nstate_column = "status"\npending = ["new"]\n'
        'queue_column = "queue"\ntime_column = "created_at"\n'
        '[check.queues."jobs[mail]"]\nwarn_depth = 1\n',
    )
    result = run("check", "--all", "--dsn", f"sqlite:///{path}", *config)
    assert result.exit_code == 1, result.output
    assert "WARNING jobs[mail]: depth 2 >= 1" in result.stdout
    assert "jobs[mail]_depth=2;1;;0" in result.stdout
    assert "jobs[sms]_depth=1;;;0" in result.stdout


def test_json_holds_every_queue_verdict(db):
    result = run("check", "--all", "--warn-depth", "2", "--format", "json", *db)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["status"] == "WARNING" and document["code"] == 1
    assert document["counts"] == {"ok": 1, "warning": 1, "critical": 0, "unknown": 0}
    first = document["lines"][0]
    assert first["name"] == "main.orders" and first["metrics"]["depth"] == 3
    assert first["problems"] == ["depth 3 >= 2"]


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb", "mysql8"])
def test_each_engine_gives_its_queues_a_line_and_perfdata(label, request, tmp_path):
    """On a shared server status finds other sessions' queues too: only this test's own
    queue's line and performance data are asserted."""
    from tests.conftest import make_target

    target = make_target(label, request, tmp_path)
    args = target.cli_args()
    assert run("create", "orders", "--kind", "claim", *args).exit_code == 0
    assert run("push", "orders", "a", "b", "c", *args).exit_code == 0
    result = run("check", "--all", "--warn-depth", "3", *args)
    assert result.exit_code in (1, 2, 3), result.output  # 1 at least: orders is WARNING
    name = f"{target.schema or 'main'}.orders"
    assert f"WARNING {name}: depth 3 >= 3" in result.stdout
    assert f"{name}_depth=3;3;;0" in result.stdout
    assert f"{name}_stale_claims=0;1;;0" in result.stdout
    first = result.stdout.splitlines()[0]
    assert first.startswith("QADMIN ") and " queues: " in first and "| queues=" in first


def test_no_connection_is_one_unknown_line_without_the_password():

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dsn = f"postgresql://nagios:s3cretpw@127.0.0.1:{port}/app"
    result = run("check", "--all", "--dsn", dsn, "--connect-timeout", "2")
    assert result.exit_code == 3
    assert result.stdout.startswith("QADMIN UNKNOWN - all queues: ")
    assert len(result.stdout.strip().splitlines()) == 1
    assert "s3cretpw" not in result.stdout + result.stderr


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("content", [None, "junk\n"], ids=["missing", "not-a-database"])
def test_a_missing_or_non_database_file_is_unknown_with_its_cause(tmp_path, content, fmt):
    path = tmp_path / "n.db"
    if content is not None:
        path.write_text(content)
    args = ["check", "--all", "--dsn", f"sqlite:///{path}"]
    result = run(*args, *(["--format", "json"] if fmt == "json" else []))
    assert result.exit_code == 3
    cause = "no database file" if content is None else "is not a SQLite database file"
    if fmt == "json":
        document = json.loads(result.stdout)  # the documented document, never the plain line
        assert document["status"] == "UNKNOWN" and document["code"] == 3
        assert document["queues"] == 0 and document["lines"] == []
        assert cause in document["error"]
    else:
        assert result.stdout.startswith("QADMIN UNKNOWN - all queues: ")
        assert cause in result.stdout and "no queues found" not in result.stdout
    assert path.exists() == (content is not None)  # never a new empty database


@pytest.mark.parametrize("fmt", ["plain", "table", "json"])
def test_status_on_a_file_that_is_not_a_database_is_unknown_as_check_all(tmp_path, fmt):
    """status uses the Nagios codes: a run that cannot read the server is UNKNOWN (3) as
    check --all's, one line (JSON: check --all's failure document), never exit 6 with
    nothing on stdout."""
    path = tmp_path / "n.db"
    path.write_text("junk\n")
    result = run("status", "--dsn", f"sqlite:///{path}", "--format", fmt)
    same = run("check", "--all", "--dsn", f"sqlite:///{path}", "--format", fmt)
    assert result.exit_code == 3 == same.exit_code
    assert result.stdout == same.stdout
    if fmt == "json":
        document = json.loads(result.stdout)
        assert document["status"] == "UNKNOWN" and document["code"] == 3
        assert document["lines"] == [] and "is not a SQLite database file" in document["error"]
    else:
        assert result.stdout.startswith("QADMIN UNKNOWN - all queues: ")
        assert len(result.stdout.strip().splitlines()) == 1
        assert "is not a SQLite database file" in result.stdout
    assert "no queues found" not in result.stderr


def test_status_with_no_server_is_unknown_with_the_error_in_its_json():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dsn = f"postgresql://nagios:s3cretpw@127.0.0.1:{port}/test"
    result = run("status", "--dsn", dsn, "--connect-timeout", "2", "--format", "json")
    assert result.exit_code == 3, result.output
    document = json.loads(result.stdout)
    assert document["status"] == "UNKNOWN" and document["queues"] == 0
    assert f"127.0.0.1:{port}" in document["error"] and "s3cretpw" not in result.output
    usage = run("status", "--dsn", dsn, "--warn-depth", "5", "--crit-depth", "1")
    assert usage.exit_code == 2 and usage.stdout == ""  # a usage error stays exit 2


def test_schema_narrows_status_check_all_and_metrics_to_its_queues(pg_own_database):
    """--schema was taken and ignored: every schema's queues were still listed. Now status,
    check --all and metrics read that schema's queues only; one that does not exist is
    UNKNOWN saying so, never "no queues found"."""
    import psycopg

    with psycopg.connect(pg_own_database, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA other")
        conn.execute("CREATE SCHEMA bare")
    db = ["--dsn", pg_own_database]
    for schema, queue in (("public", "mine"), ("other", "theirs")):
        assert run("create", queue, "--kind", "fifo", *db, "--schema", schema).exit_code == 0
    every = json.loads(run("status", "--format", "json", *db).stdout)
    assert sorted(r["name"] for r in every["lines"]) == ["other.theirs", "public.mine"]
    # the same document as a failed run's (a script reads lines and error either way)
    assert (every["status"], every["code"], every["queues"], every["error"]) == ("OK", 0, 2, None)
    assert every["counts"] == {"ok": 2, "warning": 0, "critical": 0, "unknown": 0}
    only = run("status", "--format", "json", *db, "--schema", "other")
    names = [r["name"] for r in json.loads(only.stdout)["lines"]]
    assert only.exit_code == 0 and names == ["other.theirs"]
    checked = run("check", "--all", *db, "--schema", "other")
    assert checked.exit_code == 0 and " 1 queues: " in checked.stdout.splitlines()[0]
    assert "public.mine" not in checked.stdout
    scraped = run("metrics", *db, "--schema", "other")
    assert scraped.exit_code == 0 and 'table="theirs"' in scraped.stdout
    assert 'table="mine"' not in scraped.stdout
    missing = run("status", *db, "--schema", "nosuch")
    assert missing.exit_code == 3
    assert missing.stdout.startswith("QADMIN UNKNOWN - all queues: ") and "nosuch" in missing.stdout
    # no queue found is UNKNOWN, as check --all's (a role that lost its grants read OK, exit 0)
    for command in (("status",), ("check", "--all")):
        bare = run(*command, *db, "--schema", "bare", "--format", "json")
        said = json.loads(bare.stdout)["error"]
        assert bare.exit_code == 3 and said.startswith("no queues found"), command
    # a tester's config said "tB_s" for the schema CREATE SCHEMA tB_s (unquoted) made tb_s
    cased = run("list", *db, "--schema", "Other")
    assert cased.exit_code == 5
    assert "(there is a schema other: an unquoted name is folded to lower case)" in cased.stderr


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_locked_queue_is_unknown_alike_in_check_all_status_and_metrics(label, request, tmp_path):
    """A lock on a claim queue's table: check --all, status and metrics all call it UNKNOWN
    (3), which outranks the other queue's WARNING in the exit code and the order; status's
    worst is the part_blocked finding naming the holder. They said WARNING while metrics
    said 3."""
    from tests.conftest import make_target
    from tests.helpers import table_locked

    target = make_target(label, request, tmp_path)
    db = [*target.cli_args(), "--schema", str(target.schema)]
    assert run("create", "cq", "--kind", "claim", *db).exit_code == 0
    assert run("push", "cq", "a", "b", "c", "d", "e", *db).exit_code == 0
    assert run("pop", "cq", "--count", "2", *db).exit_code == 0
    assert run("create", "free", "--kind", "fifo", *db).exit_code == 0
    assert run("push", "free", "x", *db).exit_code == 0
    given = ["--warn-depth", "1", "--crit-stale-claims", "2"]
    with table_locked(target, "cq") as session:
        every = run("check", "--all", *given, *db)
        listed = run("status", "--format", "json", *given, *db)
        scraped = run("metrics", "--scrape-timeout", "60", *db)
    held, free = f"{target.schema}.cq", f"{target.schema}.free"
    assert every.exit_code == 3, every.stdout
    lines = every.stdout.splitlines()
    assert lines[0].startswith("QADMIN UNKNOWN - 2 queues: 0 critical, 1 warning, 1 unknown")
    assert lines[1].startswith(f"UNKNOWN {held}: ") and "part_blocked: " in lines[1], lines
    assert f"the claims part was blocked by a lock held by session {session}" in lines[1]
    assert lines[2].startswith(f"WARNING {free}: ") and "depth 1 >= 1" in lines[2], lines
    assert listed.exit_code == 3, listed.output
    rows = json.loads(listed.stdout)["lines"]
    assert [(r["name"], r["status"]) for r in rows] == [(held, "UNKNOWN"), (free, "WARNING")]
    assert (
        rows[0]["worst"].startswith("part_blocked: ") and f"session {session}" in rows[0]["worst"]
    )
    assert scraped.exit_code == 0, scraped.stderr
    status = [
        line
        for line in scraped.stdout.splitlines()
        if line.startswith("qadmin_queue_status{") and 'table="cq"' in line
    ]
    assert len(status) == 1 and status[0].endswith(" 3.0"), status


def test_patterns_match_with_or_without_the_schema_and_one_matching_nothing_is_said(db, tmp_path):
    config = _config(
        tmp_path,
        '[check.queues."orders"]\nwarn_depth = 3\n'
        '[check.queues."main.spare"]\nwarn_depth = 0\n'
        '[check.queues."nosuch[*]"]\nwarn_depth = 1\n',
    )
    result = run("check", "--all", *db, *config)
    assert result.exit_code == 1, result.output
    assert "WARNING main.orders: depth 3 >= 3" in result.stdout
    assert "WARNING main.spare: depth 0 >= 0" in result.stdout
    first = result.stdout.splitlines()[0]
    assert "1 threshold pattern(s) match no queue" in first
    assert 'WARNING config: [check.queues."nosuch[*]"] matches no queue found' in result.stdout
    document = json.loads(run("check", "--all", "--format", "json", *db, *config).stdout)
    assert any("nosuch[*]" in note for note in document["notes"])


def test_a_library_tables_queues_match_the_documented_pattern_and_a_newline_stays_escaped(
    pg_own_database, tmp_path
):
    """procrastinate's table, as status names it (public.procrastinate_jobs[QUEUE]): the
    documented form procrastinate_jobs[*] sets the level; a queue_name holding a newline keeps
    every plugin line, label and status row on its line."""
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=pg_own_database))
    with app.open():
        app.schema_manager.apply_schema()
        for queue in ("t29q", "t29q", "line\nbreak"):
            app.configure_task("noop", queue=queue, allow_unknown=True).defer()
    config = _config(tmp_path, '[check.queues."procrastinate_jobs[*]"]\nwarn_depth = 2\n')
    result = run("check", "--all", "--dsn", pg_own_database, *config)
    assert result.exit_code == 1, result.output
    assert "WARNING public.procrastinate_jobs[t29q]: depth 2 >= 2" in result.stdout
    assert "match no queue" not in result.stdout
    lines = result.stdout.splitlines()
    assert "public.procrastinate_jobs[line\\nbreak]" in result.stdout
    for line in lines[1:]:
        assert line.startswith(("OK ", "WARNING ", "CRITICAL ", "UNKNOWN ", "public.")), line
    status = run("status", "--dsn", pg_own_database, "--format", "plain")
    rows = status.stdout.splitlines()
    assert len(rows) == 3, status.stdout  # the header and one row per queue
    assert any("line\\nbreak" in row for row in rows)


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_role_allowed_one_session_still_reads_every_queue(label, request, tmp_path):
    """status, check --all and a scrape read a server's queues on two connections, the second
    opened first; a monitoring role allowed one session (CONNECTION LIMIT 1,
    MAX_USER_CONNECTIONS 1) gets every queue read on its one connection, none "not read"."""
    from tests.conftest import make_target
    from tests.helpers import reading_role

    target = make_target(label, request, tmp_path)
    db = [*target.cli_args(), "--schema", str(target.schema)]
    for name, kind in (("qa", "fifo"), ("qb", "claim"), ("qc", "heap")):
        assert run("create", name, "--kind", kind, *db).exit_code == 0
    assert run("push", "qa", "x", "y", *db).exit_code == 0
    with reading_role(target, sessions=1) as dsn:
        one = ["--dsn", dsn, "--schema", str(target.schema)]
        listed = run("status", "--format", "json", *one)
        every = run("check", "--all", *one)
        scraped = run("metrics", "--scrape-timeout", "60", *one)
    rows = json.loads(listed.stdout)["lines"]
    assert sorted(r["table"] for r in rows) == ["qa", "qb", "qc"], listed.output
    assert all(r["error"] is None for r in rows), rows
    assert {r["table"]: r["depth"] for r in rows}["qa"] == 2
    assert "not read" not in every.stdout and "UNKNOWN" not in every.stdout, every.stdout
    unread = [s for s in scraped.stdout.splitlines() if s.startswith("qadmin_scrape_queues_unread")]
    assert unread and unread[0].endswith(" 0.0"), scraped.stdout
