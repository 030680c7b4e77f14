"""An INVALID index made for real: CREATE UNIQUE INDEX CONCURRENTLY over duplicate payloads
fails and leaves the index behind, INVALID. inspect names it with the fix, check warns, tail
counts it, and once the printed fix ran it is gone. While the duplicates stay, the fix is the
query that lists them (recreating the index would fail again and leave another INVALID one);
once they are gone, the printed DROP and CREATE run as printed."""

from __future__ import annotations

import json

import psycopg
import pytest

from qadmin.ops import messages, queues
from tests.conftest import PG_ADMIN, make_target
from tests.helpers import invoke, invoke_on


def test_a_failed_create_index_concurrently_is_found_and_fixed(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("idx_q", "fifo", None, False))
    messages.push(engine, spec, [b"same", b"same"])
    engine.close()
    table = f'"{target.schema}".idx_q'
    with (
        psycopg.connect(PG_ADMIN, autocommit=True) as admin,
        pytest.raises(psycopg.errors.UniqueViolation),
    ):
        admin.execute(f"CREATE UNIQUE INDEX CONCURRENTLY idx_q_once ON {table} (payload)")
    args = ["idx_q", "--sample", "0", *target.cli_args()]
    report = json.loads(invoke("inspect", *args, "--format", "json").stdout)
    assert [i["index_name"] for i in report["invalid_indexes"]["indexes"]] == ["idx_q_once"]
    finding = next(f for f in report["findings"] if f["code"] == "invalid_index")
    assert finding["severity"] == "warning"
    assert f'DROP INDEX CONCURRENTLY "{target.schema}"."idx_q_once"' in finding["fix"]
    assert "rows share a key" in finding["message"]
    checked = invoke("check", *args)
    assert checked.exit_code == 1 and "invalid_index: index idx_q_once" in checked.stdout
    tail = ["tail", "idx_q", "--count", "1", "--format", "json", *target.cli_args()]
    tailed = invoke(*tail)
    assert json.loads(tailed.stdout)["invalid_indexes"] == 1
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP INDEX CONCURRENTLY "{target.schema}"."idx_q_once"')
    after = json.loads(invoke("inspect", *args, "--format", "json").stdout)
    assert after["invalid_indexes"]["indexes"] == []
    assert not any(f["code"] == "invalid_index" for f in after["findings"])
    assert invoke("check", *args).exit_code == 0


def _invalid_unique_over_duplicates(target) -> str:
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("dup_q", "fifo", None, False))
    messages.push(engine, spec, [b"same", b"same", b"other"])
    engine.close()
    table = f'"{target.schema}".dup_q'
    with (
        psycopg.connect(PG_ADMIN, autocommit=True) as admin,
        pytest.raises(psycopg.errors.UniqueViolation),
    ):
        admin.execute(f"CREATE UNIQUE INDEX CONCURRENTLY dup_q_once ON {table} (payload)")
    return table


def _finding(args: list[str]) -> dict:
    report = json.loads(invoke("inspect", *args, "--format", "json").stdout)
    return next(f for f in report["findings"] if f["code"] == "invalid_index")


def test_the_fix_for_an_invalid_unique_index_over_duplicates_runs_as_printed(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    table = _invalid_unique_over_duplicates(target)
    args = ["dup_q", "--sample", "0", *target.cli_args()]
    finding = _finding(args)
    # Before the fix this printed DROP + CREATE UNIQUE INDEX CONCURRENTLY, which failed again.
    assert "CREATE UNIQUE INDEX" not in finding["fix"]
    assert "REINDEX" not in finding["fix"]
    listing = finding["fix"].split(" with ", 1)[1].split("; remove", 1)[0]
    assert listing.startswith("SELECT ")
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        assert admin.execute(listing).fetchall() == [(b"same", 2)]
    # maintain does not propose the REINDEX that would fail the same way.
    planned = invoke_on(target, "maintain", "dup_q", "--dry-run", "--format", "json")
    reindex = next(a for a in json.loads(planned.stdout)["actions"] if a["action"] == "reindex")
    assert reindex["status"].startswith("refused: rows share a key")
    assert reindex["statements"] == []
    # Once the duplicates are removed, the fix recreates the index, and runs as printed.
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(
            f"DELETE FROM {table} WHERE id = (SELECT max(id) FROM {table} "
            "WHERE payload = 'same'::bytea)"
        )
        assert admin.execute(listing).fetchall() == []
    fix = _finding(args)["fix"]
    drop, create = fix.split(", then create it again: ")
    create = create.split("; or ")[0]
    assert drop.startswith("DROP INDEX CONCURRENTLY")
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(drop)
        admin.execute(create)
    after = json.loads(invoke("inspect", *args, "--format", "json").stdout)
    assert after["invalid_indexes"]["indexes"] == []
