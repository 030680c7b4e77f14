"""The tester's findings on delivery and output (fixB): SQLite file names with URI characters,
output failures, watermark advice that runs, and what pop commits when it is interrupted or its
session dies (docs/cli.md "Delivery", "SQLite files", "Exit codes")."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import one_line, run


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
