"""qadmin metrics: its exposition read back with prometheus_client's own parser, the textfile
written whole, the HTTP endpoint scraping afresh on every request, a failed scrape as
qadmin_up 0 (no secret in any label), the refusals, and the alert rules checked by promtool."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import run

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "docs" / "prometheus" / "qadmin-rules.yml"


@pytest.fixture
def db(tmp_path) -> list[str]:
    """A SQLite file with a fifo of three messages and a ring pushed twice, popped once."""
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert run("create", "orders", "--kind", "fifo", *dsn).exit_code == 0
    assert run("push", "orders", "a", "b", "c", *dsn).exit_code == 0
    assert run("create", "loop", "--kind", "ring", "--capacity", "10", *dsn).exit_code == 0
    assert run("push", "loop", "x", "y", *dsn).exit_code == 0
    assert run("pop", "loop", *dsn).exit_code == 0
    return dsn


def _families(text: str) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _value(families, name: str, **labels: str) -> float:
    found = [
        s.value
        for s in families[name].samples
        if all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_every_queue_status_finds_is_exposed_with_help_units_and_counters(db):
    result = run("metrics", *db)
    assert result.exit_code == 0, result.stderr
    families = _families(result.stdout)
    for family in families.values():
        assert family.documentation, f"{family.name} has no HELP"
        assert family.name.startswith("qadmin_")
    assert _value(families, "qadmin_up") == 1
    assert _value(families, "qadmin_scrape_error") == 0
    assert _value(families, "qadmin_scrape_queues") == 2
    assert _value(families, "qadmin_queue_depth", table="orders") == 3
    assert _value(families, "qadmin_queue_depth", table="loop") == 1
    assert _value(families, "qadmin_queue_status", table="orders") == 0
    assert families["qadmin_queue_oldest_age_seconds"].type == "gauge"
    # counters from the sequences' high-water marks: the parser names the family without
    # _total and its samples with it
    pushed = families["qadmin_queue_pushed"]
    assert pushed.type == "counter"
    assert {s.name for s in pushed.samples} == {"qadmin_queue_pushed_total"}
    assert _value(families, "qadmin_queue_pushed", table="orders") == 3
    assert _value(families, "qadmin_queue_pushed", table="loop") == 2
    assert _value(families, "qadmin_queue_popped", table="loop") == 1
    sample = next(s for s in families["qadmin_queue_depth"].samples if s.labels["table"] == "loop")
    assert sample.labels["kind"] == "ring" and sample.labels["library"] == ""
    assert set(sample.labels) == {"server", "schema", "table", "queue", "kind", "library"}
    # the counted figures are exact here: no quality series says otherwise
    assert not families["qadmin_queue_quality"].samples


def test_a_paused_queue_says_so_until_it_is_resumed(db):
    assert run("pause", "orders", "--yes", *db).exit_code == 0
    families = _families(run("metrics", *db).stdout)
    assert _value(families, "qadmin_queue_paused", table="orders") == 1
    assert _value(families, "qadmin_queue_paused", table="loop") == 0
    assert _value(families, "qadmin_queue_paused_seconds", table="orders") >= 0
    assert run("resume", "orders", "--yes", *db).exit_code == 0
    families = _families(run("metrics", *db).stdout)
    assert _value(families, "qadmin_queue_paused", table="orders") == 0
    seconds = families.get("qadmin_queue_paused_seconds")
    assert seconds is None or all(s.labels["table"] != "orders" for s in seconds.samples)


def test_openmetrics_output_ends_with_eof(db):
    result = run("metrics", "--openmetrics", *db)
    assert result.exit_code == 0
    assert result.stdout.rstrip().endswith("# EOF")
    assert "qadmin_queue_pushed_total{" in result.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_scrape_that_cannot_connect_is_up_0_with_no_secret_anywhere():
    dsn = f"postgresql://scraper:hunter2secret@127.0.0.1:{_closed_port()}/app"
    result = run("metrics", "--dsn", dsn, "--connect-timeout", "2")
    assert result.exit_code == 6
    families = _families(result.stdout)
    assert _value(families, "qadmin_up") == 0
    assert _value(families, "qadmin_scrape_error") == 1
    server = families["qadmin_up"].samples[0].labels["server"]
    assert server.startswith("postgresql://127.0.0.1:") and server.endswith("/app")
    for text in (result.stdout, result.stderr):
        assert "hunter2secret" not in text
    assert "scraper" not in result.stdout
    assert len(result.stderr.strip().splitlines()) == 1


def test_textfile_is_written_whole_with_no_temporary_file_left(db, tmp_path):
    out = tmp_path / "textfile" / "qadmin.prom"
    out.parent.mkdir()
    out.write_text("old contents\n")
    result = run("metrics", "--textfile", str(out), *db)
    assert result.exit_code == 0 and result.stdout == ""
    families = _families(out.read_text())
    assert _value(families, "qadmin_queue_depth", table="orders") == 3
    assert sorted(p.name for p in out.parent.iterdir()) == ["qadmin.prom"]
    assert out.stat().st_mode & 0o044  # node_exporter, another user, can read it


@pytest.mark.parametrize(
    "args,said",
    [
        (["--textfile", "metrics.txt"], "*.prom"),
        (["--textfile", "/no/such/folder/q.prom"], "no such folder"),
        (["--listen", "9187"], "HOST:PORT"),
        (["--listen", "127.0.0.1:99999"], "HOST:PORT"),
        (["--listen", "127.0.0.1:0", "--textfile", "x.prom"], "--textfile"),
        (["--listen", "127.0.0.1:0", "--openmetrics"], "--openmetrics"),
        (["--textfile", "x.prom", "--openmetrics"], "--openmetrics"),
    ],
)
def test_refusals_are_one_line_exit_2(db, args, said):
    result = run("metrics", *args, *db)
    assert result.exit_code == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def _serve(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """qadmin metrics --listen 127.0.0.1:0, as an operator starts it; its URL from stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "qadmin", "metrics", "--listen", "127.0.0.1:0", *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "serving metrics on http://127.0.0.1:" in line, line
    return proc, line.split(" on ", 1)[1].strip()


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def test_listen_runs_a_fresh_scrape_for_every_request(db):
    proc, url = _serve(db)
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            first = _families(response.read().decode())
        assert _value(first, "qadmin_queue_depth", table="orders") == 3
        assert run("push", "orders", "d", "e", *db).exit_code == 0
        request = urllib.request.Request(url, headers={"X-Prometheus-Scrape-Timeout-Seconds": "5"})
        with urllib.request.urlopen(request, timeout=30) as response:
            second = _families(response.read().decode())
        assert _value(second, "qadmin_queue_depth", table="orders") == 5
        assert _value(second, "qadmin_queue_pushed", table="orders") == 5
        accept = {"Accept": "application/openmetrics-text; version=1.0.0"}
        with urllib.request.urlopen(urllib.request.Request(url, headers=accept)) as response:
            assert response.headers["Content-Type"].startswith("application/openmetrics-text")
            assert response.read().decode().rstrip().endswith("# EOF")
    finally:
        _stop(proc)


