"""A library's failed jobs through dead and redrive, live: procrastinate and Oban for Python
fail jobs with their own workers; qadmin lists them with their errors, and redrive gives one
back by the same row change as the library's own retry (compared with a job the library
retried itself), after which the library's worker runs it again. Elsewhere (pgqueuer, a
library whose retry is more than one row's change) redrive refuses in one line, exit 2."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from qadmin.errors import EXIT_NOT_FOUND, EXIT_USAGE
from tests.libraries.conftest import REPO, Processes
from tests.libraries.scenario import qadmin, qadmin_json, wait_until

PROCRASTINATE = "tests.libraries.apps.procrastinate_app"
OBAN = "tests.libraries.apps.oban_app"


def _rows(dsn: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, args).fetchall()


def _one_line(result: Any) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_procrastinate_failed_jobs_are_listed_and_retried_as_its_own_retry_does(
    pg_own_database: str, processes: Processes, block_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = pg_own_database
    monkeypatch.setenv("LIB_DSN", dsn)
    monkeypatch.setenv("LIB_BLOCK", str(block_file))
    # The app reads LIB_DSN when imported: a fresh import for this database, dropped after.
    _forget_app()
    lib = importlib.import_module(PROCRASTINATE)
    try:
        _procrastinate(dsn, lib, processes)
    finally:
        _forget_app()


def _forget_app() -> None:
    sys.modules.pop(PROCRASTINATE, None)
    package = sys.modules.get(PROCRASTINATE.rsplit(".", 1)[0])
    if package is not None and hasattr(package, "procrastinate_app"):
        delattr(package, "procrastinate_app")


def _procrastinate(dsn: str, lib: Any, processes: Processes) -> None:
    with lib.app.open():
        lib.app.schema_manager.apply_schema()
        mine, theirs = lib.boom.defer(), lib.boom.defer()
        lib.ok.defer(n=1)
    worker = processes.python(PROCRASTINATE, "worker")
    status = "SELECT status::text FROM procrastinate_jobs WHERE id = %s"
    failed = lambda: all(_rows(dsn, status, j) == [("failed",)] for j in (mine, theirs))  # noqa: E731
    wait_until("procrastinate's worker to fail both boom jobs", failed)
    processes.kill(worker)

    rows = qadmin_json("dead", "procrastinate_jobs", "--dsn", dsn)
    assert [(r["id"], r["state"]) for r in rows] == [(mine, "failed"), (theirs, "failed")]
    result = qadmin("dead", "procrastinate_jobs", "--error", "boom", "--dsn", dsn)
    assert result.exit_code == EXIT_USAGE
    assert "procrastinate keeps no error text" in _one_line(result)

    plan = qadmin_json(
        "redrive", "procrastinate_jobs", "--id", str(mine), "--dry-run", "--dsn", dsn
    )
    assert (plan["redriven"], plan["ids"], plan["dry_run"]) == (1, [mine], True)
    assert _rows(dsn, status, mine) == [("failed",)], "a dry run changes nothing"
    done = qadmin_json("redrive", "procrastinate_jobs", "--id", str(mine), "--yes", "--dsn", dsn)
    assert (done["redriven"], done["ids"], done["as"]) == (1, [mine], "procrastinate_retry_job_v2")
    with lib.app.open():  # procrastinate's own retry of the other, as its admin calls it
        job = lib.app.job_manager.list_jobs(id=theirs)[0]
        lib.app.job_manager.retry_job_by_id(theirs, _now(dsn), job.priority, job.queue, job.lock)
    same = (
        "SELECT status::text, attempts, priority, queue_name, lock, worker_id,"
        " scheduled_at IS NOT NULL AND scheduled_at <= now() FROM procrastinate_jobs WHERE id = %s"
    )
    assert _rows(dsn, same, mine) == _rows(dsn, same, theirs)
    assert _rows(dsn, same, mine)[0][:2] == ("todo", 2)
    # Done once: the job is no longer failed, so a second redrive of it finds nothing.
    again = qadmin("redrive", "procrastinate_jobs", "--id", str(mine), "--yes", "--dsn", dsn)
    assert again.exit_code == EXIT_NOT_FOUND and f"no failed job {mine}" in _one_line(again)
    # procrastinate's worker takes both again (and they fail again: boom).
    worker = processes.python(PROCRASTINATE, "worker")
    wait_until("procrastinate's worker to run both again", failed)
    processes.kill(worker)
    assert {
        r[0]
        for r in _rows(
            dsn, "SELECT attempts FROM procrastinate_jobs WHERE id IN (%s, %s)", mine, theirs
        )
    } == {3}
    result = qadmin("discard", "procrastinate_jobs", "--all", "--yes", "--dsn", dsn)
    assert result.exit_code == EXIT_USAGE and "procrastinate table" in _one_line(result)


def _now(dsn: str) -> Any:
    return _rows(dsn, "SELECT now()")[0][0]


def test_pgqueuer_style_tables_refuse_redrive_in_one_line(pg_own_database: str) -> None:
    """A library whose own retry is more than one row's change (pgqueuer: nothing qadmin can
    repeat) is refused in one line, exit 2; dead still lists its failed jobs."""
    dsn = pg_own_database
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TYPE pgqueuer_status AS ENUM ('queued', 'picked', 'successful',"
            " 'exception', 'canceled', 'deleted', 'failed')"
        )
        conn.execute(
            "CREATE TABLE pgqueuer (id serial PRIMARY KEY, priority int NOT NULL DEFAULT 0,"
            " queue_manager_id uuid, created timestamptz NOT NULL DEFAULT now(),"
            " updated timestamptz NOT NULL DEFAULT now(), heartbeat timestamptz NOT NULL"
            " DEFAULT now(), execute_after timestamptz NOT NULL DEFAULT now(),"
            " status pgqueuer_status NOT NULL, entrypoint text NOT NULL, payload bytea,"
            " attempts int NOT NULL DEFAULT 0)"
        )
        conn.execute(
            "INSERT INTO pgqueuer (status, entrypoint) VALUES ('exception', 'a'), ('queued', 'a')"
        )
    rows = qadmin_json("dead", "pgqueuer", "--dsn", dsn)
    assert [(r["id"], r["state"]) for r in rows] == [(1, "exception")]
    result = qadmin("redrive", "pgqueuer", "--all", "--yes", "--dsn", dsn)
    assert result.exit_code == EXIT_USAGE
    assert "retry its jobs with the library's own tooling" in _one_line(result)


def _oban(python: str, dsn: str, *args: str) -> Any:
    out = subprocess.run(
        [python, "-m", OBAN, *args],
        cwd=REPO,
        env={**os.environ, "LIB_DSN": dsn},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else None


def test_oban_discarded_jobs_are_listed_with_errors_and_retried_as_oban_does(
    pg_own_database: str, processes: Processes, oban_python: str
) -> None:
    dsn = pg_own_database
    mine, theirs, left = _oban(oban_python, dsn, "doomed", "3")
    worker = processes.start([oban_python, "-m", OBAN, "worker", "doomed"], {"LIB_DSN": dsn})
    state = "SELECT state::text FROM oban_jobs WHERE id = %s"
    discarded = lambda: all(_rows(dsn, state, j) == [("discarded",)] for j in (mine, theirs, left))  # noqa: E731
    wait_until("Oban's worker to discard the doomed jobs", discarded)
    processes.kill(worker)  # until both are retried: the rows are compared before it runs them

    rows = qadmin_json("dead", "oban_jobs", "--dsn", dsn)
    assert [(r["id"], r["state"], r["attempts"]) for r in rows] == [
        (j, "discarded", 1) for j in (mine, theirs, left)
    ]
    assert "doomed on purpose 0" in rows[0]["last_error"] and rows[0]["failed_at"]
    [only] = qadmin_json("dead", "oban_jobs", "--error", "purpose 1", "--dsn", dsn)
    assert only["id"] == theirs
    assert qadmin_json("dead", "oban_jobs", "--older-than", "1h", "--dsn", dsn) == []
    history = qadmin_json("dead", "oban_jobs", "--id", str(mine), "--dsn", dsn)
    assert [(e["attempt"], "purpose 0" in e["error"]) for e in history["errors"]] == [(1, True)]
    result = qadmin("discard", "oban_jobs", "--all", "--yes", "--dsn", dsn)
    assert result.exit_code == EXIT_USAGE and "oban table" in _one_line(result)

    done = qadmin_json("redrive", "oban_jobs", "--error", "purpose 0", "--yes", "--dsn", dsn)
    assert (done["redriven"], done["ids"], done["as"]) == (1, [mine], "Oban's retry_job")
    _oban(oban_python, dsn, "retry", str(theirs))  # Oban's own retry of the other
    # The same row change (scheduled_at: each its own now, both within the last minute).
    same = (
        "SELECT state::text, max_attempts, completed_at, cancelled_at, discarded_at,"
        " meta -> 'uniq_bmp', scheduled_at > now() AT TIME ZONE 'UTC' - interval '1 minute'"
        " FROM oban_jobs WHERE id = %s"
    )
    assert _rows(dsn, same, mine) == _rows(dsn, same, theirs)
    assert _rows(dsn, same, mine)[0][:2] == ("available", 2), "one more attempt, as Oban's"
    processes.start([oban_python, "-m", OBAN, "worker", "doomed"], {"LIB_DSN": dsn})
    wait_until(
        "Oban's worker to run both again (and discard them again)",
        lambda: _rows(dsn, "SELECT count(*) FROM oban_jobs WHERE attempt = 2")[0][0] == 2,
    )
    errors = "SELECT jsonb_array_length(errors) FROM oban_jobs WHERE id = %s"
    assert _rows(dsn, errors, mine) == _rows(dsn, errors, theirs) == [(2,)]
    assert _rows(dsn, state, left) == [("discarded",)], "a filter takes only what it picks"


def test_river_discarded_jobs_go_back_by_its_job_retry_row_change(pg_own_database: str) -> None:
    """River does not run here: a table of its shape (tests/libraries/test_shapes.py's), a
    job discarded after using its attempts, and the row change of River's JobRetry."""
    from tests.libraries.test_shapes import RIVER, _statements

    dsn = pg_own_database
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in _statements(RIVER, "postgresql"):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO river_job (id, kind, state, attempt, max_attempts, finalized_at, errors)"
            " VALUES (200, 'a', 'discarded', 3, 3, now() - interval '2 hours',"
            ' ARRAY[\'{"at": "2026-01-01T00:00:00Z", "attempt": 3, "error": "gave up"}\''
            "::jsonb])"
        )
    rows = qadmin_json("dead", "river_job", "--older-than", "1h", "--dsn", dsn)
    assert [(r["id"], r["last_error"]) for r in rows] == [(200, "gave up")]
    done = qadmin_json("redrive", "river_job", "--older-than", "1h", "--yes", "--dsn", dsn)
    assert (done["ids"], done["as"]) == ([200], "River's JobRetry")
    row = "SELECT state::text, max_attempts, finalized_at, scheduled_at <= now() FROM river_job"
    assert _rows(dsn, row + " WHERE id = 200") == [("available", 4, None, True)]
    # The other discarded job (no finalized_at: this shape's own row) was not picked by age.
    assert qadmin_json("dead", "river_job", "--dsn", dsn)[0]["id"] != 200
