"""The watermark_lagging finding names what the MySQL / MariaDB advance recorded as holding the
watermark (held_by), with the fix for that cause, and an open transaction when nothing was
recorded (PostgreSQL, SQLite, queues made before held_by existed)."""

from __future__ import annotations

from typing import Any

import pytest

from qadmin.diagnostics.entries import watermark
from qadmin.diagnostics.model import Header, InspectReport, Options
from qadmin.dsn import parse
from qadmin.engines.mysql import MysqlEngine
from qadmin.ops.watermark import WatermarkState


def _lagging(held_by: str | None) -> list[Any]:
    state = WatermarkState(
        queue="q",
        watermark=1,
        head_id=5_001,
        lag_ids=5_000,
        candidate=101,
        candidate_age_s=120.0,
        advanced_at=None,
        held_by=held_by,
        stranded=0,
        stranded_min_id=None,
        oldest_stranded_s=None,
        state="ok",
    )
    report = InspectReport(
        Header("q", "db", "mysql", "mariadb", "10.11", "fifo"),
        {"watermark": watermark.Watermark(state)},
        Options(),
        MysqlEngine(parse("mysql://root@localhost/db")),
    )
    return watermark.rule(report)


@pytest.mark.parametrize(
    ("held_by", "fix"),
    [
        ("INNODB_TRX unreadable: the queue's definer needs PROCESS", "GRANT PROCESS"),
        ("INNODB_TRX not refilled: other sessions read it less than 0.1 s apart", "find what"),
        (
            "the dequeuing transaction is SERIALIZABLE: only autocommit and READ COMMITTED "
            "dequeues move it",
            "dequeue",
        ),
        (
            "a read-write transaction that has written or is inside a statement is open since "
            "the candidate was taken",
            "qadmin ghosts q to find the open",
        ),
        (None, "qadmin ghosts q to find the open"),
    ],
)
def test_the_lagging_watermark_names_its_cause_and_its_fix(held_by, fix):
    (finding,) = _lagging(held_by)
    assert finding.code == "watermark_lagging"
    assert (held_by or "a transaction open since then") in finding.message
    assert finding.fix.startswith(fix), finding.fix
