"""Identifier validation and quoting: no user-supplied name reaches SQL unquoted."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qadmin.engines import open_engine
from qadmin.errors import InvalidName
from qadmin.names import MAX_QUEUE_NAME, validate_queue_name, validate_schema_name

VALID = re.compile(r"[a-z_][a-z0-9_]{0,47}")
ENGINES = {
    "sqlite": ("sqlite:///:memory:", '"', '"'),
    "postgresql": ("postgresql://u@h/db", '"', '"'),
    "mysql": ("mysql://u@h/db", "`", "`"),
    "mssql": ("mssql://u@h/db?driver=FreeTDS", "[", "]"),
}


@pytest.mark.parametrize(
    "bad",
    [
        "orders_q; drop table x",
        "x" * 200,
        "Orders",
        "o'q",
        'o"q',
        "o`q",
        "o]q",
        "ünïcode",
        "",
        "1abc",
        "a b",
        "a-b",
        "qadmin_queues",
        "a\x00b",
        "q;--",
    ],
)
def test_bad_queue_names_are_refused(bad):
    with pytest.raises(InvalidName):
        validate_queue_name(bad)


@given(st.text(max_size=80))
def test_a_name_is_accepted_only_if_it_is_a_plain_identifier(name):
    ok = bool(VALID.fullmatch(name)) and not name.startswith("qadmin_")
    if ok:
        assert validate_queue_name(name) == name
    else:
        with pytest.raises(InvalidName):
            validate_queue_name(name)


def _unquote(quoted: str, open_: str, close: str) -> str:
    assert quoted.startswith(open_) and quoted.endswith(close)
    inner = quoted[len(open_) : -len(close)]
    # Every closing delimiter inside must be doubled, else the identifier would end early.
    assert re.fullmatch(f"(?:[^{re.escape(close)}]|{re.escape(close * 2)})*", inner, re.S)
    return inner.replace(close * 2, close)


@pytest.mark.parametrize("engine", sorted(ENGINES))
@given(name=st.text(min_size=1, max_size=64).filter(lambda s: "\x00" not in s))
def test_quoting_round_trips_any_text(engine, name):
    dsn, open_, close = ENGINES[engine]
    eng = open_engine(dsn)
    assert _unquote(eng.quote_ident(name), open_, close) == name


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_qualified_names_quote_schema_and_name(engine):
    dsn, open_, close = ENGINES[engine]
    eng = open_engine(dsn, schema="main" if engine == "sqlite" else "App_1")
    assert eng.qualified("q").endswith(f"{open_}q{close}")


@pytest.mark.parametrize("bad", ["a;b", "", "x" * 64, "a b", 'a"b'])
def test_bad_schema_names_are_refused_before_connecting(bad):
    with pytest.raises(InvalidName):
        validate_schema_name(bad)
    with pytest.raises(InvalidName):
        open_engine("postgresql://u@127.0.0.1:1/db", schema=bad)


def test_max_length_leaves_room_for_derived_objects():
    longest = "q" * MAX_QUEUE_NAME + "_push_seq"
    assert len(longest) <= 63
