"""check as a monitoring plugin: its options come from the diagnostics registry, durations take
units, and its own usage errors are UNKNOWN (exit 3) on one line, never click's exit 2."""

from __future__ import annotations

import json

import pytest

from qadmin.diagnostics import registry
from tests.helpers import invoke, one_line


@pytest.fixture
def db(tmp_path) -> list[str]:
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert invoke("create", "q", "--kind", "fifo", *dsn).exit_code == 0
    assert invoke("push", "q", "a", "b", "c", *dsn).exit_code == 0
    return dsn


def check(*args: str):
    return invoke("check", *args)


def test_every_registry_metric_has_its_pair_of_options_on_check_and_inspect():
    for command in ("check", "inspect"):
        shown = invoke(command, "--help").stdout
        for metric in registry.metrics():
            dashed = metric.name.replace("_", "-")
            assert f"--warn-{dashed}" in shown and f"--crit-{dashed}" in shown, (command, dashed)


@pytest.mark.parametrize(
    "args",
    [
        ["--warn-depth", "10", "--crit-depth", "5"],
        ["--warn-oldest-age", "2h", "--crit-oldest-age", "30m"],
    ],
)
def test_inverted_thresholds_are_unknown(db, args):
    result = check("q", *args, "--sample", "0", *db)
    assert result.exit_code == 3
    assert result.stdout.startswith("QADMIN UNKNOWN - q: ") and "inverted" in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args,said",
    [
        (["q", "--no-such-option"], "No such option"),
        (["q", "--warn-oldest-age", "soon"], "not a duration"),
        (["q", "--warn-depth", "many"], "many"),
        ([], "Missing argument"),
    ],
)
def test_usage_errors_are_unknown_on_one_line(db, args, said):
    result = check(*args, *db)
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("QADMIN UNKNOWN - usage: ") and said in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


def test_duration_thresholds_take_units(db):
    calm = check("q", "--warn-oldest-age", "1h", "--crit-oldest-age", "2h", "--sample", "0", *db)
    assert calm.exit_code == 0 and "oldest_age=" in calm.stdout and ";3600;7200;0" in calm.stdout
    late = check("q", "--warn-oldest-age", "0s", "--sample", "0", "--format", "json", *db)
    document = json.loads(late.stdout)
    assert late.exit_code == 1 and document["status"] == "WARNING"
    assert set(document) >= {"status", "code", "queue", "line", "metrics", "problems", "findings"}


def test_a_threshold_the_engine_cannot_judge_is_named_and_alone_is_unknown(db):
    alone = check("q", "--warn-snapshot-age", "1m", "--sample", "0", *db)
    assert alone.exit_code == 3
    assert "snapshot_age not evaluable on sqlite" in alone.stdout
    assert "snapshot_age=" not in alone.stdout.split("|", 1)[1]
    judged = check("q", "--warn-snapshot-age", "1m", "--warn-depth", "100", "--sample", "0", *db)
    assert judged.exit_code == 0 and "snapshot_age not evaluable" in judged.stdout


def test_check_samples_rates_by_default(db):
    result = check("q", "--format", "json", *db)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["metrics"]["backlog_growth"] == 0.0


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_threshold_that_would_switch_an_alert_off_is_refused(db, value):
    result = check("q", "--warn-depth", value, *db)
    assert result.exit_code == 3 and result.stdout.startswith("QADMIN UNKNOWN")


def test_a_threshold_for_another_kind_is_noted_never_unknown(db):
    """One monitoring template for every queue: a ring's thresholds on a fifo are n/a."""
    result = check("q", "--warn-ring-fill", "0.5", "--crit-ring-stall", "1s", "--sample", "0", *db)
    assert result.exit_code == 0, result.stdout
    assert "ring_fill does not apply to a fifo queue" in result.stdout
    assert "ring_stall does not apply to a fifo queue" in result.stdout


