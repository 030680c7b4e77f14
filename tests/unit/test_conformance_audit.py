"""The conformance audit counts a claim queue's deliveries as the workers logged them.

A failing run of ``mysql8-claim_wm-transaction/RC/x1-faults`` reported "double-claimed 1" with
error 1213 in the workers' errors. Its logs showed no message handed to two consumers at once:
the message had been claimed three times and released twice by ``requeue`` (its first two
consumers were SIGKILLed holding it, or one's ack was refused by a deadlock after an earlier
requeue), and the audit kept the requeued ids in a set, so it counted one release.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.conformance import harness
from tests.conformance.callers import Mode


def audit(tmp_path: Path, logs: dict[str, list[dict]], requeues: list[list[int]]):
    for name, records in logs.items():
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    run = object.__new__(harness.Run)  # the audit only: no database, no workers
    run.dir = tmp_path
    run.case = harness.Case(
        "claim",
        Mode("transaction", "read committed", 1),
        messages=1,
        producers=1,
        consumers=1,
        faults=True,
    )
    run.result = harness.Result("mysql8", "claim", "transaction/RC/x1", True)
    run.requeued = Counter()
    for released in requeues:  # as Run._requeue records a requeue's JSON output
        output = json.dumps([{"id": i, "outcome": "requeued"} for i in released])
        run.requeued.update(int(r["id"]) for r in json.loads(output))
    run._audit([])
    return run.result


PUSHED = {"prod-0": [{"pushed": "p0-0", "id": 7, "ow": None}]}


def test_a_message_released_twice_by_requeue_may_be_claimed_three_times(tmp_path):
    result = audit(
        tmp_path,
        {
            **PUSHED,
            "cons-0": [{"pending": ["p0-0"]}, {"got": ["p0-0"]}],  # SIGKILLed holding it
            "cons-1": [
                {"got": ["p0-0"]},
                {"acking": "p0-0", "release": False},
                {"ack_refused": "p0-0", "error": "1213: Deadlock found when trying to get lock"},
            ],
            "cons-2": [{"got": ["p0-0"]}, {"acking": "p0-0", "release": False}, {"acked": "p0-0"}],
        },
        requeues=[[7], [], [7]],
    )
    assert (result.double_claimed, result.duplicated, result.lost) == (0, 0, 0), result.line()
    assert result.ok, result.line()


def test_a_claim_handed_out_again_without_a_release_is_still_a_double_claim(tmp_path):
    result = audit(
        tmp_path,
        {
            **PUSHED,
            "cons-0": [{"got": ["p0-0"]}],
            "cons-1": [{"got": ["p0-0"]}],
            "cons-2": [{"got": ["p0-0"]}, {"acking": "p0-0", "release": False}, {"acked": "p0-0"}],
        },
        requeues=[[7]],
    )
    assert result.double_claimed == 1, result.line()


def test_a_pop_refused_by_a_deadlock_is_not_a_delivery(tmp_path):
    """The consumer saw the message's row before the deadlock rolled its transaction back: it
    logs the call as refused, and only a committed pop's "got" counts."""
    result = audit(
        tmp_path,
        {
            **PUSHED,
            "cons-0": [
                {"pending": ["p0-0"]},
                {"refused": ["p0-0"], "error": "1213: Deadlock found when trying to get lock"},
            ],
            "cons-1": [{"got": ["p0-0"]}, {"acking": "p0-0", "release": False}, {"acked": "p0-0"}],
        },
        requeues=[],
    )
    assert (result.double_claimed, result.lost) == (0, 0), result.line()
