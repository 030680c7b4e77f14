"""Stored data never drives the reader's terminal: an error, a payload, a library's queue name
holding escape sequences (clear screen, set title, BEL, C1, bidi overrides) reach every human
format (a rich table on a forced terminal and on a real pseudo-terminal, plain text, stderr
lines) as visible text, while JSON and CSV keep the data exact."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import subprocess
import sys

import psycopg
import pytest
from click.testing import CliRunner

from qadmin import render
from qadmin.cli import cli
from tests.conftest import PG_ADMIN, make_target

ERROR = "err \x1b[2J\x1b]0;pwn\x07 \x9b31m \u202eevil"
PAYLOAD = "\x1b[31mRED\x1b]0;title\x07\x85\u2066"
LIBRARY_QUEUE = "mail\x1b]0;queue\x07\x1b[2J"

# rich's own on a terminal (styles, a live table's cursor hidden and moved, lines erased):
# the only escape sequences allowed out; the data's clear-screen and title never
_STYLE = re.compile(r"\x1b\[(?:[0-9;]*m|\?25[lh]|[0-9]*A|2K)|\r")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _unsafe(text: str) -> list[str]:
    """The control characters in ``text`` that are not rich's own styling."""
    return _UNSAFE.findall(_STYLE.sub("", text))


def _run(args: list[str], *, terminal: bool = False) -> tuple[int, str, str]:
    env = {"FORCE_COLOR": "1", "COLUMNS": "200"} if terminal else {"COLUMNS": "200"}
    result = CliRunner(env=env).invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def db(request, tmp_path) -> list[str]:
    """A PostgreSQL schema with a claim queue holding one dead message (the error and payload
    above, written as an application would through the CLI) and one live message, and a
    procrastinate table with a named queue whose name holds escapes."""
    target = make_target("postgresql", request, tmp_path)
    args = target.cli_args()
    for command in (
        ["create", "q", "--kind", "claim", "--max-attempts", "1"],
        ["push", "q", PAYLOAD],
        ["pop", "q"],
        ["fail", "q", "1", "--error", ERROR],
        ["push", "q", PAYLOAD],
    ):
        code, _, err = _run([*command, *args, "--format", "json"])
        assert code == 0, (command, err)
    schema = f'"{target.schema}"'
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"CREATE TABLE {schema}.procrastinate_jobs (id bigserial PRIMARY KEY, "
            "queue_name text NOT NULL, task_name text NOT NULL, priority integer NOT NULL "
            "DEFAULT 0, lock text, queueing_lock text, args jsonb NOT NULL DEFAULT '{}', "
            "status text NOT NULL DEFAULT 'todo', scheduled_at timestamptz, "
            "attempts integer NOT NULL DEFAULT 0, abort_requested boolean NOT NULL DEFAULT "
            "false, worker_id bigint)"
        )
        admin.execute(
            f"CREATE TABLE {schema}.procrastinate_events (id bigserial PRIMARY KEY, "
            "job_id bigint NOT NULL, type text, at timestamptz DEFAULT now())"
        )
        admin.execute(
            f"INSERT INTO {schema}.procrastinate_jobs (queue_name, task_name) VALUES (%s, %s)",
            (LIBRARY_QUEUE, "t\x1b[2J"),
        )
    return args


HUMAN = [
    ["dead", "q"],
    ["dead", "q", "--id", "1"],
    ["peek", "q"],
    ["inspect", "q", "--sample", "0"],
    ["inspect", "procrastinate_jobs", "--sample", "0"],
    ["tail", "q", "--count", "1", "--interval", "0.2"],
    ["tail", "procrastinate_jobs", "--count", "1", "--interval", "0.2"],
    ["check", "procrastinate_jobs", "--sample", "0"],
]


@pytest.mark.parametrize("fmt", ["table", "plain"])
@pytest.mark.parametrize("args", HUMAN, ids=lambda a: " ".join(a))
def test_no_escape_sequence_from_stored_data_reaches_a_human_format(db, args, fmt):
    for terminal in (False, True):
        code, out, err = _run([*args, *db, "--format", fmt], terminal=terminal)
        assert code == 0 or (args[0] == "check" and code in (1, 2)), err
        assert not _unsafe(out), (terminal, out)
        assert not _unsafe(err), (terminal, err)
    if args[0] == "dead" or args[:2] == ["inspect", "procrastinate_jobs"]:
        assert "\\x1b[2J" in out + err, "the data is shown, its escapes as text"


@pytest.mark.parametrize("fmt", ["table", "plain"])
def test_pop_shows_the_payload_escaped_and_raw_writes_the_bytes(db, fmt):
    code, out, err = _run(["pop", "q", *db, "--format", fmt], terminal=fmt == "table")
    assert code == 0, err
    assert not _unsafe(out) and "\\x1b[31mRED" in out
    for command in (["create", "r", "--kind", "fifo"], ["push", "r", PAYLOAD]):
        code, _, err = _run([*command, *db])
        assert code == 0, err
    raw = subprocess.run(
        [sys.executable, "-m", "qadmin", "pop", "r", "--raw", *db],
        capture_output=True,
        check=True,
    )
    assert raw.stdout == PAYLOAD.encode()


def test_status_lists_a_library_queue_name_escaped(db):
    for fmt in ("table", "plain"):
        code, out, err = _run(["status", *db, "--format", fmt], terminal=fmt == "table")
        assert code in (0, 1, 2, 3), err
        assert not _unsafe(out) and not _unsafe(err)
        assert "mail\\x1b]0;queue\\x07" in out


def test_json_and_csv_keep_the_data_exact(db):
    code, out, err = _run(["dead", "q", *db, "--format", "json"])
    assert code == 0, err
    [row] = json.loads(out)
    assert row["last_error"] == ERROR and row["payload"].startswith("\x1b[31mRED")
    code, out, err = _run(["dead", "q", *db, "--format", "csv"])
    assert code == 0, err
    [line] = csv.DictReader(io.StringIO(out))
    assert line["last_error"] == ERROR


def test_a_real_terminal_gets_the_default_table_without_the_escapes(db):
    """``dead q`` on a pseudo-terminal: the default format is the table, drawn by rich for a
    real terminal, and nothing from the data is sent raw."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": os.pathsep.join(sys.path)}
    with subprocess.Popen(
        [sys.executable, "-m", "qadmin", "dead", "q", *db],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait() == 0
    os.close(leader)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "last_error" in text and "\\x1b[2J" in text
    assert not _unsafe(text.replace("\r\n", "\n")), text


def test_a_message_on_stderr_is_one_visible_line():
    """An error line quoting a name (here, an unknown queue's) shows its escapes as text."""
    code, _, err = _run(["peek", "no\x1b[2Jsuch\x07", "--dsn", "sqlite:///:memory:"])
    assert code != 0 and err.count("\n") == 1 and not _unsafe(err)
    assert render.visible("a\x1b\tb\n", lines=False) == "a\\x1b\\x09b\\x0a"
    assert render.visible("a\x9b\u202eb\tc\nd") == "a\\x9b\\u202eb\tc\nd"
