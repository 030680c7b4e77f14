"""The Spark session and JDBC options qadmin's Spark jobs use.

``local[*]`` unless a master (``--master`` / ``QADMIN_SPARK_MASTER``: standalone, YARN,
Kubernetes) or a Spark Connect server (``--remote sc://...`` / ``SPARK_REMOTE``) is named.
JDBC drivers come from Debian's packages under /usr/share/java (or ``QADMIN_SPARK_JARS``,
comma-separated) and reach executors through ``spark.jars`` (the driver serves them: no
network beyond the cluster); a Connect server must be started with them (``--jars``).
Passwords go to the drivers as connection properties, never into a URL.

A cluster or Connect server that cannot be reached, or gives no executor, fails within
``Where.timeout_s`` as a ``ConnectionFailed`` (exit 6); Spark's and Java's errors become one
line (``failures``), their stack traces only with ``--debug`` (docs/spark-cluster.md).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from qadmin import extras
from qadmin.engines import registry
from qadmin.engines.base import Engine
from qadmin.errors import (
    AbandonedWork,
    ConnectionFailed,
    MissingDependency,
    QadminError,
    UnsupportedError,
    UsageError,
)

JAR_DIR = Path("/usr/share/java")
JAR_PACKAGES = {e.jdbc_jar: e.jdbc_package for e in registry.ENGINES if e.jdbc_jar}
FETCH_ROWS = "10000"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
DEBUG_LOG_CONFIG = Path(__file__).with_name("log4j2-debug.properties")
TRACK_S = 0.5  # how often a progress bar polls Spark's status tracker
WRITE_BATCH = "10000"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_JOB_TIMEOUT_S = 6 * 3600.0  # --job-timeout: the whole Spark part of a command
WATCH_S = 0.5  # how often a running job's server is checked
LOST_AFTER = 3  # refused connections in a row (WATCH_S apart) that mean the server is gone
CONNECT_PORT = 15002
STANDALONE_PORT = 7077
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]", ""})
# What the master may be: Spark's own schemes (anything else is a usage error, not a stack).
MASTER_RE = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|spark://[^/\s]+|yarn|k8s://\S+")
# Filesystems every host can mount at one path (export/load folders on a cluster).
SHARED_FS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "ceph", "glusterfs", "fuse.glusterfs", "lustre", "gpfs"}
    | {"beegfs", "fuse.sshfs", "fuse.s3fs", "fuse.juicefs", "9p", "virtiofs", "ocfs2", "gfs2"}
)
ERROR_CHARS = 300  # a Spark error's line is cut here; --debug shows the rest
T = TypeVar("T")


def session_conf() -> dict[str, str]:
    """The SQL settings every qadmin job relies on, on classic and Connect sessions alike:
    times in UTC, Parquet timestamps as UTC microseconds (what the Python export writes), and
    few shuffle partitions (the jobs are small per key)."""
    return {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.shuffle.partitions": os.environ.get("QADMIN_SPARK_PARTITIONS", "8"),
    }


# The settings whose value changes what qadmin writes (the partition count only changes speed).
REQUIRED_CONF = ("spark.sql.session.timeZone", "spark.sql.parquet.outputTimestampType")


# The values of the settings qadmin documents, checked before starting: Spark would keep its
# default for a bad one (a Connect server silently), or fail at start with a Java stack.
_COUNTS = {"spark.sql.shuffle.partitions", "spark.default.parallelism", "spark.cores.max"}
_COUNTS |= {"spark.executor.cores", "spark.driver.cores", "spark.executor.instances"}
_COUNTS |= {"spark.task.cpus", "spark.port.maxRetries"}
_PORTS = {"spark.driver.port", "spark.blockManager.port", "spark.driver.blockManager.port"}
_PORTS |= {"spark.ui.port"}
_SIZES = {"spark.executor.memory", "spark.driver.memory", "spark.executor.memoryOverhead"}
_SIZES |= {"spark.driver.memoryOverhead", "spark.driver.maxResultSize"}
_SIZES |= {"spark.memory.offHeap.size"}
_FLAGS = {"spark.ui.enabled", "spark.dynamicAllocation.enabled", "spark.authenticate"}
_FLAGS |= {"spark.network.crypto.enabled", "spark.io.encryption.enabled"}
_FLAGS |= {"spark.sql.adaptive.enabled", "spark.speculation", "spark.memory.offHeap.enabled"}
_FLAGS |= {"spark.ssl.enabled", "spark.ssl.rpc.enabled"}
SIZE_RE = re.compile(r"\d+\s*([kmgtp]i?b?|b)?", re.IGNORECASE)


def _check_value(key: str, value: str) -> None:
    """A usage error for a value Spark would not take for a setting qadmin knows."""
    text = value.strip()
    if key in _COUNTS and not (text.isdigit() and int(text) >= 1):
        problem = "a whole number of at least 1"
    elif key in _PORTS and not (text.isdigit() and int(text) <= 65535):
        problem = "a port number from 0 to 65535"
    elif key in _SIZES and not SIZE_RE.fullmatch(text):
        problem = "a size such as 512m or 2g"
    elif key in _FLAGS and text.lower() not in ("true", "false"):
        problem = "true or false"
    else:
        return
    raise UsageError(f"--spark-conf {key}={value}: Spark takes {problem}")


@dataclass(frozen=True)
class Where:
    """Where Spark runs: a master URL, or a Spark Connect remote (exclusive); how long to
    wait for it; extra ``spark.*`` settings (ports, executor sizing)."""

    master: str | None = None
    remote: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    conf: tuple[tuple[str, str], ...] = ()
    job_timeout_s: float = DEFAULT_JOB_TIMEOUT_S

    @classmethod
    def resolve(
        cls,
        master: str | None,
        remote: str | None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        conf: tuple[str, ...] = (),
        job_timeout_s: float = DEFAULT_JOB_TIMEOUT_S,
    ) -> Where:
        master = master or os.environ.get("QADMIN_SPARK_MASTER")
        remote = remote or os.environ.get("SPARK_REMOTE")
        if master and remote:
            raise QadminError("name a Spark master or a Spark Connect remote, not both")
        if master and not MASTER_RE.fullmatch(master):
            raise UsageError(
                f"--master {master}: Spark takes local[N], spark://HOST:PORT, yarn or k8s://URL"
            )
        if remote and not remote.startswith("sc://"):
            raise UsageError(f"--remote {remote}: a Spark Connect URL is sc://HOST:PORT")
        pairs = []
        for item in conf:
            key, sep, value = item.partition("=")
            if not sep or not key.startswith("spark."):
                raise UsageError(f"--spark-conf {item}: give spark.KEY=VALUE")
            _check_value(key, value)
            pairs.append((key, value))
        return cls(
            master or (None if remote else "local[*]"),
            remote,
            timeout_s,
            tuple(pairs),
            job_timeout_s,
        )

    def hosts(self) -> list[tuple[str, int]]:
        """The (host, port) pairs qadmin can check before starting: a standalone master's
        (several for a standby list) or the Connect server's; none for local, YARN, k8s."""
        if self.remote:
            parts = urlsplit(self.remote.split(";")[0])
            return [(parts.hostname or "localhost", parts.port or CONNECT_PORT)]
        if self.master and self.master.startswith("spark://"):
            out = []
            for hostport in self.master[len("spark://") :].split(","):
                host, _, port = hostport.rpartition(":")
                out.append((host or hostport, int(port) if port.isdigit() else STANDALONE_PORT))
            return out
        return []

    @property
    def on_this_host(self) -> bool:
        """Whether every executor runs on this machine (local mode, or a loopback cluster)."""
        if self.master and self.master.startswith("local"):
            return True
        found = self.hosts()
        return bool(found) and all(host in LOOPBACK for host, _ in found)

    @property
    def label(self) -> str:
        return (
            f"Spark Connect server {self.remote}" if self.remote else f"Spark master {self.master}"
        )


