"""The data pipeline's speed: export and load rows/s per engine (python, spark cold and warm)
on PostgreSQL and MariaDB, and the report's time and peak memory over a telemetry history.

Export/load: a fifo queue of N messages (~100-byte payloads) is loaded from a Parquet file,
then exported to Parquet, by each path. "cold" Spark is the one-shot CLI command in a new
process (interpreter, JVM, session and job); "warm" is the job alone in a session that has
already run both jobs once (untimed). The Python path runs in this process (it has no
start-up to speak of).
Report: a synthetic history of R rows (tests/pipeline/history.py: a fleet of healthy queues at
one sample a minute, one Parquet file per day) through ``report.run`` on local[*]; peak memory
is the largest resident set of this process plus its JVM, sampled every 0.2 s.

The commands that produced benchmarks/results/pipeline.md (``--work``: where the generated
files go, default a temporary folder; ``--engines postgresql,mariadb`` is the default):

    .venv/bin/python benchmarks/pipeline.py --part export-load --rows 1000000 --work /tmp/x/work
    .venv/bin/python benchmarks/pipeline.py --part report --history-rows 10000000 --work /tmp/x/work
    .venv/bin/python benchmarks/pipeline.py --part export-load --rows 10000000 --work /tmp/x/work
    QADMIN_SPARK_DRIVER_MEMORY=1g .venv/bin/python benchmarks/pipeline.py --part where \
        --rows 500000 --partitions 2 --work /tmp/spark18-bench/work

Where (``--part where``): the same PostgreSQL queue exported and loaded by the one-shot CLI
on ``local[*]``, on a standalone cluster (a master and two one-core workers) and through a
Spark Connect server (``local[2]``), all started from the pip pyspark on 127.0.0.1
(tests/pipeline/cluster.py): "cold" is the one-shot CLI command; "warm" the job alone in this
process's session after a 10-row warm-up (load: the staging, the part Spark runs), from which
the rows per second per partition follow.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qadmin import catalog
from qadmin.engines import Timeouts, open_engine
from qadmin.errors import NotFound
from qadmin.ops import queues
from qadmin.pipeline import export, load, report, spark, spark_jobs

DSNS = {
    "postgresql": "postgresql://postgres@127.0.0.1:5432/test",
    "mariadb": "mysql://root@127.0.0.1:3306/test",
}


def _source_file(folder: Path, rows: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"in-{rows}.parquet"
    if not path.exists():
        writer = None
        step = 1_000_000
        for start in range(0, rows, step):
            ids = range(start, min(start + step, rows))
            payload = [b"order %012d " % i + b"x" * 80 for i in ids]
            table = pa.table({"id": pa.array(ids, pa.int64()), "payload": pa.array(payload)})
            writer = writer or pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
        assert writer is not None
        writer.close()
    return path


def _fresh(engine: Any, name: str) -> Any:
    with suppress(NotFound):
        queues.drop(engine, catalog.get(engine, name))
    return queues.create(engine, queues.make_spec(name, "fifo", None, False))


class Stopwatch:
    def __enter__(self) -> Stopwatch:
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.started


def export_load(engines: list[str], rows: int, folder: Path) -> None:
    source = _source_file(folder, rows)
    where = spark.Where("local[*]")
    for label in engines:
        engine = open_engine(DSNS[label], None, Timeouts(statement_ms=600_000))
        results: list[tuple[str, str, float]] = []
        spec = _fresh(engine, "bench_pipe")
        with Stopwatch() as watch:
            load.load_python(engine, spec, source, "parquet", None)
        results.append(("load", "python", watch.seconds))
        with Stopwatch() as watch:
            export.export(
                engine, spec, folder / f"{label}-py.parquet", "parquet", export.Selection()
            )
        results.append(("export", "python", watch.seconds))
        cli = [sys.executable, "-m", "qadmin"]
        dsn = ["--dsn", DSNS[label], "--statement-timeout", "600000", "--format", "json"]
        for run in ("cold", "warm"):
            target = folder / f"{label}-spark-{run}"
            shutil.rmtree(target, ignore_errors=True)
            with Stopwatch() as watch:
                if run == "cold":  # a one-shot command: interpreter, JVM, session, job
                    export_cli = ["export", "bench_pipe", "--engine", "spark", "--to", str(target)]
                    subprocess.run([*cli, *export_cli, *dsn], check=True, capture_output=True)
                else:
                    spark_jobs.export(
                        engine, spec, target, "parquet", export.Selection(), where, None
                    )
            results.append(("export", f"spark {run}", watch.seconds))
            if run == "cold":
                _warm_up(engine, spec, folder, where)
        for run in ("cold", "warm"):
            copy = _fresh(engine, "bench_pipe")
            with Stopwatch() as watch:
                if run == "cold":
                    load_cli = ["load", "bench_pipe", "--engine", "spark", "--from", str(source)]
                    subprocess.run([*cli, *load_cli, *dsn], check=True, capture_output=True)
                else:
                    load.prepare_stage(engine, copy, replace=True)
                    with load.dropping_stage(engine, copy):
                        spark_jobs.stage(engine, copy, source, "parquet", None, where)
                        load.move(engine, copy, None)
            results.append(("load", f"spark {run}", watch.seconds))
        queues.drop(engine, catalog.get(engine, "bench_pipe"))
        engine.close()
        for operation, path, seconds in results:
            print(
                f"{label:10s} {rows:>10,d} rows  {operation:6s} {path:11s} "
                f"{seconds:8.1f} s  {rows / seconds:>10,.0f} rows/s",
                flush=True,
            )
        _stop_spark()


def _warm_up(engine: Any, spec: Any, folder: Path, where: spark.Where) -> None:
    """Start the session and run both jobs once, untimed (class loading, JIT): "warm" is a
    session that has done this work before, as a long-running Spark service has."""
    target = folder / "warm-up"
    shutil.rmtree(target, ignore_errors=True)
    spark_jobs.export(engine, spec, target, "parquet", export.Selection(), where, None)
    scratch = _fresh(engine, "bench_warm")
    load.prepare_stage(engine, scratch, replace=True)
    with load.dropping_stage(engine, scratch):
        spark_jobs.stage(engine, scratch, _source_file(folder, 100_000), "parquet", None, where)
    queues.drop(engine, scratch)


def _stop_spark(where: spark.Where | None = None) -> None:
    """Stop the session (and its JVM's context), so the next Spark step starts cold."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if where is not None and where.remote:
        spark.session(where).stop()
    elif SparkContext._active_spark_context is not None:
        SparkSession.builder.getOrCreate().stop()


class PeakMemory:
    """Largest RSS of this process plus its children (the JVM), sampled in a thread."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, _tree_rss(os.getpid()))


def _tree_rss(root: int) -> int:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
        todo.extend(children.get(pid, []))
    return total


def report_run(history_rows: int, folder: Path) -> None:
    from tests.pipeline import history

    root = folder / f"history-{history_rows}"
    minutes = 30 * 24 * 60
    fleet = max(1, history_rows // minutes)
    if not root.exists():
        started = time.perf_counter()
        for first in range(0, fleet, 25):  # 25 queues at a time keeps the generator small
            count = min(25, fleet - first)
            batch = [
                history.Series(f"q{first + i:05d}", s.kind, s.enqueue_rate, s.depth, s.ghosts)
                for i, s in enumerate(history.fleet(minutes, count, seed=first))
            ]
            history.write(root, batch, minutes, connection=f"c{first // 25:03d}")
        print(f"generated {fleet * minutes:,d} rows in {time.perf_counter() - started:.1f} s")
    session = spark.session(spark.Where("local[*]"))
    session.read.parquet(str(root)).count()  # warm: the session and the file listing
    with PeakMemory() as memory:
        started = time.perf_counter()
        result = report.run(session, str(root))
        seconds = time.perf_counter() - started
    print(
        f"report     {result.samples:>10,d} rows  {seconds:8.1f} s  "
        f"{result.samples / seconds:>10,.0f} rows/s  peak RSS {memory.peak / 2**30:.2f} GiB "
        f"(driver memory {os.environ.get('QADMIN_SPARK_DRIVER_MEMORY', '2g')}), "
        f"{len(result.queues)} queues, {len(result.findings)} findings"
    )


def where_run(rows: int, partitions: int, folder: Path) -> None:
    from tests.pipeline.cluster import FAST_JVM, Services

    source = _source_file(folder, rows)
    engine = open_engine(DSNS["postgresql"], None, Timeouts(statement_ms=600_000))
    big = _fresh(engine, "bench_where")
    load.load_python(engine, big, source, "parquet", None)
    services = Services(folder / "services")
    services.root.mkdir(exist_ok=True)
    services.start_all()
    try:
        services.wait_ready()
        executors = (("spark.executor.extraJavaOptions", FAST_JVM),)
        modes = {
            "local[*]": spark.Where("local[*]"),
            "cluster 2x1 core": spark.Where(services.master, conf=executors),
            "connect local[2]": spark.Where(None, services.remote),
        }
        for mode, where in modes.items():
            cold = _cold(where, rows, partitions, folder)
            warm = _warm(engine, big, where, partitions, folder)
            for operation in ("export", "load"):
                print(
                    f"{mode:17s} {rows:>10,d} rows  {operation:6s} cold {cold[operation]:6.1f} s  "
                    f"warm {warm[operation]:6.1f} s  "
                    f"{rows / warm[operation] / partitions:>9,.0f} rows/s per partition",
                    flush=True,
                )
    finally:
        services.stop()
        for name in ("bench_where", "bench_copy"):
            with suppress(NotFound):
                queues.drop(engine, catalog.get(engine, name))
        engine.close()


def _cold(where: spark.Where, rows: int, partitions: int, folder: Path) -> dict[str, float]:
    """The one-shot CLI commands, as a user runs them: start-up and job."""
    cli = [sys.executable, "-m", "qadmin"]
    dsn = ["--dsn", DSNS["postgresql"], "--statement-timeout", "600000", "--format", "json"]
    place = ["--remote", where.remote] if where.remote else ["--master", str(where.master)]
    for key, value in where.conf:
        place += ["--spark-conf", f"{key}={value}"]
    target = folder / "where-cold"
    shutil.rmtree(target, ignore_errors=True)
    timed = {}
    export_cli = ["export", "bench_where", "--engine", "spark", "--to", str(target)]
    with Stopwatch() as watch:
        subprocess.run(
            [*cli, *export_cli, "--partitions", str(partitions), *place, *dsn], check=True
        )
    timed["export"] = watch.seconds
    engine = open_engine(DSNS["postgresql"], None, Timeouts(statement_ms=600_000))
    _fresh(engine, "bench_copy")
    engine.close()
    load_cli = ["load", "bench_copy", "--engine", "spark", "--from", str(target)]
    with Stopwatch() as watch:
        subprocess.run([*cli, *load_cli, *place, *dsn], check=True)
    timed["load"] = watch.seconds
    return timed


def _warm(
    engine: Any, spec: Any, where: spark.Where, partitions: int, folder: Path
) -> dict[str, float]:
    """The jobs alone, in a session that has run them once on 10 rows (class loading, JIT,
    executors up): what a long-running service pays per job, the basis for N hosts."""
    tiny = _fresh(engine, "bench_copy")
    load.load_python(engine, tiny, _source_file(folder, 10), "parquet", None)
    timed = {}
    for name, spec_now in (("warm-up", tiny), ("timed", spec)):
        target = folder / f"where-{name}"
        shutil.rmtree(target, ignore_errors=True)
        with Stopwatch() as watch:
            spark_jobs.export(
                engine, spec_now, target, "parquet", export.Selection(), where, partitions
            )
        timed["export"] = watch.seconds
        copy = _fresh(engine, "bench_copy")
        load.prepare_stage(engine, copy, replace=True)
        with Stopwatch() as watch, load.dropping_stage(engine, copy):
            spark_jobs.stage(engine, copy, target, "parquet", None, where)
        timed["load"] = watch.seconds  # staging: the part Spark runs (the move is SQL)
    _stop_spark(where)
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["export-load", "report", "where", "all"], default="all")
    parser.add_argument("--partitions", type=int, default=2, help="where: Spark partitions.")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--engines", default="postgresql,mariadb")
    parser.add_argument("--history-rows", type=int, default=10_000_000)
    parser.add_argument("--work", help="Folder for generated files (default: a temp folder).")
    args = parser.parse_args()
    folder = Path(args.work or tempfile.mkdtemp(prefix="qadmin-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} cores; files in {folder}", flush=True)
    if args.part in ("export-load", "all"):
        export_load(args.engines.split(","), args.rows, folder)
    if args.part in ("report", "all"):
        report_run(args.history_rows, folder)
    if args.part == "where":
        where_run(args.rows, args.partitions, folder)


if __name__ == "__main__":
    main()
