"""Dead letters through the CLI: create --max-attempts, fail, dead, redrive, alter, and what
inspect and check say about the dead table."""

from __future__ import annotations

import csv
import io
import json
import signal
import sqlite3
import subprocess
import sys
import time

import click.testing
import psycopg
import pymysql
import pytest

from qadmin import catalog
from qadmin.errors import EXIT_LOCK_TIMEOUT, EXIT_NOT_FOUND, EXIT_USAGE
from qadmin.ops import dead, messages
from tests.conftest import MY_HOST, PG_ADMIN, make_target
from tests.helpers import invoke


def _run(db: list[str], *args: str) -> tuple[int, str, str]:
    result = invoke(*args, *db)
    return result.exit_code, result.stdout, result.stderr


def _json(db: list[str], *args: str) -> object:
    code, out, err = _run(db, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("label", ["sqlite", "postgresql"])
def test_a_poison_message_dies_is_listed_reported_and_redriven(label, request, tmp_path):
    db = make_target(label, request, tmp_path).cli_args()
    created = _json(db, "create", "q", "--kind", "claim", "--max-attempts", "2")
    assert created["max_attempts"] == 2
    _json(db, "push", "q", "poison", "fine")
    for n, died in ((1, False), (2, True)):
        [popped] = _json(db, "pop", "q")
        assert popped["payload"] == "poison"
        [failed] = _json(db, "fail", "q", str(popped["id"]), "--error", f"e{n}", "--retry")
        assert (failed["attempts"], failed["dead"]) == (n, died)
    [row] = _json(db, "dead", "q")
    assert (row["first_error"], row["last_error"], row["errors"]) == ("e1", "e2", 2)
    code, out, _ = _run(db, "dead", "q", "--format", "csv")
    assert code == 0 and next(csv.DictReader(io.StringIO(out)))["last_error"] == "e2"

    report = _json(db, "inspect", "q", "--sample", "0")
    assert report["dead"]["count"] == 1 and report["dead"]["max_attempts"] == 2
    [finding] = [f for f in report["findings"] if f["code"] == "dead_letters"]
    assert "redrive q --all --yes" in finding["fix"]
    code, out, _ = _run(db, "check", "q", "--sample", "0")
    assert code == 1 and "dead_letters" in out
    code, out, _ = _run(db, "check", "q", "--sample", "0", "--crit-dead", "1")
    assert code == 2

    code, _, err = _run(db, "redrive", "q", "--all")
    assert code == EXIT_USAGE and "without --yes" in err
    plan = _json(db, "redrive", "q", "--all", "--dry-run")
    assert (plan["redriven"], plan["dry_run"]) == (1, True)
    code, _, err = _run(db, "redrive", "q", "--id", "999", "--yes")
    assert code == EXIT_NOT_FOUND and "999" in err
    done = _json(db, "redrive", "q", "--id", str(row["id"]), "--yes")
    [moved] = done["moved"]
    assert done["ids"] == [row["id"]] and moved["id"] == row["id"] > 0
    assert moved["new_id"] > row["id"], "a redriven message is a new delivery"
    assert _json(db, "dead", "q") == []
    assert [m["attempts"] for m in _json(db, "peek", "q")] == [0, 0]
    code, out, _ = _run(db, "check", "q", "--sample", "0")
    assert "dead_letters" not in out
    code, out, _ = _run(db, "redrive", "q", "--all", "--yes")  # plain output, nothing dead
    assert code == 0
    [popped] = _json(db, "pop", "q")  # "fine" first, then the redriven message dies again
    _json(db, "ack", "q", str(popped["id"]))
    for n in (3, 4):
        [popped] = _json(db, "pop", "q")
        _json(db, "fail", "q", str(popped["id"]), "--error", f"e{n}", "--retry")
    code, out, err = _run(db, "redrive", "q", "--all", "--yes", "--format", "plain")
    assert code == 0 and f"new ids {moved['new_id']} -> " in err, err


def test_alter_sets_and_clears_max_attempts(tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    _json(db, "create", "q", "--kind", "claim")
    assert _json(db, "alter", "q", "--max-attempts", "4")["max_attempts"] == 4
    assert _json(db, "list")[0]["max_attempts"] == 4
    # a dry run shows the change and makes none
    planned = _json(db, "alter", "q", "--max-attempts", "2", "--dry-run")
    assert planned == {"name": "q", "max_attempts": 2, "previous": 4, "dry_run": True}
    assert _json(db, "list")[0]["max_attempts"] == 4
    assert _json(db, "alter", "q", "--max-attempts", "none")["max_attempts"] is None
    for bad in ("0", "many"):
        code, _, err = _run(db, "alter", "q", "--max-attempts", bad)
        assert code == EXIT_USAGE and len(err.strip().splitlines()) == 1
    code, _, err = _run(db, "redrive", "q", "--yes")
    assert code == EXIT_USAGE and "--all" in err


@pytest.mark.parametrize("label", ["sqlite", "mariadb"])
def test_ack_and_fail_with_a_stale_attempt_exit_5_and_change_nothing(label, request, tmp_path):
    db = make_target(label, request, tmp_path).cli_args()
    _json(db, "create", "q", "--kind", "claim", "--max-attempts", "2")
    _json(db, "push", "q", "m")
    [popped] = _json(db, "pop", "q")
    assert popped["attempts"] == 1
    for args in (["ack"], ["fail", "--error", "late"]):
        code, _, err = _run(db, *args, "q", str(popped["id"]), "--attempt", "2")
        assert code == EXIT_NOT_FOUND
        assert err.strip().splitlines() == [
            f"qadmin: error: message {popped['id']} is not claimed at attempt 2 in queue q "
            "(its claim went stale and it was requeued, claimed again, finished or died since; "
            "a redriven message comes back under a new id)"
        ]
    [done] = _json(db, "ack", "q", str(popped["id"]), "--attempt", "1")
    assert done["id"] == popped["id"]


def test_requeue_shows_and_moves_a_stale_claim_at_its_last_attempt_to_dead(tmp_path, request):
    db = make_target("sqlite", request, tmp_path).cli_args()
    _json(db, "create", "q", "--kind", "claim", "--max-attempts", "1")
    _json(db, "push", "q", "poison")
    [popped] = _json(db, "pop", "q")
    time.sleep(1.1)
    code, out, err = _run(db, "requeue", "q", "--stale-after", "1s", "--dry-run", "--format", "csv")
    assert code == 0 and "q: 0 would be requeued, 1 would be dead" in err
    assert [r["outcome"] for r in csv.DictReader(io.StringIO(out))] == ["dead"]
    code, out, err = _run(db, "requeue", "q", "--stale-after", "1s", "--yes", "--format", "json")
    assert code == 0 and "q: 0 requeued, 1 dead" in err
    assert json.loads(out) == [{"id": popped["id"], "outcome": "dead"}]
    [row] = _json(db, "dead", "q")
    assert row["last_error"] == "claim went stale after attempt 1 (consumer lost)"


def test_a_lock_on_the_dead_table_names_its_holder_not_a_guess(request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    db = target.cli_args()
    _json(db, "create", "dlq", "--kind", "claim", "--max-attempts", "2")
    holder = psycopg.connect(PG_ADMIN, autocommit=False)
    try:
        holder.execute(f'LOCK TABLE "{target.schema}".dlq_dead IN ACCESS EXCLUSIVE MODE')
        pid = holder.info.backend_pid
        report = _json(db, "inspect", "dlq", "--sample", "0")
    finally:
        holder.rollback()
        holder.close()
    [blocked] = [f for f in report["findings"] if f["code"] == "part_blocked"]
    said = f"the dead part was not read: it gave up waiting for a lock held by session {pid}, "
    assert blocked["message"].startswith(said + "which holds AccessExclusiveLock on dlq_dead (")
    assert f"pg_terminate_backend({pid})" in blocked["fix"]


def test_dead_and_redrive_on_a_table_qadmin_did_not_make_say_why_in_one_line(tmp_path, request):
    db = make_target("sqlite", request, tmp_path).cli_args()
    with sqlite3.connect(tmp_path / "queues.db") as conn:
        conn.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, status TEXT, payload BLOB)")
    for args in (["dead", "jobs"], ["redrive", "jobs", "--all", "--yes"]):
        code, _, err = _run(db, *args)
        assert code == EXIT_USAGE, err
        assert err.strip() == (
            f"qadmin: error: {args[0]}: jobs is a table, not a qadmin queue: dead letters are "
            "qadmin claim queues' (a library's failed rows are counted in inspect's size.states)"
        )
    code, _, err = _run(db, "dead", "nosuch")
    assert code == EXIT_NOT_FOUND and "no queue or table 'nosuch'" in err


def test_drop_and_purge_count_the_dead_and_redrive_lists_what_it_asks_about(
    tmp_path, request, monkeypatch
):
    db = make_target("sqlite", request, tmp_path).cli_args()
    _json(db, "create", "q", "--kind", "claim", "--max-attempts", "1")
    _json(db, "push", "q", "a", "b", "c")
    for _ in range(2):
        [popped] = _json(db, "pop", "q")
        _json(db, "fail", "q", str(popped["id"]), "--error", "boom")
    code, out, err = _run(db, "drop", "q", "--dry-run", "--format", "json")
    plan = json.loads(out)
    assert code == 0 and (plan["messages"], plan["dead"], plan["dead_exact"]) == (1, 2, True)
    assert "drop also destroys 2 dead messages" in err
    code, out, err = _run(db, "purge", "q", "--dry-run", "--format", "json")
    assert code == 0 and json.loads(out)["dead"] == 2
    assert "purge leaves 2 dead messages in q_dead" in err
    # On a terminal: the ids first, then the question; a wrong name cancels, naming the queue.
    monkeypatch.setattr(click.testing._NamedTextIOWrapper, "isatty", lambda self: True)
    result = invoke("redrive", "q", "--all", *db, input="nope\n")
    assert result.exit_code == EXIT_USAGE
    assert "redrive would move 2 dead messages of q: 1, 2" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "qadmin: error: redrive dead messages of q cancelled: the name typed did not match"
    )
    assert len(_json(db, "dead", "q")) == 2
    _json(db, "redrive", "q", "--id", "1", "--yes")  # one left: the counts agree with it
    code, _, err = _run(db, "drop", "q", "--dry-run")
    assert code == 0 and "drop also destroys 1 dead message\n" in err
    result = invoke("redrive", "q", "--all", *db, input="nope\n")
    assert "redrive would move 1 dead message of q: 2\n" in result.stderr


def test_dead_clips_long_errors_in_table_and_plain_but_json_keeps_them(tmp_path, request):
    db = make_target("sqlite", request, tmp_path).cli_args()
    _json(db, "create", "q", "--kind", "claim", "--max-attempts", "1")
    _json(db, "push", "q", "m")
    [popped] = _json(db, "pop", "q")
    _json(db, "fail", "q", str(popped["id"]), "--error", "t" * 3000)
    clipped = "t" * 200 + "... (3,000 chars; --format json shows it whole)"
    code, out, _ = _run(db, "dead", "q", "--format", "plain")
    assert code == 0 and out.count(clipped) == 2 and "t" * 201 not in out
    code, out, _ = _run(db, "dead", "q", "--format", "table")  # wrapped: the cells' t's only
    assert code == 0 and sum(line.count("t") for line in out.splitlines()) < 1000
    [row] = _json(db, "dead", "q")
    assert row["first_error"] == row["last_error"] == "t" * 3000


@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_dead_on_a_locked_dead_table_gives_up_within_a_second_naming_the_holder(
    label, request, tmp_path
):
    """dead waits a diagnostic part's 1 s, not the connection's 5 s, and names who holds
    the dead table (PostgreSQL: a table lock; MariaDB: LOCK TABLES ... WRITE)."""
    target = make_target(label, request, tmp_path)
    db = target.cli_args()
    _json(db, "create", "d1", "--kind", "claim", "--max-attempts", "1")
    if label == "postgresql":
        holder = psycopg.connect(PG_ADMIN)
        holder.execute(f'LOCK TABLE "{target.schema}".d1_dead IN ACCESS EXCLUSIVE MODE')
        pid = holder.info.backend_pid
    else:
        holder = pymysql.connect(host=MY_HOST, user="root", database=target.schema)
        holder.cursor().execute("LOCK TABLES d1_dead WRITE")
        pid = holder.thread_id()
    try:
        started = time.monotonic()
        code, _, err = _run(db, "dead", "d1")
        took = time.monotonic() - started
    finally:
        holder.close()
    assert code == EXIT_LOCK_TIMEOUT and took < 4, (code, took, err)
    assert len(err.strip().splitlines()) == 1 and f"session {pid}" in err, err


@pytest.mark.parametrize(
    "args",
    [
        ["ack", "q", "1", "--attempt", "2147483648"],
        ["ack", "q", "9223372036854775808"],
        ["fail", "q", "0", "--error", "e"],
        ["fail", "q", "1", "--error", "bad\udcff\udcfe"],  # bytes 0xff 0xfe from a shell
        ["redrive", "q", "--id", "9223372036854775808", "--yes"],
    ],
)
def test_out_of_range_ids_and_attempts_and_non_utf8_errors_are_usage_errors(args, tmp_path):
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    _json(db, "create", "q", "--kind", "claim")
    _json(db, "push", "q", "m")
    code, _, err = _run(db, *args)
    assert code == EXIT_USAGE and len(err.strip().splitlines()) == 1, err
    assert [m["attempts"] for m in _json(db, "peek", "q")] == [0], "nothing was touched"


def _dead_ids(db: list[str]) -> list[int]:
    return [r["id"] for r in _json(db, "dead", "q", "--count", "1000")]


def _make_dead(db: list[str], errors: list[str]) -> list[int]:
    _json(db, "create", "q", "--kind", "claim", "--max-attempts", "1")
    _json(db, "push", "q", *[f"p{n}" for n in range(len(errors))])
    for error in errors:
        [popped] = _json(db, "pop", "q")
        _json(db, "fail", "q", str(popped["id"]), "--error", error)
    return _dead_ids(db)


@pytest.mark.parametrize("label", ["sqlite", "postgresql"])
def test_discard_and_redrive_take_ids_filters_or_all_and_say_what_they_take(
    label, request, tmp_path
):
    db = make_target(label, request, tmp_path).cli_args()
    ids = _make_dead(db, ["boom 1", "boom 2", "timeout", "boom 4"])
    _json(db, "create", "other", "--kind", "fifo")
    for args in (["discard", "q"], ["discard", "q", "--all", "--error", "x"], ["redrive", "q"]):
        code, _, err = _run(db, *args, "--yes")
        assert code == EXIT_USAGE and "--id ID (repeatable), a filter" in err, err
    for args in (["--rate", "0/s"], ["--rate", "fast"], ["--error", ""], ["--older-than", "x"]):
        code, _, err = _run(db, "discard", "q", "--all", *args[:1], args[1], "--yes")
        assert code == EXIT_USAGE and len(err.strip().splitlines()) == 1, (args, err)
    # The history of one message, as rows; JSON as one document.
    code, out, err = _run(db, "dead", "q", "--id", str(ids[2]), "--format", "csv")
    assert code == 0 and [r["error"] for r in csv.DictReader(io.StringIO(out))] == ["timeout"]
    assert f"dead message {ids[2]}:" in err and "after 1 attempt;" in err
    assert _json(db, "dead", "q", "--id", str(ids[2]))["errors"][0]["attempt"] == 1
    code, _, err = _run(db, "dead", "q", "--id", "999")
    assert code == EXIT_NOT_FOUND and "no dead message 999" in err
    # discard by error text: dry run first (count and ids), then refused off a TTY, then done.
    plan = _json(db, "discard", "q", "--error", "BOOM", "--dry-run")
    assert (plan["discarded"], plan["ids"], plan["dry_run"]) == (3, [ids[0], ids[1], ids[3]], True)
    code, _, err = _run(db, "discard", "q", "--error", "BOOM", "--dry-run", "--format", "plain")
    assert f"discard would discard 3 dead messages of q: {ids[0]}, {ids[1]}, {ids[3]}" in err
    code, _, err = _run(db, "discard", "q", "--error", "BOOM")
    assert code == EXIT_USAGE and "without --yes" in err
    done = _json(db, "discard", "q", "--id", str(ids[0]), "--yes")
    assert (done["discarded"], done["ids"]) == (1, [ids[0]])
    done = _json(db, "discard", "q", "--error", "boom", "--rate", "100/s", "--yes")
    assert (done["discarded"], done["ids"], done["gone"]) == (2, [ids[1], ids[3]], [])
    assert _dead_ids(db) == [ids[2]]
    # redrive: nothing older than an hour; into another queue; a queue that is not there.
    assert _json(db, "redrive", "q", "--older-than", "1h", "--yes")["redriven"] == 0
    code, _, err = _run(db, "redrive", "q", "--all", "--to", "nosuch", "--yes")
    assert code == EXIT_NOT_FOUND and "nosuch" in err
    done = _json(db, "redrive", "q", "--all", "--to", "other", "--yes")
    assert (done["redriven"], done["to"], done["moved"][0]["id"]) == (1, "other", ids[2])
    assert [m["payload"] for m in _json(db, "peek", "other")] == ["p2"]
    assert _json(db, "peek", "q") == [] and _dead_ids(db) == []


def _count_everywhere(target, total: int, settled: bool = True) -> tuple[int, int]:
    """Dead and waiting messages of q; once no redrive runs (``settled``), every payload is
    in exactly one of the two (while one runs, the two reads can straddle its commit)."""
    engine = target.engine()
    try:
        spec = catalog.get(engine, "q")
        died = [r.payload for r in dead.listing(engine, spec, 1000)]
        waiting = [r.payload for r in messages.peek(engine, spec, 1000)]
    finally:
        engine.close()
    everywhere = died + waiting
    if settled:
        assert sorted(everywhere) == sorted(b"p%d" % n for n in range(total)), (died, waiting)
    return len(died), len(waiting)


@pytest.mark.parametrize("label", ["sqlite", "postgresql"])
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_a_redrive_stopped_or_killed_part_way_loses_and_doubles_nothing(
    label, stop, request, tmp_path
):
    """A paced redrive (one message a batch) stopped with Ctrl-C says how many it moved,
    committed, exit 130; killed, its open batch rolls back. Either way every message is in
    the queue or in the dead table, once, and a second run moves the rest."""
    target = make_target(label, request, tmp_path)
    db = target.cli_args()
    total = 12
    _make_dead(db, ["boom"] * total)
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "qadmin", "redrive", "q", "--all", "--rate", "4/s"),
            *("--yes", "--format", "json", *db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while _count_everywhere(target, total, settled=False)[1] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(stop)
    out, err = proc.communicate(timeout=60)
    died, waiting = _count_everywhere(target, total)
    assert 0 < died < total, "stopped part way"
    if stop == signal.SIGINT:
        assert proc.returncode == 130, err
        assert err.strip().splitlines()[-1] == (
            f"qadmin: interrupted: redrive: moved {waiting} dead messages (committed); "
            "the rest are still dead"
        )
        # what committed is printed all the same: the old -> new ids are not lost with the stop
        moved = json.loads(out)["moved"]
        assert len(moved) == waiting and all(m["new_id"] for m in moved), out
    else:
        assert proc.returncode == -signal.SIGKILL
    done = _json(db, "redrive", "q", "--all", "--yes")
    assert done["redriven"] == died and _count_everywhere(target, total) == (0, total)


def test_requeue_dry_run_past_the_listing_limit_says_at_least(tmp_path, request):
    """1,500 stale claims: the dry run lists 1,000 (the claims listing's limit) and must say
    that is a floor, on stderr and in JSON, never "1000 would be requeued" as a count."""
    db = make_target("sqlite", request, tmp_path).cli_args()
    _json(db, "create", "q", "--kind", "claim")
    code, _, _ = _run(db, "push", "q", "--lines", "-f", str(_lines(tmp_path, 1_500)))
    assert code == 0
    _json(db, "pop", "q", "--count", "1500")
    time.sleep(1.1)
    dry = ("requeue", "q", "--stale-after", "1s", "--dry-run", "--format", "json")
    code, out, err = _run(db, *dry)
    assert code == 0, err
    assert "q: at least 1000 would be requeued, at least 0 would be dead" in err, err
    assert "the listing stops at 1,000 claims" in err, err
    rows = json.loads(out)
    assert len(rows) == 1_000 and all(r["listing_complete"] is False for r in rows)
    code, out, err = _run(db, "requeue", "q", "--stale-after", "1s", "--yes", "--format", "json")
    assert code == 0 and "q: 1500 requeued, 0 dead" in err, err


def _lines(tmp_path, n: int):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"m{i}\n" for i in range(n)))
    return path


def test_an_empty_age_range_is_refused_in_one_line(tmp_path):
    """--older-than 2h with --newer-than 1h: died over 2 h ago and within the last hour is no
    time at all, so dead, discard and redrive refuse it rather than match nothing."""
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    _json(db, "create", "q", "--kind", "claim", "--max-attempts", "1")
    for command in ("dead", "discard", "redrive"):
        for older, newer in (("2h", "1h"), ("1h", "1h")):
            yes = [] if command == "dead" else ["--yes"]
            code, out, err = _run(
                db, command, "q", "--older-than", older, "--newer-than", newer, *yes
            )
            assert code == EXIT_USAGE and out == "", (command, err)
            assert err.count("\n") == 1 and "--older-than" in err and "--newer-than" in err
    code, _, err = _run(db, "dead", "q", "--older-than", "1h", "--newer-than", "2h")
    assert code == 0, err
