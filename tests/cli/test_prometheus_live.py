"""A real Prometheus server (Debian's prometheus) scrapes ``qadmin metrics --listen`` on a
PostgreSQL database of its own, and qadmin_queue_depth is read back through Prometheus's HTTP
API, as an operator's dashboard reads it. Prometheus keeps its storage in the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from qadmin.engines import open_engine
from qadmin.kinds import Kind, QueueSpec
from qadmin.ops import messages, queues

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 120  # the longest wait for the first scrape to land: a bound, not a measurement


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        reason = f"{name} not installed (scripts/services installs Debian's prometheus)"
        if os.environ.get("QADMIN_REQUIRE_SERVERS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _query(base: str, expr: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.loads(response.read())
    except OSError:
        return []  # not up yet
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def test_prometheus_scrapes_qadmin_and_reads_the_depth_back(pg_own_database, tmp_path):
    prometheus = _binary("prometheus")
    engine = open_engine(pg_own_database)
    spec = queues.create(engine, QueueSpec("orders", Kind.FIFO))
    messages.push(engine, spec, [b"a", b"b", b"c", b"d", b"e"])
    engine.close()

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "qadmin", "metrics", "--listen", "127.0.0.1:0"]
    qadmin = subprocess.Popen(
        [*command, "--dsn", pg_own_database],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    started: list[subprocess.Popen] = [qadmin]
    try:
        assert qadmin.stderr is not None
        line = qadmin.stderr.readline()
        assert "serving metrics on http://127.0.0.1:" in line, line
        target = line.split("http://", 1)[1].split("/", 1)[0]
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n"
            "scrape_configs:\n  - job_name: qadmin\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        port = _free_port()
        log = (tmp_path / "prometheus.log").open("w")
        server = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started.append(server)
        base = f"http://127.0.0.1:{port}"
        found: list[dict] = []
        until = time.monotonic() + WAIT_S
        while not found and time.monotonic() < until and server.poll() is None:
            found = _query(base, 'qadmin_queue_depth{table="orders"}')
            if not found:
                time.sleep(0.5)
        assert found, (tmp_path / "prometheus.log").read_text()[-2000:]
        assert found[0]["value"][1] == "5"
        labels = found[0]["metric"]
        assert labels["job"] == "qadmin" and labels["kind"] == "fifo"
        assert labels["schema"] == "public" and "queue" not in labels  # empty: no label
        assert labels["server"].startswith("postgresql://127.0.0.1:5432/")
        up = _query(base, "qadmin_up")
        assert up and up[0]["value"][1] == "1"
        health = _query(base, 'up{job="qadmin"}')
        assert health and health[0]["value"][1] == "1"  # the scrape itself succeeded
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
