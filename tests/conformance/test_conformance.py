"""The conformance harness, bounded: applications calling the installed routines directly
(psycopg, pymysql, sqlite3) in each calling mode, every kind, with and without SIGKILLed
consumers and admin commands, then the exactly-once audit (``harness.py`` says what is
expected). The full matrix is ``scripts/conformance``; its results are in
benchmarks/results/conformance.md."""

from __future__ import annotations

import pytest

from tests.conformance import harness
from tests.conftest import make_target

CASES = [(engine, case) for engine in harness.ENGINES for case in harness.bounded(engine)]


def _id(engine: str, case: harness.Case) -> str:
    suffix = ("-faults" if case.faults else "") + ("-pauses" if case.pauses else "")
    return f"{engine}-{case.kind}-{case.mode.label}{suffix}"


@pytest.mark.slow
@pytest.mark.parametrize(("engine", "case"), CASES, ids=[_id(*c) for c in CASES])
def test_routines_lose_and_duplicate_nothing(engine, case, request, tmp_path):
    target = make_target(engine, request, tmp_path)
    where = harness.Where(engine, target.dsn, target.schema if engine == "postgresql" else None)
    result = harness.run_case(where, case, tmp_path)
    assert result.ok, result.line()
    if case.faults:
        assert result.kills > 0, result.line()
        assert result.converted == (case.kind == "fifo" and engine != "mysql8"), result.line()
    if case.pauses:
        assert result.pause_toggles > 1, result.line()
