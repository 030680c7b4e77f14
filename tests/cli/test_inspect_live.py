"""inspect on a terminal (issue 30's goal 5): the first screen comes before the rate sample's
end, rates ``sampling…``, then the full report; Ctrl-C during the sample leaves the terminal
sane and exits 130; off a terminal, or with a format asked for, the output is one document as
before. Each test runs qadmin as a process on a pseudo-terminal, against a real database."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from qadmin import catalog
from qadmin.diagnostics import run
from qadmin.diagnostics.entries import rates
from qadmin.diagnostics.model import Options
from qadmin.ops import messages
from qadmin.profiles.resolve import Resolved, from_spec
from tests.conftest import Target, make_target
from tests.helpers import make_queue

# A guard against a hang only: no test asserts how long anything took.
HANG_S = 120
HIDE_CURSOR, SHOW_CURSOR = b"\x1b[?25l", b"\x1b[?25h"


class Terminal:
    """qadmin running on a pseudo-terminal (stdout and stderr), what it drew read as it goes."""

    def __init__(self, proc: subprocess.Popen[bytes], leader: int) -> None:
        self.proc, self.leader = proc, leader
        self.received = bytearray()
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.leader, 65536)
            except OSError:  # the child's side closed
                chunk = b""
            with self.changed:
                self.received.extend(chunk)
                self.changed.notify_all()
            if not chunk:
                return

    def wait_for(self, text: str) -> bytes:
        """Everything drawn up to the moment ``text`` has appeared."""
        wanted = text.encode()
        with self.changed:
            assert self.changed.wait_for(
                lambda: wanted in self.received or self.proc.poll() is not None, HANG_S
            ), bytes(self.received)
            assert wanted in self.received, bytes(self.received)
            return bytes(self.received)

    def finish(self) -> tuple[int, bytes]:
        code = self.proc.wait(HANG_S)
        self.reader.join(HANG_S)
        return code, bytes(self.received)


@contextmanager
def on_a_terminal(*args: str) -> Iterator[Terminal]:
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TERM", "NO_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="160", LINES="60")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "qadmin", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    try:
        yield Terminal(proc, leader)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)


def _text(drawn: bytes) -> str:
    """What was drawn, its escape sequences left out."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn.decode("utf-8", "replace"))


@pytest.fixture(params=["sqlite", "postgresql"])
def queue(request: pytest.FixtureRequest, tmp_path) -> tuple[Target, list[str]]:
    target = make_target(request.param, request, tmp_path)
    engine = target.engine()
    try:
        make_queue(engine, "jobs_live", "fifo", count=3)
    finally:
        engine.close()
    return target, target.cli_args()


def test_inspect_first_screen_before_the_rate_sample_then_the_rates(queue):
    """The first screen (the queue, its depth, rates ``sampling…``) is drawn before the
    rates are known, then replaced by the full report with them: the order of what the
    terminal received, not a timing."""
    _, db = queue
    with on_a_terminal("inspect", "jobs_live", "--sample", "3", *db) as terminal:
        first = _text(terminal.wait_for("sampling… over 3 s"))
        code, drawn = terminal.finish()
    assert code == 0, drawn
    headline = first.splitlines()[:2]
    assert headline[0].startswith("qadmin inspect jobs_live: fifo queue")
    assert "depth 3, " in headline[1] and headline[1].endswith(", rates sampling…")
    text = _text(drawn)
    # (Live draws the first screen again as it stops, then clears it)
    screen, report = text.rsplit("sampling… over 3 s", 1)
    assert "enqueue_per_s" not in screen and "enqueue_per_s" in report, text
    assert "sampling" not in report and "Traceback" not in text
    # the first screen was cleared (a transient display) and the cursor shown again
    assert drawn.rfind(SHOW_CURSOR) > drawn.rfind(HIDE_CURSOR) >= 0


def test_inspect_staged_rates_count_what_came_between_the_two_reads(queue):
    """run.inspect_staged: the report at once with the sample's first read only, judged as
    inspect judges; the second read, when finished, counts the messages pushed meanwhile."""
    target, _ = queue
    engine = target.engine()
    try:
        spec = catalog.get(engine, "jobs_live")
        resolved = Resolved(from_spec(spec, engine.schema), spec)
        report, finish = run.inspect_staged(engine, resolved, Options(sample_s=0.1))
        pending = report.part(rates.ENTRY)
        assert pending is not None and pending.enqueue_per_s is None and finish is not None
        whole = run.inspect_resolved(engine, resolved, Options(sample_s=0.1))
        assert [f.code for f in report.findings] == [f.code for f in whole.findings]
        messages.push(engine, spec, [b"late1", b"late2", b"late3", b"late4"])
        done = finish().part(rates.ENTRY)
        assert done is not None and done.enqueued == 4 and done.enqueue_per_s is not None
        assert done.depth_change == 4
        assert run.inspect_staged(engine, resolved, Options(sample_s=0))[1] is None
    finally:
        engine.close()


def test_inspect_ctrl_c_during_the_rate_sample_leaves_the_terminal_sane(queue):
    _, db = queue
    with on_a_terminal("inspect", "jobs_live", "--sample", "60", *db) as terminal:
        terminal.wait_for("sampling")
        terminal.proc.send_signal(signal.SIGINT)
        code, drawn = terminal.finish()
    assert code == 130, drawn
    text = _text(drawn)
    assert text.rstrip().endswith("qadmin: interrupted") and "Traceback" not in text
    assert drawn.rfind(SHOW_CURSOR) > drawn.rfind(HIDE_CURSOR) >= 0
    assert "enqueue_per_s" not in text


@pytest.mark.parametrize("fmt", ["json", "plain", "csv"])
def test_inspect_with_a_format_on_a_terminal_prints_one_document(queue, fmt):
    _, db = queue
    with on_a_terminal("inspect", "jobs_live", "--sample", "0.2", "--format", fmt, *db) as t:
        code, drawn = t.finish()
    assert code == 0, drawn
    assert b"sampling" not in drawn and HIDE_CURSOR not in drawn
    text = drawn.decode().replace("\r\n", "\n")
    if fmt == "json":
        assert json.loads(text)["rates"]["enqueued"] == 0
    else:
        assert "enqueue_per_s" in text


def test_inspect_without_a_rate_sample_draws_once(queue):
    _, db = queue
    with on_a_terminal("inspect", "jobs_live", "--sample", "0", *db) as terminal:
        code, drawn = terminal.finish()
    assert code == 0, drawn
    assert b"sampling" not in drawn and HIDE_CURSOR not in drawn
    assert "qadmin inspect jobs_live" in _text(drawn)