def test_performance_data_carries_the_default_thresholds(tmp_path):
    """Graphs get their limit lines even when the check gives no threshold: a ring's fill
    carries the registry's warn 0.9 and crit 1."""
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'r.db'}"]
    create = ["create", "r", "--kind", "ring", "--capacity", "4", *dsn]
    assert invoke(*create).exit_code == 0
    assert invoke("push", "r", "a", "b", "c", "d", *dsn).exit_code == 0
    result = check("r", "--sample", "0.5s", *dsn)
    perf = result.stdout.split("|", 1)[1].split()
    assert "ring_fill=1;0.9;1;0" in perf, result.stdout
    assert result.exit_code == 2 and "ring_nearly_full" in result.stdout  # full: critical


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_part_a_lock_kept_unread_is_unknown_naming_the_holder_unless_critical(
    label, request, tmp_path
):
    """Another session holds the claim queue's table locked: the parts that read it give up
    after their 1 s lock wait. What they read (depth, stale claims) is not judged, so the
    status is UNKNOWN (3), not part_blocked's WARNING; the threshold not judged names the part
    and the lock's holder (it said "not evaluable on postgresql"); a CRITICAL from what was
    read (the dead table is not locked) stays CRITICAL."""
    from tests.conftest import make_target
    from tests.helpers import table_locked

    target = make_target(label, request, tmp_path)
    db = target.cli_args()
    assert invoke("create", "cq", "--kind", "claim", *db).exit_code == 0
    assert invoke("push", "cq", "a", "b", "c", "d", "e", *db).exit_code == 0
    assert invoke("pop", "cq", "--count", "2", *db).exit_code == 0
    given = ["--crit-depth", "3", "--crit-stale-claims", "2", "--sample", "0", *db]
    free = check("cq", *given)
    assert free.exit_code == 2 and free.stdout.startswith("QADMIN CRITICAL - cq: depth 3 >= 3")
    with table_locked(target, "cq") as session:
        held = check("cq", *given)
        read_critical = check("cq", "--crit-dead", "0", *given)
    line = held.stdout
    assert held.exit_code == 3, line
    # (a shared server's own state may come after: MariaDB's purge lag, on every queue)
    assert line.startswith("QADMIN UNKNOWN - cq: ") and len(line.splitlines()) == 1, line
    assert "part_blocked: " in line, line
    assert f"held by session {session}" in line, line
    said = "stale_claims not evaluable: the claims part was blocked by a lock held by session"
    assert f"{said} {session}" in line, line
    assert "not evaluable on" not in line, line
    assert read_critical.exit_code == 2, read_critical.stdout
    assert read_critical.stdout.startswith("QADMIN CRITICAL - cq: dead 0 >= 0, ")
    assert "part_blocked: " in read_critical.stdout
    assert f"{said} {session}" in read_critical.stdout


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_lock_on_the_catalog_costs_a_second_and_names_its_holder(label, request, tmp_path):
    """Another session holds qadmin's catalog table locked (a DBA's LOCK TABLE, a DDL queued
    behind a long transaction): every read-only command's lookup of its queue gives up after
    the diagnostics' 1 s, as the README says, with one line naming the holder (it waited the
    connection's 5 s and named no one); check and status say UNKNOWN, the rest exit 8."""
    from tests.conftest import make_target
    from tests.helpers import table_locked

    target = make_target(label, request, tmp_path)
    db = target.cli_args()
    assert invoke("create", "cq", "--kind", "fifo", *db).exit_code == 0
    assert invoke("create", "dq", "--kind", "claim", *db).exit_code == 0
    with table_locked(target, "qadmin_queues") as session:
        said = {
            words[0]: invoke(*words, *db)
            for words in (
                ("inspect", "cq", "--sample", "0"),
                ("check", "cq", "--sample", "0"),
                ("size", "cq"),
                ("list",),
                ("status", "--schema", target.schema),  # this test's queues alone
                ("peek", "cq"),
                ("dead", "dq"),
                ("tail", "cq", "--count", "1"),
                ("watermark", "cq"),
                ("maintain", "cq", "--dry-run"),
                ("alter", "dq", "--max-attempts", "3", "--dry-run"),
            )
        }
    held = f"blocked by session {session}"
    assert said["check"].exit_code == 3 and said["check"].stdout.startswith("QADMIN UNKNOWN")
    assert held in said["check"].stdout
    assert said["status"].exit_code == 3 and held in said["status"].stdout
    for command in (
        "inspect",
        "size",
        "list",
        "peek",
        "dead",
        "tail",
        "watermark",
        "maintain",
        "alter",
    ):
        result = said[command]
        line = one_line(result)
        assert result.exit_code == 8 and held in line, (command, result.stderr)
        assert "lock wait exceeded 1000 ms" in line, line


def test_snapshot_ages_default_is_not_drawn_as_a_threshold_the_status_does_not_judge(
    request, tmp_path
):
    """snapshot_age's default 60 s names a holder only while dead rows are held back, so with
    no --warn-snapshot-age the performance data carries the figure without that threshold: a
    graph showed a breach (a snapshot held 2 minutes, no dead rows) beside an OK status."""
    import psycopg

    from tests.conftest import make_target

    target = make_target("postgresql", request, tmp_path)
    db = target.cli_args()
    assert invoke("create", "sq", "--kind", "fifo", *db).exit_code == 0
    with psycopg.connect(target.dsn) as holder:  # a snapshot held, no dead rows behind it
        holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1")
        plain = check("sq", "--sample", "0", *db)
        given = check("sq", "--sample", "0", "--warn-snapshot-age", "1h", *db)
        holder.rollback()
    perf = plain.stdout.split("|", 1)[1]
    [figure] = [p for p in perf.split() if p.startswith("snapshot_age=")]
    assert figure.endswith("s;;;0"), figure
    [figure] = [p for p in given.stdout.split("|", 1)[1].split() if p.startswith("snapshot_age=")]
    assert figure.endswith("s;3600;;0"), figure