def jars(needed: list[str]) -> list[str]:
    """The JDBC jars for these engines: QADMIN_SPARK_JARS, else Debian's /usr/share/java."""
    override = os.environ.get("QADMIN_SPARK_JARS")
    if override:
        paths = [p for p in override.split(",") if p]
        missing = [p for p in paths if not Path(p).is_file()]
        if missing:
            raise UsageError(f"QADMIN_SPARK_JARS names a missing file: {missing[0]}")
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


def debugging() -> bool:
    """``--debug`` (or QADMIN_DEBUG): Spark's warnings and Java stacks reach stderr."""
    return bool(os.environ.get("QADMIN_DEBUG"))


def session(
    where: Where, jar_names: list[str] | None = None, otherwise: str = "or use --engine python"
) -> Any:
    """A Spark session (reused within one process) with qadmin's settings, reachable and with
    an executor within ``where.timeout_s``; imports pyspark only here. ``otherwise``: the way
    around a missing pyspark that the command offers ("" for report, which has none)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise extras.missing("pyspark", "Spark", otherwise) from None
    if not debugging():
        logging.getLogger("py4j").setLevel(logging.CRITICAL)
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    _reach(where)
    if where.remote:
        return _connect(SparkSession, where)
    java_home = os.environ.get("JAVA_HOME")
    if java_home and not os.access(Path(java_home) / "bin" / "java", os.X_OK):
        # Checked here: spark-class would fail with shell noise and a gateway error.
        raise MissingDependency(
            f"Spark needs Java 17, and JAVA_HOME={java_home} has no bin/java: point JAVA_HOME "
            "at a Java 17 install, or unset it (apt-get install openjdk-17-jre-headless)"
        )
    if not (java_home or shutil.which("java")):
        raise MissingDependency(
            "Spark needs Java 17, which is not installed: apt-get install "
            "openjdk-17-jre-headless (or set JAVA_HOME)"
        )
    master = where.master or "local[*]"
    if where.on_this_host:
        # The driver must listen where loopback executors can call it back.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName("qadmin")
        .config("spark.driver.memory", os.environ.get("QADMIN_SPARK_DRIVER_MEMORY", "2g"))
        .config("spark.ui.enabled", os.environ.get("QADMIN_SPARK_UI", "false"))
        .config("spark.ui.showConsoleProgress", "false")
    )
    for key, value in session_conf().items():
        builder = builder.config(key, value)
    config = DEBUG_LOG_CONFIG if debugging() else LOG_CONFIG
    quiet = f"-Dlog4j2.configurationFile={config.as_uri()}"
    java_options = f"{quiet} {os.environ.get('QADMIN_SPARK_JAVA_OPTIONS', '')}".strip()
    builder = builder.config("spark.driver.extraJavaOptions", java_options)
    if jar_names:
        builder = builder.config("spark.jars", ",".join(jars(jar_names)))
    for key, value in where.conf:
        builder = builder.config(key, value)
    # In this (main) thread: Spark's Ctrl-C handler, which cancels the jobs, is set only here.
    # A standalone master registers the application in the background: _await_executor bounds it.
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN" if debugging() else "ERROR")
    if not master.startswith("local"):
        _await_executor(spark, where)
    return spark


def _reach(where: Where) -> None:
    """Fail fast, and within the timeout, when nothing listens where the master or the
    Connect server should be, or a standalone master's port does not speak Spark's RPC
    (Spark itself retries silently for minutes, then fails with a Java stack)."""
    errors = []
    for host, port in where.hosts():
        failure: str | None
        try:
            with socket.create_connection((host, port), timeout=where.timeout_s) as sock:
                probe = not (where.remote or _tls(where))
                failure = _not_spark(sock, time.monotonic() + where.timeout_s) if probe else None
        except TimeoutError:
            failure = f"did not answer within {where.timeout_s:g} s"
        except OSError as exc:
            failure = exc.strerror or str(exc)
        if failure is None:
            return
        errors.append(f"{host}:{port}: {failure}")
    if not errors:
        return
    if all("did not answer" in e for e in errors):
        raise ConnectionFailed(
            f"the {where.label} did not answer within {where.timeout_s:g} s (--spark-timeout)"
        )
    raise ConnectionFailed(f"cannot reach the {where.label} ({'; '.join(errors)})")


def _tls(where: Where) -> bool:
    """Whether Spark's RPC runs over TLS here (the plain-text probe cannot speak it)."""
    conf = dict(where.conf)
    keys = ("spark.ssl.rpc.enabled", "spark.ssl.enabled")
    return any(conf.get(key, "").strip().lower() == "true" for key in keys)


