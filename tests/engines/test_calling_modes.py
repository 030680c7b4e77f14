"""The installed routines called the way applications call them (docs/reliability.md's calling
contract), one call at a time: what each mode does and what a routine refuses. The
concurrent, killed and admin-disturbed runs are tests/conformance."""

from __future__ import annotations

import psycopg
import pymysql
import pytest

from qadmin.ops import messages, queues
from tests.conftest import MY_HOST, PG_ADMIN, make_target


def _my_app(database: str, isolation: str, autocommit: bool) -> pymysql.Connection:
    conn = pymysql.connect(host=MY_HOST, user="root", database=database, autocommit=autocommit)
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
    return conn


def _my_call(conn: pymysql.Connection, sql: str, *args: object) -> list[tuple]:
    """Every result set of a CALL (a pop returns one per message)."""
    rows: list[tuple] = []
    with conn.cursor() as cur:
        cur.execute(sql, args)
        rows += [r for r in cur.fetchall() if r]
        while cur.nextset():
            rows += [r for r in cur.fetchall() or () if r]
    return rows


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_an_autocommit_ring_call_at_repeatable_read_runs_in_its_own_transaction(
    label, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("r", "ring", 8, False))
    app = _my_app(target.schema or "", "REPEATABLE READ", autocommit=True)
    _my_call(app, "CALL r_push(%s)", b"a")
    _my_call(app, "CALL r_push(%s)", b"b")
    assert [bytes(r[-1]) for r in _my_call(app, "CALL r_pop(%s)", 5)] == [b"a", b"b"]
    with app.cursor() as cur:  # nothing left open in the application's session
        cur.execute("SELECT @@in_transaction" if label == "mariadb" else "SELECT 0")
        assert cur.fetchone()[0] == 0
    app.close()
    engine.close()


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_a_ring_call_inside_a_repeatable_read_transaction_is_refused(label, request, tmp_path):
    """A deadlock there would roll back after the number was taken: a hole. Refused instead,
    with nothing taken; the same call at READ COMMITTED works."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("r", "ring", 8, False))
    messages.push(engine, spec, [b"a"])
    app = _my_app(target.schema or "", "REPEATABLE READ", autocommit=False)
    for call, arg in (("CALL r_pop(%s)", 1), ("CALL r_push(%s)", b"x")):
        with pytest.raises(pymysql.err.OperationalError, match="READ COMMITTED"):
            _my_call(app, call, arg)
        app.rollback()
    rc = _my_app(target.schema or "", "READ COMMITTED", autocommit=False)
    assert [bytes(r[-1]) for r in _my_call(rc, "CALL r_pop(%s)", 5)] == [b"a"]
    rc.commit()
    for conn in (app, rc):
        conn.close()
    engine.close()


@pytest.mark.parametrize("isolation", ["REPEATABLE READ", "SERIALIZABLE"])
def test_a_postgres_ring_call_outside_read_committed_is_refused(isolation, request, tmp_path):
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("r", "ring", 8, False))
    messages.push(engine, spec, [b"a"])
    with psycopg.connect(PG_ADMIN) as app:
        app.execute(f"SET search_path TO {target.schema}")
        app.commit()
        for call in ("SELECT * FROM r_pop(1)", "SELECT * FROM r_push('\\x78'::bytea)"):
            app.execute(f"BEGIN ISOLATION LEVEL {isolation}")
            with pytest.raises(psycopg.errors.InvalidTransactionState, match="READ COMMITTED"):
                app.execute(call)
            app.rollback()
        app.autocommit = True
        assert [bytes(r[2]) for r in app.execute("SELECT * FROM r_pop(5)")] == [b"a"]
    engine.close()


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
@pytest.mark.parametrize("kind", ["fifo", "capped"])
def test_a_pop_inside_the_callers_transaction_comes_back_on_rollback(
    label, kind, request, tmp_path
):
    """Inside a transaction the routine is part of it: ROLLBACK returns the message."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    capacity = 8 if kind == "capped" else None
    spec = queues.create(engine, queues.make_spec("q", kind, capacity, False))
    messages.push(engine, spec, [b"a", b"b"])
    app = _my_app(target.schema or "", "READ COMMITTED", autocommit=True)
    app.begin()
    assert [bytes(r[-1]) for r in _my_call(app, "CALL q_pop(%s)", 1)] == [b"a"]
    app.rollback()
    assert [bytes(r[-1]) for r in _my_call(app, "CALL q_pop(%s)", 5)] == [b"a", b"b"]
    app.close()
    engine.close()


