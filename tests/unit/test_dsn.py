"""DSN parsing and password masking."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from qadmin import secrets
from qadmin.dsn import mask, odbc_pairs, odbc_value, parse
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


# Passwords users really have: every character a URL treats specially, spaces, unicode.
TRICKY = [
    "pa/ss",
    "p@ss",
    "p@ss/x@y",
    "a:b?c#d",
    "50%off",
    "semi;colon",
    "sp ace",
    "ünï€ode",
    "{br}ace}}",
    "q?x=1&y",
]


@pytest.mark.parametrize("password", TRICKY)
@pytest.mark.parametrize("encoded", [False, True])
def test_any_password_parses_whether_or_not_it_was_percent_encoded(password, encoded):
    written = quote(password, safe="") if encoded else password
    parsed = parse(f"postgresql://app:{written}@db1.example:5433/app?sslmode=require")
    assert (parsed.host, parsed.port, parsed.user) == ("db1.example", 5433, "app")
    assert parsed.password == password and parsed.database == "app"
    assert parsed.query == {"sslmode": "require"}
    masked = mask(f"postgresql://app:{written}@db1.example:5433/app?sslmode=require")
    assert masked == "postgresql://app:***@db1.example:5433/app?sslmode=require"


def test_a_user_name_with_an_at_sign_keeps_it():
    parsed = parse("postgresql://user@server:pw@h/db")
    assert (parsed.user, parsed.password, parsed.host) == ("user@server", "pw", "h")


@pytest.mark.parametrize("key", ["password", "sslpassword", "PWD", "sslkey_passphrase"])
def test_secret_query_values_are_masked_and_registered(key):
    dsn = f"postgresql://u@h:5432/db?sslmode=require&{key}=Qv-secret&application=x"
    assert mask(dsn) == f"postgresql://u@h:5432/db?sslmode=require&{key}=***&application=x"
    parse(dsn)
    assert "Qv-secret" not in secrets.scrub("driver: bad Qv-secret")


def test_query_password_is_the_password_when_the_url_has_none():
    parsed = parse("mysql://root@h/db?password=a%26b&ssl=1")
    assert parsed.password == "a&b" and parsed.query == {"ssl": "1"}


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://u:p@h:notaport/db",
        "postgresql://u:p@ss@h:notaport/db",
        "mysql://u:pa/ss?x@h:99999/db",
        "postgresql://u:pw-zz@h/db?sslpassword=x@y",  # two places the user info could end
        "postgresql://u:a@b?k=v@h/db",
    ],
)
def test_a_dsn_that_does_not_parse_fails_without_any_part_of_its_password(dsn):
    with pytest.raises(UsageError) as info:
        parse(dsn)
    password = dsn.split("://u:", 1)[1].rsplit("@", 1)[0]
    for piece in [password, *password.replace("@", "/").split("/")]:
        if len(piece) > 1:
            assert piece not in str(info.value).split("://", 1)[1], str(info.value)
            assert piece not in mask(dsn).split("://", 1)[1]


@pytest.mark.parametrize(
    "odbc,password",
    [
        ("DRIVER={FreeTDS};SERVER=h;UID=sa;PWD={p;w}}x};APP=a", "p;w}x"),
        ("Driver={FreeTDS};Server=h;pwd = plain-pw ;Database=d", "plain-pw"),
        ("DRIVER={FreeTDS};SERVER=h;Password={unclosed;rest=1", "unclosed;rest=1"),
    ],
)
def test_odbc_passwords_follow_the_odbc_brace_rules(odbc, password):
    parsed = parse(odbc)
    assert parsed.password == password
    masked = mask(odbc)
    assert password not in masked and "***" in masked
    assert "SERVER=h" in masked or "Server=h" in masked


@pytest.mark.parametrize("value", ["plain", "a;b", "{x}", "}}", "a=b", " pad ", "p;w}x{"])
def test_odbc_values_round_trip_through_the_escaping(value):
    text = f"DRIVER=x;PWD={odbc_value(value)};APP=qadmin"
    assert {k: v for k, v, _, _ in odbc_pairs(text)} == {
        "DRIVER": "x",
        "PWD": value.strip() if "{" not in odbc_value(value) else value,
        "APP": "qadmin",
    }


def test_free_text_is_masked_even_for_dsns_that_never_parsed():
    text = "failed: mysql://root:zz9-top@h/db and odbc PWD={a;b}};c} and ?sslpassword=zz8-x&k=v"
    scrubbed = secrets.scrub(text)
    for secret in ("zz9-top", "a;b", "zz8-x"):
        assert secret not in scrubbed
    assert "mysql://root:***@h/db" in scrubbed and "&k=v" in scrubbed


_TEMPLATES = [
    "postgresql://app:{pw}@127.0.0.1:1/db",
    "mysql://app:{pw}@127.0.0.1:1/db?ssl=1",
    "mssql://sa:{pw}@127.0.0.1:1/db?driver=FreeTDS",
    "postgresql://app@127.0.0.1:1/db?sslpassword={pw}&sslmode=require",
    "DRIVER={{FreeTDS}};SERVER=127.0.0.1;UID=sa;PWD={odbc};APP=x",
]


@settings(max_examples=300, deadline=None)
@given(
    password=st.text(min_size=6, max_size=24).filter(lambda p: p.strip() == p),
    template=st.sampled_from(_TEMPLATES),
    encoded=st.booleans(),
)
def test_no_password_text_reaches_any_dsn_output(password, template, encoded):
    """For any password, raw or percent-encoded: the mask, a parse error, and a scrubbed
    traceback that quotes the DSN never contain it."""
    secrets.forget_all()
    written = quote(password, safe="") if encoded or "?" in template else password
    if "?" in template and "{pw}" in template.split("?", 1)[1]:
        written = quote(password, safe="")  # a query value must be encoded to hold & or #
    dsn = template.format(pw=written, odbc=odbc_value(password))
    assume(password not in template.format(pw="", odbc=""))
    outputs = [mask(dsn)]
    try:
        parse(dsn)
    except UsageError as exc:
        outputs.append(str(exc))
    outputs.append(secrets.scrub(f"Traceback ...\n  connecting to {dsn!r}\nError: {dsn}"))
    for text in outputs:
        assert password not in text and written not in text, text
