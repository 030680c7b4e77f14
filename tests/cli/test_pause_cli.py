"""pause and resume through the CLI: confirmation and dry runs as the other state-changing
commands, what pop says while paused, and what inspect, check and status show."""

from __future__ import annotations

import json

import pytest

from qadmin.errors import EXIT_EMPTY, EXIT_NOT_FOUND, EXIT_USAGE
from tests.conftest import make_target
from tests.helpers import invoke


def _run(db: list[str], *args: str) -> tuple[int, str, str]:
    result = invoke(*args, *db)
    return result.exit_code, result.stdout, result.stderr


def _json(db: list[str], *args: str, code: int = 0) -> object:
    got, out, err = _run(db, *args, "--format", "json")
    assert got == code, err
    return json.loads(out)


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_pause_stops_pop_shows_everywhere_and_resume_serves_again(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    db = target.cli_args()
    _json(db, "create", "q", "--kind", "fifo")
    _json(db, "push", "q", "a")

    code, _, err = _run(db, "pause", "q")
    assert code == EXIT_USAGE and "without --yes" in err
    code, out, _ = _run(db, "pause", "q", "--dry-run")
    assert code == 0 and "paused_at" in out
    assert _json(db, "inspect", "q", "--sample", "0")["pause"]["paused"] is False

    done = _json(db, "pause", "q", "--yes")
    assert done["paused"] is True and done["changed"] is True and not done["dry_run"]
    code, _, err = _run(db, "pause", "q", "--yes")
    assert code == 0 and "already paused since" in err

    code, _, err = _run(db, "pop", "q")
    assert code == EXIT_EMPTY and "paused since" in err and "qadmin resume q" in err
    _json(db, "push", "q", "b")  # pushes go on

    report = _json(db, "inspect", "q", "--sample", "0")
    assert report["pause"]["paused"] is True
    assert report["pause"]["paused_at"] == done["paused_at"]
    [finding] = [f for f in report["findings"] if f["code"] == "paused"]
    assert finding["severity"] == "warning" and "resume q --yes" in finding["fix"]
    # A shared server may add its own findings (a long transaction elsewhere): the pause's
    # part of the verdict is read from the summary.
    code, out, _ = _run(db, "check", "q", "--sample", "0")
    summary = out.split("|")[0]
    assert code >= 1 and "paused: q is paused since" in summary and "paused_age=" in out
    code, out, _ = _run(db, "check", "q", "--sample", "0", "--warn-paused-age", "1h")
    assert "paused" not in out.split("|")[0], out
    code, out, _ = _run(db, "check", "q", "--sample", "0", "--crit-paused-age", "0s")
    assert code == 2 and "paused: q is paused since" in out, out
    # status reads the whole (shared) server: its exit code is the worst line's, anybody's
    _, out, _ = _run(db, "status", "--format", "json")
    mine = [x for x in json.loads(out)["lines"] if x["table"] == "q"]
    [line] = [x for x in mine if target.schema is None or x["schema"] == target.schema]
    assert line["paused_at"] == done["paused_at"] and line["worst"].startswith("paused:")

    code, _, err = _run(db, "resume", "q")
    assert code == EXIT_USAGE and "without --yes" in err
    assert _json(db, "resume", "q", "--yes")["paused"] is False
    code, _, err = _run(db, "resume", "q", "--yes")
    assert code == 0 and "not paused" in err
    popped = _json(db, "pop", "q", "--count", "5")
    assert [m["payload"] for m in popped] == ["a", "b"]
    code, out, _ = _run(db, "check", "q", "--sample", "0")
    assert "paused" not in out.split("|")[0]


def test_pause_refusals_are_one_line(request, tmp_path):
    db = make_target("sqlite", request, tmp_path).cli_args()
    _json(db, "create", "q", "--kind", "claim")
    code, _, err = _run(db, "pause", "nope", "--yes")
    assert code == EXIT_NOT_FOUND and err.count("\n") == 1
    code, _, err = _run(db, "pause", "q", "--queue", "x", "--yes")
    assert code == EXIT_USAGE and "--queue" in err and err.count("\n") == 1
