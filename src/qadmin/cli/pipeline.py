"""``export``, ``archive``, ``load`` and ``report``: qadmin's data pipeline.

Each takes ``--engine python`` (the default: one connection, streaming) or ``--engine spark``
(partitioned, on ``local[*]`` or the ``--master`` / ``--remote`` named). Spark and pyarrow are
imported inside the commands only, so the rest of the CLI starts fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from qadmin import catalog, render
from qadmin.cli import progress
from qadmin.cli.options import (
    Duration,
    Target,
    confirm,
    connection_options,
    format_option,
    report_format_option,
)
from qadmin.diagnostics.entries import size
from qadmin.engines.base import Engine
from qadmin.errors import Interrupted, UsageError
from qadmin.kinds import QueueSpec

F = TypeVar("F", bound=Callable[..., Any])


def where_options(func: F) -> F:
    """--spark-timeout, --job-timeout and --spark-conf: how long to wait for a cluster, how
    long its job may take, and its settings."""
    func = click.option(
        "--job-timeout",
        type=Duration(fractional=True, low=1, high=7 * 86400),
        default="6h",
        show_default=True,
        metavar="DURATION",
        help="Fail (exit 6) when the Spark job has not finished within this; a Spark Connect "
        "server that stops accepting connections mid-job fails it at once.",
    )(func)
    func = click.option(
        "--spark-conf",
        "spark_conf",
        multiple=True,
        metavar="KEY=VALUE",
        help="A Spark setting (repeat): fixed ports (spark.driver.port, "
        "spark.blockManager.port), executor sizing (spark.executor.memory, spark.cores.max).",
    )(func)
    return click.option(
        "--spark-timeout",
        type=Duration(fractional=True, low=0.1, high=3600),
        default=60.0,
        show_default=True,
        metavar="DURATION",
        help="Fail (exit 6) when the master or Connect server is not reached, or gives no "
        "executor, within this.",
    )(func)


def spark_options(func: F) -> F:
    """--engine, --master, --remote, --spark-timeout, --spark-conf: every pipeline command's."""
    func = where_options(func)
    func = click.option(
        "--remote",
        metavar="sc://HOST:PORT",
        help="Run on a Spark Connect server (default: $SPARK_REMOTE).",
    )(func)
    func = click.option(
        "--master",
        metavar="URL",
        help="Spark master: local[N], spark://..., yarn, k8s://... "
        "(default: $QADMIN_SPARK_MASTER, else local[*]).",
    )(func)
    return click.option(
        "--engine",
        "run_on",
        type=click.Choice(["python", "spark"]),
        default=None,
        help="python (one machine, streaming) or spark (partitioned). Default: spark with "
        "--master/--remote; export also picks spark for a backlog past the measured "
        "crossover when the target is a folder (no suffix); else python.",
    )(func)


def _on_spark(run_on: str | None, master: str | None, remote: str | None) -> bool:
    if run_on == "python" and (master or remote):
        raise UsageError("--master/--remote run Spark: drop --engine python")
    return run_on == "spark" or (run_on is None and bool(master or remote))


def _where(
    master: str | None,
    remote: str | None,
    timeout_s: float,
    conf: tuple[str, ...],
    job_timeout_s: float,
    engine: Engine | None = None,
    paths: tuple[Path, ...] = (),
) -> Any:
    """Where Spark runs, after saying (one warning line each) what would break on executors
    that run on other hosts."""
    from qadmin.pipeline import spark

    where = spark.Where.resolve(master, remote, timeout_s, conf, job_timeout_s)
    for line in spark.readiness(where, engine, list(paths)):
        render.note(f"qadmin: warning: {line}")
    return where


def selection_options(func: F) -> F:
    func = click.option(
        "--state",
        "states",
        type=click.Choice(["ready", "claimed", "failed"]),
        multiple=True,
        help="Claim queues: only messages in this state (repeat for several).",
    )(func)
    return click.option(
        "--older-than",
        "older_than",
        type=Duration(),
        default=None,
        metavar="DURATION",
        help="Only messages enqueued longer ago than this (90s, 5m, 2h, 7d).",
    )(func)


def _selection(older_than: int | None, states: tuple[str, ...], default: tuple[str, ...]) -> Any:
    from qadmin.pipeline.export import Selection

    return Selection(older_than, tuple(states) or default)


