"""Whatever a time or a state column holds, qadmin answers in one line, never a traceback.

Hypothesis stores one generated value at a time in a declared table's time column (every
column type a queue table keeps its times in, on each live engine: timestamps with and
without a zone, integer and float epochs read in s, ms or ns, SQLite's untyped text) and
in its state column, then runs ``size`` and ``check`` on it: size answers (exit 0, an age
that is never negative) or refuses the value in one line (exit 2); check prints its QADMIN
line with a Nagios code.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Target, make_target
from tests.helpers import invoke

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TIMES = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)

# (engine, column type, values it can hold, time_unit choices)
CASES: list[tuple[str, str, Any, tuple[str | None, ...]]] = [
    ("sqlite", "TIMESTAMP", st.one_of(INT64, FLOATS, st.text(max_size=30), TIMES), (None,)),
    ("sqlite", "INTEGER", INT64, (None, "ms", "ns")),
    ("sqlite", "REAL", FLOATS, (None, "s", "us")),
    ("sqlite", "TEXT", st.one_of(st.text(max_size=30), TIMES.map(str)), (None,)),
    (
        "postgresql",
        "timestamptz",
        st.one_of(TIMES, st.sampled_from(["infinity", "-infinity"])),
        (None,),
    ),
    (
        "postgresql",
        "timestamp",
        st.one_of(TIMES, st.sampled_from(["infinity", "-infinity"])),
        (None,),
    ),
    ("postgresql", "bigint", INT64, ("s", "ms", "ns")),
    ("postgresql", "double precision", FLOATS, ("s", "ms")),
    (
        "mariadb",
        "DATETIME(6)",
        st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)),
        (None,),
    ),
    (
        "mariadb",
        "TIMESTAMP(6) NULL",
        st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2038, 1, 18)),
        (None,),
    ),
    ("mariadb", "BIGINT", INT64, ("s", "ms", "ns")),
    ("mariadb", "DOUBLE", FINITE, ("s", "us")),
]
# PostgreSQL's text holds no NUL: a state is any other text.
STATES = st.one_of(st.text(st.characters(blacklist_characters="\x00"), max_size=20), st.just("new"))


def _table(target: Target) -> str:
    return f'"{target.schema}".t' if target.label == "postgresql" else "t"


@pytest.mark.parametrize(
    ("label", "column", "values", "units"),
    CASES,
    ids=[f"{c[0]}-{c[1].split()[0]}" for c in CASES],
)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_time_or_state_value_is_an_answer_or_one_line(
    label: str,
    column: str,
    values: Any,
    units: tuple[str | None, ...],
    data: st.DataObject,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    target = _target(label, request, tmp_path_factory)
    engine = target.engine()
    value = data.draw(values, label="value")
    state = data.draw(STATES, label="state")
    unit = data.draw(st.sampled_from(units), label="time_unit")
    if isinstance(value, float) and label == "sqlite" and math.isnan(value):
        value = None  # SQLite stores NaN as NULL
    try:
        engine.run([f"DROP TABLE IF EXISTS {_table(target)}"], None, write=True)
        engine.run(
            [f"CREATE TABLE {_table(target)} (id INTEGER PRIMARY KEY, at {column}, st TEXT)"],
            None,
            write=True,
        )
        if isinstance(value, datetime) and column.startswith("timestamptz"):
            value = value.replace(tzinfo=UTC)
        engine.run(
            [f"INSERT INTO {_table(target)} (id, at, st) VALUES (1, :at, :st)"],
            {"at": value, "st": state},
            write=True,
        )
    finally:
        engine.close()
    config = tmp_path_factory.mktemp("cfg") / "qadmin.toml"
    lines = ["[tables.t]", 'time_column = "at"', 'state_column = "st"', 'pending = ["new"]']
    lines += [f'time_unit = "{unit}"'] if unit else []
    config.write_text("\n".join(lines) + "\n")
    common = [*target.cli_args(), "--config", str(config)]
    size = invoke("size", "t", *common, "--format", "json")
    assert size.exit_code in (0, 2), (value, unit, size.output)
    assert "internal error" not in size.output and "Traceback" not in size.output
    if size.exit_code == 2:
        assert len(size.stderr.strip().splitlines()) == 1, size.stderr
    else:
        age = json.loads(size.stdout)["oldest_age_s"]
        assert age is None or age >= 0, (value, unit, age)
    checked = invoke("check", "t", *common, "--sample", "0")
    assert checked.exit_code in (0, 1, 2, 3), (value, unit, checked.output)
    assert checked.stdout.startswith("QADMIN "), (value, unit, checked.output)
    assert "internal error" not in checked.output and "Traceback" not in checked.output


_TARGETS: dict[tuple[str, str], Target] = {}


def _target(label: str, request: pytest.FixtureRequest, factory: pytest.TempPathFactory) -> Target:
    """One place per test case for all its examples (the fixtures make a fresh schema)."""
    key = (label, request.node.nodeid)
    if key not in _TARGETS:
        _TARGETS[key] = make_target(label, request, Path(factory.mktemp(label)))
    return _TARGETS[key]


def test_sqlite_an_untyped_time_column_is_read_and_never_named_by_an_empty_type(tmp_path):
    """SQLite lets a column have no declared type: its epoch milliseconds were refused with
    "column ts of main.jobs is , not an epoch in ms" (an empty type name). Such a column
    holds what was stored: read, each value checked; a column that cannot order names itself
    untyped."""
    import sqlite3

    db = tmp_path / "untyped.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, ts, payload)")
    conn.execute("INSERT INTO jobs (ts, payload) VALUES (1700000000000, 'x')")
    conn.commit()
    conn.close()
    dsn = ["--dsn", f"sqlite:///{db}", "--format", "json"]
    read = invoke(
        "size", "jobs", "--order-by", "id", "--time-column", "ts", "--time-unit", "ms", *dsn
    )
    assert read.exit_code == 0, read.output
    assert json.loads(read.stdout)["oldest_enqueued_at"].startswith("2023-11-14T22:13:20")
    order = invoke("size", "jobs", "--order-by", "ts", *dsn)
    assert order.exit_code == 2 and " is , " not in order.stderr, order.output
