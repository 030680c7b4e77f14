"""Every figure says whether it is exact, a floor or an estimate, and check never says OK
while the true figure is over its threshold: a floor under a threshold and an estimate within
its error of one are not judged (UNKNOWN, naming why). A claim queue's depth is its waiting
messages, its claimed ones counted apart; tail and collect say which figures are floors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qadmin import catalog
from qadmin.diagnostics.entries import size
from qadmin.engines import open_engine
from qadmin.ops import messages, queues, telemetry
from tests.conftest import make_target
from tests.engines.test_dead_rows import _insert, _insert_sql
from tests.helpers import invoke, invoke_on


def _check(target: Any, *args: str) -> Any:
    return invoke_on(target, "check", *args)


def test_postgres_counters_behind_a_burst_never_make_check_ok(request, tmp_path):
    """100,000 messages, a rolled-back run of 20,000 ids, 5,000 more, all within a second of
    the producer's last counter flush: the probe's window holds the 5,000 above the run, and
    nothing the counters say rules out the rows below it. check said OK (depth=5000,
    oldest 1 s) at --crit-depth 50000 with 106,000 waiting; now the depth is a floor (not
    judged under the threshold) or, once the counters arrive, an estimate over it."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("burst_q", "fifo", None, False))
    engine.close()
    producer = open_engine(target.dsn, target.engine_schema)
    messages.push(producer, spec, [b"first"] * 1000)  # a new session's first write is flushed
    _insert(producer, spec, 100_000)  # within a second of it: held back
    with pytest.raises(RuntimeError), producer.transaction() as execute:
        execute(_insert_sql(producer, spec, 20_000))
        raise RuntimeError("rolled back")
    _insert(producer, spec, 5_000)
    part = size.measure(target.engine(), spec)
    result = _check(target, "burst_q", "--crit-depth", "50000", "--crit-oldest-age", "10s")
    producer.close()
    assert result.exit_code != 0 and "QADMIN OK" not in result.stdout, result.stdout
    assert part.depth_quality in ("floor", "estimate"), part.depth_source
    if part.depth_quality == "floor":  # the counters lagged: said, and not judged
        assert part.depth_at_least and (part.depth or 0) < 106_000, part.depth_source
        assert "depth not evaluable: at least" in result.stdout, result.stdout
        assert "depth_floor=1" in result.stdout
    else:
        assert result.exit_code == 2, result.stdout


def test_mariadb_an_estimate_near_the_threshold_is_not_judged_as_exact(request, tmp_path):
    """InnoDB's sampled estimate of 20,000 rows, then 100 more it has not recounted: check at
    --crit-depth 20100 judged the estimate (under it) as if exact and said OK with 20,100
    waiting. An estimate within InnoDB's error of the threshold is now UNKNOWN naming why,
    and the perfdata and status say the figure is an estimate."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("est_q", "fifo", None, False))
    _insert(engine, spec, 20_000)
    engine.run([f"ANALYZE TABLE {engine.qualified(spec.name)}"])
    _insert(engine, spec, 100)
    part = size.measure(engine, spec)
    engine.close()
    assert part.depth_quality == "estimate", part.depth_source
    result = _check(target, "est_q", "--crit-depth", "20100")
    assert result.exit_code != 0 and "QADMIN OK" not in result.stdout, result.stdout
    assert "depth_estimated=1" in result.stdout, result.stdout
    if result.exit_code == 3:
        assert "depth not evaluable: estimate ~" in result.stdout, result.stdout
    # far from the threshold the estimate is judged: under, and CRITICAL over (the depth's
    # verdict: the status also carries findings, such as a shared server's purge lag)
    under = json.loads(_check(target, "est_q", "--crit-depth", "100000", "--format", "json").stdout)
    assert not any(p.startswith("depth") for p in under["problems"]), under["line"]
    assert "depth not evaluable" not in under["line"], under["line"]
    critical = _check(target, "est_q", "--crit-depth", "5000")
    assert critical.exit_code == 2 and "depth ~" in critical.stdout, critical.stdout


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_a_claim_queues_depth_is_its_waiting_messages(label, request, tmp_path):
    """150 pushed, 2 and then 5 claimed: depth counted the claimed too (150, 200); now it is
    the waiting messages, the claimed counted apart (on MariaDB too: InnoDB's walk skips the
    delete-marked entries itself; it had no claimed count), and purge --dry-run counts
    both."""
    counts = True
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("cl_q", "claim", None, False))
    messages.push(engine, spec, [b"m"] * 150)
    messages.pop(engine, spec, count=2)
    part = size.measure(engine, spec)
    assert (part.depth, part.depth_quality, part.claimed) == (148, "exact", 2 if counts else None)
    messages.push(engine, spec, [b"m"] * 50)
    messages.pop(engine, spec, count=3)
    part = size.measure(engine, spec)
    engine.close()
    assert (part.depth, part.depth_exact, part.claimed) == (195, True, 5 if counts else None)
    out = invoke("size", "cl_q", *target.cli_args(), "--format", "json")
    data = json.loads(out.stdout)
    assert (data["depth"], data.get("claimed"), data["depth_quality"]) == (
        195,
        5 if counts else None,
        "exact",
    )
    dry = invoke("purge", "cl_q", "--dry-run", *target.cli_args(), "--format", "json")
    plan = json.loads(dry.stdout)
    assert (plan["messages"], plan["messages_exact"]) == ((200, True) if counts else (195, False))


def test_postgres_a_big_claim_queue_does_not_count_its_claims_as_depth(request, tmp_path):
    """30,000 messages, 5,000 of them claimed: the depth is the catalog's live rows minus the
    claimed ones (n_live_tup counted them, and check called 30,000 or more a backlog)."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("bigcl_q", "claim", None, False))
    _insert(engine, spec, 30_000)
    messages.pop(engine, spec, count=5_000)
    engine.close()  # its counters reach the catalog
    engine = target.engine()
    part = size.measure(engine, spec)
    engine.close()
    assert part.claimed == 5_000
    assert part.depth is not None and 22_500 <= part.depth <= 27_500, part.depth_source
    assert "minus 5,000 claimed" in (part.depth_source or "") or part.depth_exact
    assert _check(target, "bigcl_q", "--crit-depth", "29000").exit_code != 2


