"""Diagnostics are read-only: every inspect/check/tail/export command (and every --dry-run) run as a
role that can only read the queue's schema, and as one with no rights on the queue tables,
writes nothing, and answers with what it may see: a note or one line naming the privilege."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from qadmin.engines import open_engine
from qadmin.ops import messages, queues
from tests.conftest import make_target
from tests.helpers import invoke

QUEUES = {
    "f_q": ("fifo", None, False),
    "c_q": ("claim", None, False),
    "r_q": ("ring", 16, False),
    "w_q": ("fifo", None, True),
}
READS = [
    ["inspect", "{q}"],
    ["inspect", "{q}", "--deep"],
    ["explain", "{q}"],
    ["size", "{q}"],
    ["ghosts", "{q}"],
    ["fragmentation", "{q}"],
    ["locks", "{q}"],
    ["check", "{q}"],
    ["tail", "{q}", "--count", "1", "--interval", "0.2"],
    ["peek", "{q}"],
    ["list"],
    ["purge", "{q}", "--dry-run"],
    ["drop", "{q}", "--dry-run"],
    ["export", "{q}", "--to", "{tmp}/{q}.parquet"],
]
PER_KIND = {
    "c_q": [
        ["claims", "{q}"],
        ["requeue", "{q}", "--dry-run"],
        ["archive", "{q}", "--to", "{tmp}/a", "--older-than", "0s", "--dry-run"],
    ],
    "r_q": [["repair", "{q}", "--dry-run"], ["resize", "{q}", "--capacity", "32", "--dry-run"]],
    "w_q": [["watermark", "{q}"], ["watermark", "{q}", "repair", "--dry-run"]],
    "f_q": [
        ["convert", "{q}", "--to", "ring", "--capacity", "64", "--dry-run"],
        ["archive", "{q}", "--to", "{tmp}/a", "--older-than", "0s", "--dry-run"],
    ],
}
# What a role without rights may answer: nothing (exit 0 with notes), or one line naming the
# missing privilege (exit 7), or "no such queue" when it cannot even read the catalog row.
DEGRADED = {0, 5, 7}


def _state(engine: Any) -> list[Any]:
    """Every row of every table (and sequence) in the schema, for a before/after comparison."""
    if engine.name == "postgresql":
        sql = (
            "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = :schema AND c.relkind IN ('r', 'S') ORDER BY 1"
        )
    else:
        sql = (
            "SELECT TABLE_NAME AS name FROM information_schema.TABLES"
            " WHERE TABLE_SCHEMA = :schema ORDER BY 1"
        )
    names = [r["name"] for r in engine.query(sql, {"schema": engine.schema})]
    rows = []
    for name in names:
        got = engine.query(f"SELECT * FROM {engine.qualified(name)}")
        rows.append((name, sorted(repr(sorted(r.items())) for r in got)))
    return rows


def _roles(label: str, target: Any) -> tuple[str, str, Any]:
    """A read-only role and a role that may read only qadmin's catalog; and a cleanup."""
    suffix = uuid.uuid4().hex[:8]
    reader, stranger = f"qa_ro_{suffix}", f"qa_no_{suffix}"
    admin = target.engine()
    schema = admin.schema
    if label == "postgresql":
        statements = [
            f'CREATE ROLE "{reader}" LOGIN',
            f'CREATE ROLE "{stranger}" LOGIN',
            f'GRANT USAGE ON SCHEMA "{schema}" TO "{reader}", "{stranger}"',
            f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{reader}"',
            f'GRANT SELECT ON ALL SEQUENCES IN SCHEMA "{schema}" TO "{reader}"',
            f'GRANT SELECT ON "{schema}".qadmin_queues TO "{stranger}"',
        ]
        cleanup = [
            f'DROP OWNED BY "{reader}", "{stranger}"',
            f'DROP ROLE "{reader}", "{stranger}"',
        ]
        base = target.dsn.split("://", 1)[1].split("@", 1)[1]
        dsns = (f"postgresql://{reader}@{base}", f"postgresql://{stranger}@{base}")
    else:
        statements = [
            f"CREATE USER '{reader}'@'%'",
            f"CREATE USER '{stranger}'@'%'",
            f"GRANT SELECT ON `{schema}`.* TO '{reader}'@'%'",
            f"GRANT SELECT ON `{schema}`.qadmin_queues TO '{stranger}'@'%'",
        ]
        cleanup = [f"DROP USER '{reader}'@'%'", f"DROP USER '{stranger}'@'%'"]
        base = target.dsn.split("://", 1)[1].split("@", 1)[1]
        dsns = (f"mysql://{reader}@{base}", f"mysql://{stranger}@{base}")
    for statement in statements:
        admin.run([statement])

    def drop() -> None:
        for statement in cleanup:
            admin.run([statement])

    return dsns[0], dsns[1], drop


