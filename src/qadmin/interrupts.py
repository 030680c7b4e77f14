"""Ctrl-C, SIGTERM and SIGHUP: how qadmin is stopped, and where a stop waits for a step.

``install`` (at start) makes SIGTERM and SIGHUP stop qadmin as Ctrl-C does (KeyboardInterrupt:
one line, the exit code a shell reports for the signal) instead of killing it mid-statement
with nothing said. ``deferred`` holds a stop until a multi-step write's step is done and
counted (a push chunk committed, or rolled back), so the line can say exactly what was done; a
second signal while one is held stops at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# The signal that stopped qadmin, for its exit code (128 + the signal, as a shell reports it).
stopped_by: list[int] = []


def _stop(signum: int, frame: FrameType | None) -> None:
    if stopped_by:  # already stopping: a second signal must not break the way out
        return
    stopped_by.append(signum)
    raise KeyboardInterrupt


_installed: list[bool] = []


def install() -> None:
    """SIGTERM and SIGHUP stop qadmin as Ctrl-C does; Ctrl-C records itself too."""
    for sig in STOPS:
        if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(sig, _stop)
    _installed.append(True)


def settle() -> None:
    """qadmin has said its line and is exiting: a further stop must not raise inside the
    interpreter's shutdown (an "Exception ignored ... KeyboardInterrupt" traceback)."""
    if _installed and threading.current_thread() is threading.main_thread():
        for sig in STOPS:
            signal.signal(sig, signal.SIG_IGN)


def exit_code(default: int) -> int:
    """128 + the signal that stopped qadmin (130 for Ctrl-C), or ``default``."""
    return 128 + stopped_by[-1] if stopped_by else default


def name() -> str:
    """The signal that stopped qadmin, as the line says it."""
    if not stopped_by or stopped_by[-1] == signal.SIGINT:
        return "interrupted"
    return f"interrupted ({signal.Signals(stopped_by[-1]).name})"


class Held:
    """What ``deferred`` saw: the signal held back, if any."""

    def __init__(self) -> None:
        self.signum: int | None = None


@contextmanager
def deferred() -> Iterator[Held]:
    """Hold Ctrl-C/SIGTERM/SIGHUP until the block is done; the caller then looks at
    ``held.signum`` and stops, saying what was done. A second signal stops at once."""
    held = Held()
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def hold(signum: int, frame: FrameType | None) -> None:
        if held.signum is not None:  # a second stop: at once, the step in doubt
            raise KeyboardInterrupt
        held.signum = signum
        stopped_by.append(signum)

    before = {sig: signal.getsignal(sig) for sig in STOPS}
    for sig in STOPS:
        signal.signal(sig, hold)
    try:
        yield held
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
