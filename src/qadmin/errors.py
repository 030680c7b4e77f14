"""One exception family for the whole tool, each with its documented exit code.

Engines translate driver exceptions into these, so nothing above the engine layer ever sees a
driver type, and the CLI turns any of them into one line on stderr plus the exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_EMPTY = 3
EXIT_FULL = 4
EXIT_NOT_FOUND = 5
EXIT_CONNECTION = 6
EXIT_PERMISSION = 7
EXIT_LOCK_TIMEOUT = 8
EXIT_MISSING = 9
EXIT_INCOMPLETE = 10
# Output failed part way (a closed pipe, a full disk): what was not delivered stays queued.
EXIT_UNDELIVERED = 11
# Ctrl-C: 128 + SIGINT, as a shell reports a process the signal ended.
EXIT_INTERRUPTED = 130


def listed(words: list[str], joiner: str = "or") -> str:
    """``a, b or c``: how an error line lists the choices it names."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {joiner} {words[-1]}"


def counted(number: int, noun: str) -> str:
    """``1 claim``, ``2 claims``: a count in a message, its noun agreeing (regular plurals)."""
    return f"{number} {noun if number == 1 else noun + 's'}"


class Committed(Protocol):
    """A message a push committed before it was stopped (``ops.messages.Pushed``): printed
    as the columns its push gave."""

    @property
    def id(self) -> int: ...

    def as_dict(self) -> dict[str, Any]: ...


class QadminError(Exception):
    """Base of every error qadmin reports; the message must already be safe to print."""

    exit_code = EXIT_ERROR
    ends_process = False  # True: the CLI exits at once after the line (os._exit)

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        # What a push had committed when this stopped it (its earlier chunks): shown first.
        self.pushed: Sequence[Committed] = []
        # What another multi-batch command had committed (a redrive's Outcome): shown first.
        self.partial: object | None = None


class UsageError(QadminError):
    """Bad input from the user: caught before any SQL is sent."""

    exit_code = EXIT_USAGE


class InvalidName(UsageError):
    """A queue or schema name that cannot be a qadmin identifier."""


class QueueEmpty(QadminError):
    exit_code = EXIT_EMPTY


class QueueFull(QadminError):
    """A ring with no free slot; ``pushed`` holds what went in before it filled up."""

    exit_code = EXIT_FULL

    def __init__(self, message: str, pushed: Sequence[Committed] | None = None) -> None:
        super().__init__(message)
        self.pushed = pushed or []


class NotFound(QadminError):
    exit_code = EXIT_NOT_FOUND


class StaleStatement(NotFound):
    """SQLite: a statement built for the table as it was (no such column or table): a convert
    or resize rewrote it after the queue was read. Nothing was written; read it again. A
    NotFound: a table dropped by hand says the same, and is one, as on the other engines."""


class ConnectionFailed(QadminError):
    """Server unreachable, refused, or timed out while connecting."""

    exit_code = EXIT_CONNECTION


class AbandonedWork(ConnectionFailed):
    """A Spark job given up on (its server lost, or past --job-timeout) while threads of the
    Spark client still retry against it: the CLI ends the process right after the one line,
    without waiting for them (or for the client's exit hooks)."""

    ends_process = True


class LoginFailed(ConnectionFailed):
    """The server answered and refused the credentials."""


class PermissionMissing(QadminError):
    """The role lacks a privilege; the message names it."""

    exit_code = EXIT_PERMISSION

    def __init__(self, message: str, privilege: str | None = None) -> None:
        super().__init__(message)
        self.privilege = privilege


class LockTimeout(QadminError):
    """A lock or statement timeout fired: the server was busy, nothing was changed."""

    exit_code = EXIT_LOCK_TIMEOUT


class StatementTimeout(LockTimeout):
    """The statement timeout fired: the statement ran too long, no lock was in the way (the
    same exit code as a lock timeout; said apart so no one is blamed for holding a lock)."""


class Deadlock(LockTimeout):
    """The server chose this transaction as a deadlock victim and rolled it back whole."""


class MissingDependency(QadminError):
    """An optional package or tool this command needs is not installed; the message says what
    to install."""

    exit_code = EXIT_MISSING


class Incomplete(QadminError):
    """maintain ran what it could, yet left work undone: an action refused because its lock
    blocks the queue, or a VACUUM whose dead rows a snapshot keeps (its status names it)."""

    exit_code = EXIT_INCOMPLETE


class Interrupted(QadminError):
    """Ctrl-C: the user stopped the command; not a failure of qadmin's."""

    exit_code = EXIT_INTERRUPTED


class WrongKind(UsageError):
    """A command that does not apply to this queue kind (ack on a fifo, say)."""


class UnsupportedError(UsageError):
    """An operation this engine cannot do safely (yet); the message says which and why."""
