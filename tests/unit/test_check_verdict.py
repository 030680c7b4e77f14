"""check's verdict over a report some of whose parts were not read: UNKNOWN (3) outranks
WARNING, CRITICAL outranks UNKNOWN (one ranking for a queue's verdict, status's exit code and
its order), and the line says which part was not read and why."""

from __future__ import annotations

from qadmin.diagnostics import check
from qadmin.diagnostics.entries import dead_letters
from qadmin.diagnostics.model import BlockedPart, Header, InspectReport, Limit, Options
from qadmin.dsn import parse
from qadmin.engines.postgres import PostgresEngine

LOCKED = BlockedPart("claims skipped: lock wait exceeded 1000 ms", "session 42, which holds", "42")
SLOW = BlockedPart("claims skipped: statement timeout", "", None, True, True)


def _report(blocked: BlockedPart | None, **limits: Limit) -> InspectReport:
    header = Header("cq", "app", "postgresql", "postgresql", "15", "claim")
    report = InspectReport(
        header,
        {"dead": dead_letters.DeadLetters(0, True, None, None)},
        Options(limits=limits),
        PostgresEngine(parse("postgresql://u@localhost/db")),
    )
    if blocked is not None:
        report.blocked["claims"] = blocked
    return report


def test_the_ranking_is_critical_then_unknown_then_warning():
    assert check.worst([check.WARNING, check.UNKNOWN]) == check.UNKNOWN
    assert check.worst([check.UNKNOWN, check.CRITICAL, check.WARNING]) == check.CRITICAL
    assert check.worst([check.OK, check.WARNING]) == check.WARNING
    assert check.worst([]) == check.OK


def test_a_threshold_on_a_part_a_lock_kept_unread_names_the_part_and_the_holder():
    result = check.evaluate(_report(LOCKED, stale_claims=Limit(None, 2, given=True)))
    assert result.code == check.UNKNOWN, result.line
    said = "stale_claims not evaluable: the claims part was blocked by a lock held by session 42"
    assert said in result.line and "not evaluable on postgresql" not in result.line


def test_critical_from_what_was_read_outranks_the_part_not_read():
    result = check.evaluate(_report(LOCKED, dead=Limit(None, 0, given=True)))
    assert result.code == check.CRITICAL and result.line.startswith("QADMIN CRITICAL - cq: dead 0")


def test_a_part_the_statement_timeout_cut_short_is_unknown_and_said():
    result = check.evaluate(_report(SLOW))
    assert result.code == check.UNKNOWN, result.line
    assert "claims skipped: statement timeout (the statement timeout" in result.line
    given = check.evaluate(_report(SLOW, stale_claims=Limit(1, None, given=True)))
    assert "the claims part was not read (the statement timeout)" in given.line
    assert given.line.count("statement timeout") == 1, given.line
    assert check.evaluate(_report(None)).code == check.OK


def test_a_perfdata_label_never_holds_an_equals_sign():
    """The plugin guidelines forbid ``=`` in a label, quoted or not (a named queue's name may
    hold one); a quote is doubled inside quotes, ``|`` never splits the line."""
    from qadmin.cli.check_all import _label

    assert _label("s.jobs[q=1]", "depth") == "s.jobs[q_1]_depth"
    assert _label("s.jobs[it's|x]", "depth") == "'s.jobs[it''s/x]_depth'"


def test_a_small_figure_in_the_perfdata_never_ends_in_a_dot():
    """dead_ratio=0. was printed for a ratio of 0.0001."""
    assert check._fmt(0.0001) == "0" and check._fmt(0.25) == "0.25" and check._fmt(3.0) == "3"