# One test per role (the sweep is the suite's longest on one engine): they run side by side.
@pytest.mark.parametrize("who", ["reader", "stranger"])
@pytest.mark.parametrize("label", ["postgresql", "mariadb"])
def test_every_diagnostic_as_a_reader_and_as_a_stranger_writes_nothing(
    label, who, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    admin = target.engine()
    for name, (kind, capacity, watermark) in QUEUES.items():
        spec = queues.create(admin, queues.make_spec(name, kind, capacity, False, watermark))
        messages.push(admin, spec, [b"a", b"b", b"c"])
        if kind == "claim":
            messages.pop(admin, spec)
    reader, stranger, drop = _roles(label, target)
    try:
        before = _state(admin)
        schema = ["--schema", target.engine_schema] if target.engine_schema else []
        roles = {"reader": (reader, {0}), "stranger": (stranger, DEGRADED)}
        for dsn, allowed in [roles[who]]:
            assert open_engine(dsn).server_version()
            for name in QUEUES:
                for args in READS + PER_KIND.get(name, []):
                    argv = [a.replace("{q}", name).replace("{tmp}", str(tmp_path)) for a in args]
                    result = invoke(*argv, "--dsn", dsn, *schema, "--format", "json")
                    assert "Traceback" not in result.stderr
                    if argv[0] == "check" and dsn == stranger:
                        # Nagios: UNKNOWN (3), its one line saying why.
                        assert result.exit_code == 3, result.stdout
                        named = ("needs", "permission denied", "command denied")
                        assert any(n in result.stdout for n in named), result.stdout
                        continue
                    if argv[0] == "check":  # its status is the server's state: any verdict
                        assert result.exit_code in {0, 1, 2}, result.stdout
                        continue
                    assert result.exit_code in allowed, (dsn, argv, result.stderr)
                    if result.exit_code:
                        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
                        if result.exit_code == 7:
                            named = ("needs", "permission denied", "command denied")
                            assert any(n in result.stderr for n in named), result.stderr
        assert _state(admin) == before
    finally:
        drop()


def test_snapshot_age_a_role_cannot_see_is_unknown_never_ok(request, tmp_path):
    """PostgreSQL without pg_read_all_stats: another role's open transaction shows its xid but
    not its start, so its age is unread: check says UNKNOWN naming the privilege, never OK on
    an age of 0 (and as the admin, who sees it, the same threshold is judged)."""
    target = make_target("postgresql", request, tmp_path)
    admin = target.engine()
    queues.create(admin, queues.make_spec("f_q", "fifo", None, False, False))
    holder = target.engine()
    cursor = holder.conn.cursor()
    cursor.execute("SELECT pg_current_xact_id()")  # an xid: it holds the horizon back
    reader, _stranger, drop = _roles("postgresql", target)
    try:
        argv = ["check", "f_q", "--schema", target.engine_schema, "--warn-snapshot-age", "1h"]
        result = invoke(*argv, "--dsn", reader)
        assert result.exit_code == 3, result.stdout
        assert "snapshot_age not evaluable" in result.stdout
        assert "pg_read_all_stats" in result.stdout
        assert "snapshot_age=" not in result.stdout  # no figure claimed in the perfdata
        seen = invoke(*argv, "--dsn", target.dsn)
        assert seen.exit_code in {0, 1, 2}, seen.stdout  # read: judged (the server is shared)
        assert "snapshot_age=" in seen.stdout
    finally:
        holder._rollback()
        holder.close()
        drop()


def test_a_refusal_names_the_privilege_it_needed(request, tmp_path):
    """PostgreSQL says "permission denied for table x" and no more: the exit-7 line names
    the privilege (SELECT for a read, DELETE for a purge, the routine's for a push)."""
    target = make_target("postgresql", request, tmp_path)
    admin = target.engine()
    spec = queues.create(admin, queues.make_spec("f_q", "fifo", None, False))
    messages.push(admin, spec, [b"a"])
    admin.run([f"DROP FUNCTION {admin.qualified('f_q_pop')}(integer)"])  # for repair to make
    reader, stranger, drop = _roles("postgresql", target)
    schema = ["--schema", target.engine_schema]
    try:
        cases = [
            (stranger, ["peek", "f_q"], "needs SELECT on table f_q"),
            (reader, ["purge", "f_q", "--yes"], "needs DELETE on table f_q"),
            (reader, ["push", "f_q", "b"], "(SELECT, INSERT, UPDATE or DELETE)"),
            # the reader has USAGE on the schema: it lacks CREATE (it was told USAGE)
            (reader, ["repair", "f_q", "--yes"], f"needs CREATE on schema {target.engine_schema}"),
        ]
        for dsn, argv, named in cases:
            result = invoke(*argv, "--dsn", dsn, *schema)
            assert result.exit_code == 7, (argv, result.output)
            line = result.stderr.strip()
            assert "\n" not in line and named in line, (argv, line)
    finally:
        drop()


def test_mariadb_snapshot_age_without_process_is_unknown_beside_judged_thresholds(
    request, tmp_path
):
    """MariaDB without PROCESS reads no holders: the snapshot age is not evaluable (naming
    the privilege) and check is never OK on it, even beside a threshold that was judged."""
    target = make_target("mariadb", request, tmp_path)
    admin = target.engine()
    queues.create(admin, queues.make_spec("f_q", "fifo", None, False))
    reader, _stranger, drop = _roles("mariadb", target)
    try:
        argv = ["check", "f_q", "--warn-snapshot-age", "1h", "--crit-depth", "100"]
        result = invoke(*argv, "--dsn", reader)
        # UNKNOWN; or WARNING when the shared server's own purge lag (another session's long
        # read view) is a judged warning beside it: never OK, and the age still not evaluable.
        assert result.exit_code == 3 or (
            result.exit_code == 1 and "purge" in result.stdout.lower()
        ), result.stdout
        assert "snapshot_age not evaluable" in result.stdout and "PROCESS" in result.stdout
    finally:
        drop()


def test_maintain_by_a_role_that_does_not_own_the_table_is_refused_not_done(request, tmp_path):
    """PostgreSQL's VACUUM of a table the role does not own is no error: a WARNING, and the
    table skipped. maintain --yes said "done, 1,500 dead rows kept: held by" an innocent
    session; now every action is refused naming what it needs, and the command exits 7."""
    target = make_target("postgresql", request, tmp_path)
    admin = target.engine()
    spec = queues.create(admin, queues.make_spec("m_q", "fifo", None, False, False))
    messages.push(admin, spec, [b"x"] * 1500)
    messages.pop(admin, spec, 1500)
    admin.run(["SELECT pg_stat_force_next_flush()"])  # the dead rows in the counters now
    table = admin.qualified("m_q")
    for _ in range(100):
        rows = admin.query(
            f"SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = '{table}'::regclass"
        )
        if int(rows[0]["n_dead_tup"]) >= 1500:
            break
        time.sleep(0.1)
    reader, _stranger, drop = _roles("postgresql", target)
    try:
        argv = ["maintain", "m_q", "--schema", target.engine_schema, "--yes", "--format", "json"]
        result = invoke(*argv, "--dsn", reader)
        assert result.exit_code == 7, (result.stdout, result.stderr)
        said = json.loads(result.stdout)
        assert said["dry_run"] is False  # a run that was refused, not a dry run
        [vacuum] = [a for a in said["actions"] if a["action"] == "vacuum"]
        assert vacuum["status"].startswith("refused: ") and "owner" in vacuum["status"], vacuum
        assert vacuum["privilege"] == "OWNER"
        assert "held by" not in result.stdout + result.stderr
    finally:
        drop()


def test_a_mariadb_role_shown_some_routines_is_not_told_the_others_are_missing(request, tmp_path):
    """MariaDB lists a routine only to a role that may run it: a producer granted EXECUTE on
    the push procedure alone read the pop and push_many as dropped (a false CRITICAL). Now
    such a role gets a note, and a role shown every routine still finds a real drop."""
    target = make_target("mariadb", request, tmp_path)
    admin = target.engine()
    queues.create(admin, queues.make_spec("p_q", "fifo", None, False, False))
    user = f"qa_pr_{uuid.uuid4().hex[:8]}"
    schema = admin.schema
    admin.run([f"CREATE USER '{user}'@'%'", f"GRANT SELECT ON `{schema}`.* TO '{user}'@'%'"])
    admin.run([f"GRANT EXECUTE ON PROCEDURE `{schema}`.p_q_push TO '{user}'@'%'"])
    base = target.dsn.split("://", 1)[1].split("@", 1)[1]
    try:
        argv = ["check", "p_q", "--sample", "0", "--format", "json"]
        producer = f"mysql://{user}@{base}"
        shown = json.loads(invoke(*argv, "--dsn", producer).stdout)
        assert not any(f["code"] == "objects_missing" for f in shown["findings"]), shown
        admin.run([f"DROP PROCEDURE {admin.qualified('p_q_pop')}"])
        seen = json.loads(invoke(*argv, "--dsn", target.dsn).stdout)
        assert any(f["code"] == "objects_missing" for f in seen["findings"]), seen
        # repair by that role cannot tell either: it says so, never an empty "all whole"
        dry = json.loads(
            invoke("repair", "p_q", "--dry-run", "--format", "json", "--dsn", producer).stdout
        )
        assert dry["restore"] == [] and "was not checked" in (dry["note"] or ""), dry
        # a role that sees every routine but may not make one: the privilege named (a
        # tester's got "Access denied ... to database" and had to guess)
        admin.run([f"GRANT EXECUTE ON `{schema}`.* TO '{user}'@'%'"])
        made = invoke("repair", "p_q", "--yes", "--dsn", producer)
        assert made.exit_code == 7, made.output
        assert "needs CREATE ROUTINE" in made.stderr and len(made.stderr.splitlines()) == 1
    finally:
        admin.run([f"DROP USER '{user}'@'%'"])
        admin.close()


def test_a_ring_whose_fill_a_role_cannot_read_is_unknown_never_a_warning(request, tmp_path):
    """A monitoring role given SELECT on the tables and USAGE, not SELECT, on the ring's
    sequences: the ring's depth, so its fill, is unread. A full ring (ring_full, CRITICAL)
    cannot be ruled out, so check is UNKNOWN naming the privilege, not the WARNING of an
    unread depth: SELECT (a tester's role had USAGE and was told it needed USAGE)."""
    target = make_target("postgresql", request, tmp_path)
    admin = target.engine()
    queues.create(admin, queues.make_spec("r_q", "ring", 8, False, False))
    schema = admin.schema
    suffix = uuid.uuid4().hex[:8]
    role = f"qa_rs_{suffix}"
    for statement in (
        f'CREATE ROLE "{role}" LOGIN',
        f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"',
        f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"',
        f'GRANT USAGE ON ALL SEQUENCES IN SCHEMA "{schema}" TO "{role}"',
    ):
        admin.run([statement])
    base = target.dsn.split("://", 1)[1].split("@", 1)[1]
    try:
        argv = ["check", "r_q", "--schema", target.engine_schema, "--sample", "0"]
        result = invoke(*argv, "--dsn", f"postgresql://{role}@{base}")
        assert result.exit_code == 3, result.stdout
        assert "depth_unread" in result.stdout, result.stdout
        assert "needs SELECT on sequence" in result.stdout, result.stdout
    finally:
        admin.run([f'DROP OWNED BY "{role}"'])
        admin.run([f'DROP ROLE "{role}"'])
        admin.close()
