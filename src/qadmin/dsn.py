"""Parsing connection strings into an engine name plus parts, and masking their secrets.

A DSN is the only place a password may appear, so everything that prints or logs a DSN goes
through ``mask``. Parsing never raises anything but UsageError, whose text holds no secret.

Passwords are taken as users type them: percent-encoded or not. The user info of a URL runs up
to the ``@`` after which a host, an optional port, a database without ``@`` and ``key=value``
query pairs follow; when two ``@`` qualify the DSN is refused as ambiguous rather than guessed.
ODBC strings are split by the ODBC rules: ``{...}`` values may hold ``;``, ``}}`` is one ``}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from qadmin import seen
from qadmin.engine_table import BY_NAME, ENGINES, SCHEMES, shown_schemes
from qadmin.errors import UsageError, listed

# The engine a raw ODBC string (no scheme) is for.
ODBC_ENGINE = next(entry.name for entry in ENGINES if entry.odbc)

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)\Z", re.DOTALL)
# What may follow the user info's ``@``: host (name, address or [IPv6]), port, database, query.
_AFTER_USERINFO = re.compile(
    r"(?P<host>\[[0-9A-Za-z:.%]*\]|[A-Za-z0-9._~%-]*)"
    r"(?::(?P<port>[0-9]*))?"
    r"(?:/(?P<path>[^@?]*))?"
    r"(?:\?(?P<query>.*))?\Z",
    re.DOTALL,
)
_QUERY_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
# Query keys whose value is a secret (password, sslpassword, PWD, passphrase, token, ...).
_SECRET_KEY = re.compile(r"(?i)pass|pwd|secret|token")
_ODBC_SECRET_KEYS = {"pwd", "password"}


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
    query: dict[str, str] = field(default_factory=dict, repr=False)
    odbc: str | None = field(default=None, repr=False)
    flavor: str | None = None

    @property
    def masked(self) -> str:
        return mask(self.raw)


@dataclass(frozen=True)
class _Url:
    """Where the parts of a URL DSN lie in its text, so mask can cut the secrets out."""

    scheme: str
    userinfo: str | None
    host: str
    port: str | None
    path: str | None
    query: list[tuple[str, str]]


def is_secret_key(key: str) -> bool:
    """Whether a query or ODBC key carries a secret."""
    return bool(_SECRET_KEY.search(unquote(key)))


def _query_pairs(text: str) -> list[tuple[str, str]] | None:
    """``key=value&...`` with raw values: a piece that is not ``key=...`` belongs to the value
    before it (an unencoded ``&`` in a value). None when the text is not such a query."""
    pairs: list[tuple[str, str]] = []
    for piece in text.split("&"):
        key, eq, value = piece.partition("=")
        if eq and _QUERY_KEY.match(key):
            pairs.append((key, value))
        elif pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + "&" + piece)
        elif piece:
            return None
    return pairs


def _split_after(text: str) -> tuple[str, str | None, str | None, list[tuple[str, str]]] | None:
    """(host, port, path, query) when ``text`` is what may follow the user info, else None."""
    found = _AFTER_USERINFO.match(text)
    if found is None:
        return None
    query: list[tuple[str, str]] = []
    if found["query"] is not None:
        pairs = _query_pairs(found["query"])
        if pairs is None:
            return None
        query = pairs
    return found["host"], found["port"], found["path"], query


def _split_url(scheme: str, rest: str) -> _Url:
    """Find the user info's end: the one ``@`` after which a well-formed host part follows."""
    candidates = []
    whole = _split_after(rest)
    if whole is not None:
        candidates.append(_Url(scheme, None, *whole))
    for at in (i for i, c in enumerate(rest) if c == "@"):
        parts = _split_after(rest[at + 1 :])
        if parts is not None:
            candidates.append(_Url(scheme, rest[:at], *parts))
    if len(candidates) == 1:
        return candidates[0]
    if "@" not in rest:
        raise UsageError(f"cannot parse DSN {_mask_unparsed(scheme, rest)}: {_SHAPE}")
    # Whatever follows the user name up to the last @ may be a password: it must not reach
    # any output.
    userinfo = rest[: rest.rfind("@")]
    if ":" in userinfo:
        seen.register(userinfo.split(":", 1)[1])
    if not candidates:
        raise UsageError(f"cannot parse DSN {_mask_unparsed(scheme, rest)}: {_SHAPE}")
    raise UsageError(
        f"DSN {scheme}://*** is ambiguous: more than one '@' could end the user name and "
        "password; percent-encode '@' in the password or the query (%40)"
    )


