"""Options shared by many commands, bundled so each command states them in one line."""

from __future__ import annotations

import functools
import math
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click
from click.core import ParameterSource

from qadmin.engine_table import BY_NAME
from qadmin.errors import EXIT_UNDELIVERED, ConnectionFailed, UsageError
from qadmin.kinds import MAX_BATCH
from qadmin.render import FORMATS

if TYPE_CHECKING:
    from qadmin import config as config_mod
    from qadmin.engines import Engine, Timeouts
    from qadmin.profiles.resolve import Resolved

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Target:
    """Where a command connects: resolved lazily so --help and usage errors never connect."""

    dsn: str | None
    connection: str | None
    config: str | None
    schema: str | None
    timeouts: Timeouts

    _config: config_mod.Config | None = field(default=None, init=False, repr=False)

    def loaded_config(self) -> config_mod.Config:
        """The config file, read and checked once per command (the engine and the profile
        both need it)."""
        if self._config is None:
            from qadmin import config as config_mod

            self._config = config_mod.load_config(self.config)
        return self._config

    def resolve(self, engine: Engine, name: str, given: dict[str, Any], **how: bool) -> Resolved:
        """NAME's profile on ``engine``: a qadmin queue, a declared ``[tables.NAME]``, or an
        existing table (qadmin.profiles.resolve)."""
        from qadmin.profiles.resolve import resolve

        conf = self.loaded_config()
        conf.check_table(name)
        return resolve(engine, name, conf.tables, given, **how)

    def engine(self, create: bool = False, embedded: bool = False) -> Engine:
        """The engine; ``create``: this command may make a new SQLite file (``create``);
        ``embedded``: the embedded SQLite file unless --dsn or -c names a place (QADMIN_DSN and
        the config's default are not read: demo's)."""
        from qadmin import config as config_mod

        if embedded and self.dsn is None and self.connection is None:
            resolved = config_mod.embedded()
        else:
            resolved = config_mod.resolve(self.dsn, self.connection, self.loaded_config())
        check_sqlite_file(resolved, create)
        from qadmin.engines import open_engine

        engine = open_engine(resolved.dsn, self.schema or resolved.schema, self.timeouts)
        ctx = click.get_current_context()
        if ctx.find_root().params.get("verbose"):
            click.echo(f"qadmin: using {resolved.masked} ({resolved.source})", err=True)
        ctx.call_on_close(engine.close)
        return engine

    def command(self, declared: bool = False) -> str:
        """``qadmin`` as a printed fix must be typed to reach this same place: ``--dsn`` when
        given and it holds no secret (a password-bearing DSN is never printed), ``-c NAME``
        and ``--schema`` when given, and the config file when it names the connection or
        (``declared``) the ``[tables.NAME]`` entry the fix acts on; each word quoted for a
        POSIX shell."""
        words = ["qadmin"]
        named = self.dsn is None and self.connection
        if self.config and (named or declared):
            words += ["--config", self.config]
        if self.dsn is not None and not self.dsn_secret:
            words += ["--dsn", self.dsn]
        if named and self.connection:
            words += ["-c", self.connection]
        if self.schema:
            words += ["--schema", self.schema]
        return " ".join(shlex.quote(w) for w in words)

    @property
    def dsn_secret(self) -> bool:
        """Whether the given DSN holds a password or another secret (then it is not printed)."""
        from qadmin import dsn as dsn_mod

        return self.dsn is not None and dsn_mod.mask(self.dsn) != self.dsn

    def runnable(self, fix: str, declared: bool = False) -> str:
        """A fix that is a qadmin command, made runnable as printed against this target
        (``declared``: on a table the config declares): every ``qadmin`` in it (a fix may chain
        a dry run and the real run) carries the connection options; only a DSN with a password
        is left for the user to add, and the fix says so."""
        if not fix.startswith("qadmin "):
            return fix
        prefix = self.command(declared) + " "
        text = re.sub(r"(?<![\w-])qadmin (?=[a-z-])", lambda _: prefix, fix)
        return text + " (add your --dsn)" if self.dsn_secret else text


CONNECTION_PARAMS = (
    "dsn",
    "connection",
    "config_path",
    "schema",
    "connect_timeout",
    "lock_timeout",
    "statement_timeout",
)


