"""A real Spark standalone cluster (one master, two one-core workers) and a Spark Connect
server, started from the pip-installed pyspark on 127.0.0.1 with free ports, their logs and
pid files in one folder. Each daemon runs in its own process group, so stopping one (or
SIGKILLing a worker with its executor, as a lost host) never touches anything else."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

JARS = ("/usr/share/java/postgresql.jar", "/usr/share/java/mariadb-java-client.jar")
# Small, fast-starting JVMs: the box is shared with other work.
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
START_S = 180  # generous on a loaded 2-core box; a healthy start takes ~15 s


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@contextmanager
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never answers (a server that is not
    Spark, or a hung one): the kernel completes each handshake from the backlog."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock.getsockname()[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Services:
    """The daemons of one test module; ``stop`` ends every one it started, whatever state."""

    root: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    master_port: int = 0
    connect_port: int = 0

    @property
    def master(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def remote(self) -> str:
        return f"sc://127.0.0.1:{self.connect_port}"

    def env(self, daemon: bool) -> dict[str, str]:
        env = dict(os.environ)
        env.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1")
        if daemon:  # the master's and workers' own JVMs (spark-submit would take it too)
            env.update(SPARK_DAEMON_MEMORY="256m", SPARK_DAEMON_JAVA_OPTS=FAST_JVM)
        return env

    def start(self, name: str, argv: list[str]) -> None:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - the child owns it
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env(daemon=name != "connect"),
            start_new_session=True,
        )
        log.close()
        self.procs[name] = proc
        (self.root / f"{name}.pid").write_text(f"{proc.pid}\n")

    def start_all(self) -> None:
        bin_dir = spark_home() / "bin"
        self.master_port, self.connect_port = free_port(), free_port()
        self.start(
            "master",
            [
                str(bin_dir / "spark-class"),
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.master_port),
                "--webui-port",
                str(free_port()),
            ],
        )
        for number in (1, 2):
            self.start_worker(number)
        self.start_connect()

    def start_connect(self) -> None:
        bin_dir = spark_home() / "bin"
        self.start(
            "connect",
            [
                str(bin_dir / "spark-submit"),
                "--class",
                "org.apache.spark.sql.connect.service.SparkConnectServer",
                "--name",
                "qadmin-test-connect",
                "--master",
                "local[2]",
                "--driver-memory",
                "1g",
                "--driver-java-options",
                FAST_JVM,
                "--jars",
                ",".join(JARS),
                "--conf",
                f"spark.connect.grpc.binding.port={self.connect_port}",
                "--conf",
                "spark.connect.grpc.binding.address=127.0.0.1",
                "--conf",
                "spark.ui.enabled=false",
            ],
        )

    def start_worker(self, number: int) -> None:
        work = self.root / f"work{number}"
        work.mkdir(exist_ok=True)
        self.start(
            f"worker{number}",
            [
                str(spark_home() / "bin" / "spark-class"),
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(work),
                "--webui-port",
                str(free_port()),
                self.master,
            ],
        )

    def wait_ready(self) -> None:
        """Both workers registered with the master, and the Connect server listening."""
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited: {self.tail(name)}")
            registered = len(re.findall(r"Registering worker", self.log("master")))
            if registered >= 2 and _listening(self.connect_port):
                return
            time.sleep(0.3)
        raise RuntimeError(f"the cluster did not start: {self.tail('master')}")

    def log(self, name: str) -> str:
        path = self.root / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def tail(self, name: str) -> str:
        return self.log(name)[-2000:]

    def kill(self, name: str) -> None:
        """SIGKILL a daemon and everything it started (a worker's executors): a lost host."""
        proc = self.procs.pop(name)
        _signal_group(proc, signal.SIGKILL)
        proc.wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
        self.procs.clear()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # its own session: the group is this daemon's alone


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
