"""A claim queue with more claimed rows than size counts (EXACT_DEPTH_LIMIT): its depth is
its waiting rows, counted through the pop index, never the catalog's estimate minus a floor of
the claimed ones (an upper bound: 90,000 claimed of 100,000 read as ~89,999 waiting, and
``check --crit-depth 50000`` said CRITICAL for 10,000). Such a ceiling proves a threshold
above it met, never one below it crossed."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from qadmin.cli import cli
from qadmin.diagnostics.entries import size
from qadmin.ops import messages, queues
from tests.conftest import PG_ADMIN, make_target
from tests.helpers import invoke


def _fill(target: Any, name: str, total: int, claimed: int, analyze: str) -> Any:
    """``total`` messages, ``claimed`` of them popped by a worker (claimed, not acked)."""
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec(name, "claim", None, False))
    for start in range(0, total, 10_000):
        messages.push(engine, spec, [b"m%d" % i for i in range(start, start + 10_000)])
    for _ in range(claimed // 10_000):
        messages.pop(engine, spec, 10_000)
    table = engine.qualified(spec.name)
    if engine.name == "postgresql":
        engine.close()  # a session's counters reach the statistics when it ends
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f"{analyze} {table}")
        engine = target.engine()
    else:
        engine.run([f"{analyze} {table}"])
    return engine, spec


def _check(target: Any, name: str, *args: str) -> tuple[list[str], str]:
    """The thresholds crossed (a shared server's held snapshots add findings of their own,
    not judged here) and the status line."""
    found = CliRunner().invoke(
        cli,
        [*target.cli_args(), "check", name, "--format", "json", *args],
        catch_exceptions=False,
    )
    data = json.loads(found.stdout)
    problems = data["problems"]
    return problems[: len(problems) - len(data["findings"])], data["line"]


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_claimed_over_the_count_limit_leave_the_waiting_rows_counted(label, request, tmp_path):
    """100,000 pushed, 90,000 claimed: 10,000 wait, counted exactly, and no false CRITICAL."""
    target = make_target(label, request, tmp_path)
    analyze = "VACUUM ANALYZE" if label == "postgresql" else "ANALYZE TABLE"
    engine, spec = _fill(target, "cw_q", 100_000, 90_000, analyze)
    part = size.measure(engine, spec)
    engine.close()
    # exact when the dead entries are few (VACUUM done); a floor when another session's
    # snapshot keeps the 90,000 claims' old entries (a probe below the id high-water mark)
    assert part.depth == 10_000, part.depth_source
    assert part.depth_quality in ("exact", "floor"), part.depth_source
    breaches, line = _check(target, "cw_q", "--crit-depth", "50000")
    assert breaches == [] and "depth=10000;" in line, line
    if part.depth_quality == "exact":
        assert "depth not evaluable" not in line and "depth_floor" not in line, line


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_a_ceiling_of_waiting_rows_is_never_judged_critical(label, request, tmp_path):
    """60,000 pushed, 30,000 claimed: more than the count limit wait, so the depth is a floor
    (what the pop index walk counted) with the estimate minus the claimed floor as a ceiling:
    a threshold between them is UNKNOWN saying so, one above the widened ceiling is OK."""
    target = make_target(label, request, tmp_path)
    analyze = "ANALYZE" if label == "postgresql" else "ANALYZE TABLE"
    engine, spec = _fill(target, "cc_q", 60_000, 30_000, analyze)
    part = size.measure(engine, spec)
    engine.close()
    assert part.depth_quality == "floor", part.depth_source
    assert size.EXACT_DEPTH_LIMIT < part.depth <= 30_000, part.depth_source
    assert part.depth_ceiling is not None and part.depth_ceiling >= 30_000, part.depth_source
    data = part.to_json_dict()
    assert data["depth_at_most"] == part.depth_ceiling and data["depth_quality"] == "floor"
    breaches, line = _check(target, "cc_q", "--crit-depth", "31000")
    assert breaches == [] and "depth not evaluable: at least" in line, line
    assert "all within thresholds" not in line and "31000 lies between" in line, line
    assert "depth_floor=1" in line, line
    breaches, line = _check(target, "cc_q", "--crit-depth", str(10 * part.depth_ceiling))
    assert breaches == [] and "depth not evaluable" not in line, line
    breaches, line = _check(target, "cc_q", "--crit-depth", "10000")
    assert breaches == ["depth at least 10001 >= 10000"], line
    # one claimed figure wherever it is shown: size (always a claimed key), tail, collect
    shown = invoke(*target.cli_args(), "size", "cc_q", "--format", "json")
    sized = json.loads(shown.stdout)
    assert sized["claimed"] is not None and sized["claimed_quality"] in ("exact", "floor")
    args = [*target.cli_args(), "tail", "cc_q", "--count", "1", "--format", "json"]
    tailed = json.loads(invoke(*args).stdout.splitlines()[0])
    assert (tailed["claimed"], tailed["claimed_quality"]) == (
        sized["claimed"],
        sized["claimed_quality"],
    ), (tailed, sized)
    assert (tailed["depth"], tailed["depth_quality"]) == (part.depth, "floor")
    # status says each figure's quality too: in JSON, and marked in its text (N+ a floor)
    listed = invoke(*target.cli_args(), "status", "--format", "json")
    line = next(
        r for r in json.loads(listed.stdout)["lines"] if r["name"] == f"{target.schema}.cc_q"
    )
    assert (line["depth"], line["depth_quality"]) == (part.depth, "floor"), line
    assert line["oldest_quality"] in ("exact", "floor") and line["dead_quality"] == "exact"
    assert (line["running"], line["claimed_quality"]) == (
        sized["claimed"],
        sized["claimed_quality"],
    ), line
    assert line["stale"] == 0 and line["stale_quality"] == line["claimed_quality"], line
    plain = invoke(*target.cli_args(), "status", "--format", "plain").stdout
    shown = next(t for t in plain.splitlines() if t.startswith(f"{target.schema}.cc_q"))
    assert f"{part.depth}+" in shown.split(), shown


def test_estimate_reason_gives_the_true_range() -> None:
    """The UNKNOWN line's range is the one the check judged by (100,003 with only 1,000
    counted: between 1,000 and 200,006), never ``may be 50% off`` where that would rule the
    threshold out."""
    from qadmin.diagnostics import check
    from qadmin.diagnostics.registry import Quality

    quality = Quality("estimate", 0.5, "n_live_tup", 1_000)
    line = check._unproven("depth", "~100003", quality, 100_003, 50_000, "")
    assert "at 1000 to 200006" in line, line
    assert "only 1000 counted" in line and "50000 is within that" in line, line
