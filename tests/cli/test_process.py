"""The installed ``qadmin`` as a real process: exit codes, streams, start-up cost, completions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qadmin.cli.completion import SHELLS, completion_script
from tests.helpers import run_qadmin

REPO = Path(__file__).resolve().parents[2]
HEAVY = (
    "pyspark",
    "psycopg",
    "pymysql",
    "pyodbc",
    "pyarrow",
    "sqlfluff",
    "rich",
    "tabulate",
    "prometheus_client",
)


qadmin = run_qadmin


def test_importing_the_cli_loads_no_driver_and_no_pyspark():
    code = f"import sys, qadmin.cli; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_help_exits_0_on_stdout():
    result = qadmin("--help")
    assert result.returncode == 0
    assert b"Exit codes" in result.stdout and result.stderr == b""


def test_no_command_prints_help_and_exits_2():
    result = qadmin()
    assert result.returncode == 2 and b"Commands:" in result.stderr


def test_pipeline_exit_codes_and_streams(tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert qadmin("create", "q", "--kind", "fifo", *db).returncode == 0
    pushed = qadmin("push", "q", "--lines", *db, stdin=b"a\nb\n")
    assert pushed.returncode == 0 and pushed.stderr == b""
    popped = qadmin("pop", "q", "-n", "5", "--format", "json", *db)
    assert [r["payload"] for r in json.loads(popped.stdout)] == ["a", "b"]
    empty = qadmin("pop", "q", *db)
    assert empty.returncode == 3
    assert empty.stderr == b"qadmin: queue q is empty\n"
    unknown = qadmin("pop", "nope", *db)
    assert unknown.returncode == 5 and len(unknown.stderr.splitlines()) == 1


def test_piped_output_has_no_colour_codes(tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    qadmin("create", "q", "--kind", "fifo", *db)
    out = qadmin("list", *db)
    assert b"\x1b[" not in out.stdout and out.stdout.startswith(b"name")


@pytest.mark.parametrize(
    "args",
    [
        ["pop", "q", "--dsn", "mysql://root:wrong-pw-77@127.0.0.1:1/x"],
        ["pop", "q;drop", "--dsn", "sqlite:///:memory:"],
        ["list", "--dsn", "postgresql://x:y@[::1/db"],
        ["create", "q", "--kind", "ring", "--capacity", "99999999999999"],
    ],
)
def test_bad_input_never_shows_a_traceback(args):
    result = qadmin(*args)
    assert result.returncode in (2, 6)
    assert b"Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert b"wrong-pw-77" not in result.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_scripts_are_current(shell):
    shipped = (REPO / "completions" / f"qadmin.{shell}").read_text()
    assert shipped == completion_script(shell) + "\n", (
        f"regenerate: qadmin completion {shell} > completions/qadmin.{shell}"
    )


def test_bash_completion_offers_commands():
    env = dict(os.environ, COMP_WORDS="qadmin pu", COMP_CWORD="1", _QADMIN_COMPLETE="bash_complete")
    out = subprocess.run(
        [sys.executable, "-m", "qadmin"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert set(out.stdout.split()) == {"plain,push", "plain,purge"}


def test_message_argument_that_is_not_utf8_is_refused_with_one_line(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    assert qadmin("create", "q", "--kind", "fifo", "--dsn", db).returncode == 0
    result = subprocess.run(
        [sys.executable, "-m", "qadmin", "push", "q", b"ok\xff\xfe", "--dsn", db],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.decode().strip().splitlines() == [
        "qadmin: error: message argument 1 is not valid UTF-8 text; "
        "push binary data with --file PATH or on stdin"
    ]
    assert qadmin("pop", "q", "--dsn", db).returncode == 3  # nothing was pushed