def _connection_option_list() -> list[Callable[[F], F]]:
    return [
        click.option(
            "--dsn",
            metavar="DSN",
            help="Connection string (default: $QADMIN_DSN, the "
            "config's default connection, else the embedded SQLite file).",
        ),
        click.option(
            "-c", "--connection", metavar="NAME", help="A named connection from the config."
        ),
        click.option(
            "--config",
            "config_path",
            metavar="FILE",
            envvar="QADMIN_CONFIG",
            help="Config file (default: qadmin/config.toml in the user config dir).",
        ),
        click.option(
            "--schema", metavar="NAME", help="Schema (MySQL: database) holding the queues."
        ),
        click.option(
            "--connect-timeout",
            type=Duration(low=1, high=3600),
            default=5,
            show_default=True,
            metavar="DURATION",
            help="Limit for connecting and logging in.",
        ),
        click.option(
            "--lock-timeout",
            type=Millis(low=1, high=3_600_000),
            default=5000,
            show_default=True,
            metavar="MS",
            help="Lock wait limit for every statement (milliseconds, or 2s, 1m).",
        ),
        click.option(
            "--statement-timeout",
            type=Millis(low=1, high=86_400_000),
            default=30000,
            show_default=True,
            metavar="MS",
            help="Run-time limit for every statement (milliseconds, or 30s, 5m).",
        ),
    ]


def global_connection_options(func: F) -> F:
    """The same options on the ``qadmin`` group, so ``qadmin --dsn X list`` works as in psql;
    the group's callback ignores them and each command reads them through ``given``."""
    for option in reversed(_connection_option_list()):
        func = option(func)
    return func


def given(name: str, value: Any) -> Any:
    """A connection option's value: the command's own when typed after it, else the one typed
    before the command (``qadmin --dsn X list``), else the command's default or variable."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
        return value
    root = ctx.find_root()
    if root is not ctx and root.get_parameter_source(name) is ParameterSource.COMMANDLINE:
        return root.params[name]
    return value


def check_sqlite_file(resolved: config_mod.Connection, create: bool = False) -> None:
    """A SQLite DSN names a file that exists, or one ``create`` may make in an existing folder:
    a typo must not leave a new empty database (and folders) behind and then list nothing. The
    embedded default is exempt: it makes its file and folder on first use, with no setup."""
    from qadmin import config as config_mod
    from qadmin import dsn as dsn_mod

    parsed = dsn_mod.parse(resolved.dsn)
    if not BY_NAME[parsed.engine].file or resolved.source == config_mod.EMBEDDED:
        return
    if not parsed.path or parsed.path == ":memory:" or parsed.query.get("mode") == "memory":
        return
    file = Path(parsed.path).expanduser()
    if file.is_dir():
        raise ConnectionFailed(f"sqlite: {file} is a folder, not a database file")
    if file.exists() and not file.is_file():
        raise ConnectionFailed(f"sqlite: {file} is not a regular file (a database is one)")
    if file.exists():
        return
    if not create:
        raise ConnectionFailed(
            f"sqlite: no database file {file} (check the path; 'qadmin create' makes a new one)"
        )
    if not file.parent.is_dir():
        raise ConnectionFailed(
            f"sqlite: folder {file.parent} does not exist (qadmin makes the file, not folders)"
        )


def connection_options(func: F) -> F:
    """--dsn, -c/--connection, --config, --schema and the timeouts, as one ``target``; each is
    also accepted before the command."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from qadmin.engines import Timeouts

        values = {name: given(name, kwargs.pop(name)) for name in CONNECTION_PARAMS}
        timeouts = Timeouts(
            connect_s=values["connect_timeout"],
            lock_ms=values["lock_timeout"],
            statement_ms=values["statement_timeout"],
        )
        kwargs["target"] = Target(
            values["dsn"], values["connection"], values["config_path"], values["schema"], timeouts
        )
        return func(*args, **kwargs)

    for option in reversed(_connection_option_list()):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


# The one-off profile options: the keys of a config [tables.NAME] (docs/profiles.md).
_PROFILE_COLUMNS = (
    ("order_by", "the dequeue order's key (not a uuid or other random key)"),
    ("time_column", "the enqueue time, for the oldest waiting row's age"),
    ("due_column", "the run-at time"),
    ("state_column", "the column holding each row's state"),
    ("claimed_at_column", "when a worker claimed the row"),
    ("worker_column", "which worker claimed it"),
    ("session_column", "the claiming database session's id"),
    ("heartbeat_column", "a claim's last heartbeat, kept on its row"),
    ("attempts_column", "how many times the row was tried"),
    ("error_column", "the last error"),
    ("id_column", "how a row is named in findings and requeue (default: the primary key)"),
    ("queue_column", "the column naming each row's queue, in a table holding several"),
)
_PROFILE_VALUES = (
    ("pending", "a waiting state value (repeat for more): depth counts these rows when due"),
    ("scheduled", "a state waiting for a set time (repeat for more)"),
    ("retrying", "a state waiting for a retry (repeat for more)"),
    ("claimed", "a claimed state value (repeat for more)"),
    ("done", "a finished-and-kept state value (repeat for more)"),
    ("failed", "a failed-and-kept state value (repeat for more)"),
)


