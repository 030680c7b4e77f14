"""Writing messages that were taken off a queue: a piece at a time, each known to be out.

A pop commits only what reached its reader. Each piece (a row) is written and flushed; when
stdout is a pipe, the next piece waits until the reader has read this one (the pipe is empty),
so a reader that stops (``head -3``) has taken exactly the rows it read, and a row left in the
pipe when it went away counts as not delivered. A write that fails (a closed pipe, a full disk)
stops the output: the caller rolls back what was not delivered.
"""

from __future__ import annotations

import array
import errno
import fcntl
import io
import os
import select
import stat
import sys
import termios
import time
from collections.abc import Callable, Sequence
from typing import Any

from qadmin.errors import EXIT_UNDELIVERED, QadminError

# How often a pipe's reader is looked at while it has not read the last piece yet.
_DRAIN_START_S = 0.0002
_DRAIN_MAX_S = 0.02

_failure: list[str] = []

# The exit code when the reader goes away (a closed pipe) before the output is out: a check's
# verdict stays its verdict (a wrapper that stops reading must not turn CRITICAL into OK), a
# command that changed something exits 11 (its printout, the ids, is lost); any other exits
# 0, as a reader such as head expects.
_if_reader_leaves: list[int] = [0]


def if_reader_leaves(code: int) -> None:
    """Set what the process exits with should the reader go away from here on."""
    _if_reader_leaves[0] = code


def code_if_reader_left() -> int:
    return _if_reader_leaves[0]


class Undelivered(QadminError):
    """Output failed part way: what was not delivered went back into the queue."""

    exit_code = EXIT_UNDELIVERED


def reason() -> str:
    """Why the last delivery stopped, for the error line."""
    return _failure[-1] if _failure else "unknown"


def _stopped(why: str) -> None:
    _failure.append(why)
    fd = _fileno()
    if fd is None:
        return
    # Whatever is still buffered goes nowhere: the exit flush must not fail again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def _never() -> bool:
    return False


def _read_by_reader(fd: int, stopped: Callable[[], bool] = _never) -> bool:
    """Wait until the pipe's reader has read everything written: True, or False when it went
    away first (what is left in the pipe was never read). A stop (``stopped``) ends the wait:
    True, the piece is written to a reader that is still there."""
    delay = _DRAIN_START_S
    left = array.array("i", [0])
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    while True:
        fcntl.ioctl(fd, termios.FIONREAD, left, True)
        if left[0] == 0:
            return True
        if any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0)):
            return False
        if stopped():
            return True
        time.sleep(delay)
        delay = min(delay * 2, _DRAIN_MAX_S)


def _write(data: str | bytes, pipe: bool, stopped: Callable[[], bool] = _never) -> bool:
    """Write and flush one piece; whether it reached the reader."""
    try:
        if isinstance(data, str):
            sys.stdout.write(data)
            sys.stdout.flush()
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
    except OSError as exc:
        _stopped(_why(exc))
        return False
    if pipe and not _read_by_reader(sys.stdout.fileno(), stopped):
        _stopped("the reader closed the pipe")
        return False
    return True


def _why(exc: OSError) -> str:
    if exc.errno == errno.EPIPE:
        return "the reader closed the pipe"
    return exc.strerror or str(exc)


def _fileno() -> int | None:
    try:
        return sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a test runner's stream
        return None


def deliver(
    head: str | bytes, pieces: Sequence[str | bytes], stopped: Callable[[], bool] = _never
) -> int:
    """Write ``head``, then each piece; how many pieces were delivered. Once ``stopped`` (a
    held Ctrl-C / SIGTERM) no further piece is written: the ones written and flushed count."""
    fd = _fileno()
    pipe = fd is not None and _is_pipe(fd)
    if head and (not _write(head, pipe, stopped) or stopped()):
        return 0
    for done, piece in enumerate(pieces):
        if not _write(piece, pipe, stopped):
            return done
        if stopped():
            return done + 1
    return len(pieces)


def deliver_all(write: Callable[[], None], count: int) -> int:
    """Output drawn whole (a table): ``count`` delivered, or none when the write fails."""
    try:
        write()
        sys.stdout.flush()
    except OSError as exc:
        _stopped(_why(exc))
        return 0
    return count


class _Stdout(io.RawIOBase):
    """File descriptor 1, remembering a write that failed: an error no one caught (a full disk
    under a table, a closed stdout) is then known to be the output's, not an internal one."""

    def __init__(self, closed: bool) -> None:
        super().__init__()
        self.was_closed = closed
        self.failed: OSError | None = None
        self.discard = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self.was_closed:
            raise io.UnsupportedOperation("standard output is closed")
        return 1

    def isatty(self) -> bool:
        return not self.was_closed and os.isatty(1)

    def write(self, data: Any) -> int:
        if self.discard:
            return len(data)
        try:
            if self.was_closed:
                raise OSError(errno.EBADF, "standard output is closed")
            return os.write(1, data)
        except OSError as exc:
            if exc.errno != errno.EPIPE:  # a reader that went away is no failure of a read
                self.failed = exc
            raise


_raw: list[_Stdout] = []


def install() -> None:
    """Put stdout (the process's own, or none when fd 1 was closed) on a ``_Stdout``."""
    real = sys.__stdout__
    if sys.stdout is not real:  # a test runner's stream, or already installed
        return
    closed = real is None
    if closed:
        # Hold fd 1, so no file the command opens (a database) takes it; writes are refused.
        fd = os.open(os.devnull, os.O_RDONLY)
        if fd != 1:
            os.dup2(fd, 1)
            os.close(fd)
    raw = _Stdout(closed)
    _raw.append(raw)
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=getattr(real, "encoding", None) or "utf-8",
        errors=getattr(real, "errors", None) or "strict",
        line_buffering=bool(getattr(real, "line_buffering", False)),
    )


def failure(exc: BaseException | None = None) -> str | None:
    """Why stdout failed (``exc`` itself, or any write before), or None when it did not."""
    if not _raw or _raw[0].failed is None:
        return None
    if exc is not None and not isinstance(exc, OSError):
        return None
    return _why(_raw[0].failed)


def quiet() -> None:
    """After a failure: the exit flush writes nowhere instead of failing again."""
    if _raw:
        _raw[0].discard = True
