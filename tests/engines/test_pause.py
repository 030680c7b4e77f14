"""Pause and resume on every engine, seen by applications calling the installed routines with
the plain drivers (SQLite: running the template's statement sets): a paused queue's pops take
nothing, its pushes go on, a claim made before the pause can still be acked or failed, the
pause outlives the session that made it, and a queue from before pause is upgraded (or, on
MySQL 8, refused in one line)."""

from __future__ import annotations

import dataclasses
import threading

import psycopg
import pytest

from qadmin import catalog
from qadmin.errors import QueueEmpty, UsageError
from qadmin.kinds import PAUSABLE
from qadmin.ops import messages, pause, queues
from tests.conformance.callers import Caller, Mode, connect
from tests.conftest import ENGINES, PG_ADMIN, Target, make_target

AUTO = Mode("autocommit")
# (kind, capacity, watermark)
SHAPES = [
    ("heap", None, False),
    ("fifo", None, False),
    ("fifo", None, True),
    ("lifo", None, False),
    ("pending", None, False),
    ("capped", 50, False),
    ("claim", None, False),
    ("claim", None, True),
    ("ring", 50, False),
]


def _app(target: Target, queue: str, kind: str, mode: Mode = AUTO) -> Caller:
    base = "mysql" if target.label in ("mariadb", "mysql8") else target.label
    return connect(base, target.dsn, target.schema, mode, queue, kind)


def _popped(app: Caller, count: int = 10) -> list[bytes]:
    sink: list[dict] = []
    app.pop(count, "w", sink)
    return [bytes(r["payload"]) for r in sink if r.get("id") is not None]


@pytest.mark.parametrize("label", ENGINES)
@pytest.mark.parametrize(("kind", "capacity", "watermark"), SHAPES)
def test_a_paused_queue_pops_nothing_while_pushes_go_on(
    label, kind, capacity, watermark, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", kind, capacity, False, watermark))
    app = _app(target, "q", kind)
    app.push(b"a")
    done = pause.pause(engine, spec)
    assert done.changed and done.paused and done.paused_at and done.upgraded == []
    spec = catalog.get(engine, "q")
    app.push(b"b")  # pushes go on
    assert _popped(app) == []
    with pytest.raises(QueueEmpty, match="paused since"):
        messages.pop(engine, spec, 10)
    resumed = pause.resume(engine, spec)
    assert resumed.changed and not resumed.paused
    got = _popped(app)
    assert sorted(got) == [b"a", b"b"]
    app.close()
    engine.close()


@pytest.mark.parametrize("label", ENGINES)
def test_claims_made_before_the_pause_are_acked_and_failed_and_nothing_new_is_claimed(
    label, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "claim", None, False))
    app = _app(target, "q", "claim")
    for payload in (b"a", b"b", b"c"):
        app.push(payload)
    sink: list[dict] = []
    app.pop(2, "w", sink)
    first, second = (int(r["id"]) for r in sink)
    pause.pause(engine, spec)
    assert app.ack(first)
    assert app.fail(second, "boom", True)  # released for a retry, but not claimed again yet
    assert _popped(app) == []
    pause.resume(engine, catalog.get(engine, "q"))
    assert sorted(_popped(app)) == [b"b", b"c"]
    app.close()
    engine.close()


@pytest.mark.parametrize("label", ENGINES)
def test_the_pause_outlives_the_sessions_and_a_second_pause_keeps_its_time(
    label, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, False))
    messages.push(engine, spec, [b"a"])
    first = pause.pause(engine, spec)
    engine.close()
    again = target.engine()  # a new session, as after a restart of qadmin or of the app
    spec = catalog.get(again, "q")
    assert spec.paused_at == first.paused_at
    twice = pause.pause(again, spec)
    assert not twice.changed and twice.paused_at == first.paused_at
    app = _app(target, "q", "fifo")
    assert _popped(app) == []
    pause.resume(again, spec)
    assert not pause.resume(again, catalog.get(again, "q")).changed
    assert _popped(app) == [b"a"]
    app.close()
    again.close()


@pytest.mark.parametrize("label", ENGINES)
def test_dry_runs_change_nothing(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, False))
    plan = pause.pause(engine, spec, dry_run=True)
    assert plan.changed and plan.statements
    assert catalog.get(engine, "q").paused_at is None
    pause.pause(engine, spec)
    spec = catalog.get(engine, "q")
    assert pause.resume(engine, spec, dry_run=True).changed
    assert catalog.get(engine, "q").paused_at is not None
    engine.close()


