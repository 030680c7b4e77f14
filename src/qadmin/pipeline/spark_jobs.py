"""The Spark paths of export and load: partitioned JDBC reads and parallel staging writes.

Export on PostgreSQL: qadmin exports a snapshot (``pg_export_snapshot``) and holds it while
every partition's connection imports it (``sessionInitStatement``), so the parallel reads see
one instant. MySQL/MariaDB have no shared snapshots: the read is one partition in one
consistent-snapshot transaction (consistent, not parallel). Load: Spark numbers the input in
file order and writes it into the staging table in parallel; the move into the queue is the
same single transaction as the Python path's.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from qadmin.engines.base import Engine
from qadmin.errors import UnsupportedError, UsageError
from qadmin.kinds import QueueSpec
from qadmin.pipeline import formats, spark
from qadmin.pipeline.export import Progress, Selection


def export(
    engine: Engine,
    spec: QueueSpec,
    path: Path,
    fmt: str,
    selection: Selection,
    where: spark.Where,
    partitions: int | None,
    progress: Progress = None,
) -> dict[str, Any]:
    """Write a folder of part files (in id order by part name) at ``path``, with the Python
    export's Parquet metadata (Spark's writer cannot add key-value metadata, so qadmin stamps
    each part's footer afterwards: the folder must be visible here, as on shared storage)."""
    selection.check(spec)
    if not reads_table(spec):
        raise UnsupportedError(f"a {spec.kind} queue exports with --engine python (it is small)")
    if path.exists():
        raise UsageError(f"{path} exists: Spark writes a new folder there")
    options = spark.jdbc_options(engine)
    session = spark.session(where, spark.jar_for(engine))
    options.update(dbtable=engine.qualified(spec.name), fetchsize=spark.FETCH_ROWS)
    facts = engine.JDBC
    assert facts is not None
    with engine.transaction(write=False, snapshot=True) as execute:
        count = 1
        if facts.shared_snapshot:
            execute(engine.base_hooks.engine_sql("snapshot_keepalive"))
            snapshot = execute(engine.base_hooks.engine_sql("export_snapshot"))[0]["snapshot"]
            options["sessionInitStatement"] = engine.hooks.render_text(
                engine.base_hooks.engine_sql("import_snapshot"), {"snapshot": str(snapshot)}
            )
            count = partitions or spark.parallelism(session)
        bounds = next(r for s in engine.hooks.data_section(spec, "id_bounds") for r in execute(s))
        if bounds["lo"] is not None and count > 1:
            options.update(
                partitionColumn="id",
                lowerBound=str(bounds["lo"]),
                upperBound=str(int(bounds["hi"]) + 1),
                numPartitions=str(count),
            )
        frame = _select(session.read.format("jdbc").options(**options).load(), spec, selection)
        tmp = path.parent / f"{formats.TMP_PREFIX}{uuid.uuid4().hex}"
        spark.SCRATCH.append(tmp)  # removed if the job is given up on (spark.run_job)
        try:
            with spark.tracked(session, progress):
                _write(frame.sortWithinPartitions("id"), tmp, fmt)
            if fmt == "parquet":
                formats.stamp(tmp, spec.name, spec.kind)
            os.replace(tmp, path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            spark.SCRATCH.remove(tmp)
    return _summary(session, path, fmt)


def reads_table(spec: QueueSpec) -> bool:
    """Whether Spark can read the queue's table as its messages: a ring's rows are slots (and
    a ring is bounded, small enough for the Python path)."""
    return not spec.info.ring


def _select(frame: Any, spec: QueueSpec, selection: Selection) -> Any:
    from pyspark.sql import functions as F

    if selection.older_than_s is not None:
        frame = frame.where(F.col("enqueued_at") < F.lit(selection.before()))
    if spec.info.claims:
        state = (
            F.when(F.col("processing_started_at").isNull(), "ready")
            .when(F.col("failed_at") >= F.col("processing_started_at"), "failed")
            .otherwise("claimed")
        )
        frame = frame.withColumn("state", state).where(F.col("state").isin(*selection.states))
        frame = frame.withColumn("attempts", F.col("attempts").cast("int"))
    return frame.select(*formats.columns(spec.info))


def _write(frame: Any, folder: Path, fmt: str) -> None:
    from pyspark.sql import functions as F

    if fmt == "parquet":
        frame.write.option("compression", "zstd").parquet(str(folder))
        return
    text = frame.withColumn("payload_base64", F.base64("payload")).drop("payload")
    text.write.option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX").json(str(folder))


def _summary(session: Any, path: Path, fmt: str) -> dict[str, Any]:
    from pyspark.sql import functions as F

    reader = session.read.parquet if fmt == "parquet" else session.read.json
    row = reader(str(path)).agg(F.count("*"), F.min("id"), F.max("id")).first()
    return {"file": str(path), "format": fmt, "rows": row[0], "first_id": row[1], "last_id": row[2]}


def stage(
    engine: Engine,
    spec: QueueSpec,
    source: Path,
    fmt: str,
    key: str | None,
    where: spark.Where,
    progress: Progress = None,
) -> int:
    """Number the input in file order (dense, from 0) and append it to the staging table."""
    options = spark.jdbc_options(engine)
    from pyspark.sql import functions as F

    session = spark.session(where, spark.jar_for(engine))
    frame, total = _numbered(_inputs(session, source, fmt), F)
    columns = set(frame.columns)
    if "payload_base64" in columns:
        payload = F.unbase64("payload_base64")
    elif "payload" in columns:
        payload = F.col("payload").cast("binary")
    else:
        raise UsageError(f"{source.name} has no payload (a payload or payload_base64 column)")
    if key and key not in columns:
        raise UsageError(f"{source.name} has no column {key!r} for --key")
    if "due_at" in columns:
        spec.require("due", "load", "the input has a due_at column")
    due = F.col("due_at").cast("timestamp") if "due_at" in columns else F.lit(None)
    # An export's enqueued_at is kept (the move takes it where it is not null).
    enqueued = F.col("enqueued_at") if "enqueued_at" in columns else F.lit(None)
    staged = frame.select(
        F.col("seq"),
        payload.alias("payload"),
        due.cast("timestamp").alias("due_at"),
        (F.col(key).cast("string") if key else F.lit(None).cast("string")).alias("load_key"),
        enqueued.cast("timestamp").alias("enqueued_at"),
    )
    options.update(dbtable=engine.qualified(spec.objects()["stage"]), batchsize=spark.WRITE_BATCH)
    with spark.tracked(session, progress):
        staged.write.format("jdbc").options(**options).mode("append").save()
    return total


def _inputs(session: Any, source: Path, fmt: str) -> Any:
    """One frame per input file, unioned in name order so partitions follow file order."""
    files = formats.parquet_files(source) if fmt == "parquet" else [source]
    if not files:
        raise UsageError(f"{source} holds no {fmt} files")
    frames = []
    for file in files:
        if fmt == "parquet":
            frames.append(session.read.parquet(str(file)))
        elif fmt == "jsonl":
            frames.append(session.read.json(str(file)))
        else:
            frames.append(session.read.option("header", True).csv(str(file)))
    combined = frames[0]
    for other in frames[1:]:
        combined = combined.unionByName(other, allowMissingColumns=True)
    return combined


def _numbered(frame: Any, F: Any) -> tuple[Any, int]:
    """A dense ``seq`` in partition order: count rows per partition, then offset each row;
    also the number of rows."""
    marked = frame.withColumn("_part", F.spark_partition_id()).withColumn(
        "_pos", F.monotonically_increasing_id().bitwiseAND(F.lit((1 << 33) - 1))
    )
    counts = sorted((r["_part"], r["count"]) for r in marked.groupBy("_part").count().collect())
    offsets, total = [], 0
    for part, rows in counts:
        offsets.append((part, total))
        total += rows
    if not offsets:
        return marked.withColumn("seq", F.lit(0).cast("long")).drop("_part", "_pos"), 0
    mapping = F.create_map(*[F.lit(x) for pair in offsets for x in pair])
    seq = (mapping[F.col("_part")] + F.col("_pos")).cast("long")
    return marked.withColumn("seq", seq).drop("_part", "_pos"), total