# A Spark RPC request (frame length, type 3, request id, body length) asking an endpoint no
# server has: a Spark master answers with an RPC failure frame (type 5) for this request id,
# without logging an error. Body: no sender address, the receiver's address and name, a
# Java-serialised string.
_PROBE_NAME = b"qadmin-probe"
_PROBE_BODY = (
    b"\x00\x01" + struct.pack(">H", 9) + b"127.0.0.1" + struct.pack(">i", 0)
    + struct.pack(">H", len(_PROBE_NAME)) + _PROBE_NAME
    + b"\xac\xed\x00\x05\x74" + struct.pack(">H", 4) + b"ping"
)  # fmt: skip
_PROBE_ID = 0x71AD_0001
_PROBE = struct.pack(">qbqi", 8 + 1 + 12 + len(_PROBE_BODY), 3, _PROBE_ID, len(_PROBE_BODY))
_SPARK_REPLIES = (4, 5)  # RpcResponse, RpcFailure


def _not_spark(sock: socket.socket, deadline: float) -> str | None:
    """None when the peer answers the probe as Spark's RPC does, else what it did; a
    TimeoutError when it says nothing by the deadline."""
    sock.sendall(_PROBE + _PROBE_BODY)
    head = b""
    while len(head) < 17:  # frame length, type, request id
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(17 - len(head))
        if not chunk:
            return "closed the connection at a Spark request (another service listens there?)"
        head += chunk
    _, kind, request = struct.unpack(">qbq", head)
    if kind in _SPARK_REPLIES and request == _PROBE_ID:
        return None
    return "answered, but not in Spark's RPC (another service listens there?)"