def _old_queue(engine, spec) -> None:
    """Make ``spec`` look created by a qadmin from before pause: its pop routine without the
    pause check, its catalog entry without ``pausable``."""
    statements = [
        s
        for s, obj in catalog.planned(engine, spec, engine.hooks.section(spec, "create"))
        if obj is not None and obj[1] == spec.objects()["pop"]
    ]
    check = engine.hooks.render_text(
        engine.hooks.fragment("paused"), {**spec.objects(), "catalog": "qadmin_queues"}
    )
    old = [
        s.replace(check, "FALSE" if engine.base_dialect == "postgresql" else "1 = 0")
        for s in statements
    ]
    if engine.base_dialect == "postgresql":
        old = [s.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION") for s in old]
        engine.run(old)
    else:
        engine.run([f"DROP PROCEDURE {engine.qualified(spec.objects()['pop'])}"])
        engine.run(old)
    options = {k: v for k, v in spec.options.items() if k != PAUSABLE}
    catalog.set_options(engine, dataclasses.replace(spec, options=options))


@pytest.mark.parametrize("label", ["postgresql", "mariadb", "mysql8"])
def test_a_queue_from_before_pause_is_upgraded_where_the_engine_replaces_atomically(
    label, request, tmp_path
):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "claim", None, False))
    _old_queue(engine, spec)
    old = catalog.get(engine, "q")
    assert not old.pausable
    app = _app(target, "q", "claim")
    app.push(b"a")
    if label == "mysql8":
        with pytest.raises(UsageError, match="cannot replace a procedure"):
            pause.pause(engine, old)
        assert catalog.get(engine, "q").paused_at is None
        assert _popped(app) == [b"a"]
    else:
        done = pause.pause(engine, old)
        assert done.upgraded == ["q_pop"]
        assert catalog.get(engine, "q").pausable
        assert _popped(app) == []
        pause.resume(engine, catalog.get(engine, "q"))
        assert _popped(app) == [b"a"]
    app.close()
    engine.close()


def test_an_uncommitted_pause_blocks_no_push_or_pop_and_holds_from_its_commit(request, tmp_path):
    """PostgreSQL: the pop reads the catalog row without a lock, so a pause being written (its
    row locked) holds up nobody; calls that start after its commit take nothing."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("q", "fifo", None, False))
    app = _app(target, "q", "fifo")
    app.push(b"a")
    app.push(b"b")
    admin = psycopg.connect(PG_ADMIN, options=f"-c search_path={target.schema}")
    [statement] = catalog.mark_sql(engine, "pause")
    sql, args = engine.bind(statement, {"name": "q", "at": "2026-01-01T00:00:00Z"})
    admin.execute(sql, args)  # the pause, written and not committed
    popper = _app(target, "q", "fifo")
    app.conn.execute("SET statement_timeout = '5s'")
    popper.conn.execute("SET statement_timeout = '5s'")
    app.push(b"c")
    assert _popped(popper, 1) == [b"a"]
    admin.commit()
    assert _popped(popper, 5) == []
    app.close()
    popper.close()
    admin.close()
    engine.close()


def test_a_pop_already_running_when_the_pause_commits_completes(request, tmp_path):
    """PostgreSQL: a pop whose statement began before the pause committed takes its message
    (it waited on a row lock past its pause check); the next one takes nothing."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, True))  # strict: waits
    app = _app(target, "q", "fifo")
    app.push(b"a")
    app.push(b"b")
    holder = psycopg.connect(PG_ADMIN, options=f"-c search_path={target.schema}")
    holder.execute(f"SELECT id FROM {engine.qualified('q')} ORDER BY id LIMIT 1 FOR UPDATE")
    popper = _app(target, "q", "fifo")
    got: list[bytes] = []
    thread = threading.Thread(target=lambda: got.extend(_popped(popper, 1)))
    thread.start()
    watcher = psycopg.connect(PG_ADMIN, autocommit=True)
    pid = popper.conn.info.backend_pid
    while not watcher.execute(
        "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'", [pid]
    ).fetchone():
        thread.join(0.05)
    pause.pause(engine, spec)  # committed while the pop waits for the head row
    holder.rollback()
    thread.join(30)
    assert got == [b"a"]
    assert _popped(popper, 5) == []
    for conn in (holder, watcher):
        conn.close()
    popper.close()
    engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_a_paused_queue_converted_to_a_ring_stays_paused(label, request, tmp_path):
    from qadmin.ops import convert

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, False))
    messages.push(engine, spec, [b"a", b"b"])
    paused = pause.pause(engine, spec)
    convert.convert(engine, convert.source(engine, "q"), 100)
    ring = catalog.get(engine, "q")
    assert ring.kind.value == "ring" and ring.paused_at == paused.paused_at
    app = _app(target, "q", "ring")
    assert _popped(app) == []
    pause.resume(engine, ring)
    assert _popped(app) == [b"a", b"b"]
    app.close()
    engine.close()


def test_a_repeatable_read_transaction_sees_the_pause_from_its_next_transaction(request, tmp_path):
    """PostgreSQL: the pause check is a read of the catalog in the caller's snapshot, so a
    REPEATABLE READ transaction whose snapshot predates the pause still pops; its next
    transaction takes nothing (docs/kinds.md, Calls in flight)."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("q", "fifo", None, False))
    messages.push(engine, spec, [b"a", b"b", b"c"])
    app = psycopg.connect(PG_ADMIN, options=f"-c search_path={target.schema}")
    app.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    pop = "SELECT payload FROM q_pop(1)"
    assert [bytes(r[0]) for r in app.execute(pop).fetchall()] == [b"a"]  # snapshot taken
    pause.pause(engine, spec)
    assert [bytes(r[0]) for r in app.execute(pop).fetchall()] == [b"b"]
    app.commit()
    assert app.execute(pop).fetchall() == []
    app.rollback()
    app.close()
    engine.close()
