"""Where a connection comes from: --dsn, a named connection, QADMIN_DSN, or the embedded file.

The config file is TOML::

    default = "prod"            # optional: used when no --dsn / -c / QADMIN_DSN is given

    [connections.prod]
    dsn = "postgresql://qadmin@db1:5432/app"
    schema = "queues"           # optional default schema for this connection

    [tables.jobs]               # a hand-built queue table read through a declared profile
    table = "app.jobs"          # optional: the table (schema-qualified allowed), else NAME
    state_column = "status"
    pending = ["new"]           # ... the keys of ``TABLE_KEYS`` (docs/profiles.md)

    [check]                     # check --all's thresholds (qadmin.cli.check_all)
    warn_depth = 1000

A missing default config file is silent; a missing file named by --config or QADMIN_CONFIG is
an error, as is a named connection that the file does not define.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qadmin import statewhen
from qadmin.dsn import mask
from qadmin.errors import UsageError

APP_NAME = "qadmin"
# The source of the embedded SQLite file, the one connection that may make its file and folder.
EMBEDDED = "embedded default"


def default_config_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def default_sqlite_path() -> Path:
    """The embedded default: one SQLite file in the user's data directory."""
    override = os.environ.get("QADMIN_HOME")
    if override:
        return Path(override) / "qadmin.db"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME)) / "qadmin.db"


@dataclass(frozen=True)
class Connection:
    """A resolved connection: its DSN, where it came from (for messages), and options."""

    dsn: str
    source: str
    name: str | None = None
    schema: str | None = None

    @property
    def masked(self) -> str:
        return mask(self.dsn)


@dataclass(frozen=True)
class NamedConnection:
    """A ``[connections.NAME]`` entry."""

    dsn: str
    schema: str | None = None


@dataclass(frozen=True)
class Config:
    """The config file, read and checked once per command: its default connection, named
    connections, the usable ``[tables.NAME]`` profiles and, by NAME, why the others are not,
    and the ``[check]`` thresholds as written."""

    default: str | None = None
    connections: dict[str, NamedConnection] = field(default_factory=dict)
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    # ``[check]``: check --all's and metrics' thresholds, read by cli/check_all.thresholds.
    check: object = None

    def check_table(self, name: str) -> None:
        """Refuse (one line, exit 2) the use of a ``[tables.NAME]`` entry qadmin cannot read."""
        problem = self.broken.get(name)
        if problem:
            raise UsageError(problem)


def load_config(path: str | None) -> Config:
    """Read the config file; ``path`` None means the default location, which may be absent."""
    if path is not None and not path.strip():
        raise UsageError("--config is empty: give the config file's path")
    explicit = path or os.environ.get("QADMIN_CONFIG")
    file = Path(explicit) if explicit else default_config_path()
    if not file.exists():
        if explicit:
            raise UsageError(f"config file not found: {file}")
        return Config()
    try:
        with file.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file {file} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read config file {file}: {exc.strerror}") from None
    _check_keys(file, "the top level", data, TOP_KEYS)
    conns = data.get("connections", {})
    if not isinstance(conns, dict) or not all(isinstance(v, dict) for v in conns.values()):
        raise UsageError(f"config file {file}: [connections.NAME] tables expected")
    for name, entry in conns.items():
        _check_keys(file, f"[connections.{name}]", entry, CONNECTION_KEYS)
        if not isinstance(entry.get("dsn"), str) or not entry["dsn"].strip():
            raise UsageError(f"config file {file}: connection {name!r} has no dsn string")
    tables = data.get("tables", {})
    if not isinstance(tables, dict) or not all(isinstance(v, dict) for v in tables.values()):
        raise UsageError(f"config file {file}: [tables.NAME] tables expected")
    # A bad entry is named when it is used (Config.check_table), so it never stops a command
    # that reads another table.
    bad: dict[str, str] = {}
    for name, entry in tables.items():
        try:
            _check_table(file, name, entry)
        except UsageError as exc:
            bad[name] = str(exc)
    default = data.get("default")
    return Config(
        default=default if isinstance(default, str) else None,
        connections={
            name: NamedConnection(entry["dsn"], entry.get("schema"))
            for name, entry in conns.items()
        },
        tables={n: e for n, e in tables.items() if n not in bad},
        broken=bad,
        check=data.get("check"),
    )


# What the file may hold outside ``[tables.NAME]``: a misspelt key (``shema``, ``defualt``)
# would otherwise be ignored and the connection silently fall back to another one.
TOP_KEYS = ("default", "connections", "tables", "check")
CONNECTION_KEYS = ("dsn", "schema")


