"""The typed diagnosis: one result per part, findings, and the whole inspect report.

Parts and rules work on these objects; JSON (and the tables render prints) is made only at
the edge, by ``to_json_dict``, which also turns NaN and infinities (never valid JSON) into
null, and a time the catalog gave (PostgreSQL's last_analyzed) into the one form every output
uses, ISO 8601 UTC with a Z.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from qadmin.catalog import sql
from qadmin.catalog.rows import Number as Number
from qadmin.catalog.rows import Row as Row
from qadmin.values import iso

if TYPE_CHECKING:
    from qadmin.engines.base import Engine
    from qadmin.kinds import QueueSpec
    from qadmin.profiles.model import Profile
    from qadmin.profiles.query import Reader

INFO, WARNING, CRITICAL = "info", "warning", "critical"
# What each severity makes check exit with (the Nagios codes).
SEVERITY_CODE = {INFO: 0, WARNING: 1, CRITICAL: 2}
DEFAULT_STALE_AFTER_S = 300
# How long one part waits for a lock before it is reported blocked (the connection's own
# --lock-timeout caps it).
PART_LOCK_MS = 1000
DEFAULT_MAX_PAGES = 131_072  # 1 GiB of 8 KiB pages: --deep refuses larger tables


def json_safe(value: Any) -> Any:
    """Plain JSON values: NaN and infinities become null, MySQL's DECIMAL figures become
    numbers (not strings), times ISO 8601 UTC with a Z, containers are walked."""
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, Row):  # the columns its engine's SELECT gave, in their order
        return json_safe(value.as_dict())
    if is_dataclass(value) and not isinstance(value, type):  # a typed row
        return {f.name: json_safe(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


@dataclass(frozen=True)
class Finding:
    """What is wrong and the command or SQL for the DBA to run (never run by qadmin)."""

    severity: str
    code: str
    message: str
    fix: str
    # The server's state, not the queue's (InnoDB's purge lag): every queue on the server
    # shows it, so a status line names it only when nothing of the queue's own is as bad.
    server_wide: bool = field(default=False, compare=False)
    # What it could not read may hide a CRITICAL (a ring whose fill is unread may be full):
    # check's verdict is then UNKNOWN unless something is CRITICAL, never this WARNING.
    hides_critical: bool = field(default=False, compare=False)

    def to_json_dict(self) -> dict[str, Any]:
        hidden = ("server_wide", "hides_critical")
        shown = {k: v for k, v in asdict(self).items() if k not in hidden}
        return dict(json_safe(shown))


class Result:
    """Base of every part's result: dataclass fields are its JSON keys."""

    def to_json_dict(self) -> dict[str, Any]:
        return dict(json_safe({f.name: getattr(self, f.name) for f in fields(self)}))  # type: ignore[arg-type]

    def all_notes(self) -> list[str]:
        """Notes for the report's notes section (why something is missing or partial)."""
        notes = getattr(self, "notes", [])
        return list(notes)


R = TypeVar("R", bound=Result)
R_co = TypeVar("R_co", bound=Result, covariant=True)


class PartOf(Protocol[R_co]):
    """What names a part and says its result's type: a registry entry (``Diagnostic[R]``),
    so ``report.part(ENTRY)`` is typed without this module importing the registry."""

    @property
    def name(self) -> str: ...

    @property
    def collect(self) -> Callable[[Context], R_co | None]: ...


@dataclass(frozen=True)
class Limit:
    """A metric's warning and critical levels (defaults from the registry, or options)."""

    warn: float | None = None
    crit: float | None = None
    given: bool = False  # set by an option rather than the registry's default


# Each metric's default levels by name, laid here by the registry's ``Diagnostic`` of the entry
# that declares them, as its module is imported (the registry imports this module, never the
# other way round).
DEFAULT_LIMITS: dict[str, Limit] = {}


@dataclass
class Options:
    """What a caller asked for: shared by inspect, check, tail and collect."""

    stale_after_s: int = DEFAULT_STALE_AFTER_S
    sample_s: float = 0.0
    deep: bool = False
    max_pages: int = DEFAULT_MAX_PAGES
    limits: dict[str, Limit] = field(default_factory=dict)
    telemetry: bool = False  # a tail / collect snapshot: one counter sample, no sleep
    # inspect on a terminal: the rate sample's first read only; its second is run.inspect_staged's
    rates_later: bool = False

    def limit(self, metric: str) -> Limit:
        return self.limits.get(metric) or DEFAULT_LIMITS[metric]


