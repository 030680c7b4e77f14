"""Per named queue: qadmin's figures for each of a table's named queues against the library's
own (the trouble a DBA meets, and running the apps: tests/libraries/scenario.py).

``QueueView`` is what the library itself says of one named queue; ``check_named`` reads
inspect's ``named_queues`` (the whole table) and ``size``/``claims``/``tail`` with ``--queue NAME``
and compares every figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tests.libraries.scenario import app_json, my_trouble, qadmin, qadmin_json, sqlite_trouble

# Re-exported: the library tests take them from here or from scenario.
__all__ = ["QueueView", "app_json", "check_named", "instant", "my_trouble", "sqlite_trouble"]


@dataclass(frozen=True)
class QueueView:
    """One named queue as the library counts it: due waiting jobs, jobs waiting for a later
    time, running (claimed) jobs and which of them are stuck (a killed worker's), failed."""

    depth: int
    scheduled: int
    running: int
    # None: the library keeps no claim time qadmin can read (qadmin lists its claims with
    # the age unknown, so a queue's stale figure is unknown too).
    stuck: tuple[str, ...] | None
    failed: int
    # The oldest due waiting job's enqueue time as the library stores it (an epoch in
    # seconds, or an ISO 8601 text), or None: the library keeps none / nothing waits.
    oldest: float | str | None = None


def instant(value: float | str) -> datetime:
    """A library's time (epoch seconds, or ISO 8601, naive meaning UTC) as a UTC instant."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def check_named(
    conn: list[str],
    table: str,
    views: dict[str, QueueView],
    stale_after: str,
    *,
    running_known: bool = True,
) -> dict[str, Any]:
    """Each named queue's depth, scheduled, running, stale and failed from inspect's
    ``named_queues`` and from ``size``/``claims --queue``, equal to the library's ``views``.
    ``running_known`` False: the library keeps no running job in the table (huey)."""
    report = qadmin_json("inspect", table, *conn, "--stale-after", stale_after)
    lines = {str(q["queue"]): q for q in report["named_queues"]["queues"]}
    assert set(lines) <= set(views), lines
    for name, view in views.items():
        if name not in lines:  # no row of it in the table at all
            assert not _any(view), (name, lines, view)
            continue
        line = lines[name]
        assert line["exact"] is True, line
        assert line["depth"] == view.depth, (name, line, view)
        assert (line["scheduled"] or 0) == view.scheduled, (name, line, view)
        assert (line["failed"] or 0) == view.failed, (name, line, view)
        if running_known:
            assert line["running"] == view.running, (name, line, view)
            stale_n = None if view.stuck is None else len(view.stuck)
            assert line["stale"] == stale_n, (name, line, view)

        size = qadmin_json("size", table, *conn, "--queue", name)
        assert size["depth"] == view.depth, (name, size, view)
        assert (size.get("scheduled") or 0) == view.scheduled, (name, size, view)
        # The oldest due job: the same row's time as the library's (to the microsecond).
        if view.oldest is None:
            assert size["oldest_enqueued_at"] is None, (name, size)
            assert line["oldest_age_s"] is None, (name, line)
        else:
            seen = instant(size["oldest_enqueued_at"])
            assert abs((seen - instant(view.oldest)).total_seconds()) < 1e-3, (name, size, view)
            assert line["oldest_age_s"] is not None and line["oldest_age_s"] >= 0, line
        # tail's sample of the named queue (what a monitor graphs per queue).
        tail = qadmin("tail", table, *conn, "--queue", name, "--count", "1", "--format", "json")
        assert tail.exit_code == 0, tail.stderr
        sample = json.loads(tail.stdout.strip().splitlines()[0])
        assert sample["queue"] == f"{table}[{name}]" and sample["depth"] == view.depth, sample
        if running_known and view.stuck is not None:
            stale = qadmin_json(
                "claims", table, *conn, "--queue", name, "--stale-after", stale_after
            )
            assert sorted(str(c["id"]) for c in stale) == sorted(view.stuck), (name, stale)
    return dict(report)


def _any(view: QueueView) -> bool:
    return bool(view.depth or view.scheduled or view.running or view.failed)