def _bounded(call: Callable[[], T], where: Where, failure: str) -> T:
    """``call()``, or ConnectionFailed once ``where.timeout_s`` passes (the call is left to a
    daemon thread: the process is about to exit with the error)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(where.timeout_s)
    if thread.is_alive():
        raise ConnectionFailed(
            f"{failure} did not answer within {where.timeout_s:g} s (--spark-timeout)"
        )
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def run_job(where: Where, job: Callable[[], T]) -> T:
    """``job()`` (the Spark part of a command), bounded: ConnectionFailed (exit 6) when a Spark
    Connect server stops accepting connections while it runs (pyspark's client would retry
    for over ten minutes, then its release threads and exit hook would retry again), or once
    ``where.job_timeout_s`` passes. The job runs in a daemon thread; given up on, it is left
    there, and the error (an ``AbandonedWork``) has the CLI end the process at once."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = job()
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    thread = threading.Thread(target=run, name="qadmin-spark-job", daemon=True)
    thread.start()
    deadline = time.monotonic() + where.job_timeout_s
    refused = 0
    while thread.is_alive():
        thread.join(min(WATCH_S, max(0.0, deadline - time.monotonic())))
        if not thread.is_alive():
            break
        if time.monotonic() >= deadline:
            _give_up()
            raise AbandonedWork(
                f"the Spark job did not finish within {where.job_timeout_s:g} s "
                f"(--job-timeout) on the {where.label}; what it wrote is not kept"
            )
        refused = refused + 1 if where.remote and _refused(where) else 0
        if refused >= LOST_AFTER:
            _give_up()
            host, port = where.hosts()[0]
            raise AbandonedWork(
                f"lost the {where.label}: it stopped accepting connections at {host}:{port} "
                "while the job ran; what the job wrote is not kept"
            )
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def _refused(where: Where) -> bool:
    """Whether the Connect server's port refuses connections now (nothing listens: the server
    is gone; a slow answer is not counted, the job timeout bounds that)."""
    host, port = where.hosts()[0]
    try:
        with socket.create_connection((host, port), timeout=min(where.timeout_s, 2.0)):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def _give_up() -> None:
    """Close every Connect client without the calls that would wait on a lost server, and
    remove the hidden folders the abandoned job was writing (best effort: a live server may
    still write there)."""
    for spark in _CONNECT_SESSIONS:
        with suppress(Exception):
            spark.release_session_on_close = False
            spark.client._closed = True  # its exit hook then makes no call
    for folder in SCRATCH:
        shutil.rmtree(folder, ignore_errors=True)
    # A local Spark's JVM is this process's child and shares its stderr: ended now, it logs
    # nothing after the one line that says why the job was given up.
    with suppress(Exception):
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
        if proc is not None:
            proc.kill()
            proc.wait(timeout=10)


