"""Synthetic telemetry histories in collect's layout, with anomalies planted on purpose.

Used by the report tests (a small history whose findings are known exactly) and by the
pipeline benchmark (millions of rows). Counters and depth are consistent: every minute,
depth(t) = depth(t-1) + enqueued - dequeued, as on a real queue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from qadmin.ops.collect import arrow_schema
from qadmin.ops.telemetry import SCHEMA_VERSION

START = datetime(2026, 11, 1, tzinfo=UTC)
MINUTE = 60


@dataclass(frozen=True)
class Series:
    """One queue's per-minute story: enqueue and dequeue rates (per s) and extra figures."""

    queue: str
    kind: str
    enqueue_rate: np.ndarray
    depth: np.ndarray
    ghosts: np.ndarray
    ring_fill: np.ndarray | None = None
    stale_claims: np.ndarray | None = None
    max_lock_wait_s: np.ndarray | None = None
    reset_at: int | None = None  # minute at which the enqueue counter restarts from 0


def _noise(rng: np.random.Generator, n: int, spread: float = 0.01) -> np.ndarray:
    return 1 + rng.uniform(-spread, spread, n)


def hourly_steps(n: int, start_hour: int, hours: int, factor: float) -> np.ndarray:
    """1 before ``start_hour``, then ``factor`` ** k during the k-th planted hour, then flat."""
    minute = np.arange(n)
    k = np.clip(minute // 60 - start_hour + 1, 0, hours)
    return factor**k


def planted(n: int, seed: int = 7) -> list[Series]:
    """Six queues: one healthy (with a counter reset) and five each with one anomaly."""
    rng = np.random.default_rng(seed)
    flat = np.full(n, 50.0)
    steady_depth = 100 * _noise(rng, n)
    backlog_out = 50 * hourly_steps(n, 4, 5, 0.8)
    backlog_depth = 100 + np.cumsum((flat - backlog_out) * MINUTE)
    ghost_rate = 50 * hourly_steps(n, 2, 5, 0.9)
    ring_depth = np.where((np.arange(n) // 60 >= 6) & (np.arange(n) // 60 < 8), 950.0, 500.0)
    stale = np.where(np.arange(n) // 60 == 9, 3, 0)
    waits = np.where(np.arange(n) // 60 == 3, 12.0, 0.2)
    ghosts_flat = 1000 * _noise(rng, n)
    return [
        Series("steady", "fifo", flat * _noise(rng, n), steady_depth, ghosts_flat, reset_at=330),
        Series("backlog", "fifo", flat.copy(), backlog_depth, ghosts_flat.copy()),
        Series(
            "ghosts",
            "fifo",
            ghost_rate,
            100 * _noise(rng, n),
            1000 * hourly_steps(n, 2, 5, 1.5),
        ),
        Series(
            "ring",
            "ring",
            flat.copy(),
            ring_depth * _noise(rng, n, 0.002),
            ghosts_flat * 0,
            ring_fill=ring_depth / 1000,
        ),
        Series(
            "claims",
            "claim",
            flat.copy(),
            100 * _noise(rng, n),
            ghosts_flat.copy(),
            stale_claims=stale,
        ),
        Series(
            "locks",
            "heap",
            flat.copy(),
            100 * _noise(rng, n),
            ghosts_flat.copy(),
            max_lock_wait_s=waits,
        ),
    ]


EXPECTED = {
    ("backlog", "backlog_growing"),
    ("ghosts", "ghosts_growing"),
    ("ring", "ring_nearly_full"),
    ("claims", "stale_claims"),
    ("locks", "lock_waits"),
}


def fleet(n: int, queues: int, seed: int = 11) -> list[Series]:
    """Many healthy queues (the benchmark's bulk): steady rates, noisy depth."""
    rng = np.random.default_rng(seed)
    return [
        Series(f"q{i:04d}", "fifo", 20 * _noise(rng, n), 100 * _noise(rng, n), 500 * _noise(rng, n))
        for i in range(queues)
    ]


def write(
    root: Path,
    series: list[Series],
    minutes: int,
    connection: str = "prod",
    start: datetime = START,
) -> int:
    """Write one Parquet file per connection and day (collect's folders); rows written."""
    schema = arrow_schema()
    first = np.datetime64(start.astimezone(UTC).replace(tzinfo=None), "us")
    times = first + np.arange(minutes) * np.timedelta64(MINUTE, "s")
    columns: dict[str, list[np.ndarray]] = {}
    for s in series:
        enq_minute = np.round(s.enqueue_rate * MINUTE).astype(np.int64)
        total = np.cumsum(enq_minute)
        if s.reset_at is not None:
            total[s.reset_at :] = total[s.reset_at :] - total[s.reset_at - 1]
        figures: dict[str, np.ndarray] = {
            "time": times,
            "queue": np.full(minutes, s.queue, dtype=object),
            "kind": np.full(minutes, s.kind, dtype=object),
            "depth": np.round(s.depth).astype(np.int64),
            "oldest_age_s": s.depth / np.maximum(s.enqueue_rate, 1),
            "enqueued_total": total,
            "ghosts": np.round(s.ghosts).astype(np.int64),
            "lock_waits": (_or_zero(s.max_lock_wait_s, minutes) > 1).astype(np.int32),
            "max_lock_wait_s": _or_zero(s.max_lock_wait_s, minutes),
            "stale_claims": _or_zero(s.stale_claims, minutes).astype(np.int64),
            "ring_fill": s.ring_fill if s.ring_fill is not None else np.full(minutes, np.nan),
        }
        for name, values in figures.items():
            columns.setdefault(name, []).append(values)
    data = {name: np.concatenate(parts) for name, parts in columns.items()}
    rows = len(data["time"])
    constant: dict[str, Callable[[], object]] = {
        "schema_version": lambda: SCHEMA_VERSION,
        "connection": lambda: connection,
        "server": lambda: "postgresql db1:5432/app",
        "engine": lambda: "postgresql",
        "depth_exact": lambda: False,
        "ghost_source": lambda: "pg_stat_user_tables.n_dead_tup",
        "dequeued_total": lambda: None,
        "deleted_total": lambda: None,
        "claimed": lambda: None,
        "table_bytes": lambda: None,
        "index_bytes": lambda: None,
        "index_bloat_pct": lambda: None,
    }
    arrays = []
    for field in schema:
        if field.name in data:
            values = data[field.name]
            if field.name == "ring_fill":
                arrays.append(pa.array(values, type=field.type, from_pandas=True))
            else:
                arrays.append(pa.array(values, type=field.type))
        else:
            # fields this synthetic history does not plant (the newer ones) are null
            value = constant.get(field.name, lambda: None)()
            arrays.append(pa.array([value] * rows, type=field.type))
    table = pa.Table.from_arrays(arrays, schema=schema)
    days = data["time"].astype("datetime64[D]")
    for day in np.unique(days):
        mask = pa.array(days == day)
        folder = root / f"date={day}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.filter(mask), folder / f"qadmin-{connection}-{day}.parquet")
    return rows


def _or_zero(values: np.ndarray | None, n: int) -> np.ndarray:
    return values if values is not None else np.zeros(n)