# The profile options that are not a profile key's column or values list.
PROFILE_EXTRA = ("library", "queue", "queue_null", "time_unit")


class QueueValue(click.ParamType):  # type: ignore[type-arg]
    """A named queue as a library stores it: any text, bound as a parameter, never SQL; the
    empty string too (a queue named ''), and control characters (bash's $'new\\nline', as
    status shows such a name with its escapes)."""

    name = "queue"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        text = str(value)
        if len(text) > 256 or "\0" in text:
            self.fail("a queue name is at most 256 characters, none of them NUL", param, ctx)
        return text


def profile_options(func: F) -> F:
    """The profile's keys as one-off options, bundled as ``profile`` (only those given)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given: dict[str, Any] = {}
        for key, _ in _PROFILE_COLUMNS:
            value = kwargs.pop(key)
            if value is not None:
                given[key] = value
        for key, _ in _PROFILE_VALUES:
            values = kwargs.pop(key)
            if values:
                given[key] = list(values)
        library = kwargs.pop("library")
        if library is not None:
            given["library"] = library
        for key in ("queue", "time_unit"):
            value = kwargs.pop(key)
            if value is not None:
                given[key] = value
        if kwargs.pop("queue_null"):
            given["queue_null"] = True
        kwargs["profile"] = given
        return func(*args, **kwargs)

    options = [
        *(
            click.option(f"--{k.replace('_', '-')}", k, metavar="COLUMN", help=f"Profile: {h}.")
            for k, h in _PROFILE_COLUMNS
        ),
        *(
            click.option(f"--{k}", k, metavar="VALUE", multiple=True, help=f"Profile: {h}.")
            for k, h in _PROFILE_VALUES
        ),
        click.option(
            "--library",
            metavar="NAME|none",
            help="Read the table as this library's (none: no library detection).",
        ),
        click.option(
            "--queue",
            "queue",
            metavar="NAME",
            type=QueueValue(),
            help="One named queue of a table that holds several (a library's queue name).",
        ),
        click.option(
            "--queue-null",
            "queue_null",
            is_flag=True,
            help="The rows whose queue column is NULL (a library's default queue).",
        ),
        click.option(
            "--time-unit",
            "time_unit",
            type=click.Choice(["s", "ms", "us", "ns"]),
            help="Profile: the time columns hold numeric epochs in this unit.",
        ),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


def _format_given_before(choices: list[str]) -> Callable[[click.Context, Any, Any], Any]:
    """A command's --format, or the one typed before the command (``qadmin --format json
    list``), as the connection options; one this command does not take is a usage error."""

    def pick(ctx: click.Context, param: Any, value: Any) -> Any:
        if value is not None:
            return value
        root = ctx.find_root()
        before = root.params.get("fmt") if root is not ctx else None
        if before is not None and before not in choices:
            raise click.BadParameter(
                f"{before!r} is not one of {', '.join(map(repr, choices))}.", ctx, param
            )
        return before

    return pick


def _format(choices: list[str], help_text: str) -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=None,
        callback=_format_given_before(choices),
        help=help_text,
    )


def format_option(func: F) -> F:
    return _format(list(FORMATS), "Output format (default: table on a terminal, plain otherwise).")(
        func
    )


def report_format_option(func: F) -> F:
    """--format of a report (inspect, ghosts, explain, maintain, report...): csv is one
    long table of ``section,row,key,value`` lines (docs/cli.md, Output formats)."""
    return _format(
        list(FORMATS),
        "Output format (default: table on a terminal, plain otherwise; csv: one "
        "section,row,key,value line per figure).",
    )(func)


def plugin_format_option(func: F) -> F:
    """check's --format: its Nagios line, or json; a plugin's verdict has no CSV."""
    return _format(
        [f for f in FORMATS if f != "csv"],
        "json: the verdict and the report as one document (default: the Nagios line).",
    )(func)


def global_format_option(func: F) -> F:
    """--format on the ``qadmin`` group: each command reads it when not given after it."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="Output format, before or after the command (after wins).",
    )(func)


# Message ids are a signed 64-bit column and attempts a signed 32-bit one, both from 1: a value
# outside is refused as usage (exit 2) before any engine sees it.
MESSAGE_ID = click.IntRange(1, 2**63 - 1)
ATTEMPT = click.IntRange(1, 2**31 - 1)


def count_option(default: int, help_text: str) -> Callable[[F], F]:
    """--count/-n for commands that take a number of messages."""
    return click.option(
        "--count",
        "-n",
        type=click.IntRange(1, MAX_BATCH),
        default=default,
        show_default=True,
        help=help_text,
    )