_CONNECT_SESSIONS: list[Any] = []
# Hidden folders a running job writes (an export's, renamed into place when complete).
SCRATCH: list[Path] = []


def _await_executor(spark: Any, where: Where) -> None:
    """Wait for the cluster to give this application an executor: without one every job
    waits for ever ("Initial job has not accepted any resources")."""
    context = spark.sparkContext._jsc.sc()
    deadline = time.monotonic() + where.timeout_s
    while time.monotonic() < deadline:
        if context.isStopped():
            raise ConnectionFailed(f"the {where.label} refused or ended qadmin's application")
        if context.getExecutorMemoryStatus().size() > 1:  # the driver's block manager + one
            return
        time.sleep(0.2)
    spark.stop()
    raise ConnectionFailed(
        f"the {where.label} gave qadmin no executor within {where.timeout_s:g} s: no worker "
        "has a free core and the memory asked (spark.executor.memory, spark.cores.max); "
        "see the master's web UI"
    )


def _connect(builder_type: Any, where: Where) -> Any:
    """A Spark Connect session with qadmin's settings set on it, or named when the server
    keeps another value."""
    from qadmin import render

    assert where.remote is not None
    try:
        # No call to the server yet (its channel connects on first use): the settings below
        # are the first, each bounded.
        spark = builder_type.builder.remote(where.remote).getOrCreate()
    except ImportError as exc:
        raise MissingDependency(
            f"Spark Connect needs its client: {extras.install_line('spark')} ({exc})"
        ) from None
    _CONNECT_SESSIONS.append(spark)
    wanted = {**session_conf(), **dict(where.conf)}
    for key, value in wanted.items():
        try:
            actual = _bounded(partial(_set, spark, key, value), where, f"the {where.label}")
        except ConnectionFailed:
            _abandon(spark)
            raise
        if actual is not None and actual.lower() == value.lower():
            continue
        kept = f"keeps {key}={actual}" if actual is not None else f"has no {key}"
        if key in REQUIRED_CONF:
            raise QadminError(
                f"the {where.label} {kept}, qadmin needs {value}: "
                f"start it with --conf {key}={value}"
            )
        render.note(f"qadmin: warning: the {where.label} {kept} (refused {value})")
    return spark


def _abandon(spark: Any) -> None:
    """Drop a Connect session whose server does not answer, closing its channel without a
    goodbye: otherwise pyspark's exit hook (its ML-cache clean-up) and ``stop``'s session
    release each retry against the silent server for minutes, and the process cannot exit."""
    spark.release_session_on_close = False
    spark.stop()  # closes the client: its exit hook then skips the call


def _set(spark: Any, key: str, value: str) -> str | None:
    """Set a session setting where the server allows it; the value it then has, its own
    default included (None: the server has no value for it at all)."""
    from pyspark.errors import SparkNoSuchElementException

    with suppress(Exception):  # a setting the server fixes: the caller compares the value
        spark.conf.set(key, value)
    try:
        return str(spark.conf.get(key))  # without a default: the server's effective value
    except SparkNoSuchElementException:
        return None


def is_connect(session: Any) -> bool:
    return type(session).__module__.startswith("pyspark.sql.connect")


def parallelism(session: Any) -> int:
    """How many partitions to read with: the cluster's cores (classic), else the server's
    default parallelism or shuffle partitions (a Connect client has no SparkContext)."""
    if not is_connect(session):
        return int(session.sparkContext.defaultParallelism)
    value = session.conf.get("spark.default.parallelism", None)
    return int(value or session.conf.get("spark.sql.shuffle.partitions"))


