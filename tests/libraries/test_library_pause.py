"""pause and resume of a library's named queue: the same row change as the library's own API.

River is Go and Solid Queue is Ruby, and neither runs here: their tables are made from their
migrations (River's 002/004 river_job and river_queue, Solid Queue's queue_schema.rb) and the
change qadmin makes is compared with the statement the library runs (River's QueuePause and
QueueResume queries, run beside it on another queue; Solid Queue's ``Pause.create_or_find_by!``
and ``Pause.where(queue_name:).delete_all``). Any other library is refused in one line."""

from __future__ import annotations

import json

import psycopg
import pytest

from qadmin.errors import EXIT_NOT_FOUND, EXIT_USAGE
from tests.libraries.scenario import qadmin
from tests.libraries.test_shapes import OBAN, RIVER, SOLID_READY, _create, _place, _statements

# River's migration 004 (river_queue), as its migration file writes it.
RIVER_QUEUE = (
    "CREATE TABLE river_queue (name text PRIMARY KEY NOT NULL, "
    "created_at timestamptz NOT NULL DEFAULT now(), "
    "metadata jsonb NOT NULL DEFAULT '{}'::jsonb, paused_at timestamptz, "
    "updated_at timestamptz NOT NULL)"
)
# River's own QueuePause / QueueResume (riverpgxv5 river_queue.sql), for one named queue.
RIVER_PAUSE = (
    "UPDATE river_queue SET paused_at = CASE WHEN paused_at IS NULL THEN now() "
    "ELSE paused_at END, updated_at = CASE WHEN paused_at IS NULL THEN now() "
    "ELSE updated_at END WHERE name = %s"
)
RIVER_RESUME = (
    "UPDATE river_queue SET paused_at = NULL, updated_at = CASE WHEN paused_at IS NOT NULL "
    "THEN now() ELSE updated_at END WHERE name = %s"
)
# Solid Queue's queue_schema.rb: solid_queue_pauses.
SOLID_PAUSES = {
    "postgresql": "CREATE TABLE solid_queue_pauses (id bigserial PRIMARY KEY, "
    "queue_name varchar NOT NULL, created_at timestamp(6) NOT NULL)",
    "mariadb": "CREATE TABLE solid_queue_pauses (id bigint AUTO_INCREMENT PRIMARY KEY, "
    "queue_name varchar(255) NOT NULL, created_at datetime(6) NOT NULL)",
    "sqlite": "CREATE TABLE solid_queue_pauses (id integer PRIMARY KEY AUTOINCREMENT, "
    "queue_name varchar NOT NULL, created_at datetime(6) NOT NULL)",
}
SOLID_INDEX = (
    "CREATE UNIQUE INDEX index_solid_queue_pauses_on_queue_name ON solid_queue_pauses (queue_name)"
)


def _db(dsn: str, schema: str | None) -> list[str]:
    return ["--dsn", dsn, *(["--schema", schema] if schema else [])]


def _river_rows(conn: psycopg.Connection) -> dict[str, tuple]:
    rows = conn.execute(
        "SELECT name, paused_at IS NOT NULL, paused_at = updated_at, updated_at FROM river_queue"
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


def test_river_pause_and_resume_are_river_s_own_row_change_and_notification(request, tmp_path):
    dsn, schema = _place("postgresql", request, tmp_path)
    _create(
        "postgresql",
        dsn,
        schema,
        [
            *_statements(RIVER, "postgresql"),
            RIVER_QUEUE,
            "INSERT INTO river_queue (name, updated_at) VALUES "
            "('default', now() - interval '1 hour'), ('other', now() - interval '1 hour')",
        ],
    )
    db = _db(dsn, schema)
    conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}")
    conn.execute(f'LISTEN "{schema}.river_control"')
    before = _river_rows(conn)

    result = qadmin("pause", "river_job", "--queue", "default", "--yes", *db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["paused"] is True
    conn.execute(RIVER_PAUSE, ["other"])  # River's own query, on the other queue
    after = _river_rows(conn)
    assert after["default"][:2] == after["other"][:2] == (True, True)
    assert after["default"][2] > before["default"][2]
    [note] = list(conn.notifies(timeout=5, stop_after=1))
    assert json.loads(note.payload) == {"action": "pause", "queue": "default"}

    again = qadmin("pause", "river_job", "--queue", "default", "--yes", *db)
    assert again.exit_code == 0 and "already paused" in again.stderr
    assert _river_rows(conn)["default"] == after["default"]  # River's CASE keeps the time

    result = qadmin("resume", "river_job", "--queue", "default", "--yes", *db)
    assert result.exit_code == 0, result.stderr
    conn.execute(RIVER_RESUME, ["other"])
    resumed = _river_rows(conn)
    assert resumed["default"][0] is resumed["other"][0] is False
    [note] = list(conn.notifies(timeout=5, stop_after=1))
    assert json.loads(note.payload) == {"action": "resume", "queue": "default"}

    missing = qadmin("pause", "river_job", "--queue", "nope", "--yes", *db)
    assert missing.exit_code == EXIT_NOT_FOUND and "River has no queue" in missing.stderr
    unnamed = qadmin("pause", "river_job", "--yes", *db)
    assert unnamed.exit_code == EXIT_USAGE and "--queue NAME" in unnamed.stderr
    conn.close()


@pytest.mark.parametrize("engine", ["postgresql", "mariadb", "sqlite"])
def test_solid_queue_pause_and_resume_are_its_pauses_row(engine, request, tmp_path):
    dsn, schema = _place(engine, request, tmp_path)
    _create(
        engine, dsn, schema, [*_statements(SOLID_READY, engine), SOLID_PAUSES[engine], SOLID_INDEX]
    )
    db = _db(dsn, schema)
    table = "solid_queue_ready_executions"
    dry = qadmin("pause", table, "--queue", "default", "--dry-run", *db)
    assert dry.exit_code == 0 and "solid_queue_pauses" in dry.stdout
    result = qadmin("pause", table, "--queue", "default", "--yes", *db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    paused = json.loads(result.stdout)
    assert paused["paused"] is True and paused["paused_at"]
    again = qadmin("pause", table, "--queue", "default", "--yes", *db)
    assert again.exit_code == 0 and "already paused" in again.stderr
    result = qadmin("resume", table, "--queue", "default", "--yes", *db, "--format", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["paused"] is False
    again = qadmin("resume", table, "--queue", "default", "--yes", *db)
    assert again.exit_code == 0 and "not paused" in again.stderr


def test_a_library_without_a_pause_table_is_refused_in_one_line(request, tmp_path):
    dsn, schema = _place("postgresql", request, tmp_path)
    _create("postgresql", dsn, schema, _statements(OBAN, "postgresql"))
    result = qadmin("pause", "oban_jobs", "--queue", "default", "--yes", *_db(dsn, schema))
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.count("\n") == 1 and "oban" in result.stderr