class Duration(click.ParamType):  # type: ignore[type-arg]
    """Seconds, or a number with s, m, h or d: 90, 30s, 5m, 2h, 1d (every option that takes a
    time takes these). Whole seconds unless ``fractional`` (0.5, 1.5s)."""

    name = "duration"
    _UNITS: ClassVar[dict[str, int]] = {"s": 1, "m": 60, "h": 3600, "d": 86400}

    def __init__(
        self,
        fractional: bool = False,
        low: float = 0,
        high: float = 365 * 86400,
        why_low: str | None = None,
    ) -> None:
        # why_low: why a value under ``low`` is refused, said instead of the range
        self.fractional, self.low, self.high, self.why_low = fractional, low, high, why_low

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = float(value)
        else:
            text = str(value).strip().lower()
            unit = self._UNITS.get(text[-1:], None)
            number = text[:-1] if unit else text
            try:
                seconds = float(number) * (unit or 1)
            except ValueError:
                self.fail(f"{value!r} is not a duration such as 90, 30s, 5m or 2h", param, ctx)
        if self.why_low is not None and math.isfinite(seconds) and seconds < self.low:
            low = _seconds(self.low)
            self.fail(f"{_seconds(seconds)} is below {low}: {self.why_low}", param, ctx)
        if not (math.isfinite(seconds) and self.low <= seconds <= self.high):
            bounds = f"{_seconds(self.low)} to {_seconds(self.high)}"
            self.fail(f"{value!r} is out of range ({bounds})", param, ctx)
        return seconds if self.fractional else int(seconds)


def _seconds(seconds: float) -> str:
    """A duration as given back in a message: the figure read (``0.5 s``, never the whole
    seconds it would be cut to), a bound in its round unit (``365 d``, ``1 h``)."""
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def seconds_option(flag: str, default: float, low: float, help_text: str) -> Callable[[F], F]:
    """A ``DURATION`` option in seconds, fractions allowed (``2``, ``0.5``, ``1m``), its
    parameter named after its flag."""
    return click.option(
        flag,
        flag[2:].replace("-", "_"),
        type=Duration(fractional=True, low=low),
        default=default,
        show_default=True,
        metavar="DURATION",
        help=help_text,
    )


# The commands that read every queue (status, metrics): each queue's statements bounded.
queue_timeout_option = seconds_option(
    "--queue-timeout",
    2.0,
    0.1,
    "The longest any one statement of a queue's reads may run (lower of this and "
    "--statement-timeout): a slow queue is a line saying so.",
)


def queue_timeouts(target: Target, queue_timeout: float) -> Timeouts:
    """The target's timeouts with the statement timeout lowered to ``--queue-timeout``."""
    import dataclasses

    limit_ms = min(target.timeouts.statement_ms, max(1, round(queue_timeout * 1000)))
    return dataclasses.replace(target.timeouts, statement_ms=limit_ms)


class Millis(Duration):
    """Milliseconds as a bare number (``5000``, as before), or a duration with ``ms``, ``s``,
    ``m`` or ``h`` (``500ms``, ``5s``, ``1m``)."""

    name = "milliseconds"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        text, scale = str(value).strip().lower(), 1.0
        if text.endswith("ms"):
            text = text[:-2]
        elif text[-1:] in self._UNITS:
            text, scale = text[:-1], self._UNITS[text[-1]] * 1000.0
        try:
            ms = float(text) * scale
        except ValueError:
            self.fail(f"{value!r} is not a time such as 5000, 500ms, 2s or 1m", param, ctx)
        if not (math.isfinite(ms) and self.low <= ms <= self.high):
            bounds = f"{self.low:.0f} to {self.high:.0f} ms"
            self.fail(f"{value!r} is out of range ({bounds})", param, ctx)
        return int(ms)


class Number(click.ParamType):  # type: ignore[type-arg]
    """A finite number at or above zero: a threshold (``nan`` would switch an alert off)."""

    name = "number"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number) or number < 0:
            self.fail(f"{value!r} is not a finite number at or above 0", param, ctx)
        return number


def confirm(action: str, queue: str, yes: bool, to: str = "") -> None:
    """Destructive commands: --yes, or a terminal where the user types the queue name. ``to``
    ends the action's phrase after the name ("to a ring")."""
    from qadmin.cli import output

    output.if_reader_leaves(EXIT_UNDELIVERED)  # what it did is done: a lost printout is said
    if yes:
        return
    after = f" {to}" if to else ""
    if not sys.stdin.isatty():
        raise UsageError(
            f"refusing to {action} {queue}{after} without --yes (stdin is not a terminal)"
        )
    typed = click.prompt(
        f"This will {action} queue {queue}{after}. Type its name to confirm",
        default="",
        show_default=False,
        err=True,
    )
    if typed != queue:
        raise UsageError(f"{action} {queue} cancelled: the name typed did not match")