_SHAPE = (
    "expected SCHEME://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE][?KEY=VALUE&...] "
    "(a port is a number; percent-encode '@' in a database name as %40)"
)


def _mask_query(text: str) -> str:
    """``key=***`` for every secret key of a ``?key=value&...`` tail (also in free text)."""
    return re.sub(
        r"(?i)([?&][A-Za-z_%][A-Za-z0-9_.%-]*=)([^&\s]*)",
        lambda m: m[1] + "***" if is_secret_key(m[1]) else m[0],
        text,
    )


def _mask_unparsed(scheme: str, rest: str) -> str:
    """A URL DSN that does not parse: hide all before the last ``@`` and every query secret."""
    rest = _mask_query(rest)
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    else:
        # No @: USER:PASSWORD/DB reads as HOST:PORT with a bad port, so whatever follows a
        # colon before the path may be a password.
        ends = [i for i in (rest.find("/"), rest.find("?")) if i >= 0]
        end = min(ends, default=len(rest))
        if ":" in rest[:end]:
            rest = rest[: rest.index(":")] + ":***" + rest[end:]
    return f"{scheme}://{rest}"


def _format_url(url: _Url) -> str:
    """The URL with its password and secret query values as ``***``."""
    text = f"{url.scheme}://"
    if url.userinfo is not None:
        user, colon, _ = url.userinfo.partition(":")
        text += user + (":***" if colon else "") + "@"
    text += url.host
    if url.port is not None:
        text += ":" + url.port
    if url.path is not None:
        text += "/" + url.path
    if url.query:
        text += "?" + "&".join(f"{k}={'***' if is_secret_key(k) else v}" for k, v in url.query)
    return text


def odbc_pairs(text: str) -> list[tuple[str, str, int, int]]:
    """(key, value, start, end) of each ``key=value`` of an ODBC string; start/end span the
    value as written (braces included). An unclosed ``{`` runs to the end of the text."""
    pairs = []
    pos = 0
    while pos < len(text):
        eq = text.find("=", pos)
        if eq < 0:
            break
        key = text[pos:eq].strip(" ;")
        start = eq + 1
        while start < len(text) and text[start] == " ":
            start += 1
        if text.startswith("{", start):
            end, value = start + 1, []
            while end < len(text):
                if text[end] == "}":
                    if text.startswith("}}", end):
                        value.append("}")
                        end += 2
                        continue
                    end += 1
                    break
                value.append(text[end])
                end += 1
            pairs.append((key, "".join(value), start, end))
            semi = text.find(";", end)
            pos = len(text) if semi < 0 else semi + 1
        else:
            semi = text.find(";", start)
            end = len(text) if semi < 0 else semi
            pairs.append((key, text[start:end].strip(), start, end))
            pos = end + 1
    return pairs


def odbc_value(value: str, freetds: bool = False) -> str:
    """An ODBC attribute value as written into a connection string: braced, ``}`` doubled
    (the ODBC rule), when it holds ``;``, ``{``, ``}`` or edge spaces. FreeTDS up to 1.3 reads
    a braced value up to ``};`` and does not undouble ``}}``, but reads an unbraced value up to
    ``;`` whatever it holds: for FreeTDS a value is braced only when it must be."""
    special = ";" in value or value.startswith("{") or value != value.strip()
    if freetds and not special:
        return value
    if special or any(c in value for c in "{}"):
        return "{" + value.replace("}", "}}") + "}"
    return value


def _mask_odbc(text: str) -> str:
    out, last = [], 0
    for key, _, start, end in odbc_pairs(text):
        if key.lower() in _ODBC_SECRET_KEYS or is_secret_key(key):
            out += [text[last:start], "***"]
            last = end
    return "".join(out) + text[last:]


def mask(dsn: str) -> str:
    """The DSN with every password and secret query or ODBC value replaced by ``***``."""
    text = dsn.strip()
    found = _SCHEME.match(text)
    if found is None:
        return _mask_odbc(text[5:] if text.lower().startswith("odbc:") else text)
    scheme, rest = found[1], found[2]
    engine = SCHEMES.get(scheme.lower().split("+", 1)[0])
    if engine is not None and BY_NAME[engine].file:
        return f"{scheme}://{_mask_query(rest)}"
    try:
        return _format_url(_split_url(scheme, rest))
    except UsageError:
        return _mask_unparsed(scheme, rest)


_URL_IN_TEXT = re.compile(r"(?i)\b((?:" + "|".join(SCHEMES) + r")(?:\+[a-z0-9]+)?://)(\S*)@")
_ODBC_IN_TEXT = re.compile(r"(?i)(\b(?:pwd|password)\s*=\s*)(\{(?:[^}]|\}\})*\}?|[^;\s]*)")