def readiness(where: Where, engine: Engine | None, paths: list[Path]) -> list[str]:
    """What would break when executors run on other hosts, checked before starting: a
    database named by a loopback address, folders only this host sees."""
    if where.on_this_host:
        return []
    found = []
    host = engine.dsn.host if engine is not None else None
    if engine is not None and (host or "localhost") in LOOPBACK:
        found.append(
            f"the DSN names the database at {host or 'localhost'}: each Spark executor would "
            "connect to its own host; name an address every worker reaches"
        )
    who = "the Spark Connect server" if where.remote else "every Spark worker"
    for path in paths:
        fs = filesystem(path)
        if fs not in SHARED_FS:
            found.append(
                f"{path} is on this host's {fs} filesystem: {who} must see it at the same "
                "path (shared storage such as NFS)"
            )
    return found


def filesystem(path: Path) -> str:
    """The filesystem type of the mount holding ``path`` (or its nearest existing parent)."""
    target = path.resolve()
    while not target.exists() and target != target.parent:
        target = target.parent
    best, fstype = "", "local"
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return fstype
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = str(target) == point or str(target).startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, fstype = point, fields[2]
    return fstype


@contextmanager
def failures(where: Where, engine: Engine | None = None) -> Iterator[None]:
    """Spark's and Java's exceptions as one qadmin line (the Java stack stays chained for
    ``--debug``): a missing JDBC driver names its jar and where it must go."""
    try:
        yield
    except QadminError:
        raise
    except Exception as exc:
        if not type(exc).__module__.startswith(("pyspark", "py4j", "grpc")):
            raise
        raise explain(exc, where, engine) from exc


def explain(exc: BaseException, where: Where, engine: Engine | None) -> QadminError:
    """The one line for a Spark failure."""
    text = str(exc)
    # Java's "ClassNotFoundException: X"; Spark Connect's "(java.lang.ClassNotFoundException) X"
    missing = re.search(r"ClassNotFoundException\)?:?\s*([\w.$]+)", text)
    facts = engine.JDBC if engine is not None else None
    if missing and engine is not None and facts is not None and missing[1] == facts.driver:
        entry = registry.BY_NAME[engine.name]
        jar = JAR_DIR / str(entry.jdbc_jar)
        if where.remote:
            return QadminError(
                f"the {where.label} has no JDBC driver {facts.driver}: start it with "
                f"--jars {jar} (that file on the server's host: apt-get install "
                f"{entry.jdbc_package})"
            )
        sent = os.environ.get("QADMIN_SPARK_JARS")
        if sent:
            # The override replaced the Debian jars: name what was sent, not what was not.
            named = ", ".join(p for p in sent.split(",") if p)
            return QadminError(
                f"the Spark executors have no JDBC driver {facts.driver}: QADMIN_SPARK_JARS "
                f"sent {named}, and none holds it; add its jar to QADMIN_SPARK_JARS "
                f"(Debian's is {jar}, apt-get install {entry.jdbc_package})"
            )
        return QadminError(
            f"the Spark executors have no JDBC driver {facts.driver}: qadmin ships {jar} "
            "from this host through spark.jars; where workers cannot fetch it, put it in "
            "each worker's $SPARK_HOME/jars"
        )
    if "stopped SparkContext" in text or "StatusCode.UNAVAILABLE" in text:
        # Spark's own line here is a Java exception about its stopped context: not the cause.
        return ConnectionFailed(
            f"lost the {where.label}: it stopped answering or ended qadmin's application "
            "(--debug shows Spark's error)"
        )
    return QadminError(f"spark: {_one_line(exc)}")


def _one_line(exc: BaseException) -> str:
    """The first line of the error and of its root Java cause, cut to ERROR_CHARS."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        root = java
        while root.getCause() is not None:
            root = root.getCause()
        top, bottom = str(java.toString()), str(root.toString())
        lines = [top.splitlines()[0] if top else type(exc).__name__]
        if bottom and bottom != top:
            lines.append(f"cause: {bottom.splitlines()[0]}")
        text = "; ".join(lines)
    else:
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


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
