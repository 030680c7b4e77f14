"""``report --history``: the Spark job over the telemetry history ``collect`` writes.

Per connection, queue and hour: enqueue and dequeue rates from the counters (a counter that
went down was reset, so the increment is its new value), p50/p95/p99 of depth and oldest age,
the ghost (dead row) ratio, lock waits, stale claims and ring fill. Findings are runs of
consecutive hours (``FINDINGS``), and each queue gets a recommended ring capacity for
``convert``. The same job runs unchanged on local[*] or a cluster: only DataFrame operations,
and only the small results (findings, per-queue summary, the charted hours) reach the driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from qadmin.diagnostics.registry import metric_spec
from qadmin.errors import UsageError
from qadmin.kinds import MAX_CAPACITY

# (finding, minimum consecutive hours, what a DBA reads). The flags are computed in _flags.
FINDINGS: tuple[tuple[str, int, str], ...] = (
    ("backlog_growing", 3, "backlog grew for {hours} h while the dequeue rate fell"),
    ("ghosts_growing", 3, "ghost/dead rows grew for {hours} h while dequeues slowed"),
    ("ring_nearly_full", 1, "ring above 90 % full for {hours} h"),
    ("stale_claims", 1, "stale claims for {hours} h (consumers died holding claims)"),
    ("lock_waits", 1, "lock waits of 5 s or more for {hours} h"),
)
GROWTH = 1.05  # an hour "grew" when it is 5 % (and 1 message) above the hour before
SLOWDOWN = 0.95  # and "fell" when the rate is 5 % below it
# The limits of the diagnostics registry, so the history flags what inspect and check flag.
RING_FULL = metric_spec("ring_fill").warn or 0.9
LOCK_WAIT_S = metric_spec("lock_wait").warn or 5.0
MIN_RING = 1024
STALL_S = 60  # a recommended ring absorbs a minute of the peak enqueue rate
HOURLY_COLUMNS = (
    "connection",
    "queue",
    "kind",
    "hour",
    "samples",
    "enqueued",
    "dequeued",
    "enqueue_rate",
    "dequeue_rate",
    "depth_p50",
    "depth_p95",
    "depth_p99",
    "oldest_age_p50",
    "oldest_age_p95",
    "oldest_age_p99",
    "ghosts_max",
    "ghost_ratio",
    "lock_waits_max",
    "lock_wait_s_max",
    "stale_claims_max",
    "ring_fill_max",
)
QUEUE_COLUMNS = (
    "connection",
    "queue",
    "kind",
    "hours",
    "enqueued",
    "dequeued",
    "depth_p99_max",
    "oldest_age_p99_max",
    "ghost_ratio_max",
    "findings",
    "recommended_ring_capacity",
)
FINDING_COLUMNS = ("connection", "queue", "finding", "start", "end", "hours", "detail")


@dataclass
class Report:
    history: str
    samples: int
    queues: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    charted: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    frames: dict[str, Any] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        return {
            "history": self.history,
            "samples": self.samples,
            "queues": self.queues,
            "findings": self.findings,
        }


def recommended_capacity(depth_p99_max: float | None, enqueue_rate_max: float | None) -> int:
    """Twice the worst hourly p99 backlog and a minute of the peak enqueue rate, as a power
    of two (at least 1,024, at most qadmin's ring limit)."""
    need = max(2 * (depth_p99_max or 0), STALL_S * (enqueue_rate_max or 0), MIN_RING)
    capacity = 1 << (int(need) - 1).bit_length()
    return min(capacity, MAX_CAPACITY)


def hourly(history: Any) -> Any:
    """Samples -> one row per connection, queue and hour."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    series = Window.partitionBy("connection", "queue").orderBy("time")

    def increment(column: str) -> Any:
        previous = F.lag(column).over(series)
        return (
            F.when(previous.isNull() | F.col(column).isNull(), None)
            .when(F.col(column) >= previous, F.col(column) - previous)
            .otherwise(F.col(column))
        )

    previous_depth = F.lag("depth").over(series)
    seconds = F.col("time").cast("double") - F.lag("time").over(series).cast("double")
    deltas = (
        history.withColumn("d_enq", increment("enqueued_total"))
        .withColumn("d_deq_counter", increment("dequeued_total"))
        .withColumn("d_depth", F.col("depth") - previous_depth)
        .withColumn("dt", seconds)
        .withColumn(
            "d_deq",
            F.coalesce(
                F.col("d_deq_counter"), F.greatest(F.col("d_enq") - F.col("d_depth"), F.lit(0))
            ),
        )
        .withColumn("hour", F.date_trunc("hour", "time"))
        .withColumn(
            "ratio",
            F.col("ghosts") / F.greatest(F.col("ghosts") + F.col("depth"), F.lit(1)),
        )
    )
    quantiles = F.array(F.lit(0.5), F.lit(0.95), F.lit(0.99))
    grouped = deltas.groupBy("connection", "queue", "hour").agg(
        F.first("kind", ignorenulls=True).alias("kind"),
        F.count("*").alias("samples"),
        F.sum("dt").alias("seconds"),
        F.sum("d_enq").alias("enqueued"),
        F.sum("d_deq").alias("dequeued"),
        F.percentile_approx("depth", quantiles, 1000).alias("depth_q"),
        F.percentile_approx("oldest_age_s", quantiles, 1000).alias("age_q"),
        F.max("ghosts").alias("ghosts_max"),
        F.avg("ratio").alias("ghost_ratio"),
        F.max("lock_waits").alias("lock_waits_max"),
        F.max("max_lock_wait_s").alias("lock_wait_s_max"),
        F.max("stale_claims").alias("stale_claims_max"),
        F.max("ring_fill").alias("ring_fill_max"),
    )
    per_second = {
        "enqueue_rate": F.col("enqueued") / F.col("seconds"),
        "dequeue_rate": F.col("dequeued") / F.col("seconds"),
    }
    for name, value in per_second.items():
        grouped = grouped.withColumn(name, F.when(F.col("seconds") > 0, value))
    for i, p in enumerate((50, 95, 99)):
        grouped = grouped.withColumn(f"depth_p{p}", F.col("depth_q")[i])
        grouped = grouped.withColumn(f"oldest_age_p{p}", F.col("age_q")[i])
    return grouped.select(*HOURLY_COLUMNS)


def _flags(hours: Any) -> Any:
    """One boolean column per finding, hour by hour."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_hour = Window.partitionBy("connection", "queue").orderBy("hour")
    consecutive = (F.col("hour").cast("long") - F.lag("hour").over(by_hour).cast("long")) == 3600

    def grew(column: str) -> Any:
        before = F.lag(column).over(by_hour)
        return F.col(column) >= before * GROWTH + 1

    slowed = F.col("dequeue_rate") <= F.lag("dequeue_rate").over(by_hour) * SLOWDOWN
    flags = {
        "backlog_growing": consecutive & grew("depth_p50") & slowed,
        "ghosts_growing": consecutive & grew("ghosts_max") & slowed,
        "ring_nearly_full": F.col("ring_fill_max") > RING_FULL,
        "stale_claims": F.col("stale_claims_max") > 0,
        "lock_waits": F.col("lock_wait_s_max") >= LOCK_WAIT_S,
    }
    for name, condition in flags.items():
        hours = hours.withColumn(f"flag_{name}", F.coalesce(condition, F.lit(False)))
    return hours


def findings(hours: Any) -> Any:
    """Runs of consecutive flagged hours, at least each finding's minimum long."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    flagged = _flags(hours)
    runs = None
    for name, minimum, text in FINDINGS:
        rows = flagged.where(F.col(f"flag_{name}"))
        order = Window.partitionBy("connection", "queue").orderBy("hour")
        island = (F.col("hour").cast("long") / 3600).cast("long") - F.row_number().over(order)
        grouped = (
            rows.withColumn("island", island)
            .groupBy("connection", "queue", "island")
            .agg(
                F.min("hour").alias("start"),
                (F.max("hour") + F.expr("INTERVAL 1 HOUR")).alias("end"),
                F.count("*").alias("hours"),
                F.min_by("depth_p50", "hour").alias("depth_first"),
                F.max_by("depth_p50", "hour").alias("depth_last"),
                F.min_by("dequeue_rate", "hour").alias("rate_first"),
                F.max_by("dequeue_rate", "hour").alias("rate_last"),
                F.min_by("ghosts_max", "hour").alias("ghosts_first"),
                F.max_by("ghosts_max", "hour").alias("ghosts_last"),
                F.max("ring_fill_max").alias("fill"),
                F.max("stale_claims_max").alias("stale"),
                F.max("lock_wait_s_max").alias("wait"),
            )
            .where(F.col("hours") >= minimum)
            .withColumn("finding", F.lit(name))
            .withColumn("text", F.lit(text))
        )
        runs = grouped if runs is None else runs.unionByName(grouped)
    assert runs is not None
    return runs


def _detail(row: dict[str, Any]) -> str:
    text = row["text"].format(hours=row["hours"])
    name = row["finding"]
    if name == "backlog_growing":
        return (
            f"{text}: p50 depth {row['depth_first']:.0f} -> {row['depth_last']:.0f}, "
            f"dequeues {row['rate_first']:.1f}/s -> {row['rate_last']:.1f}/s"
        )
    if name == "ghosts_growing":
        return (
            f"{text}: ghosts {row['ghosts_first']:.0f} -> {row['ghosts_last']:.0f}, "
            f"dequeues {row['rate_first']:.1f}/s -> {row['rate_last']:.1f}/s"
        )
    if name == "ring_nearly_full":
        return f"{text}: up to {100 * row['fill']:.0f} % full"
    if name == "stale_claims":
        return f"{text}: up to {row['stale']} at once"
    return f"{text}: up to {row['wait']:.1f} s"


def queues(hours: Any) -> Any:
    from pyspark.sql import functions as F

    return hours.groupBy("connection", "queue").agg(
        F.first("kind", ignorenulls=True).alias("kind"),
        F.count("*").alias("hours"),
        F.sum("enqueued").alias("enqueued"),
        F.sum("dequeued").alias("dequeued"),
        F.max("depth_p99").alias("depth_p99_max"),
        F.max("oldest_age_p99").alias("oldest_age_p99_max"),
        F.max("ghost_ratio").alias("ghost_ratio_max"),
        F.max("enqueue_rate").alias("enqueue_rate_max"),
    )


def run(
    session: Any,
    history: str,
    *,
    names: tuple[str, ...] = (),
    since_s: int | None = None,
    chart_queues: int = 0,
) -> Report:
    """Read the history, aggregate, find; ``chart_queues`` hourly series come to the driver."""
    from pyspark.sql import functions as F

    try:
        samples = session.read.parquet(history)
    except Exception as exc:  # Spark raises AnalysisException for a path with no Parquet
        if "PATH_NOT_FOUND" in str(exc) or "UNABLE_TO_INFER_SCHEMA" in str(exc):
            raise UsageError(f"no Parquet history at {history} (qadmin collect --to ...)") from None
        raise
    if names:
        samples = samples.where(F.col("queue").isin(*names))
    if since_s is not None:
        cutoff = datetime.now(UTC) - timedelta(seconds=since_s)
        samples = samples.where(F.col("time") >= F.lit(cutoff))
    hours = hourly(samples).cache()
    found = findings(hours).cache()
    counted = {
        (r["connection"], r["queue"]): r["count"]
        for r in found.groupBy("connection", "queue").count().collect()
    }
    found_rows = []
    for row in found.orderBy("connection", "queue", "start", "finding").collect():
        record = row.asDict()
        found_rows.append(
            {
                "connection": record["connection"],
                "queue": record["queue"],
                "finding": record["finding"],
                "start": utc(record["start"]),
                "end": utc(record["end"]),
                "hours": record["hours"],
                "detail": _detail(record),
            }
        )
    queue_rows = []
    for row in queues(hours).orderBy("connection", "queue").collect():
        record = row.asDict()
        key = (record["connection"], record["queue"])
        record["findings"] = counted.get(key, 0)
        record["recommended_ring_capacity"] = recommended_capacity(
            record["depth_p99_max"], record.pop("enqueue_rate_max")
        )
        queue_rows.append(record)
    report = Report(
        history=history,
        samples=int(hours.agg(F.sum("samples")).first()[0] or 0),
        queues=queue_rows,
        findings=found_rows,
        frames={"hourly": hours, "findings": found},
    )
    if chart_queues:
        ranked = sorted(queue_rows, key=lambda q: (-q["findings"], -(q["depth_p99_max"] or 0)))
        chosen = [(q["connection"], q["queue"]) for q in ranked[:chart_queues]]
        wanted = F.lit(False)
        for connection, queue in chosen:
            wanted = wanted | ((F.col("connection") == connection) & (F.col("queue") == queue))
        for row in hours.where(wanted).orderBy("hour").collect():
            record = row.asDict()
            record["hour"] = utc(record["hour"])
            report.charted.setdefault((record["connection"], record["queue"]), []).append(record)
        report.charted = {k: report.charted.get(k, []) for k in chosen}
    return report


def utc(value: datetime | None) -> datetime | None:
    """A time Spark handed back, as an aware UTC time. The jobs compute in UTC, and pyspark
    turns a timestamp into this process's local wall time without a zone: read it as such."""
    if value is None:
        return None
    return value.astimezone(UTC)


def write_parquet(report: Report, folder: str) -> None:
    """hourly/ and findings/ under ``folder``, for further analysis (Spark or pyarrow)."""
    report.frames["hourly"].select(*HOURLY_COLUMNS).write.mode("overwrite").parquet(
        f"{folder}/hourly"
    )
    report.frames["findings"].select(
        "connection", "queue", "finding", "start", "end", "hours"
    ).write.mode("overwrite").parquet(f"{folder}/findings")