@pytest.mark.parametrize("kind", ["ring", "capped"])
def test_a_sqlite_statement_set_run_in_autocommit_is_one_transaction(kind, tmp_path):
    """An application running a multi-statement push in autocommit (outside docs/reliability.md's
    BEGIN IMMEDIATE) still gets one transaction: until its last statement, no other writer
    gets in between, and the message is there once it ends."""
    import sqlite3

    from qadmin.engines import open_engine

    path = tmp_path / "q.db"
    engine = open_engine(f"sqlite:///{path}")
    spec = queues.create(engine, queues.make_spec("q", kind, 8, False))
    statements = engine.hooks.section(spec, "push")
    assert len(statements) > 2
    app = sqlite3.connect(path, isolation_level=None)
    for statement in statements[:-1]:
        app.execute(statement, {"payload": b"a"}).fetchall()
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("BEGIN IMMEDIATE")
    app.execute(statements[-1]).fetchall()
    assert [m.payload for m in messages.pop(engine, spec, 5)] == [b"a"]
    for conn in (app, other):
        conn.close()
    engine.close()


def test_a_postgres_ring_refuses_a_null_payload_before_taking_a_number(request, tmp_path):
    """Every other kind's payload column is NOT NULL; a ring slot's is not (a free slot), so
    its push and push_many refuse NULL themselves, and no number is used (no hole)."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("r", "ring", 8, False))
    with psycopg.connect(PG_ADMIN, autocommit=True) as app:
        app.execute(f"SET search_path TO {target.schema}")
        for call in (
            "SELECT * FROM r_push(NULL)",
            "SELECT * FROM r_push_many(ARRAY['\\x61'::bytea, NULL])",
        ):
            with pytest.raises(psycopg.errors.NotNullViolation, match="NULL"):
                app.execute(call)
        app.execute("SELECT * FROM r_push('\\x62'::bytea)")
        assert [(r[0], bytes(r[2])) for r in app.execute("SELECT * FROM r_pop(5)")] == [
            (0, b"b")
        ]  # number 0: none was used
    engine.close()


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
@pytest.mark.parametrize("batch", ['["YQ==", null]', '["YQ==", "!!not base64"]'])
def test_a_mysql_ring_refuses_a_null_or_bad_payload_before_taking_a_number(
    label, batch, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("r", "ring", 8, False))
    app = _my_app(target.schema or "", "READ COMMITTED", autocommit=True)
    with pytest.raises(pymysql.err.MySQLError, match="NULL"):
        _my_call(app, "CALL r_push(%s)", None)
    with pytest.raises(pymysql.err.MySQLError, match="NULL or not base64"):
        _my_call(app, "CALL r_push_many(%s)", batch)
    _my_call(app, "CALL r_push(%s)", b"b")
    assert [bytes(r[-1]) for r in _my_call(app, "CALL r_pop(%s)", 5)] == [b"b"]
    app.close()
    engine.close()


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
@pytest.mark.parametrize("kind", ["fifo", "capped", "claim", "pending", "ring"])
def test_a_mysql_push_many_refuses_a_batch_that_is_not_a_json_array(label, kind, request, tmp_path):
    """An application's JSON object, scalar or broken text is refused, not read as an empty
    batch (JSON_TABLE finds no rows in it: the caller would be told nothing was pushed)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    capacity = 8 if kind in ("capped", "ring") else None
    spec = queues.create(engine, queues.make_spec("q", kind, capacity, False))
    app = _my_app(target.schema or "", "READ COMMITTED", autocommit=True)
    call = "CALL q_push_many(%s, NULL)" if kind == "pending" else "CALL q_push_many(%s)"
    for batch in ('{"a": "YQ=="}', "true", "not json", None):
        with pytest.raises(pymysql.err.MySQLError, match="not a JSON array"):
            _my_call(app, call, batch)
    for batch in ('["YQ==", true]', '["YQ==", 1234]', '["YQ==", ["YQ=="]]'):
        with pytest.raises(pymysql.err.MySQLError, match="not a base64 string"):
            _my_call(app, call, batch)
    assert len(_my_call(app, call, '["YQ==", "Yg=="]')) == 2
    assert [m.payload for m in messages.peek(engine, spec, 5)] == [b"a", b"b"]
    app.close()
    engine.close()


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_a_failed_routine_leaves_no_fresh_flag_in_the_session(label, request, tmp_path):
    """A convert's gate tells the ring routine it calls that its own transaction is READ
    COMMITTED with @qadmin_fresh, reset after the call; a call that failed skipped the reset,
    and the flag then let the session's next REPEATABLE READ ring push past its guard. Every
    routine's error handler clears it."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("r", "ring", 8, False))
    app = _my_app(target.schema or "", "READ COMMITTED", autocommit=True)
    _my_call(app, "SET @qadmin_fresh = 1")  # as a gate sets it before calling the ring's push
    with pytest.raises(pymysql.err.MySQLError, match="NULL"):
        _my_call(app, "CALL r_push(%s)", None)
    assert _my_call(app, "SELECT @qadmin_fresh") == [(None,)]
    app.close()
    engine.close()


def _pg_pop(schema: str, args: str) -> list[tuple]:
    """An application's ``SELECT * FROM q_pop(...)`` on PostgreSQL."""
    with psycopg.connect(PG_ADMIN, autocommit=True) as app:
        app.execute(f"SET search_path TO {schema}")
        app.execute("SET statement_timeout = '10s'")  # a pop that spins fails, never hangs
        return app.execute(f"SELECT * FROM q_pop({args})").fetchall()


