"""Passwords never reach the terminal: the real ``qadmin`` command, run with DSNs whose
passwords hold every character a URL or an ODBC string treats specially, written raw or
percent-encoded, through every output path (parse errors, --debug tracebacks, driver errors,
``conn list -v``, ``-v``, ``check``)."""

from __future__ import annotations

import json
from functools import partial
from urllib.parse import quote

import pytest

from qadmin.dsn import odbc_value
from tests.helpers import run_qadmin

PASSWORDS = ["Pa/ss-w0rd", "P@ss-w0rd/x@y", "a:b?c#d-Kq", "se;mi co%n-ü", "{Br}ace}}-pw"]


qadmin = partial(run_qadmin, text=True)


def pieces(password: str) -> list[str]:
    """The password, and each run of it between URL delimiters: no tail may leak either."""
    parts = [password]
    for sep in "/@?#:;":
        parts = [p for part in parts for p in part.split(sep)] + [password]
    return sorted({p for p in parts if len(p) >= 3})


def assert_hidden(password: str, text: str) -> None:
    for piece in [*pieces(password), quote(password, safe="")]:
        assert piece not in text, (piece, text)


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("encoded", [False, True])
def test_debug_error_lines_hide_any_password(password, encoded):
    written = quote(password, safe="") if encoded else password
    result = qadmin("--debug", "list", "--dsn", f"postgresql://app:{written}@127.0.0.1:1/db")
    assert result.returncode == 6, result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("qadmin: error: postgresql: cannot connect to 127.0.0.1:1")
    )
    assert_hidden(password, result.stderr + result.stdout)


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://app:Pa/ss-w0rd@127.0.0.1:notaport/db",
        "mysql://app:P@ss-w0rd/x@127.0.0.1:99999/db",
        "postgresql://app:K@q?x=1@127.0.0.1/db",
        "postgresql://app@127.0.0.1/db?sslpassword=Ss@l-pw0rd",
    ],
)
def test_a_dsn_that_does_not_parse_is_one_line_without_its_password(dsn):
    secret = dsn.split("?sslpassword=")[1] if "sslpassword" in dsn else dsn[16:].split("@1")[0]
    secret = secret.removeprefix("app:")
    plain = qadmin("list", "--dsn", dsn)
    assert plain.returncode == 2 and len(plain.stderr.strip().splitlines()) == 1, plain.stderr
    debug = qadmin("--debug", "list", "--dsn", dsn)
    assert debug.returncode == 2 and "Traceback" in debug.stderr
    assert_hidden(secret, plain.stderr + debug.stderr)


def test_conn_list_verbose_and_every_path_of_a_named_connection(tmp_path):
    entries = {f"c{i}": f"postgresql://app:{pw}@127.0.0.1:1/db" for i, pw in enumerate(PASSWORDS)}
    entries["ssl"] = "postgresql://app@127.0.0.1:1/db?sslmode=require&sslpassword=Ssl-pw0rd"
    entries["odbc"] = f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;UID=sa;PWD={odbc_value('O;d}bc-pw')}"
    config = tmp_path / "c.toml"
    config.write_text(
        "".join(f"[connections.{n}]\ndsn = {json.dumps(d)}\n" for n, d in entries.items())
    )
    secrets = [*PASSWORDS, "Ssl-pw0rd", "O;d}bc-pw"]
    for fmt in ("plain", "csv", "json"):
        listed = qadmin("conn", "list", "-v", "--config", str(config), "--format", fmt)
        assert listed.returncode == 0, listed.stderr
        for secret in secrets:
            assert_hidden(secret, listed.stdout)
    rows = {r["name"]: r["dsn"] for r in json.loads(listed.stdout)}
    assert rows["c0"] == "postgresql://app:***@127.0.0.1:1/db"
    assert rows["ssl"].endswith("sslmode=require&sslpassword=***")
    for name in ("c1", "ssl"):
        used = qadmin("--debug", "-v", "list", "-c", name, "--config", str(config))
        assert used.returncode == 6
        checked = qadmin("check", "q", "-c", name, "--config", str(config), "--format", "json")
        assert checked.returncode == 3 and "127.0.0.1:1" in checked.stdout
        for secret in secrets:
            assert_hidden(secret, used.stderr + used.stdout + checked.stdout + checked.stderr)


@pytest.mark.parametrize("password", PASSWORDS)
def test_driver_errors_hide_the_password(password, my_database):
    """MariaDB refuses the login (6); PostgreSQL (trust) answers that the database is missing
    (5, not found)."""
    for dsn, code in (
        (f"mysql://root:{password}@127.0.0.1:3306/{my_database}", 6),
        (f"postgresql://postgres:{password}@127.0.0.1:5432/secrets_no_such_db", 5),
    ):
        result = qadmin("--debug", "ping", "--dsn", dsn)
        assert result.returncode == code, result.stderr
        assert_hidden(password, result.stderr + result.stdout)
