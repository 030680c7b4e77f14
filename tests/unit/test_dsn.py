"""DSN parsing and password masking."""

from __future__ import annotations

import pytest

from qadmin import secrets
from qadmin.dsn import mask, parse
from qadmin.errors import UsageError


@pytest.mark.parametrize(
    "dsn,engine",
    [
        ("sqlite:///q.db", "sqlite"),
        ("sqlite:///:memory:", "sqlite"),
        ("postgresql://u:p@h:5432/db", "postgresql"),
        ("postgres://h/db", "postgresql"),
        ("mysql://root@h/db", "mysql"),
        ("mariadb://root@h:3307/db", "mysql"),
        ("mssql://sa:p@h:1433/db?driver=FreeTDS", "mssql"),
        ("DRIVER={FreeTDS};SERVER=h;UID=sa;PWD=p;", "mssql"),
        ("odbc:DRIVER={FreeTDS};SERVER=h;", "mssql"),
    ],
)
def test_schemes_pick_engines(dsn, engine):
    assert parse(dsn).engine == engine


def test_sqlite_paths():
    assert parse("sqlite:///rel/q.db").path == "rel/q.db"
    assert parse("sqlite:////abs/q.db").path == "/abs/q.db"
    assert parse("sqlite:///:memory:").path == ":memory:"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "nope://h/db",
        "h/db",
        "postgresql://h:99999/db",
        "postgresql://h:abc/db",
        "sqlite://host/q.db",
        "sqlite:///",
    ],
)
def test_bad_dsns_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse(bad)


@pytest.mark.parametrize(
    "dsn,secret",
    [
        ("postgresql://user:s3cr%40t@h/db", "s3cr%40t"),
        ("mysql://root:hunter2@h/db", "hunter2"),
        ("DRIVER={FreeTDS};SERVER=h;UID=sa;PWD={p;w}};", "p;w"),
        ("DRIVER={FreeTDS};SERVER=h;UID=sa;Password=topsecret", "topsecret"),
    ],
)
def test_masking_hides_passwords(dsn, secret):
    assert secret not in mask(dsn)
    assert "***" in mask(dsn)


def test_error_for_bad_port_masks_the_password():
    with pytest.raises(UsageError) as info:
        parse("postgresql://u:pa55word@h:notaport/db")
    assert "pa55word" not in str(info.value)


def test_parsed_passwords_are_scrubbed_from_any_text():
    parse("postgresql://u:Zq9-unique-pw@h/db")
    assert "Zq9-unique-pw" not in secrets.scrub("driver said: password Zq9-unique-pw rejected")


def test_a_short_password_is_masked_as_a_token_without_mangling_words():
    parse("mysql://root:p@h/db")
    assert secrets.scrub("queue q is empty") == "queue q is empty"
    assert secrets.scrub("login with p failed") == "login with *** failed"