@dataclass
class ServerReads:
    """The server-wide files (``files``: those the registry's entries declare ``server_wide``)
    read once in a run over many queues (status, check --all, a metrics scrape) on one
    connection: every queue's part judges that one reading (the horizon's holders are the
    same for every queue of the database), instead of each queue asking the server again."""

    files: frozenset[str]
    rows: dict[str, sql.Rows] = field(default_factory=dict)
    # status reads with two connections: the first to ask reads, the other waits for it
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, engine: Engine, name: str, params: dict[str, Any] | None = None) -> sql.Rows:
        if name not in self.files:
            return sql.read(engine, name, params)
        assert not params, f"{name} is declared server-wide: it takes no queue's parameters"
        with self.lock:
            if name not in self.rows:
                self.rows[name] = sql.read(engine, name)
            return self.rows[name]


@dataclass
class Context:
    """What a part needs to run: the connection, the queue (None for a table qadmin did not
    create) and the profile it is read through (with its reader: tables qadmin did not
    create); ``shared``: the run's server-wide readings, when it reads many queues."""

    engine: Engine
    table: str
    spec: QueueSpec | None
    options: Options
    profile: Profile | None = None
    reader: Reader | None = None
    shared: ServerReads | None = None

    @property
    def params(self) -> dict[str, Any]:
        return {"schema": self.engine.schema, "table": self.table}

    def read(self, name: str, params: dict[str, Any] | None = None) -> sql.Rows:
        """A diagnostic file's rows: a server-wide one from the run's one reading (``shared``),
        any other read now."""
        if self.shared is not None:
            return self.shared.read(self.engine, name, params)
        return sql.read(self.engine, name, params)


@dataclass
class Header:
    """Who and what the report is about."""

    queue: str
    schema: str
    engine: str
    dialect: str
    server_version: str
    kind: str | None
    capacity: int | None = None
    strict: bool | None = None
    created_at: Any = None


@dataclass(frozen=True)
class BlockedPart:
    """A part that gave up on its short lock timeout, and who held the lock; or one not read
    for a cause no lock has: the statement timeout, an object of the queue gone."""

    error: str
    blocker: str
    session: str | None  # the blocking session's id, when known
    certain: bool = True  # False: a guess (MariaDB cannot list metadata-lock holders)
    timed_out: bool = False  # the statement timeout fired: no lock, no one to blame
    gone: bool = False  # a table it reads is missing (objects_missing names it)

    @property
    def lockless(self) -> bool:
        """Not a lock's doing: no part_blocked finding, no holder to name."""
        return self.timed_out or self.gone

    @property
    def cause(self) -> str:
        """Why it was not read, where no lock was in the way."""
        if self.gone:
            return "an object of the queue is missing: see objects_missing"
        return "the statement timeout"

    @property
    def note(self) -> str:
        if self.lockless:
            suffix = ": no lock was in the way" if self.timed_out else ""
            return f"{self.error} ({self.cause}{suffix})"
        return f"{self.error}; blocked by {self.blocker}"


@dataclass
class InspectReport:
    """Everything one inspect found: header, each part's result, findings."""

    header: Header
    parts: dict[str, Result | None]
    options: Options
    advice: Engine
    findings: list[Finding] = field(default_factory=list)
    not_covered: list[str] = field(default_factory=list)
    blocked: dict[str, BlockedPart] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # hand-built: order_by, time_column
    profile: Profile | None = None

    def part(self, entry: PartOf[R]) -> R | None:
        """An entry's typed result, or None when it did not run, was blocked or does not
        apply (the entry's ``collect`` made it, so it is of the entry's result type)."""
        return cast("R | None", self.parts.get(entry.name))

    @property
    def queue(self) -> str:
        """The queue as output names it (``oban_jobs[mailers]`` for one named queue)."""
        return self.header.queue

    @property
    def table(self) -> str:
        """The table itself, for SQL advice (VACUUM, ANALYZE): never a NAME with a schema or
        a named queue in it; the engine has been moved to its schema."""
        return self.profile.table if self.profile is not None else self.header.queue

    def command(self, verb: str) -> str:
        """A qadmin command on this queue as a fix prints it (``--queue`` for a named one)."""
        return (
            self.profile.command(verb)
            if self.profile is not None
            else f"qadmin {verb} {self.queue}"
        )

    def limit(self, metric: str) -> Limit:
        return self.options.limit(metric)

    def notes(self) -> list[str]:
        out = [n for r in self.parts.values() if r is not None for n in r.all_notes()]
        return out + [b.note for b in self.blocked.values()]

    def to_json_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = asdict(self.header)
        data.update(self.extra)
        data["profile"] = None if self.profile is None else asdict(self.profile)
        for name, result in self.parts.items():
            data[name] = None if result is None else result.to_json_dict()
        for name, blocked in self.blocked.items():
            data[name] = {"blocked_by": blocked.blocker, "notes": [blocked.note]}
        data["not_covered"] = list(self.not_covered)
        data["findings"] = [f.to_json_dict() for f in self.findings]
        return dict(json_safe(data))
