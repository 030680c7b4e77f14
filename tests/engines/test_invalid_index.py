"""An INVALID index made for real: CREATE UNIQUE INDEX CONCURRENTLY over duplicate payloads
fails and leaves the index behind, INVALID. inspect names it with the fix, check warns, tail
counts it, and once the printed fix ran it is gone."""

from __future__ import annotations

import json

import psycopg
import pytest
from click.testing import CliRunner

from qadmin.cli import cli
from qadmin.ops import messages, queues
from tests.conftest import PG_ADMIN, make_target


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
    runner = CliRunner()
    args = ["idx_q", "--sample", "0", *target.cli_args()]
    report = json.loads(runner.invoke(cli, ["inspect", *args, "--format", "json"]).stdout)
    assert [i["index_name"] for i in report["invalid_indexes"]["indexes"]] == ["idx_q_once"]
    finding = next(f for f in report["findings"] if f["code"] == "invalid_index")
    assert finding["severity"] == "warning"
    assert f'DROP INDEX CONCURRENTLY "{target.schema}"."idx_q_once"' in finding["fix"]
    assert "REINDEX INDEX CONCURRENTLY" in finding["fix"]
    checked = runner.invoke(cli, ["check", *args])
    assert checked.exit_code == 1 and "invalid_index: index idx_q_once" in checked.stdout
    tail = ["tail", "idx_q", "--count", "1", "--format", "json", *target.cli_args()]
    tailed = runner.invoke(cli, tail)
    assert json.loads(tailed.stdout)["invalid_indexes"] == 1
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP INDEX CONCURRENTLY "{target.schema}"."idx_q_once"')
    after = json.loads(runner.invoke(cli, ["inspect", *args, "--format", "json"]).stdout)
    assert after["invalid_indexes"]["indexes"] == []
    assert not any(f["code"] == "invalid_index" for f in after["findings"])
    assert runner.invoke(cli, ["check", *args]).exit_code == 0