def _my_pop(schema: str, args: str) -> list[tuple]:
    """An application's ``CALL q_pop(...)`` on MySQL/MariaDB, every result set read."""
    app = _my_app(schema, "READ COMMITTED", autocommit=True)
    try:
        return _my_call(app, f"CALL q_pop({args})")
    finally:
        app.close()


@pytest.mark.parametrize(("label", "pop"), [("postgresql", _pg_pop), ("mariadb", _my_pop)])
@pytest.mark.parametrize(
    ("kind", "strict"),
    [
        ("fifo", False),
        ("claim", False),
        ("pending", False),
        ("ring", False),
        ("fifo", True),
        ("lifo", True),
    ],
)
def test_a_pop_of_a_null_or_negative_count_takes_nothing(
    label, pop, kind, strict, request, tmp_path
):
    """An unset variable in an application (NULL) or a negative count must not drain the
    queue: PostgreSQL reads LIMIT NULL, and MariaDB LIMIT -1, as no limit at all. A strict
    queue's PostgreSQL pop looped for ever on such a count (a tester's consumers spun 4
    minutes at 20 % CPU each)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    capacity = 8 if kind == "ring" else None
    spec = queues.create(engine, queues.make_spec("q", kind, capacity, strict))
    messages.push(engine, spec, [b"a", b"b", b"c"])
    worker = ", 'w'" if kind == "claim" else ""
    for count in ("NULL", "-1", "0"):
        got = pop(target.schema or "", f"{count}{worker}")
        assert got == [], (count, got)
    left = sorted(m.payload for m in messages.pop(engine, spec, 10))
    assert left == [b"a", b"b", b"c"]
    engine.close()


@pytest.mark.parametrize(("label", "pop"), [("postgresql", _pg_pop), ("mariadb", _my_pop)])
@pytest.mark.parametrize(
    ("kind", "strict", "order"),
    [
        ("fifo", False, "old"),
        ("lifo", False, "new"),
        ("lifo", True, "new"),
        ("claim", False, "old"),
        ("pending", False, "old"),
        ("capped", False, "old"),
    ],
)
def test_an_application_batch_pop_comes_in_the_kinds_order(
    label, pop, kind, strict, order, request, tmp_path
):
    """performance.md: a batch is served in the kind's order, fifo oldest first, lifo newest
    first. PostgreSQL's routines returned the DELETE's rows as it met them: a lifo batch
    oldest first, a fifo batch out of order while producers pushed."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    capacity = 100 if kind == "capped" else None
    spec = queues.create(engine, queues.make_spec("q", kind, capacity, strict))
    sent = [b"m%02d" % n for n in range(12)]
    messages.push(engine, spec, sent)
    worker = ", 'w'" if kind == "claim" else ""
    got = [bytes(row[-1]) for row in pop(target.schema or "", f"12{worker}")]
    assert got == (sent if order == "old" else sent[::-1]), got
    engine.close()


@pytest.mark.parametrize("label", ["mariadb", "mysql8"])
def test_a_full_mysql_ring_refuses_a_push_with_an_empty_result_set(label, request, tmp_path):
    """docs/kinds.md: a refused push returns an empty result set with the push's columns, so an
    application's fetch reads the same shape whether or not the message went in (it returned
    no result set at all)."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("r", "ring", 2, False))
    app = _my_app(target.schema or "", "READ COMMITTED", autocommit=True)
    _my_call(app, "CALL r_push_many(%s)", '["YQ==", "Yg=="]')
    with app.cursor() as cur:
        cur.execute("CALL r_push(%s)", (b"c",))
        assert [d[0] for d in cur.description] == ["id", "enqueued_at"]
        assert cur.fetchall() == ()
        while cur.nextset():
            pass
    assert [bytes(r[-1]) for r in _my_call(app, "CALL r_pop(%s)", 5)] == [b"a", b"b"]
    app.close()
    engine.close()
