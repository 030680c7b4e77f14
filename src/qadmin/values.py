"""Normalising what drivers return (timestamps, binary payloads) into one shape for output."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

_NO_OFFSET = timedelta(0)
_UTC_ZONES: dict[tzinfo, bool] = {UTC: True}


def _fixed_utc(zone: tzinfo) -> bool:
    """Whether a time zone is UTC all year (PostgreSQL's Etc/UTC, UTC): a time in it is
    written as it is. A zone at UTC only in winter (Europe/London) is not. Known per zone: a
    batch's 100,000 times come in one or two zone objects."""
    known = _UTC_ZONES.get(zone)
    if known is None:
        known = _UTC_ZONES[zone] = getattr(zone, "key", None) in ("UTC", "Etc/UTC", "Etc/UCT") or (
            not hasattr(zone, "key") and zone.utcoffset(None) == _NO_OFFSET
        )
    return known


def to_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"unexpected payload type {type(value).__name__}")


def to_utc(value: Any) -> datetime | None:
    """Engines store UTC: naive datetimes and SQLite's text are UTC by construction; a number
    (a SQLite table keeping times as INTEGER or REAL) is unix epoch seconds."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace(" ", "T"))
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    raise TypeError(f"unexpected timestamp type {type(value).__name__}")


def iso(value: Any) -> str | None:
    """A timestamp as ISO 8601 UTC with microseconds and a Z, the form every output uses."""
    if type(value) is datetime:
        if value.tzinfo is None:  # MySQL's and SQL Server's UTC times
            return value.isoformat(timespec="microseconds") + "Z"
        if _fixed_utc(value.tzinfo):  # PostgreSQL's in a UTC session
            return value.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
    when = to_utc(value)
    # isoformat, not strftime: the same text at a third of the cost (a batch formats thousands).
    return when.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z" if when else None


TIME_COLUMNS = frozenset(
    ("enqueued_at", "due_at", "processing_started_at", "failed_at", "created_at")
)


def message(row: dict[str, Any], times: dict[Any, str] | None = None) -> dict[str, Any]:
    """One message row in output shape: times as ISO strings, payload as bytes. ``times``
    keeps the text of each time already seen: a batch's rows share their statement's time,
    and push --lines would otherwise format the same one 100,000 times."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in TIME_COLUMNS:
            if times is None or value is None:
                out[key] = iso(value)
            else:
                text = times.get(value)
                if text is None:
                    text = times[value] = iso(value) or ""
                out[key] = text
        elif key == "payload":
            out[key] = to_bytes(value)
        elif key in ("id", "overwritten_id", "attempts") and value is not None:
            out[key] = int(value)
        else:
            out[key] = value
    return out
