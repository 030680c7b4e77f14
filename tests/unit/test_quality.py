"""Where a figure puts the truth (registry.Quality.bounds), which check judges thresholds by."""

from __future__ import annotations

from qadmin.diagnostics.registry import Quality


def test_an_estimate_within_its_error():
    assert Quality("estimate", 0.5).bounds(500) == (500 / 1.5, 1000)


def test_an_estimate_is_at_least_what_was_counted():
    # a probe counted 500: the truth is not 333
    assert Quality("estimate", 0.5, low=500).bounds(500) == (500, 1000)


def test_a_planners_estimate_is_bounded_only_by_counts_and_the_table():
    # no error bound of its own: what was counted below, the table's rows (widened) above
    unbounded = Quality("estimate", 1.0, low=10_001, ceiling=180_000, ceiling_error=0.5)
    assert unbounded.unbounded
    assert unbounded.bounds(17_934) == (10_001, 360_000)
    # nothing counted and no table count: it proves nothing
    assert Quality("estimate", 1.0).bounds(17_934) == (0.0, float("inf"))


def test_a_floor_with_and_without_a_ceiling():
    assert Quality("floor").bounds(600) == (600, float("inf"))
    assert Quality("floor", 0.5, ceiling=1000).bounds(600) == (600, 2000)
