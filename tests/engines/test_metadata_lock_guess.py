"""MariaDB without the metadata_lock_info plugin cannot name who holds a table's metadata
lock: qadmin guesses from the open transactions of the queue's database, and says it is a
guess everywhere a human reads it (never a bare KILL of a guess); when nothing fits, the
waits still count, behind "an unknown holder". Each state is created for real."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.conftest import Target, make_target
from tests.engines.incidents import connect, execute, session_id, waiting
from tests.helpers import invoke_on, make_queue

CONFIRM = "confirm first"
# Any wait counts (the default lock-wait warning is 5 s, longer than these tests wait).
COMMON = ["--format", "json", "--sample", "0", "--lock-timeout", "1000", "--warn-lock-wait", "0"]


def _run(target: Target, *args: str) -> tuple[int, dict[str, Any]]:
    result = invoke_on(target, *args, *COMMON)
    return result.exit_code, json.loads(result.stdout)


def _findings(document: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in document["findings"] if f["code"] == code]


def _mine(rows: list[dict[str, Any]], ids: list[str]) -> dict[str, dict[str, Any]]:
    mine = [r for r in rows if r["waiter"] in ids]
    assert sorted(r["waiter"] for r in mine) == sorted(ids), rows  # each waiter once
    return {r["waiter"]: r for r in mine}


def _guessed(engine: Any, table: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The waiters' rows once the guess names a holder. The guess reads INNODB_TRX, which
    MariaDB refills only when nobody has read it for 0.1 s: beside other sessions polling it
    (a full run's watermark tests) it can show the server as it was before the holder began,
    so the read is tried again, 0.3 s apart, for a while."""
    deadline = time.monotonic() + 20
    while True:
        rows = engine.diagnostic("locks", {"schema": engine.schema, "table": table})
        mine = _mine(rows, ids)
        if mine[ids[0]]["blocker"] is not None or time.monotonic() > deadline:
            return mine
        time.sleep(0.3)


def test_mariadb_guessed_holder_is_named_once_and_as_a_guess(request, tmp_path):
    """X has a transaction open on another table of the database, Y one on the queue table
    (and began later); an ALTER waits, two SELECTs queue behind it. One row per waiter: the
    ALTER blocked by probably Y (X a candidate), the SELECTs by the ALTER, Y at the root."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table, other = (
        engine.qualified(make_queue(engine, "mdl_fifo", count=5).name),
        engine.qualified(make_queue(engine, "mdl_heap", count=5).name),
    )
    x, y = connect(target), connect(target)
    try:
        execute(x, "START TRANSACTION")
        execute(x, f"SELECT count(*) FROM {other}")
        time.sleep(1.1)  # INNODB_TRX.trx_started counts whole seconds: Y is the newer
        execute(y, "START TRANSACTION")
        execute(y, f"SELECT count(*) FROM {table}")
        x_id, y_id = session_id(x), session_id(y)
        statements = [f"ALTER TABLE {table} ADD COLUMN zz2 INT"]
        statements += [f"SELECT count(*) FROM {table}"] * 2
        with waiting(target, statements) as ids:
            mine = _guessed(engine, "mdl_fifo", ids)
            alter, readers = mine[ids[0]], [mine[i] for i in ids[1:]]
            assert (alter["blocker"], alter["root_blocker"]) == (y_id, y_id), alter
            assert x_id in alter["candidates"].split(","), alter
            assert all((r["blocker"], r["root_blocker"]) == (ids[0], y_id) for r in readers)
            assert {r["blocker_source"] for r in mine.values()} == {"inferred"}

            code, report = _run(target, "inspect", "mdl_fifo")
            assert code == 0, report
            pileups = _findings(report, "lock_pileup")
            assert len(pileups) == 1, pileups
            assert f"probably session {y_id}" in pileups[0]["message"], pileups
            waits = [f for f in _findings(report, "lock_wait") if f["message"].split()[1] in ids]
            assert len(waits) == len(ids), waits
            blocked = _findings(report, "part_blocked")
            assert blocked, report["findings"]
            for finding in [*pileups, *waits, *blocked]:
                assert "probably session" in finding["message"], finding
                assert finding["fix"].startswith(CONFIRM), finding
            queued = [f for f in waits if f"queued behind session {ids[0]}" in f["message"]]
            assert len(queued) == 2, waits
    finally:
        for conn in (x, y):
            execute(conn, "ROLLBACK")
            conn.close()
        engine.close()


def test_mariadb_lock_tables_from_no_database_counts_behind_an_unknown_holder(request, tmp_path):
    """LOCK TABLES db.t WRITE from a session with no default database: nothing can be
    inferred, yet both waiting SELECTs are listed, make a critical pile-up, and no finding
    names an unrelated session."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified(make_queue(engine, "mdl_lifo", count=5).name)
    holder = connect(target, in_database=False)
    try:
        execute(holder, f"LOCK TABLES {table} WRITE")
        with waiting(target, [f"SELECT count(*) FROM {table}"] * 2) as ids:
            rows = engine.diagnostic("locks", {"schema": engine.schema, "table": "mdl_lifo"})
            for row in _mine(rows, ids).values():
                assert row["blocker"] is None and row["root_blocker"] is None, row
                assert row["blocker_source"] == "unknown", row

            code, report = _run(target, "inspect", "mdl_lifo")
            assert code == 0, report
            pileups = _findings(report, "lock_pileup")
            assert len(pileups) == 1 and "unknown holder" in pileups[0]["message"], pileups
            assert "KILL" not in pileups[0]["fix"], pileups
            waits = [f for f in _findings(report, "lock_wait") if f["message"].split()[1] in ids]
            assert len(waits) == 2, report["findings"]
            for finding in _findings(report, "part_blocked"):
                assert "probably" not in finding["message"], finding
                assert "KILL" not in finding["fix"], finding

            code, check = _run(target, "check", "mdl_lifo")
            assert code == 2, check
            assert _findings(check, "lock_pileup"), check
    finally:
        execute(holder, "UNLOCK TABLES")
        holder.close()
        engine.close()


def test_mariadb_reader_behind_a_pending_lock_tables_write_is_blocked_by_it(request, tmp_path):
    """Y reads the table in an open transaction; Z's LOCK TABLES ... WRITE waits; a SELECT
    queues behind Z: its blocker is Z, its root blocker (probably) Y."""
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    table = engine.qualified(make_queue(engine, "mdl_locked", count=5).name)
    y = connect(target)
    try:
        execute(y, "START TRANSACTION")
        execute(y, f"SELECT count(*) FROM {table}")
        statements = [f"LOCK TABLES {table} WRITE", f"SELECT count(*) FROM {table}"]
        with waiting(target, statements) as ids:
            mine = _guessed(engine, "mdl_locked", ids)
            y_id = session_id(y)
            assert (mine[ids[0]]["blocker"], mine[ids[0]]["root_blocker"]) == (y_id, y_id)
            assert (mine[ids[1]]["blocker"], mine[ids[1]]["root_blocker"]) == (ids[0], y_id)
    finally:
        execute(y, "ROLLBACK")
        y.close()
        engine.close()