def test_postgres_a_claim_queue_behind_its_claims_dead_versions_is_not_called_over(
    request, tmp_path
):
    """60,000 messages, 30,000 claimed: the claims' old row versions (30,000 dead) keep the
    claimed count from being walked, and the catalog's 60,000 counts the claimed rows: depth
    read 60,000 (the tester saw 120,000) and check --crit-depth 35000 said CRITICAL with
    30,000 waiting. The estimate now says it includes them, only the rows counted bound the
    depth from below, and check judges no more than that proves."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("half_q", "claim", None, False))
    _insert(engine, spec, 60_000)
    for _ in range(3):
        messages.pop(engine, spec, count=10_000)
    engine.close()  # its counters reach the catalog
    part = size.measure(target.engine(), spec)
    assert part.claimed is not None or "claimed rows included" in (part.depth_source or "")
    # the depth's verdict (the status also reflects findings: a shared server's old snapshot)
    over = _check(target, "half_q", "--crit-depth", "35000", "--format", "json")
    verdict = json.loads(over.stdout)
    assert not any(p.startswith("depth ") for p in verdict["problems"]), verdict["line"]
    assert "depth not evaluable" in verdict["line"], verdict["line"]
    under = _check(target, "half_q", "--crit-depth", "10000", "--format", "json")
    assert any(p.startswith("depth ") for p in json.loads(under.stdout)["problems"]), under.stdout


def test_tail_says_a_claimed_count_that_stopped_at_its_limit_is_a_floor(request, tmp_path):
    """1,001 claimed: inspect said "1000 or more", tail and collect printed claimed 1000.
    Now size's count (exact up to 10,000) is the one figure everywhere: 1001, exact."""
    target = make_target("sqlite", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("many_q", "claim", None, False))
    messages.push(engine, spec, [b"m"] * 1_001)
    messages.pop(engine, spec, count=1_001)
    engine.close()
    args = ["tail", "many_q", "--count", "1", *target.cli_args()]
    line = json.loads(invoke(*args, "--format", "json").stdout)
    assert (line["claimed"], line["claimed_quality"]) == (1001, "exact"), line
    assert line["depth_quality"] == "exact" and line["oldest_quality"] == "exact", line
    plain = invoke(*args, "--format", "plain").stdout
    assert "1001" in plain.split() and "1000+" not in plain, plain


