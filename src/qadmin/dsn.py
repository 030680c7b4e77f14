"""Parsing connection strings into an engine name plus parts, and masking their secrets.

A DSN is the only place a password may appear, so everything that prints or logs a DSN goes
through ``mask``. Parsing never raises anything but UsageError, whose text holds the masked DSN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from qadmin import secrets
from qadmin.errors import UsageError

SCHEMES = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "mssql",
    "sqlserver": "mssql",
    "odbc": "mssql",
}

_ODBC_PWD = re.compile(r"(?i)(\b(?:pwd|password)\s*=\s*)(\{[^}]*\}|[^;]*)")
_URL_PASSWORD = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@?#]*:)([^@/]*)(@)")


@dataclass(frozen=True)
class Dsn:
    """A parsed DSN: ``engine`` picks the engine module, the rest is for that engine only."""

    engine: str
    raw: str = field(repr=False)
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    path: str | None = None
    query: dict[str, str] = field(default_factory=dict)
    odbc: str | None = field(default=None, repr=False)
    flavor: str | None = None

    @property
    def masked(self) -> str:
        return mask(self.raw)


def mask(dsn: str) -> str:
    """Replace any password in a URL or ODBC string by ``***``."""
    masked = _URL_PASSWORD.sub(r"\1***\3", dsn)
    return _ODBC_PWD.sub(r"\1***", masked)


def _looks_like_odbc(text: str) -> bool:
    return "=" in text and ";" in text and "://" not in text


def parse(text: str) -> Dsn:
    """Parse a DSN; raise UsageError (with the DSN masked) when it cannot be used."""
    text = text.strip()
    if not text:
        raise UsageError("empty DSN")
    if text.lower().startswith("odbc:"):
        text = text[5:]
    if _looks_like_odbc(text):
        found = _ODBC_PWD.search(text)
        password = found.group(2).strip("{}") if found else None
        secrets.register(password)
        return Dsn(engine="mssql", raw=text, odbc=text, password=password)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"cannot parse DSN {mask(text)}: {exc}") from None
    scheme = parts.scheme.lower().split("+", 1)[0]
    if not scheme:
        raise UsageError(
            f"DSN {mask(text)} has no scheme; use sqlite:///, postgresql://, mysql://, "
            "mariadb:// or mssql://"
        )
    engine = SCHEMES.get(scheme)
    if engine is None:
        raise UsageError(
            f"unknown DSN scheme {scheme!r}; use sqlite, postgresql, mysql, mariadb or mssql"
        )
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if engine == "sqlite":
        path = unquote(parts.path)
        if parts.netloc:
            raise UsageError(f"sqlite DSNs take no host: write sqlite:///path, not {mask(text)}")
        if path.startswith("/:memory:"):
            path = ":memory:"
        elif path in ("", "/"):
            raise UsageError("sqlite DSN has no file path: write sqlite:///relative/path.db")
        else:
            # sqlite:///rel.db is relative; sqlite:////abs/path.db is absolute.
            path = path[1:]
        return Dsn(engine="sqlite", raw=text, path=path, query=query)
    database = unquote(parts.path.lstrip("/")) or None
    password = unquote(parts.password) if parts.password is not None else None
    secrets.register(password)
    secrets.register(parts.password)
    return Dsn(
        engine=engine,
        raw=text,
        host=parts.hostname,
        port=port,
        user=unquote(parts.username) if parts.username else None,
        password=password,
        database=database,
        query=query,
        flavor=scheme if scheme in ("mariadb", "mysql") else None,
    )
