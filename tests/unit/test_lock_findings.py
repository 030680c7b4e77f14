"""The lock findings read from the rows of the locks part: a certain blocker is named as one
(PostgreSQL, InnoDB row locks), a guessed one (MariaDB without the metadata_lock_info plugin)
says "probably" and asks to confirm before ending anything, and waits whose holder was not
found still count as a pile-up."""

from __future__ import annotations

from typing import Any

from qadmin.diagnostics.entries import locks
from qadmin.diagnostics.model import BlockedPart, Header, InspectReport, Options
from qadmin.dsn import parse
from qadmin.engines.mysql import MysqlEngine


def _report(waits: list[dict[str, Any]], blocked: BlockedPart | None = None) -> InspectReport:
    header = Header("q", "db", "mysql", "mariadb", "10.11", "fifo")
    report = InspectReport(
        header,
        {"locks": locks.Locks([locks.LockWait.of(w) for w in waits])},
        Options(),
        MysqlEngine(parse("mysql://root@localhost/db")),
    )
    if blocked is not None:
        report.blocked["depth"] = blocked
    return report


def _wait(waiter: str, blocker: str | None, root: str | None, source: str) -> dict[str, Any]:
    return {
        "waiter": waiter,
        "blocker": blocker,
        "root_blocker": root,
        "blocker_source": source,
        "lock": "metadata lock (table)",
        "wait_s": 6,  # past the 5 s lock-wait warning: a wait and a pile-up member
        "candidates": "7" if source == "inferred" else None,
    }


def _by_code(findings: list[Any], code: str) -> list[Any]:
    return [f for f in findings if f.code == code]


def test_a_certain_blocker_is_named_with_a_plain_fix():
    findings = locks.rule(_report([_wait("2", "1", "1", "pg_blocking_pids")]))
    (wait,) = _by_code(findings, "lock_wait")
    assert "held by session 1" in wait.message and "probably" not in wait.message
    assert wait.fix.startswith("see what session 1 is doing")


def test_a_guessed_holder_says_probably_and_asks_to_confirm():
    waits = [_wait("2", "1", "1", "inferred"), _wait("3", "2", "1", "inferred")]
    blocked = BlockedPart("depth skipped", "probably session 1", "1", certain=False)
    findings = locks.rule(_report(waits, blocked))
    (pileup,) = _by_code(findings, "lock_pileup")
    assert pileup.severity == "critical" and "probably session 1" in pileup.message
    assert "other candidates: 7" in pileup.message
    queued = _by_code(findings, "lock_wait")[1]
    assert "queued behind session 2's pending request" in queued.message
    for finding in [pileup, *_by_code(findings, "lock_wait"), *_by_code(findings, "part_blocked")]:
        assert finding.fix.startswith(locks.CONFIRM), finding
        assert finding.fix.endswith("KILL 1"), finding


def test_waits_behind_an_unknown_holder_still_make_a_critical_pileup():
    waits = [_wait("2", None, None, "unknown"), _wait("3", None, None, "unknown")]
    findings = locks.rule(_report(waits))
    (pileup,) = _by_code(findings, "lock_pileup")
    assert pileup.severity == "critical" and "unknown holder" in pileup.message
    assert "KILL" not in pileup.fix
    assert len(_by_code(findings, "lock_wait")) == 2
