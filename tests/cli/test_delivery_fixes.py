"""The tester's findings on delivery and output (fixB): SQLite file names with URI characters,
output failures, watermark advice that runs, and what pop commits when it is interrupted or its
session dies (docs/cli.md "Delivery", "SQLite files", "Exit codes")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.helpers import one_line, run, run_qadmin


@pytest.mark.parametrize("name", ["x#y.db", "x%23y.db", "x%3Fy.db", "a%25b.db"])
def test_sqlite_path_with_uri_characters_opens_that_file(tmp_path, name):
    from urllib.parse import unquote

    dsn = ["--dsn", f"sqlite:///{tmp_path / name}"]
    assert run("create", "s3", "--kind", "fifo", *dsn).exit_code == 0
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".db"] == [unquote(name)]
    pushed = run("push", "s3", "hello", *dsn)
    assert pushed.exit_code == 0, pushed.stderr
    assert run("size", "s3", *dsn).exit_code == 0


def test_sqlite_reads_of_an_escaped_name_read_that_file_and_make_nothing(tmp_path):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'app%231.db'}"]
    assert run("create", "jobs", "--kind", "fifo", *dsn).exit_code == 0
    assert run("push", "jobs", "a", "b", *dsn).exit_code == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    size = run("size", "jobs", "--format", "json", *dsn)
    assert size.exit_code == 0 and '"depth": 2' in size.stdout, size.stderr
    check = run("check", "jobs", *dsn)
    assert check.stdout.startswith("QADMIN OK"), check.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == before and "app" not in before


def test_sqlite_raw_question_mark_in_a_path_is_refused_not_cut(tmp_path):
    result = run("create", "s3", "--kind", "fifo", "--dsn", f"sqlite:///{tmp_path / 'x?y.db'}")
    assert result.exit_code == 2 and "%3F" in one_line(result)
    assert list(tmp_path.iterdir()) == []


def _stdout_closed() -> None:
    os.close(1)


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_output_that_cannot_be_written_is_one_line_and_exit_11_for_pop_peek_and_reads(
    tmp_path, stdout
):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert run("create", "q", "--kind", "fifo", *dsn).exit_code == 0
    assert run("push", "q", "a", "b", *dsn).exit_code == 0
    for args in (["pop", "q"], ["peek", "q"], ["list"], ["size", "q"], ["status"]):
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [sys.executable, "-m", "qadmin", *args, *dsn],
                stdin=subprocess.DEVNULL,
                stdout=full if stdout == "full" else None,
                stderr=subprocess.PIPE,
                preexec_fn=_stdout_closed if stdout == "closed" else None,
                text=True,
                timeout=120,
                check=False,
            )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 11, (args, done.stderr)
        assert len(lines) == 1 and lines[0].startswith("qadmin: error: output failed ("), lines
        assert "internal error" not in done.stderr
    assert "a" in run("peek", "q", *dsn).stdout  # the pop took nothing: its output never went out


def test_watermark_repair_on_a_queue_without_one_says_so_before_asking_for_yes(tmp_path):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert run("create", "p_q", "--kind", "fifo", *dsn).exit_code == 0
    for args in (["repair"], ["repair", "--yes"], ["repair", "--dry-run"], ["show"]):
        result = run("watermark", "p_q", *args, *dsn)  # off a terminal: no --yes is no answer
        assert result.exit_code == 2 and "has no watermark" in one_line(result), (args, result)


PLAIN = ("--format", "plain")


def _popping(db: list[str], count: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "qadmin", "pop", "q", "--count", str(count), *PLAIN, *db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )


def _filled(label: str, kind: str, request, tmp_path, total: int):
    from tests.conftest import make_target

    target = make_target(label, request, tmp_path)
    db = target.cli_args()
    assert run_qadmin("create", "q", "--kind", kind, *db).returncode == 0
    lines = b"".join(b"m%d\n" % n for n in range(total))
    assert run_qadmin("push", "q", "--lines", *db, stdin=lines).returncode == 0
    return target, db


@pytest.mark.parametrize(
    ("label", "kind", "signame"),
    [
        ("sqlite", "fifo", "SIGINT"),
        ("sqlite", "claim", "SIGTERM"),
        ("postgresql", "claim", "SIGINT"),
        ("postgresql", "fifo", "SIGTERM"),
        ("mariadb", "fifo", "SIGTERM"),
    ],
)
def test_an_interrupted_pop_commits_what_reached_its_reader(
    label, kind, signame, request, tmp_path
):
    """docs/cli.md "Delivery": a stop while pop writes commits exactly the messages written to
    the reader, puts the rest back, and says so; none of them is served twice."""
    total = 40
    _, db = _filled(label, kind, request, tmp_path, total)
    popper = _popping(db, total)
    assert popper.stdout is not None and popper.stderr is not None
    read = [popper.stdout.readline() for _ in range(4)]  # the header, then 3 messages
    assert read[-1].split()[-1] == b"m2", read
    popper.send_signal(getattr(signal, signame))
    read += popper.stdout.readlines()  # what was written before the stop took effect
    err = popper.stderr.read().decode()
    code = popper.wait(timeout=120)
    got = [line.split()[-1].decode() for line in read[1:]]
    assert got == [f"m{n}" for n in range(len(got))]
    assert code == 128 + getattr(signal, signame), err
    said = err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("qadmin: interrupted"), said
    assert said[0].endswith(f"delivered {len(got)} of {total}; {total - len(got)} stay queued")
    rest = run_qadmin("pop", "q", "--count", "1000", "--format", "json", *db)
    assert rest.returncode == 0, rest.stderr
    left = [r["payload"] for r in json.loads(rest.stdout)]
    assert left == [f"m{n}" for n in range(len(got), total)]  # none twice, none lost


def _session_of_the_pop(target) -> int:
    """The server session of the one qadmin pop holding a transaction open in this test's
    schema (PostgreSQL) or database (MariaDB)."""
    import time

    give_up = time.monotonic() + 120
    while not (found := _sessions(target)):
        assert time.monotonic() < give_up, "the pop's session was never seen"
        time.sleep(0.05)
    return found[0]


def _sessions(target) -> list[int]:
    if target.label == "postgresql":
        import psycopg

        from tests.conftest import PG_ADMIN

        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            rows = admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'qadmin'"
                " AND state = 'idle in transaction' AND position(%s in query) > 0",
                (target.schema,),
            ).fetchall()
        return [int(r[0]) for r in rows]
    import pymysql

    from tests.conftest import MY_HOST

    admin = pymysql.connect(host=MY_HOST, user="root", password="", autocommit=True)
    with admin, admin.cursor() as cur:
        cur.execute(
            "SELECT id FROM information_schema.processlist WHERE db = %s AND command = 'Sleep'",
            (target.dsn.rsplit("/", 1)[1].split("?")[0],),
        )
        return [int(r[0]) for r in cur.fetchall()]


def _end_session(target, session: int) -> None:
    """End it as a DBA would, and wait until the server has (synchronised on the server)."""
    import time

    if target.label == "postgresql":
        import psycopg

        from tests.conftest import PG_ADMIN

        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (session,))
            give_up = time.monotonic() + 120
            while admin.execute(
                "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (session,)
            ).fetchall():
                assert time.monotonic() < give_up
                time.sleep(0.05)
        return
    import pymysql

    from tests.conftest import MY_HOST

    admin = pymysql.connect(host=MY_HOST, user="root", password="", autocommit=True)
    with admin, admin.cursor() as cur:
        cur.execute(f"KILL CONNECTION {int(session)}")
        give_up = time.monotonic() + 120
        while cur.execute("SELECT 1 FROM information_schema.processlist WHERE id = %s", (session,)):
            assert time.monotonic() < give_up
            time.sleep(0.05)


@pytest.mark.parametrize(("label", "kind"), [("postgresql", "claim"), ("mariadb", "fifo")])
def test_a_pop_whose_session_is_killed_stops_writing_and_says_they_come_again(
    label, kind, request, tmp_path
):
    total = 40
    target, db = _filled(label, kind, request, tmp_path, total)
    popper = _popping(db, total)
    assert popper.stdout is not None and popper.stderr is not None
    read = [popper.stdout.readline() for _ in range(3)]  # the header, then 2 messages
    assert read[-1].split()[-1] == b"m1", read
    session = _session_of_the_pop(target)
    _end_session(target, session)  # qadmin waits for m2 to be read: it learns of it there
    read += popper.stdout.readlines()
    err = popper.stderr.read().decode()
    code = popper.wait(timeout=120)
    written = len(read) - 1
    assert code == 6, err
    said = err.strip().splitlines()
    assert len(said) == 1, said
    assert said[0].endswith(
        f"the {written} messages written were not removed from the queue and will be "
        "delivered again"
    )
    assert written < total  # it stopped writing once the session was known dead
    rest = run_qadmin("pop", "q", "--count", "1000", "--format", "json", *db)
    assert [r["payload"] for r in json.loads(rest.stdout)] == [f"m{n}" for n in range(total)]
