"""A progress bar on stderr for long copies, shown only to a person at a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def bar(description: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yields ``update(done, total)``, or None off a TTY (cron, pipes: no escape codes)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task: Any = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update