@contextmanager
def _counting(description: str, total: int) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar whose total, when the operation cannot know it, is the queue's
    (estimated) depth."""
    with progress.bar(description) as update:
        if update is None:
            yield None
        else:
            yield lambda done, known: update(done, known or max(total, done))


@click.command("export")
@click.argument("name")
@click.option("--to", "to", required=True, metavar="PATH", help="File (python) or folder (spark).")
@click.option("--as", "as_format", type=click.Choice(["parquet", "jsonl"]), help="File format.")
@selection_options
@click.option("--partitions", type=click.IntRange(1, 1024), help="Spark: parallel reads.")
@spark_options
@connection_options
@format_option
def export_command(
    name: str,
    to: str,
    as_format: str | None,
    older_than: int | None,
    states: tuple[str, ...],
    partitions: int | None,
    run_on: str | None,
    master: str | None,
    remote: str | None,
    spark_timeout: float,
    spark_conf: tuple[str, ...],
    job_timeout: float,
    target: Target,
    fmt: str | None,
) -> None:
    """Write a consistent, read-only snapshot of a queue's messages to Parquet or JSON lines."""
    from qadmin.pipeline import export as export_ops
    from qadmin.pipeline import formats

    path = Path(to)
    file_format = formats.format_of(path, as_format)
    if file_format == "csv":
        raise UsageError("export writes parquet or jsonl")
    engine = target.engine()
    spec = catalog.get(engine, name)
    selection = _selection(older_than, states, export_ops.CLAIM_STATES)
    depth = size.measure(engine, spec).depth or 0
    spark_run = _on_spark(run_on, master, remote)
    if run_on is None and not spark_run:
        spark_run = _spark_pays_off(engine, spec, depth, path)
    if spark_run:
        from qadmin.pipeline import spark, spark_jobs

        # Before Spark starts (15 s on one machine): its writer would fail only at the end.
        if path.exists():
            raise UsageError(f"{path} exists: Spark writes a new folder there")
        formats.require_writable(path.parent)
        where = _where(
            master, remote, spark_timeout, spark_conf, job_timeout, engine, (path.parent,)
        )
        with spark.failures(where, engine), progress.bar(f"exporting {name} (spark)") as update:
            spark.jdbc_options(engine)  # no JDBC path: said before Spark starts
            # In this (main) thread: Spark's Ctrl-C handler is set only here; the job reuses it.
            spark.session(where, spark.jar_for(engine))
            result = spark.run_job(
                where,
                lambda: spark_jobs.export(
                    engine, spec, path, file_format, selection, where, partitions, update
                ),
            )
    else:
        if path.is_dir():
            raise UsageError(f"{path} is a folder: the python engine writes one file")
        with _counting(f"exporting {name}", depth) as update:
            result = export_ops.export(engine, spec, path, file_format, selection, update).summary()
    render.document(dict(result, queue=name, engine="spark" if spark_run else "python"), fmt)


def _spark_load_pays_off(engine: Engine, spec: QueueSpec, path: Path) -> bool:
    """With no --engine: Spark for a Parquet input past the measured crossover (its row count
    is in the file footers), when pyspark and a JDBC path are there and the kind stages."""
    from importlib.util import find_spec

    from qadmin.pipeline import formats

    if engine.JDBC is None or spec.info.load_pushes or find_spec("pyspark") is None:
        return False
    return formats.parquet_rows(path) >= engine.JDBC.spark_load_from_rows


def _spark_pays_off(engine: Engine, spec: QueueSpec, depth: int, path: Path) -> bool:
    """With no --engine: Spark for a backlog past the measured crossover, when pyspark, a JDBC
    path and a template Spark exports are all there (benchmarks/results/pipeline.md)."""
    from importlib.util import find_spec

    from qadmin.pipeline import spark_jobs

    return (
        engine.JDBC is not None
        and depth >= engine.JDBC.spark_export_from_rows
        and spark_jobs.reads_table(spec)
        and not path.suffix
        and find_spec("pyspark") is not None
    )