def test_listen_on_a_port_in_use_is_one_line(db):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("metrics", "--listen", f"127.0.0.1:{port}", *db)
    assert result.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        reason = "promtool not installed (scripts/services installs Debian's prometheus)"
        if os.environ.get("QADMIN_REQUIRE_SERVERS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def test_the_shipped_alert_rules_pass_promtool():
    done = subprocess.run(
        [_promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_the_alert_rules_fire_on_the_series_qadmin_exposes():
    """promtool's unit tests of the rules (docs/prometheus/qadmin-rules.test.yml): the scrape
    failing, a queue CRITICAL only after 5 minutes, a full ring, a ring with no pops, new dead
    letters of a library's named queue, with the labels and annotations qadmin gives them."""
    tests = RULES.with_name("qadmin-rules.test.yml")
    done = subprocess.run(
        [_promtool(), "test", "rules", tests.name],
        cwd=tests.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_the_alert_rules_name_only_metrics_qadmin_exposes(db):
    import re

    exposed = set(_families(run("metrics", *db).stdout))
    exposed |= {f"{name}_total" for name in exposed}
    named = set(re.findall(r"\b(qadmin_[a-z_]+)", RULES.read_text()))
    assert named and named <= exposed, named - exposed


def test_without_prometheus_client_the_line_names_the_extra(db, monkeypatch):
    import sys as _sys

    import qadmin

    monkeypatch.setitem(_sys.modules, "prometheus_client", None)
    monkeypatch.setitem(_sys.modules, "qadmin.prometheus", None)
    monkeypatch.delattr(qadmin, "prometheus", raising=False)  # imported by an earlier test
    result = run("metrics", *db)
    assert result.exit_code == 9
    assert "prometheus_client" in result.stderr and "[metrics]" in result.stderr
    assert result.stdout == ""


def test_an_estimated_depth_keeps_its_series_and_says_so_apart(pg_own_database):
    """A fifo the catalog puts above what status counts: its depth is the catalog's estimate.
    The depth series has the same labels as a counted one; qadmin_queue_quality says it is an
    estimate."""
    from qadmin.engines import open_engine
    from qadmin.kinds import Kind, QueueSpec
    from qadmin.ops import messages, queues

    engine = open_engine(pg_own_database)
    try:
        big = queues.create(engine, QueueSpec("big", Kind.FIFO))
        messages.push(engine, big, [b"m"] * 12_000)
        small = queues.create(engine, QueueSpec("small", Kind.FIFO))
        messages.push(engine, small, [b"m"] * 3)
        engine.run(['ANALYZE "public"."big"'], None, write=True)
    finally:
        engine.close()
    result = run("metrics", "--dsn", pg_own_database)
    assert result.exit_code == 0, result.stderr
    families = _families(result.stdout)
    depth = _value(families, "qadmin_queue_depth", table="big")
    assert depth > 10_000
    assert _value(families, "qadmin_queue_depth", table="small") == 3
    labels = {
        frozenset(s.labels) for s in families["qadmin_queue_depth"].samples
    }  # one label set for counted and estimated figures alike
    assert len(labels) == 1
    assert _value(families, "qadmin_queue_quality", table="big", figure="depth") == 1
    quality = next(
        s for s in families["qadmin_queue_quality"].samples if s.labels["table"] == "big"
    )
    assert quality.labels["quality"] == "estimate"
    small_quality = [
        s for s in families["qadmin_queue_quality"].samples if s.labels["table"] == "small"
    ]
    assert small_quality == []


def test_queue_status_is_judged_with_the_configs_check_thresholds(db, tmp_path):
    config = tmp_path / "qadmin.toml"
    config.write_text('[check]\nwarn_depth = 3\n[check.queues."main.loop"]\nwarn_depth = 100\n')
    result = run("metrics", "--config", str(config), *db)
    assert result.exit_code == 0, result.stderr
    families = _families(result.stdout)
    assert _value(families, "qadmin_queue_status", table="orders") == 1  # WARNING: 3 >= 3
    assert _value(families, "qadmin_queue_status", table="loop") == 0
    config.write_text("[check]\nwarn_depht = 3\n")
    refused = run("metrics", "--config", str(config), *db)
    assert refused.exit_code == 2 and "warn_depht" in refused.stderr
    assert refused.stdout == ""


def test_queues_not_begun_within_the_scrape_timeout_are_counted_unread(pg_own_database):
    """Another session holds both queue tables locked: the first queue read waits for its
    lock (inspect's short part lock timeout, then names the holder), and by then the scrape's
    time is over, so the other queue is not read at all: status 3, counted unread."""
    import psycopg

    from qadmin.engines import open_engine
    from qadmin.kinds import Kind, QueueSpec
    from qadmin.ops import messages, queues

    engine = open_engine(pg_own_database)
    try:
        for name in ("first", "second"):
            spec = queues.create(engine, QueueSpec(name, Kind.FIFO))
            messages.push(engine, spec, [b"m"])
    finally:
        engine.close()
    with psycopg.connect(pg_own_database) as holder:
        holder.execute('LOCK TABLE "public"."first", "public"."second" IN ACCESS EXCLUSIVE MODE')
        result = run("metrics", "--dsn", pg_own_database, "--scrape-timeout", "0.5")
        holder.rollback()
    assert result.exit_code == 0, result.stderr
    families = _families(result.stdout)
    assert _value(families, "qadmin_up") == 1
    assert _value(families, "qadmin_scrape_queues") == 2
    assert _value(families, "qadmin_scrape_queues_unread") >= 1
    statuses = {s.labels["table"]: s.value for s in families["qadmin_queue_status"].samples}
    assert set(statuses) == {"first", "second"} and 3 in statuses.values()


@pytest.mark.parametrize("label", ["postgresql", "mariadb", "mysql8"])
def test_each_server_engine_exposes_depth_and_pushed_counter(label, request, tmp_path):
    """PostgreSQL in a database of its own; MariaDB's status sees every database on the
    server, so only this test's queue is asserted (and the scrape given time for the rest)."""
    from tests.conftest import make_target

    if label == "postgresql":
        args = ["--dsn", request.getfixturevalue("pg_own_database")]
        schema = "public"
    else:
        target = make_target(label, request, tmp_path)
        args, schema = target.cli_args(), str(target.schema)
    assert run("create", "orders", "--kind", "fifo", *args).exit_code == 0
    assert run("push", "orders", "a", "b", "c", *args).exit_code == 0
    result = run("metrics", "--scrape-timeout", "120", *args)
    assert result.exit_code == 0, result.stderr
    families = _families(result.stdout)
    assert _value(families, "qadmin_queue_depth", schema=schema, table="orders") == 3
    assert _value(families, "qadmin_queue_pushed", schema=schema, table="orders") == 3
    # OK, or WARNING from the shared server's own state (MariaDB's purge lag while other
    # sessions write): never CRITICAL or UNKNOWN for a fresh queue of three messages
    assert _value(families, "qadmin_queue_status", schema=schema, table="orders") in (0, 1)


def test_a_served_sqlite_file_removed_since_is_down_and_never_made_again(db, tmp_path):
    """Only create and demo make a SQLite file: a scrape after the file is gone is
    qadmin_up 0 with the reason, and leaves no new empty database behind."""
    proc, url = _serve(db)
    path = tmp_path / "q.db"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            first = _families(response.read().decode())
        assert _value(first, "qadmin_up") == 1
        for leftover in tmp_path.glob("q.db*"):
            leftover.unlink()
        with urllib.request.urlopen(url, timeout=30) as response:
            second = _families(response.read().decode())
        assert _value(second, "qadmin_up") == 0
        assert _value(second, "qadmin_scrape_error") == 1
        assert not path.exists()
    finally:
        _stop(proc)


def test_a_missing_file_at_start_is_served_as_down(tmp_path):
    proc, url = _serve(["--dsn", f"sqlite:///{tmp_path / 'gone.db'}"])
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            assert _value(_families(response.read().decode()), "qadmin_up") == 0
        assert not (tmp_path / "gone.db").exists()
    finally:
        _stop(proc)


def test_a_file_that_is_not_a_database_is_down_exit_6_with_the_cause(tmp_path):
    junk = tmp_path / "n.db"
    junk.write_text("junk\n")
    result = run("metrics", "--dsn", f"sqlite:///{junk}")
    assert result.exit_code == 6
    families = _families(result.stdout)
    assert _value(families, "qadmin_up") == 0
    assert _value(families, "qadmin_scrape_queues") == 0
    assert "is not a SQLite database file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_textfile_on_a_missing_file_is_written_up_0_over_the_old_figures(db, tmp_path):
    out = tmp_path / "tf" / "s3.prom"
    out.parent.mkdir()
    assert run("metrics", "--textfile", str(out), *db).exit_code == 0
    assert _value(_families(out.read_text()), "qadmin_up") == 1
    gone = ["--dsn", f"sqlite:///{tmp_path / 'missing.db'}"]
    result = run("metrics", "--textfile", str(out), *gone)
    assert result.exit_code == 6 and "no database file" in result.stderr
    families = _families(out.read_text())
    assert _value(families, "qadmin_up") == 0
    assert families["qadmin_queue_depth"].samples == []  # no old figure left
    assert not (tmp_path / "missing.db").exists()


def test_a_textfile_that_cannot_be_written_exits_1_on_one_line(db, tmp_path):
    taken = tmp_path / "a.prom"
    taken.mkdir()  # a folder where the file should go: the rename over it fails
    result = run("metrics", "--textfile", str(taken), *db)
    assert result.exit_code == 1
    assert "cannot write" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_socket_style_dsn_names_its_host_and_port_in_the_server_label():
    port = _closed_port()
    dsn = f"postgresql://scraper@/app?host=127.0.0.1&port={port}"
    result = run("metrics", "--dsn", dsn, "--connect-timeout", "2")
    assert result.exit_code == 6
    server = _families(result.stdout)["qadmin_up"].samples[0].labels["server"]
    assert server == f"postgresql://127.0.0.1:{port}/app"


def test_the_server_label_names_the_server_as_its_dsn_does(tmp_path):
    """A MariaDB scraped through mariadb:// is labelled so (not mysql://), and an absolute
    SQLite path keeps its leading slash: a dashboard's label is what the DSN said."""
    port = _closed_port()
    result = run("metrics", "--dsn", f"mariadb://scraper@127.0.0.1:{port}/app")
    assert result.exit_code == 6
    server = _families(result.stdout)["qadmin_up"].samples[0].labels["server"]
    assert server == f"mariadb://127.0.0.1:{port}/app"
    path = tmp_path / "q.db"
    assert run("create", "q", "--kind", "fifo", "--dsn", f"sqlite:///{path}").exit_code == 0
    result = run("metrics", "--dsn", f"sqlite:///{path}")
    assert result.exit_code == 0, result.output
    server = _families(result.stdout)["qadmin_up"].samples[0].labels["server"]
    assert server == f"sqlite:///{path}" and server.startswith("sqlite:////")


def test_a_queue_locked_by_another_session_is_unread_status_3(pg_own_database):
    """ACCESS EXCLUSIVE held elsewhere: the queue's parts wait out their short lock timeout,
    so it is not read: qadmin_queue_status 3 and counted in qadmin_scrape_queues_unread (as
    docs/monitoring.md says), the other queue read as ever."""
    import psycopg

    from qadmin.engines import open_engine
    from qadmin.kinds import Kind, QueueSpec
    from qadmin.ops import messages, queues

    engine = open_engine(pg_own_database)
    try:
        for name in ("held", "free"):
            spec = queues.create(engine, QueueSpec(name, Kind.FIFO))
            messages.push(engine, spec, [b"m"])
    finally:
        engine.close()
    with psycopg.connect(pg_own_database) as holder:
        holder.execute('LOCK TABLE "public"."held" IN ACCESS EXCLUSIVE MODE')
        result = run("metrics", "--dsn", pg_own_database, "--scrape-timeout", "60")
        holder.rollback()
    assert result.exit_code == 0, result.stderr
    families = _families(result.stdout)
    assert _value(families, "qadmin_up") == 1
    assert _value(families, "qadmin_queue_status", table="held") == 3
    assert _value(families, "qadmin_scrape_queues_unread") == 1
    assert _value(families, "qadmin_queue_depth", table="free") == 1


def test_a_threshold_pattern_matching_no_queue_is_said(db, tmp_path):
    config = tmp_path / "qadmin.toml"
    config.write_text('[check.queues."nosuch[*]"]\nwarn_depth = 1\n')
    result = run("metrics", "--config", str(config), *db)
    assert result.exit_code == 0
    assert '[check.queues."nosuch[*]"] matches no queue found' in result.stderr


def test_a_file_removed_between_the_check_and_the_connection_is_not_made(tmp_path):
    """The scrape's connection opens the file read-write only: removed after the check, it
    is a connection failure, never a new empty database."""
    from qadmin import config as config_mod
    from qadmin.cli import metrics as metrics_cli
    from qadmin.engines import open_engine
    from qadmin.errors import ConnectionFailed

    given = config_mod.Connection(dsn=f"sqlite:///{tmp_path / 'x.db'}", source="--dsn", name=None)
    engine = open_engine(metrics_cli._never_made(given).dsn, None)
    with pytest.raises(ConnectionFailed):
        engine.server_version()
    engine.close()
    assert list(tmp_path.iterdir()) == []


def test_a_tiny_budget_reads_a_different_queue_each_scrape(tmp_path):
    """Served (--listen), a scrape budget too short for every queue starved the same queues
    every time: each scrape read them in the order found and ran out at the same place. Now
    each starts with the queues read longest ago (and reads at least one), so scrapes in
    turn read every queue."""
    from qadmin.diagnostics.model import Options
    from qadmin.engines import open_engine
    from qadmin.kinds import Kind, QueueSpec
    from qadmin.ops import messages, queues
    from qadmin.ops import metrics as metrics_ops

    dsn = f"sqlite:///{tmp_path / 'q.db'}"
    engine = open_engine(dsn)
    for name in ("a", "b", "c"):
        spec = queues.create(engine, QueueSpec(name, Kind.FIFO))
        messages.push(engine, spec, [b"m"])
    engine.close()
    order = metrics_ops.ReadOrder()

    def read_once() -> set[str]:
        # a budget discovery alone uses up: one queue is read, the others counted unread
        done = metrics_ops.scrape(
            lambda: open_engine(dsn), {}, {}, Options(sample_s=0), 1e-9, read_order=order
        )
        assert done.up and done.queues == 3 and done.unread == 2, done
        return {s.labels[2] for s in done.samples if s.family == "qadmin_queue_depth"}

    scrapes = [read_once() for _ in range(4)]
    assert all(len(read) == 1 for read in scrapes), scrapes
    assert scrapes[0] | scrapes[1] | scrapes[2] == {"a", "b", "c"}, scrapes
    assert scrapes[3] == scrapes[0], scrapes  # then round again, the one read longest ago


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_floor_of_stale_claims_is_marked_and_said_at_least(label, request, tmp_path):
    """More claims than the listing reads (1,000): the stale ones counted among them are a
    floor. metrics marks it as it marks the other figures (qadmin_queue_quality{figure=
    "stale_claims", quality="floor"}); status's worst says "at least 1,000 claims", as its
    column says 1000+ (it said "1000 claims", as if exact)."""
    import time

    from tests.conftest import make_target

    target = make_target(label, request, tmp_path)
    db = [*target.cli_args(), "--schema", str(target.schema)]
    assert run("create", "cq", "--kind", "claim", *db).exit_code == 0
    lines = "".join(f"m{i}\n" for i in range(1100))
    assert run("push", "cq", "--lines", "-f", "-", *db, input=lines).exit_code == 0
    assert run("pop", "cq", "--count", "1100", *db).exit_code == 0
    time.sleep(1.5)  # the claims grow older than --stale-after 1 (no timing is asserted)
    scraped = run("metrics", "--stale-after", "1", "--scrape-timeout", "60", *db)
    assert scraped.exit_code == 0, scraped.stderr
    families = _families(scraped.stdout)
    stale = _value(families, "qadmin_queue_stale_claims", table="cq")
    assert 1 <= stale <= 1100
    marks = {
        (s.labels["figure"], s.labels["quality"])
        for s in families["qadmin_queue_quality"].samples
        if s.labels["table"] == "cq"
    }
    assert ("stale_claims", "floor") in marks, marks
    listed = run("status", "--stale-after", "1", "--format", "json", *db)
    [row] = [r for r in json.loads(listed.stdout)["lines"] if r["table"] == "cq"]
    assert row["stale_quality"] == "floor", row
    # (status's worst may be another finding on a shared server: a snapshot held elsewhere)
    checked = run("check", "cq", "--stale-after", "1", "--sample", "0", *db)
    assert f"at least {row['stale']:,} claims older than 1 s" in checked.stdout, checked.stdout
    plain = run("status", "--stale-after", "1", "--format", "plain", *db).stdout
    assert f"{row['stale']}+" in plain.split(), plain
