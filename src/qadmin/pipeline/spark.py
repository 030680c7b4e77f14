"""The Spark session and JDBC options qadmin's Spark jobs use.

``local[*]`` unless a master (``--master`` / ``QADMIN_SPARK_MASTER``: standalone, YARN,
Kubernetes) or a Spark Connect server (``--remote sc://...`` / ``SPARK_REMOTE``) is named.
JDBC drivers come from Debian's packages under /usr/share/java (or ``QADMIN_SPARK_JARS``,
comma-separated). Passwords go to the drivers as connection properties, never into a URL.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qadmin import extras
from qadmin.engines import registry
from qadmin.engines.base import Engine
from qadmin.errors import MissingDependency, QadminError, UnsupportedError

JAR_DIR = Path("/usr/share/java")
JAR_PACKAGES = {e.jdbc_jar: e.jdbc_package for e in registry.ENGINES if e.jdbc_jar}
FETCH_ROWS = "10000"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
TRACK_S = 0.5  # how often a progress bar polls Spark's status tracker
WRITE_BATCH = "10000"


@dataclass(frozen=True)
class Where:
    """Where Spark runs: a master URL, or a Spark Connect remote (exclusive)."""

    master: str | None = None
    remote: str | None = None

    @classmethod
    def resolve(cls, master: str | None, remote: str | None) -> Where:
        master = master or os.environ.get("QADMIN_SPARK_MASTER")
        remote = remote or os.environ.get("SPARK_REMOTE")
        if master and remote:
            raise QadminError("name a Spark master or a Spark Connect remote, not both")
        return cls(master or (None if remote else "local[*]"), remote)


def jars(needed: list[str]) -> list[str]:
    """The JDBC jars for these engines: QADMIN_SPARK_JARS, else Debian's /usr/share/java."""
    override = os.environ.get("QADMIN_SPARK_JARS")
    if override:
        paths = [p for p in override.split(",") if p]
        missing = [p for p in paths if not Path(p).is_file()]
        if missing:
            raise QadminError(f"QADMIN_SPARK_JARS names a missing file: {missing[0]}")
        return paths
    for jar in needed:
        path = JAR_DIR / jar
        if not path.is_file():
            raise MissingDependency(
                f"Spark needs the JDBC driver {path}: apt-get install {JAR_PACKAGES[jar]} "
                "(or set QADMIN_SPARK_JARS)"
            )
    # Every driver present, not only the one needed now: jars are fixed when the session
    # starts, and a process (a test run, a notebook) may reach both engines with one session.
    return [str(JAR_DIR / jar) for jar in JAR_PACKAGES if (JAR_DIR / jar).is_file()]


def session(where: Where, jar_names: list[str] | None = None) -> Any:
    """A Spark session (reused within one process); imports pyspark only here."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise extras.missing("pyspark", "Spark", "or use --engine python") from None
    if where.remote:
        try:
            return SparkSession.builder.remote(where.remote).getOrCreate()
        except ImportError as exc:
            raise MissingDependency(
                f"Spark Connect needs its client: pip install 'pyspark[connect]' ({exc})"
            ) from None
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise MissingDependency(
            "Spark needs Java 17, which is not installed: apt-get install "
            "openjdk-17-jre-headless (or set JAVA_HOME)"
        )
    master = where.master or "local[*]"
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName("qadmin")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.driver.memory", os.environ.get("QADMIN_SPARK_DRIVER_MEMORY", "2g"))
        .config("spark.sql.shuffle.partitions", os.environ.get("QADMIN_SPARK_PARTITIONS", "8"))
        .config("spark.ui.enabled", os.environ.get("QADMIN_SPARK_UI", "false"))
        .config("spark.ui.showConsoleProgress", "false")
    )
    quiet = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
    java_options = f"{quiet} {os.environ.get('QADMIN_SPARK_JAVA_OPTIONS', '')}".strip()
    builder = builder.config("spark.driver.extraJavaOptions", java_options)
    if jar_names:
        builder = builder.config("spark.jars", ",".join(jars(jar_names)))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def jdbc_options(engine: Engine) -> dict[str, str]:
    """URL (host, port, database), driver and properties; the password as a property."""
    facts = engine.JDBC
    if facts is None:
        raise UnsupportedError(
            f"--engine spark has no JDBC path to {engine.name}: use --engine python"
        )
    options = {"url": engine.jdbc_url(), "driver": facts.driver, **dict(facts.properties)}
    user = engine.dsn.user or engine.default_user()
    if user:
        options["user"] = user
    if engine.dsn.password:
        options["password"] = engine.dsn.password
    return options


def jar_for(engine: Engine) -> list[str]:
    jar = registry.BY_NAME[engine.name].jdbc_jar
    return [jar] if engine.JDBC and jar else []


@contextmanager
def tracked(session: Any, update: Callable[[int, int], None] | None) -> Iterator[None]:
    """Feed a progress bar from Spark's status tracker (tasks done / tasks in the running
    stages) while the block runs; nothing for Spark Connect, which has no tracker."""
    try:
        tracker = session.sparkContext.statusTracker() if update else None
    except Exception:  # Spark Connect: no SparkContext on the client
        tracker = None
    if tracker is None or update is None:
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(TRACK_S):
            done = total = 0
            for stage in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            if total:
                update(done, total)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
