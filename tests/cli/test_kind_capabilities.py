"""Every queue command on every kind (SQLite, through the CLI): a kind that lacks what a command
needs is refused in one line, exit 2, naming the kinds that have it; nothing ever ends in an
internal error. The capability each command needs is read from the kind registry, so a new
kind or flag is covered without editing this table."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from qadmin.errors import EXIT_USAGE
from qadmin.kinds import KINDS, Kind, kinds_with, said
from tests.helpers import invoke

Q = "q"


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    # The KindSpec flag the command needs; None: every kind takes it.
    needs: str | None = None
    # Exit codes that mean it worked (or failed as documented) on a kind that has the flag.
    ok: tuple[int, ...] = (0,)
    # The words the refusal must start with (the command as the user typed it).
    says: str = ""


def cases(tmp: Path) -> list[Case]:
    plain = tmp / "in.jsonl"
    plain.write_text('{"payload": "x"}\n')
    due = tmp / "due.jsonl"
    due.write_text('{"payload": "x", "due_at": "2020-01-01T00:00:00Z"}\n')
    return [
        Case(("push", Q, "a", "b", "c")),
        Case(("push", Q, "d", "--delay", "0"), "due", says="push --due/--delay"),
        Case(("peek", Q)),
        Case(("pop", Q)),
        Case(("ack", Q, "1"), "claims", ok=(0, 5), says="ack"),
        Case(("fail", Q, "2", "--error", "boom"), "claims", ok=(0, 5), says="fail"),
        Case(("claims", Q), "claims", says="claims"),
        Case(("alter", Q, "--max-attempts", "2"), "dead_letters", says="alter --max-attempts"),
        Case(("dead", Q), "dead_letters", says="dead"),
        Case(("redrive", Q, "--all", "--dry-run"), "dead_letters", says="redrive"),
        Case(("redrive", Q, "--id", "1", "--yes"), "dead_letters", ok=(5,), says="redrive"),
        Case(("dead", Q, "--error", "x"), "dead_letters", says="dead"),
        Case(("discard", Q, "--all", "--dry-run"), "dead_letters", says="discard"),
        Case(("discard", Q, "--id", "1", "--yes"), "dead_letters", ok=(5,), says="discard"),
        Case(("requeue", Q, "--dry-run"), "claims", says="requeue"),
        Case(("requeue", Q, "--yes"), "claims", says="requeue"),
        Case(("repair", Q, "--dry-run")),  # every kind: its routines made again
        Case(("repair", Q, "--yes")),
        Case(("resize", Q, "--capacity", "8", "--dry-run"), "resizable", says="resize"),
        Case(("resize", Q, "--capacity", "8", "--yes"), "resizable", says="resize"),
        Case(
            ("convert", Q, "--to", "ring", "--capacity", "100", "--dry-run"),
            "convertible",
            says="convert",
        ),
        Case(("export", Q, "--to", str(tmp / "all.jsonl"))),
        Case(
            ("export", Q, "--to", str(tmp / "c.jsonl"), "--state", "claimed"),
            "claims",
            says="--state",
        ),
        Case(("load", Q, "--from", str(plain), "--yes")),
        Case(("load", Q, "--from", str(due), "--yes"), "due", says="load"),
        Case(
            ("archive", Q, "--to", str(tmp / "arch"), "--older-than", "0", "--dry-run"),
            "archivable",
            says="archive",
        ),
        Case(
            ("archive", Q, "--to", str(tmp / "arch"), "--older-than", "0", "--yes"),
            "archivable",
            says="archive",
        ),
        Case(("watermark", Q), "allows_watermark", ok=(EXIT_USAGE,), says="queue q has no"),
        Case(("size", Q)),
        Case(("ghosts", Q)),
        Case(("fragmentation", Q)),
        Case(("locks", Q)),
        Case(("inspect", Q)),
        Case(("check", Q), ok=(0, 1, 2)),
        Case(("tail", Q, "--count", "1", "--interval", "0.2", "--format", "json")),
        Case(("collect", Q, "--to", str(tmp / "history"))),
        Case(("purge", Q, "--dry-run")),
        Case(("purge", Q, "--yes")),
        Case(("drop", Q, "--yes")),
    ]


def _create_args(kind: Kind) -> list[str]:
    capacity = ["--capacity", "4"] if KINDS[kind].needs_capacity else []
    return ["create", Q, "--kind", kind.value, *capacity]


@pytest.mark.parametrize("kind", list(Kind))
def test_every_command_on_every_kind_works_or_is_refused_in_one_line(kind, tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert invoke(*_create_args(kind), *db).exit_code == 0
    problems = []
    for case in cases(tmp_path):
        result = invoke(*case.args, *db)
        said_ = f"{' '.join(case.args)}: exit {result.exit_code}, stderr {result.stderr!r}"
        if "internal error" in result.stderr or "Traceback" in result.stderr:
            problems.append(f"crashed: {said_}")
        elif case.needs is None or getattr(KINDS[kind], case.needs):
            if result.exit_code not in case.ok:
                problems.append(f"failed: {said_}")
        else:
            lines = result.stderr.strip().splitlines()
            holders = f"{said(kinds_with(case.needs))} queues"
            if (
                result.exit_code != EXIT_USAGE
                or len(lines) != 1
                or not lines[0].startswith(f"qadmin: error: {case.says}")
                or (case.needs != "allows_watermark" and holders not in lines[0])
            ):
                problems.append(f"not refused in one line naming {holders}: {said_}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize(
    "option,value,needs",
    [
        ("--strict", None, "allows_strict"),
        ("--watermark", None, "allows_watermark"),
        ("--max-attempts", "3", "dead_letters"),
    ],
)
def test_create_options_follow_the_kind_registry(kind, option, value, needs, tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    given = [option] if value is None else [option, value]
    result = invoke(*_create_args(kind), *given, "--format", "json", *db)
    if getattr(KINDS[kind], needs):
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)
    else:
        assert result.exit_code == EXIT_USAGE
        assert f"{option} applies to {said(kinds_with(needs))} queues" in result.stderr


@pytest.mark.parametrize("kind", list(Kind))
def test_capacity_is_taken_by_exactly_the_kinds_that_need_one(kind, tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    args = ["create", Q, "--kind", kind.value, "--capacity", "4", *db]
    result = invoke(*args)
    if KINDS[kind].needs_capacity:
        assert result.exit_code == 0, result.stderr
    else:
        assert result.exit_code == EXIT_USAGE
        assert f"applies to {said(kinds_with('needs_capacity'))} queues" in result.stderr