def test_tail_on_a_new_queue_rates_its_first_burst(request, tmp_path):
    """A queue that never issued an id has no sequence value: its first burst of 3,000 read
    as no enqueue rate (null, then 0.0)."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("new_q", "fifo", None, False))
    spec = catalog.get(engine, spec.name)
    before = telemetry.snapshot(engine, spec, 300)
    messages.push(engine, spec, [b"m"] * 3_000)
    after = telemetry.snapshot(engine, spec, 300)
    row = telemetry.tail_row(before, after)
    engine.close()
    assert row.figures is not None and row.figures.depth == 3_000
    assert row.enqueue_per_s is not None and row.enqueue_per_s > 0, row


def test_a_dead_letter_count_at_its_limit_is_a_floor(request, tmp_path):
    """15,000 dead letters, counted up to 10,000: check judged 10,000 under --warn-dead 11000
    --crit-dead 12000 and said OK. Now the count is a floor, not judged under the threshold,
    and said so in the perfdata and the tail field."""
    target = make_target("sqlite", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("dl_q", "claim", None, False, False, 3))
    dead = engine.qualified("dl_q_dead")
    engine.run(
        [
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 15000) "
            f"INSERT INTO {dead} (id, enqueued_at, attempts, payload) "
            f"SELECT i, '2026-01-01 00:00:00', 3, x'41' FROM n"
        ]
    )
    engine.close()
    result = _check(target, "dl_q", "--warn-dead", "11000", "--crit-dead", "12000")
    assert result.exit_code == 3 and "QADMIN OK" not in result.stdout, result.stdout
    assert "dead not evaluable: at least 10000" in result.stdout, result.stdout
    assert "dead_floor=1" in result.stdout, result.stdout
    over = _check(target, "dl_q", "--crit-dead", "5000")
    assert over.exit_code == 2 and "dead at least 10000 >= 5000" in over.stdout, over.stdout
    args = ["tail", "dl_q", "--count", "1", "--format", "json", *target.cli_args()]
    line = json.loads(invoke(*args).stdout)
    assert (line["dead"], line["dead_quality"]) == (10_000, "floor"), line
    assert spec.name == "dl_q"


@pytest.mark.parametrize("label", ["mariadb", "postgresql"])
def test_tail_and_collect_name_mariadb_as_mariadb(label, request, tmp_path):
    """The history's engine field named every MariaDB server "mysql" (inspect said mariadb)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("en_q", "fifo", None, False))
    figures = telemetry.snapshot(engine, spec, 300).figures(collecting=True)
    engine.close()
    assert figures.engine == label


def test_postgres_size_of_a_table_never_measured_is_unknown_not_zero(request, tmp_path):
    """A table no VACUUM, ANALYZE or CREATE INDEX has measured has relpages 0 whatever it
    holds: size said 0 bytes and 0 pages for 1,000 rows. Now those figures are unknown
    (null) and the source says why and what to run; after ANALYZE they are the catalog's."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    table = engine.qualified("never_t")
    # no index, and autovacuum kept off it: nothing measures it until the test's ANALYZE
    engine.run([f"CREATE TABLE {table} (payload text) WITH (autovacuum_enabled = false)"])
    engine.run([f"INSERT INTO {table} SELECT 'x' FROM generate_series(1, 1000)"])
    result = invoke_on(target, "size", "never_t", "--format", "json")
    shown = json.loads(result.stdout)
    assert (shown["table_bytes"], shown["index_bytes"], shown["pages"]) == (None, None, None)
    assert "run ANALYZE" in shown["size_source"]
    engine.run([f"ANALYZE {table}"])
    shown = json.loads(invoke_on(target, "size", "never_t", "--format", "json").stdout)
    assert shown["table_bytes"] > 0 and shown["pages"] > 0, shown
    engine.close()


def test_mariadb_growth_from_estimated_depths_is_never_judged(request, tmp_path):
    """A tester's idle MariaDB queue of 25,000 read 'backlog_growth 326.78 >= 1': the depth of
    a queue that big is InnoDB's sampled estimate, which moves by hundreds without a push or
    pop. A growth from estimated depths is now an estimate that proves neither side: never a
    WARNING, UNKNOWN for a threshold given, marked estimated in the performance data."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("idle_q", "fifo", None, False))
    _insert(engine, spec, 25_000)
    engine.run([f"ANALYZE TABLE {engine.qualified('idle_q')}"])
    for _ in range(3):
        argv = ("idle_q", "--sample", "1", "--warn-backlog-growth", "1")
        said = json.loads(_check(target, *argv, "--format", "json").stdout)
        assert not any(p.startswith("backlog_growth ") for p in said["problems"]), said
        result = _check(target, *argv)
        line = result.stdout
        if "depth_estimated=1" in line:
            assert result.exit_code == 3 and "backlog_growth not evaluable" in line, line
            assert "backlog_growth_estimated=1" in line, line
    engine.close()