@click.command("archive")
@click.argument("name")
@click.option("--to", "to", required=True, metavar="FOLDER", help="Folder of archive files.")
@click.option("--as", "as_format", type=click.Choice(["parquet", "jsonl"]), default="parquet")
@selection_options
@click.option("--dry-run", is_flag=True, help="Say what would be archived; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@connection_options
@format_option
def archive_command(
    name: str,
    to: str,
    as_format: str,
    older_than: int | None,
    states: tuple[str, ...],
    dry_run: bool,
    yes: bool,
    target: Target,
    fmt: str | None,
) -> None:
    """Export old messages, verify the file, then delete exactly those (safe to re-run)."""
    from qadmin.pipeline import archive as archive_ops
    from qadmin.pipeline import export as export_ops

    if older_than is None:
        raise UsageError("archive needs --older-than (e.g. 7d)")
    engine = target.engine()
    spec = catalog.get(engine, name)
    archive_ops.check(spec)
    claim_default = ("ready", "failed") if spec.info.claims else export_ops.CLAIM_STATES
    selection = _selection(older_than, states, claim_default)
    if spec.info.claims and "claimed" in selection.states:
        raise UsageError("archive leaves claimed messages to their workers: --state ready/failed")
    folder = Path(to)
    if dry_run:
        now = archive_ops.plan(engine, spec, selection)
        count, first, last = now["messages"], now["first_id"], now["last_id"]
        ids = f"ids {first} to {last}" if count else "none"
        batches = -(-count // archive_ops.DELETE_BATCH)
        plan = {
            "queue": name,
            "folder": str(folder),
            "older_than_s": older_than,
            "states": ",".join(selection.states) if spec.info.claims else None,
            "unfinished_files": [str(p) for p in archive_ops.unfinished(folder, name)]
            if folder.is_dir()
            else [],
            "messages": count,
            "first_id": first,
            "last_id": last,
            "figures": "exact when read; the run selects again and may find more or fewer",
            "steps": [
                "finish the deletes of unfinished archive files",
                f"export the {count} selected messages ({ids}, one snapshot) to a new file",
                "read the file back and compare its ids with the export",
                f"delete those ids, {archive_ops.DELETE_BATCH} per transaction "
                f"({batches} transactions)",
                f"then: {archive_ops.reclaim_advice(engine, spec)}",
            ],
            "dry_run": True,
        }
        render.document(plan, fmt)
        return
    confirm("archive messages of", name, yes)
    try:
        with progress.bar(f"archiving {name}") as update:
            result = archive_ops.archive(engine, spec, folder, as_format, selection, update)
    except KeyboardInterrupt:
        raise Interrupted(
            f"archive of {name} stopped part way: a file it finished writing has its messages "
            f"still queued until they are deleted; running the same archive again into "
            f"{folder} deletes them first, then goes on"
        ) from None
    result["resumed"] = len(result["resumed"])
    render.document(dict(result, dry_run=False), fmt)


@click.command("load")
@click.argument("name")
@click.option("--from", "source", required=True, metavar="PATH", help="Parquet, JSONL or CSV.")
@click.option("--as", "as_format", type=click.Choice(["parquet", "jsonl", "csv"]))
@click.option("--key", metavar="COLUMN", help="Idempotency: skip rows whose COLUMN was loaded.")
@click.option("--replace-stage", is_flag=True, help="Drop a staging table a killed load left.")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed off a TTY).")
@spark_options
@connection_options
@format_option
def load_command(
    name: str,
    source: str,
    as_format: str | None,
    key: str | None,
    replace_stage: bool,
    yes: bool,
    run_on: str | None,
    master: str | None,
    remote: str | None,
    spark_timeout: float,
    spark_conf: tuple[str, ...],
    job_timeout: float,
    target: Target,
    fmt: str | None,
) -> None:
    """Bulk enqueue from a file in file order, through the queue kind's own push semantics."""
    from qadmin.pipeline import formats
    from qadmin.pipeline import load as load_ops

    path = Path(source)
    if not path.exists():
        raise UsageError(f"{path} does not exist")
    file_format = formats.format_of(path, as_format)
    formats.check_source(path, file_format)
    engine = target.engine()
    spec = catalog.get(engine, name)
    if replace_stage:
        confirm("replace the staging table of", name, yes)
    spark_run = _on_spark(run_on, master, remote)
    if run_on is None and not spark_run and file_format == "parquet":
        spark_run = _spark_load_pays_off(engine, spec, path)
    if spark_run:
        if spec.info.load_pushes:
            raise UsageError(f"a {spec.kind} is loaded through its push routine: --engine python")
        from qadmin.pipeline import spark, spark_jobs

        where = _where(master, remote, spark_timeout, spark_conf, job_timeout, engine, (path,))
        spark.jdbc_options(engine)  # no JDBC path: said before Spark starts
        load_ops.prepare_stage(engine, spec, replace_stage)
        with load_ops.dropping_stage(engine, spec):
            with spark.failures(where, engine), progress.bar(f"staging {name} (spark)") as update:
                spark.session(where, spark.jar_for(engine))  # in this thread (Ctrl-C)
                spark.run_job(
                    where,
                    lambda: spark_jobs.stage(engine, spec, path, file_format, key, where, update),
                )
            with progress.bar(f"loading {name}") as update:
                result = load_ops.move(engine, spec, update)
    else:
        with progress.bar(f"loading {name}") as update:
            result = load_ops.load_python(
                engine, spec, path, file_format, key, replace_stage=replace_stage, progress=update
            )
    engine_used = "spark" if spark_run else "python"
    render.document(
        dict(result, queue=name, engine=engine_used, enqueued_at=load_ops.enqueued_at(spec)), fmt
    )


@click.command("report")
@click.option(
    "--history",
    required=True,
    metavar="PATH",
    help="Folder (or URL Spark reads: hdfs://, s3a://) of collect's Parquet history.",
)
@click.option("--queue", "names", multiple=True, metavar="NAME", help="Only this queue (repeat).")
@click.option("--since", type=Duration(), metavar="DURATION", help="Only the last 2h, 7d, ...")
@click.option("--html", "html_path", metavar="FILE", help="Also write one HTML file with charts.")
@click.option(
    "--charts",
    type=click.IntRange(0, 500),
    default=20,
    show_default=True,
    help="HTML: chart this many queues (those with findings first).",
)
@click.option("--parquet", "parquet_path", metavar="FOLDER", help="Also write hourly/, findings/.")
@click.option("--master", metavar="URL", help="Spark master (default: $QADMIN_SPARK_MASTER).")
@click.option("--remote", metavar="sc://HOST:PORT", help="Spark Connect server.")
@where_options
@report_format_option
def report_command(
    history: str,
    names: tuple[str, ...],
    since: int | None,
    html_path: str | None,
    charts: int,
    parquet_path: str | None,
    master: str | None,
    remote: str | None,
    spark_timeout: float,
    spark_conf: tuple[str, ...],
    job_timeout: float,
    fmt: str | None,
) -> None:
    """Hourly rates, percentiles and findings from the telemetry history (a Spark job)."""
    from qadmin.pipeline import report as report_ops
    from qadmin.pipeline import spark

    if "://" not in history and not Path(history).exists():
        raise UsageError(f"no history at {history} (qadmin collect --to {history} ...)")
    local = tuple(Path(p) for p in (history, parquet_path) if p and "://" not in p)
    from qadmin.pipeline import formats

    # The outputs' folders, before Spark starts: its job would fail only after its start-up.
    if html_path:
        formats.require_writable(Path(html_path).parent)
    if parquet_path and "://" not in parquet_path:
        formats.require_writable(Path(parquet_path).parent)
    where = _where(master, remote, spark_timeout, spark_conf, job_timeout, None, local)
    with spark.failures(where):
        session = spark.session(where, otherwise="")

        def job() -> Any:
            found = report_ops.run(
                session,
                history,
                names=names,
                since_s=since,
                chart_queues=charts if html_path else 0,
            )
            if parquet_path:
                report_ops.write_parquet(found, parquet_path)
            return found

        result = spark.run_job(where, job)
    if html_path:
        from qadmin.pipeline import report_html

        Path(html_path).write_text(report_html.render(result), encoding="utf-8")
    render.report(
        result.document(),
        [
            ("Findings", "findings", report_ops.FINDING_COLUMNS),
            ("Queues", "queues", report_ops.QUEUE_COLUMNS),
        ],
        fmt,
        title="qadmin report",
    )


COMMANDS = [export_command, archive_command, load_command, report_command]
