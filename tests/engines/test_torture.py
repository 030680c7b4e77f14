"""The torture harness, bounded: every kind on SQLite, PostgreSQL and MariaDB under consumer
SIGKILLs, server-side connection kills, lock timeouts, a held snapshot and admin commands, then
the exactly-once (claim: at-least-once, every duplicate requeued) audit. The full-size run is
`scripts/torture`; its results are in benchmarks/results/torture.md."""

from __future__ import annotations

import pytest

from tests.conftest import make_target
from tests.engines import torture

MESSAGES = 400
MIN_SECONDS = 4.0


@pytest.mark.parametrize("kind", sorted(torture.KINDS))
@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_torture_loses_and_duplicates_nothing(label, kind, request, tmp_path):
    target = make_target(label, request, tmp_path)
    faults = torture.Faults(consumer_kill_s=0.7, connection_kill_s=0.5, lock_hold_s=3.0)
    [audit] = torture.torture(
        target.dsn,
        target.engine_schema,
        label,
        [kind],
        MESSAGES,
        tmp_path,
        faults=faults,
        min_s=MIN_SECONDS,
    )
    assert audit.pushed + audit.uncertain_pushes == MESSAGES, audit.line()
    assert audit.consumers_killed > 0, audit.line()
    assert audit.ok, (audit.line(), audit.admin_failures)
    assert audit.converted == (kind == "fifo"), audit.line()  # the fifo became a ring mid-run