def _check_keys(file: Path, where: str, entry: dict[str, Any], known: tuple[str, ...]) -> None:
    for key in entry:
        if key not in known:
            raise UsageError(
                f"config file {file}: {where}: unknown key {key!r} (known: {', '.join(known)})"
            )


# The keys of a ``[tables.NAME]`` declared profile: column keys name a column of the table,
# value keys list state values, ``table`` and ``library`` are names, ``requeue`` a switch.
COLUMN_KEYS = (
    "order_by",
    "time_column",
    "due_column",
    "state_column",
    "claimed_at_column",
    "session_column",
    "worker_column",
    "heartbeat_column",
    "attempts_column",
    "error_column",
    "id_column",
    "queue_column",
)
VALUE_KEYS = ("pending", "scheduled", "retrying", "claimed", "done", "failed")
TIME_UNITS = ("s", "ms", "us", "ns")
HEARTBEAT_KEYS = ("table", "worker_key", "beat_column")
TABLE_KEYS = (
    "table",
    "library",
    "requeue",
    "time_unit",
    "naive_timezone",
    "states",
    "heartbeat",
    *COLUMN_KEYS,
    *VALUE_KEYS,
)


def _check_table(file: Path, name: str, entry: dict[str, Any]) -> None:
    """One line naming the first key of ``[tables.NAME]`` that qadmin cannot use."""
    where = f"config file {file}: [tables.{name}]"
    for key, value in entry.items():
        if key not in TABLE_KEYS:
            raise UsageError(f"{where}: unknown key {key!r} (known: {', '.join(TABLE_KEYS)})")
        if key in VALUE_KEYS:
            ok = isinstance(value, list) and all(isinstance(v, str | int | bool) for v in value)
            if not ok:
                raise UsageError(f"{where}: {key} must be a list of strings, numbers or booleans")
        elif key == "requeue":
            if not isinstance(value, bool):
                raise UsageError(f"{where}: requeue must be true or false")
        elif key == "time_unit":
            if value not in TIME_UNITS:
                raise UsageError(
                    f"{where}: time_unit must be one of {', '.join(TIME_UNITS)} "
                    "(numeric epoch time columns)"
                )
        elif key == "naive_timezone":
            if value not in ("UTC", "session"):
                raise UsageError(f'{where}: naive_timezone must be "UTC" or "session"')
        elif key == "states":
            statewhen.parse_states(value, where)
        elif key == "heartbeat":
            _check_heartbeat(where, value)
        elif not isinstance(value, str) or not value:
            raise UsageError(f"{where}: {key} must be a non-empty string")


def _check_heartbeat(where: str, value: object) -> None:
    if not isinstance(value, dict):
        raise UsageError(f"{where}: heartbeat must be a table (table, worker_key, beat_column)")
    for key in HEARTBEAT_KEYS:
        if not isinstance(value.get(key), str) or not value[key]:
            raise UsageError(f"{where}: heartbeat.{key} must be a non-empty string")
    extra = sorted(set(value) - set(HEARTBEAT_KEYS))
    if extra:
        known = ", ".join(HEARTBEAT_KEYS)
        raise UsageError(f"{where}: heartbeat: unknown key {extra[0]!r} (known: {known})")


def resolve(dsn: str | None, name: str | None, config: Config) -> Connection:
    """Pick the connection by precedence: --dsn, -c NAME, QADMIN_DSN, config default, SQLite."""
    for option, value in (("--dsn", dsn), ("-c/--connection", name)):
        if value is not None and not value.strip():
            # An unset shell variable ($DSN) must not quietly mean the embedded SQLite file.
            raise UsageError(f"{option} is empty")
    if dsn:
        return Connection(dsn=dsn, source="--dsn")
    conns = config.connections
    if name:
        if name not in conns:
            known = ", ".join(sorted(conns)) or "none defined"
            raise UsageError(f"unknown connection {name!r} (known: {known})")
        entry = conns[name]
        return Connection(
            dsn=entry.dsn, source=f"connection {name}", name=name, schema=entry.schema
        )
    env = os.environ.get("QADMIN_DSN")
    if env:
        return Connection(dsn=env, source="QADMIN_DSN")
    if config.default is not None:
        return resolve(None, config.default, config)
    return embedded()


def embedded() -> Connection:
    """The embedded SQLite file, where a command with no configuration works."""
    return Connection(dsn=f"sqlite:///{default_sqlite_path()}", source=EMBEDDED, name=None)
