"""A progress bar on stderr for long operations, shown only to a person at a terminal: never
when stderr is a pipe or a file (cron, scripts, CI logs) nor under CI=true, so nothing extra is
written there."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def bar(description: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yields ``update(done, total)``, or None off a TTY (cron, pipes: no escape codes). Until
    the first update the bar pulses, so an operation that cannot count still shows it runs."""
    if not shown():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task: Any = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


def shown() -> bool:
    """Whether a progress bar would be drawn: stderr is a terminal and this is not CI."""
    return sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true", "yes")
