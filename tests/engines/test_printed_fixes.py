"""Every printed fix runs as printed: for each failure state the matrix creates
(tests/engines/matrix.py), every SQL statement and every qadmin command in a finding's ``fix``
is run exactly as ``qadmin inspect`` printed it: the SQL on a plain connection of the DBA's
(psql / mariadb: PostgreSQL in the server's database, MariaDB with no default database, so
names must be qualified), the qadmin command through the CLI with nothing added (its
connection options are the ones the fix carries). Each must succeed; where the fix is meant to
clear the state, the finding is gone afterwards.

What is not run: a statement that ends a session this test did not open
(``pg_terminate_backend`` / ``KILL`` of another test's or conftest's long transaction: never
end what is not yours). Alternatives (after ``; or`` and ``by hand:``) are the same repair by
other means: the first way is run, not both."""

from __future__ import annotations

import json
import re
import shlex
from contextlib import suppress
from typing import Any

import psycopg
import pymysql
import pytest

from qadmin.errors import QadminError
from tests.conftest import Target, make_target
from tests.engines.incidents import connect, execute, until
from tests.engines.matrix import Row, cells
from tests.helpers import invoke, invoke_on

# The states whose fixes, run, must leave no such finding (the others' fixes look, or end
# sessions whose release the creator's own threads race with).
CLEARED = {
    "stale_claims",
    "dead_letters",
    "ring_push_hole",
    "ring_orphan",
    "ring_nearly_full",
    "watermark_stranded",
    "invalid_index",
    "stale_statistics",
    "autovacuum_off",
}
SQL_START = re.compile(
    r"\b(?:SELECT|KILL|ANALYZE|ALTER TABLE|DROP INDEX|REINDEX|CREATE (?:UNIQUE )?INDEX|"
    r"INSERT INTO|VACUUM|SHOW PROCESSLIST|ROLLBACK PREPARED)\b"
)
# (No " (": prose in parentheses after a statement is not SQL, and fails as printed.)
SQL_STOPS = (" once", " then", " if ", " for a ", " to stop")
QADMIN = re.compile(r"(?<![\w-])qadmin (?=[-a-z])")
QADMIN_STOPS = {"to", "then", "or", "once", "lists"}
ENDS_SESSION = re.compile(r"^(?:SELECT pg_terminate_backend\((\d+)\)|KILL (\d+))$")


def _first_way(fix: str) -> str:
    """The fix without its alternatives (``; or ...``, ``by hand: ...``)."""
    return re.split(r"; or |\(by hand: ", fix)[0]


def sql_statements(fix: str) -> list[str]:
    """Each SQL statement in a fix's text, as printed: from its keyword to the end of its
    balanced parentheses and quotes (a comma, semicolon or closing parenthesis of the prose
    around it, or a word of prose, ends it; a SELECT's own commas do not end it: a
    semicolon does)."""
    out = []
    text = _first_way(fix)
    for match in SQL_START.finditer(text):
        if any(match.start() < end for _, end in out):
            continue
        depth, quote, i = 0, "", match.start()
        ends = ";" if match.group().startswith("SELECT") else ",;"
        while i < len(text):
            ch = text[i]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"`":
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (ch in ends or text.startswith(SQL_STOPS, i)):
                break
            i += 1
        out.append((text[match.start() : i].strip().rstrip(","), i))
    return [s for s, _ in out]


def qadmin_commands(fix: str) -> list[list[str]]:
    """Each qadmin command in a fix's text, split as a shell would."""
    text = _first_way(fix)
    out = []
    for match in QADMIN.finditer(text):
        words = []
        for word in shlex.split(re.split(r"[()]", text[match.end() :], maxsplit=1)[0]):
            if word in QADMIN_STOPS:
                break
            end = word[-1] in ",;"
            words.append(word.rstrip(",;"))
            if end:
                break
        out.append(words)
    return out


def test_the_extractors_read_fixes_as_printed():
    fix = (
        "qadmin --dsn 'x://a b' --schema s requeue q --stale-after 1 --dry-run to see them, "
        "then qadmin --schema s requeue q --stale-after 1 --yes"
    )
    assert qadmin_commands(fix) == [
        ["--dsn", "x://a b", "--schema", "s", "requeue", "q", "--stale-after", "1", "--dry-run"],
        ["--schema", "s", "requeue", "q", "--stale-after", "1", "--yes"],
    ]
    assert qadmin_commands("qadmin ghosts q to find it (or qadmin locks q), then end it") == [
        ["ghosts", "q"],
        ["locks", "q"],
    ]
    assert sql_statements(
        "end it (SELECT pg_terminate_backend(12)); set idle_in_transaction_session_timeout"
    ) == ["SELECT pg_terminate_backend(12)"]
    assert sql_statements('ANALYZE "s"."t"; then find why autovacuum has not run it') == [
        'ANALYZE "s"."t"'
    ]
    assert sql_statements(
        'DROP INDEX CONCURRENTLY "s"."i", then create it again: CREATE UNIQUE INDEX '
        "CONCURRENTLY i ON s.t USING btree (payload); or REINDEX INDEX CONCURRENTLY i"
    ) == [
        'DROP INDEX CONCURRENTLY "s"."i"',
        "CREATE UNIQUE INDEX CONCURRENTLY i ON s.t USING btree (payload)",
    ]
    assert sql_statements(
        "list them with SELECT a, b, count(*) FROM s.t GROUP BY 1, 2 LIMIT 20; remove them, "
        "then recreate it (if not: DROP INDEX CONCURRENTLY i)"
    ) == ["SELECT a, b, count(*) FROM s.t GROUP BY 1, 2 LIMIT 20", "DROP INDEX CONCURRENTLY i"]
    assert sql_statements("SELECT pg_terminate_backend(12), then wait") == [
        "SELECT pg_terminate_backend(12)"
    ]


