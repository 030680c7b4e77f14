"""The failure-state matrix (issue 14, behaviour 5): one declaration, read by the test
(tests/engines/test_failure_matrix.py creates each state for real and runs inspect, check and
tail on it) and rendered as docs/failure-matrix.md.

Regenerate the document after changing the declaration:
    python -m tests.engines.matrix --write
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.engines import failure_states as fs

DOC = Path(__file__).resolve().parents[2] / "docs" / "failure-matrix.md"
ENGINES = {"postgresql": "PostgreSQL", "mariadb": "MariaDB", "sqlite": "SQLite"}
NOT_RUN = ("MySQL 8", "SQL Server")  # no server here: columns say so
# inspect and check: every call, so a blocked part cannot wait 5 s, and a transaction another
# session holds (conftest's unrelated one, any long one on a shared server: on PostgreSQL the
# one with the oldest xid in any database is the holder named) cannot turn an expected warning
# into a critical, however long it has been open.
COMMON = ("--lock-timeout", "1000", "--crit-snapshot-age", "30d")


@dataclass(frozen=True)
class Row:
    """One failure state: what qadmin must say about it, and where it is created."""

    state: str
    code: str
    check_exit: int
    tail_field: str | None
    cells: dict[str, fs.Creator | str]  # engine label -> creator, or "n/a: reason"
    options: tuple[str, ...] = ()  # thresholds for inspect and check
    tail_options: tuple[str, ...] = ()
    sample: tuple[str, ...] = field(default=("--sample", "0"))
    tail_samples: int = 1  # rates need two
    tail_min: float | None = None  # the tail field must reach this (default: be > 0)
    # tail's exit: 8 when its last sample could not read a part for a lock (the row still
    # carries every figure it read, and says which part was blocked in ``error``).
    tail_exit: int = 0

    def inspect_args(self, queue: str) -> list[str]:
        return ["inspect", queue, "--format", "json", *self.sample, *COMMON, *self.options]

    def check_args(self, queue: str) -> list[str]:
        return ["check", queue, "--format", "json", *self.sample, *COMMON, *self.options]

    def tail_args(self, queue: str) -> list[str]:
        count = ["--count", str(self.tail_samples), "--interval", "0.5"]
        return ["tail", queue, *count, "--format", "json", *self.tail_options]


NO_ROW_LOCKS = "n/a: one writer at a time, no row locks and no lock view"
NO_HORIZON = "n/a: no cleanup horizon (a WAL reader holds back checkpoints only)"
NO_RING_HOLES = (
    "n/a: one writer at a time: a ring push or pop takes its number and its slot in one "
    "transaction, so a killed client rolls back both"
)

MATRIX: list[Row] = [
    Row(
        "held snapshot",
        "snapshot_held",
        1,
        "snapshot_age_s",
        {"postgresql": fs.held_snapshot, "mariadb": fs.held_snapshot, "sqlite": NO_HORIZON},
        options=("--warn-snapshot-age", "1s"),
        tail_min=1.0,
    ),
    Row(
        "row-lock wait",
        "lock_wait",
        1,
        "max_lock_wait_s",
        {"postgresql": fs.row_lock_wait, "mariadb": fs.row_lock_wait, "sqlite": NO_ROW_LOCKS},
        options=("--warn-lock-wait", "0.5"),
    ),
    Row(
        "table-lock pile-up",
        "lock_pileup",
        2,
        "lock_waits",
        {
            "postgresql": fs.lock_pileup,
            "mariadb": "n/a: MariaDB table locks are metadata locks (next row)",
            "sqlite": NO_ROW_LOCKS.replace("row locks", "table locks"),
        },
        # Pile-ups count waits past the lock-wait warning (5 s by default).
        options=("--warn-lock-wait", "0.5"),
        tail_min=2,
        tail_exit=8,
    ),
    Row(
        "metadata-lock pile-up",
        "lock_pileup",
        2,
        "lock_waits",
        {
            "postgresql": "n/a: no metadata locks (the table-lock row)",
            "mariadb": fs.lock_pileup,
            "sqlite": "n/a: no metadata locks",
        },
        # Pile-ups count waits past the lock-wait warning (5 s by default).
        options=("--warn-lock-wait", "0.5"),
        tail_min=2,
        tail_exit=8,
    ),
    Row(
        "stale claim",
        "stale_claims",
        1,
        "stale_claims",
        {"postgresql": fs.stale_claim, "mariadb": fs.stale_claim, "sqlite": fs.stale_claim},
        options=("--stale-after", "1"),
        tail_options=("--stale-after", "1"),
        tail_min=1,
    ),
    Row(
        "dead letters",
        "dead_letters",
        1,
        "dead",
        {"postgresql": fs.dead_letters, "mariadb": fs.dead_letters, "sqlite": fs.dead_letters},
        tail_min=1,
    ),
    Row(
        "paused queue",
        "paused",
        1,
        "paused_for_s",
        {"postgresql": fs.paused, "mariadb": fs.paused, "sqlite": fs.paused},
    ),
    Row(
        "drop stopped half-way",
        "objects_missing",
        2,
        "dropping",
        {
            "postgresql": "n/a: transactional DDL: a drop is all or nothing",
            "mariadb": fs.dropping,
            "sqlite": "n/a: transactional DDL: a drop is all or nothing",
        },
    ),
    Row(
        "ring push hole",
        "ring_push_hole",
        2,
        "ring_stall_s",
        {"postgresql": fs.ring_push_hole, "mariadb": fs.ring_push_hole, "sqlite": NO_RING_HOLES},
        options=("--crit-ring-stall", "1s"),
        tail_min=1.0,
    ),
    Row(
        "ring orphan",
        "ring_orphan",
        2,
        "ring_orphan_age_s",
        {"postgresql": fs.ring_orphan, "mariadb": fs.ring_orphan, "sqlite": NO_RING_HOLES},
        options=("--crit-ring-stall", "1s"),
        tail_min=1.0,
    ),
    Row(
        "ring nearly full",
        "ring_nearly_full",
        1,
        "ring_fill",
        {
            "postgresql": fs.ring_nearly_full,
            "mariadb": fs.ring_nearly_full,
            "sqlite": fs.ring_nearly_full,
        },
        options=("--warn-ring-fill", "0.8", "--crit-ring-fill", "0.95"),
        tail_min=0.9,
    ),
    Row(
        "watermark stranded",
        "watermark_stranded",
        2,
        "watermark_stranded",
        {
            "postgresql": fs.watermark_stranded,
            "mariadb": fs.watermark_stranded,
            "sqlite": fs.watermark_stranded,
        },
        tail_min=2,
    ),
    Row(
        "backlog growing",
        "backlog_growing",
        1,
        "backlog_growth_per_s",
        {
            "postgresql": fs.backlog_growing,
            "mariadb": fs.backlog_growing,
            "sqlite": fs.backlog_growing,
        },
        sample=("--sample", "1"),
        tail_samples=2,
    ),
    Row(
        "INVALID index",
        "invalid_index",
        1,
        "invalid_indexes",
        {
            "postgresql": fs.invalid_index,
            "mariadb": "n/a: a failed online index build is rolled back, never left behind",
            "sqlite": "n/a: no concurrent index builds",
        },
    ),
    Row(
        "stale statistics",
        "stale_statistics",
        1,
        None,
        {
            "postgresql": fs.stale_statistics,
            "mariadb": fs.stale_statistics,
            "sqlite": "n/a: qadmin reads no planner statistics on SQLite",
        },
    ),
    Row(
        "autovacuum off",
        "autovacuum_off",
        1,
        None,
        {
            "postgresql": fs.autovacuum_off,
            "mariadb": "n/a: no autovacuum (InnoDB purge always runs)",
            "sqlite": "n/a: no autovacuum daemon",
        },
    ),
]


def cells() -> list[tuple[Row, str]]:
    """Every (row, engine) where the state exists: one test each."""
    return [(row, label) for row in MATRIX for label, cell in row.cells.items() if callable(cell)]


def render() -> str:
    head = [
        "state",
        "finding code",
        "check exit",
        "tail field",
        *ENGINES.values(),
        *NOT_RUN,
    ]
    lines = [
        "# Failure-state matrix",
        "",
        "<!-- Generated from tests/engines/matrix.py: do not edit; regenerate with",
        "     python -m tests.engines.matrix --write -->",
        "",
        "Each state below is created for real on each engine marked *tested*, by",
        "tests/engines/test_failure_matrix.py, which then runs `qadmin inspect --format json`",
        "(exit 0, the finding present), `qadmin check --format json` (the exit code, the",
        "finding present) and `qadmin tail --format json` (the field set and showing the state).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    for row in MATRIX:
        engines = [
            "tested" if callable(row.cells[label]) else str(row.cells[label]) for label in ENGINES
        ]
        values = [
            row.state,
            f"`{row.code}`",
            str(row.check_exit),
            f"`{row.tail_field}`" if row.tail_field else "-",
            *engines,
            *("not run here" for _ in NOT_RUN),
        ]
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(render(), encoding="utf-8")
        return 0
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