def mask_text(text: str) -> str:
    """Mask DSNs that appear anywhere in free text (a driver message, a traceback): the user
    info of each URL, secret query values, ODBC ``PWD=``. Parsed secrets are scrubbed
    separately (``secrets.scrub``); this catches DSNs that never parsed."""
    text = _URL_IN_TEXT.sub(
        lambda m: m[1] + (m[2].split(":", 1)[0] + ":***@" if ":" in m[2] else m[2] + "@"), text
    )
    text = _mask_query(text)
    return _ODBC_IN_TEXT.sub(r"\1***", text)


def _register_query(query: list[tuple[str, str]]) -> None:
    for key, value in query:
        if is_secret_key(key):
            seen.register(value)
            seen.register(unquote(value))


def parse(text: str) -> Dsn:
    """Parse a DSN; raise UsageError (with nothing secret in it) when it cannot be used."""
    text = text.strip()
    if not text:
        raise UsageError("empty DSN")
    found = _SCHEME.match(text)
    if found is None:
        if text.lower().startswith("odbc:"):
            text = text[5:]
        if "=" in text and ";" in text:
            return _parse_odbc(text)
        head = text.split(":", 1)[0].lower()
        if head in SCHEMES and BY_NAME[SCHEMES[head]].file:
            # sqlite:x.db: a file DSN written without the slashes.
            raise UsageError(
                f"a {head} DSN is {head}:///relative/path.db or {head}:////absolute/path.db"
            )
        urls = [s + (":///" if BY_NAME[SCHEMES[s]].file else "://") for s in shown_schemes()]
        raise UsageError(
            f"the DSN has no scheme; use {listed(urls)}, or an ODBC string KEY=VALUE;..."
        )
    scheme = found[1].lower().split("+", 1)[0]
    engine = SCHEMES.get(scheme)
    if engine is None:
        raise UsageError(f"unknown DSN scheme {scheme!r}; use {listed(shown_schemes())}")
    if BY_NAME[engine].file:
        return _parse_file(engine, text, found[2])
    url = _split_url(found[1], found[2])
    query = {unquote(k): unquote(v) for k, v in url.query}
    _register_query(url.query)
    user = password = None
    if url.userinfo is not None:
        raw_user, colon, raw_password = url.userinfo.partition(":")
        user = unquote(raw_user) or None
        if colon:
            seen.register(raw_password)
            password = unquote(raw_password)
    if password is None and "password" in query:
        password = query.pop("password")
    seen.register(password)
    port = None
    if url.port:
        port = int(url.port)
        if not 0 < port < 65536:
            raise UsageError(f"DSN {_format_url(url)}: port {port} is not between 1 and 65535")
    host = unquote(url.host.strip("[]")).lower() or None
    return Dsn(
        engine=engine,
        raw=text,
        host=host,
        port=port,
        user=user,
        password=password,
        database=unquote(url.path) if url.path else None,
        query=query,
        flavor=scheme if BY_NAME[engine].flavoured else None,
    )


def _parse_file(engine: str, text: str, rest: str) -> Dsn:
    path, _, raw_query = rest.partition("?")
    pairs = _query_pairs(raw_query)
    if pairs is None:
        # sqlite:////tmp/a?b.db: a '?' starts the options, so the file would be /tmp/a.
        raise UsageError(
            f"{engine} DSN {mask(text)}: {raw_query!r} after '?' is not key=value options;"
            " write a '?' in a file name as %3F"
        )
    query = {unquote(k): unquote(v) for k, v in pairs}
    if not path.startswith("/"):
        raise UsageError(f"{engine} DSNs take no host: write {engine}:///path, not {mask(text)}")
    path = unquote(path)
    if path.startswith("/:memory:"):
        path = ":memory:"
    elif path == "/":
        raise UsageError(f"{engine} DSN has no file path: write {engine}:///relative/path.db")
    else:
        # sqlite:///rel.db is relative; sqlite:////abs/path.db is absolute.
        path = path[1:]
    return Dsn(engine=engine, raw=text, path=path, query=query)


def _parse_odbc(text: str) -> Dsn:
    password = None
    for key, value, _, _ in odbc_pairs(text):
        if key.lower() in _ODBC_SECRET_KEYS or is_secret_key(key):
            seen.register(value)
            if key.lower() in _ODBC_SECRET_KEYS:
                password = value
    return Dsn(engine=ODBC_ENGINE, raw=text, odbc=text, password=password)
