"""Queue names at the edges: the empty string is a queue of its own (``TABLE['']``), not the
rows that name none (``TABLE[]``, NULL); ``--queue ''`` reads it; ``--queue-null`` on a NOT
NULL column says it can read nothing; a name holding a control character is shown with its
escape and reached with bash's ``$'...'`` quoting, as the fixes print it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qadmin.profiles.model import shell_word
from tests.conftest import make_target
from tests.engines.test_named_queues import _sql, as_json, configured

PROFILE = '[tables.rj]\nqueue_column = "queue"\nstate_column = "st"\npending = ["new"]\n'


def test_the_empty_name_null_and_control_characters_are_queues_apart(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    target = make_target("sqlite", request, tmp_path)
    _sql(
        target,
        [
            "CREATE TABLE rj (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, st TEXT NOT NULL)",
            "INSERT INTO rj (queue, st) VALUES ('', 'new'), ('mail', 'new'), ('mail', 'new'),"
            " ('new' || char(10) || 'line', 'new')",
            "CREATE TABLE dj (id INTEGER PRIMARY KEY, queue TEXT, st TEXT NOT NULL)",
            "INSERT INTO dj (queue, st) VALUES (NULL, 'new'), ('', 'new'), ('', 'new')",
        ],
    )
    config = tmp_path / "q.toml"
    config.write_text(PROFILE + PROFILE.replace("rj", "dj"))

    status = json.loads(configured(target, config, "status", "--format", "json").stdout)["lines"]
    depths = {line["name"]: line["depth"] for line in status}
    assert depths == {
        "rj['']": 1,
        "rj[mail]": 2,
        "rj[new\nline]": 1,
        "dj['']": 2,
        "dj[]": 1,
    }
    plain = configured(target, config, "status", "--format", "plain").stdout
    assert "rj[new\\nline]" in plain and "\nline]" not in plain  # one line, its escape shown

    assert as_json(target, config, "size", "rj", "--queue", "")["depth"] == 1
    assert as_json(target, config, "size", "dj", "--queue", "")["depth"] == 2
    assert as_json(target, config, "size", "dj", "--queue-null")["depth"] == 1
    # What bash makes of the printed $'new\nline': the name with its newline.
    assert as_json(target, config, "size", "rj", "--queue", "new\nline")["depth"] == 1
    assert shell_word("new\nline") == "$'new\\nline'" and shell_word("") == "''"

    refused = configured(target, config, "check", "rj", "--queue-null", "--crit-depth", "1")
    assert refused.exit_code != 0, refused.output
    said = refused.stdout + refused.stderr
    assert "NOT NULL" in said and "--queue ''" in said

    # A printed fix names the queue so that it can be pasted back: check's findings.
    empty = configured(target, config, "check", "rj", "--queue", "", "--crit-depth", "1")
    assert empty.exit_code == 2 and "rj['']" in empty.stdout, empty.output