def _inspect(row: Row, queue: str, target: Target) -> dict[str, Any]:
    result = invoke_on(target, *row.inspect_args(queue))
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _own_session(target: Target, conn: Any, session: int) -> bool | None:
    """Whether the session is this test's own (its last query names the test's schema; on
    MariaDB its default database is the test's); None when no such session exists."""
    if target.label == "postgresql":
        rows = execute(conn, f"SELECT query FROM pg_stat_activity WHERE pid = {session}")
        return None if not rows else str(target.schema) in str(rows[0][0])
    rows = execute(conn, f"SELECT DB FROM information_schema.PROCESSLIST WHERE ID = {session}")
    return None if not rows else rows[0][0] == target.schema


def _run_sql(target: Target, statement: str) -> str:
    """Run one statement as the DBA would; "ran", "not ours", or the data's refusal."""
    conn = connect(target, in_database=False)
    try:
        ends = ENDS_SESSION.match(statement)
        if ends:
            own = _own_session(target, conn, int(ends[1] or ends[2]))
            if not own:  # another's (or one that ended since: other sessions come and go)
                return "not ours"
        execute(conn, statement)  # a fix that fails as printed fails the test
        return "ran"
    finally:
        conn.close()


@pytest.mark.parametrize(
    "row,label",
    cells(),
    ids=[f"{row.state.replace(' ', '_')}-{label}" for row, label in cells()],
)
def test_every_printed_fix_runs_as_printed(row: Row, label: str, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    create = row.cells[label]
    assert callable(create)
    state = create(target, engine)
    queue = state.__enter__()
    try:
        findings = _inspect(row, queue, target)["findings"]
        assert row.code in {f["code"] for f in findings}
        outcomes: dict[str, list[str]] = {}
        ran: set[str] = set()
        for finding in findings:
            fix = str(finding.get("fix") or "")
            assert "<" not in fix and " N " not in f"{fix} ", fix  # no placeholder left
            for statement in sql_statements(fix):
                if statement not in ran:
                    ran.add(statement)
                    outcomes.setdefault(finding["code"], []).append(_run_sql(target, statement))
            for command in qadmin_commands(fix):
                if " ".join(command) in ran:
                    continue
                ran.add(" ".join(command))
                result = invoke(*command)
                assert result.exit_code == 0, (command, result.output)
                outcomes.setdefault(finding["code"], []).append("ran")
        assert ran or row.code in ("backlog_growing",), findings
        clears = {
            code
            for code, done in outcomes.items()
            if code in CLEARED and all(o == "ran" for o in done)
        }
        if clears:
            assert until(
                lambda: not clears & {f["code"] for f in _inspect(row, queue, target)["findings"]},
                timeout_s=10,
            ), _inspect(row, queue, target)["findings"]
    finally:
        # A fix may have ended one of the creator's own sessions: its clean-up then finds the
        # connection gone, which is what the fix did.
        with suppress(psycopg.Error, pymysql.Error, QadminError):
            state.__exit__(None, None, None)
        engine.close()


PROFILED = {
    "postgresql": (
        'CREATE TABLE {t} ("Job Id" bigint PRIMARY KEY, "Created At" timestamptz NOT NULL, '
        '"State" text NOT NULL, "Claimed At" timestamptz)',
        "now() - interval '1 hour'",
    ),
    "sqlite": (
        'CREATE TABLE {t} ("Job Id" INTEGER PRIMARY KEY, "Created At" TEXT NOT NULL, '
        '"State" TEXT NOT NULL, "Claimed At" TEXT)',
        "strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 hour')",
    ),
}


@pytest.mark.parametrize("label", sorted(PROFILED))
def test_a_fix_carries_the_profile_options_it_was_read_with(label, request, tmp_path):
    """A table read through one-off profile options: the printed requeue runs as printed
    (it carries --id-column, --state-column, --pending...: without them it exit 2 with
    "has no claims qadmin can see"), and clears the stale claims."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    table = engine.qualified("P1 Jobs")
    ddl, hour_ago = PROFILED[label]
    engine.run([ddl.format(t=table)])
    engine.run(
        [
            f'INSERT INTO {table} ("Job Id", "Created At", "State", "Claimed At") VALUES '
            f"(1, {hour_ago}, 'busy', {hour_ago}), (2, {hour_ago}, 'new', NULL)"
        ]
    )
    engine.close()
    options = [
        *("--id-column", "Job Id", "--order-by", "Job Id", "--time-column", "Created At"),
        *("--state-column", "State", "--pending", "new", "--claimed", "busy"),
        *("--claimed-at-column", "Claimed At"),
    ]

    def findings() -> dict[str, str]:
        args = ["inspect", '"P1 Jobs"', *options, "--format", "json", *target.cli_args()]
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        return {f["code"]: str(f.get("fix") or "") for f in json.loads(result.stdout)["findings"]}

    fix = findings()["stale_claims"]
    commands = qadmin_commands(fix)
    assert commands and all("--claimed-at-column" in c for c in commands), fix
    for command in commands:
        result = invoke(*command)
        assert result.exit_code == 0, (command, result.output)
    assert "stale_claims" not in findings()
