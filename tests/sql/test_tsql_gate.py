"""Every T-SQL statement qadmin can send to SQL Server passes the gate; known-bad ones fail."""

from __future__ import annotations

import pytest

from qadmin import sqlfiles
from qadmin.engines import Timeouts, open_engine
from qadmin.engines.base import Engine
from qadmin.kinds import KINDS, Kind, QueueSpec
from qadmin.ops import pause
from tests.sql.tsql_gate import problems

PARAMS = {
    "sibling": 0,
    "payload": b"x",
    "batch": '["78"]',
    "count": 1,
    "due_at": None,
    "worker": "w",
    "id": 1,
    "lo": 1,
    "hi": 2**63 - 1,
    "error": "e",
    "retry": False,
    "attempt": 1,
    "name": "q",
    "kind": "fifo",
    "capacity": None,
    "options": "{}",
    "qadmin_schema": 1,
    "schema": "dbo",
    "table": "orders_q",
    "limit": 100,
    "stale_s": 300,
    "max_pages": 100000,
    "older_s": 60,
    "newer_s": 60,
    "has_older": 1,
    "has_newer": 0,
    "has_error": 1,
    "pattern": "%time!_out%",
    "after": 0,
    "upto": 2**63 - 1,
    "queue": "q",
    "object_type": "table",
    "position": 0,
    "prefix": "q!_%",
    "preview": 64,
    "names": "qadmin_queues,oban_jobs",
    "at": "2026-01-01T00:00:00Z",
}


def _engine():
    return open_engine(
        "mssql://sa:secret@localhost:1433/qdb?driver=FreeTDS", schema="dbo", timeouts=Timeouts()
    )


def _specs() -> list[QueueSpec]:
    specs = []
    for kind in Kind:
        capacity = 1000 if KINDS[kind].needs_capacity else None
        for strict in [False, True] if KINDS[kind].allows_strict else [False]:
            specs.append(QueueSpec(name="orders_q", kind=kind, capacity=capacity, strict=strict))
    return specs


def every_statement() -> list[tuple[str, str]]:
    """(where, statement as sent) for everything the SQL Server engine can send."""
    engine = _engine()
    out: list[tuple[str, str]] = []
    for spec in _specs():
        template = engine.hooks.template(spec)
        for section in template.sections:
            for statement in engine.hooks.section(spec, section):
                sql, _ = engine.bind(statement, PARAMS)
                label = f"{spec.kind}{'-strict' if spec.strict else ''}:{section}"
                out.append((label, sql))
        # pause on a queue from before pause replaces its pop (CREATE OR ALTER PROCEDURE)
        for _, statement in pause.upgrade(engine, spec):
            out.append((f"{spec.kind}:pause_upgrade", engine.bind(statement, PARAMS)[0]))
    for section in engine.hooks.catalog().sections:
        for statement in engine.hooks.catalog_sql(section, "orders_q_push"):
            out.append((f"catalog:{section}", engine.bind(statement, PARAMS)[0]))
    for section, statements in sqlfiles.load("engine/mssql.sql").sections.items():
        rendered = (engine.hooks.render_text(s, {"mark": "qadmin_pop"}) for s in statements)
        out.extend((f"engine:{section}", engine.bind(s, PARAMS)[0]) for s in rendered)
    out.extend(("session", s) for s in engine.session_statements())
    out.extend(_profile_statements(engine))
    diagnostics = sqlfiles.sql_root() / "diagnostics" / "mssql"
    for path in sorted(diagnostics.glob("*.sql")):
        for statement in sqlfiles.load(f"diagnostics/mssql/{path.name}").sections.values():
            out.extend((f"diagnostics:{path.stem}", engine.bind(s, PARAMS)[0]) for s in statement)
    maintenance = sqlfiles.load("maintenance/mssql.sql")
    names = {"table": "orders_q", "index": "orders_q_pkey"}
    for section, statements in maintenance.sections.items():
        out.extend(
            (f"maintenance:{section}", engine.hooks.render_text(s, names)) for s in statements
        )
    return out


def _profile_statements(engine: Engine) -> list[tuple[str, str]]:
    """profile.sql as qadmin.profiles sends it: names are a table's checked columns, the
    keywords built from them (a state filter with a named queue and the due time, a select
    list, a release's SET and re-check); the expression sections are sent inside them, in
    the native and the epoch (``time_unit``) forms."""
    file = sqlfiles.load("queues/mssql/profile.sql")
    names = {"table": "jobs", "time_col": "created_at", "order_col": "id", "id_col": "id"}
    names.update(head_idx="jobs_head", queue_col="queue", col="run_at")
    names.update(hb_table="workers", hb_worker="id", hb_job="worker_id", hb_beat="last_beat")

    def part(section: str, column: str, epoch: bool = False) -> str:
        words = {"scale": "1000"} if epoch else {}
        text = file.statements(section + ("_epoch" if epoch else ""))[0]
        return engine.hooks.render_text(text, {**names, "col": column}, words)

    gone = engine.hooks.render_text(file.statements("session_gone")[0], {"sess": "claimed_session"})
    expressions = {"age", "due", "dead_worker", "session_gone"}
    out = []
    for epoch in (False, True):
        age = part("age", "claimed_at", epoch)
        due = part("due", "run_at", epoch)
        dead = part("dead_worker", "", epoch)
        words = {
            "filter": f"([status] = :v0 OR [status] = :v1) AND [queue] = :queue_name"
            f" AND ([run_at] IS NULL OR {due})",
            "columns": f"[id] AS id, [status] AS state, {age} AS claimed_for_s, NULL AS error",
            "assignments": "[status] = :release_state, [claimed_at] = NULL",
            "stale": f"{age} >= :stale_s AND {dead} AND {gone}",
            "age": part("age", "oldest_at", epoch),
            "instant": "[oldest_at]",
            "state": "[status]",
            "order": "[priority] DESC, [id]",
            "keys": "[priority] DESC, [id]",
            "where": " WHERE [status] = N'new'",
        }
        params = {**PARAMS, "v0": "new", "v1": "retry", "release_state": "new", "beat_s": 30}
        params.update(queue_name="orders", table_name="jobs", column="queue")
        sections = {s for s in file.sections if s.removesuffix("_epoch") not in expressions}
        for section in sorted(sections):
            for statement in file.statements(section):
                sql = engine.bind(engine.hooks.render_text(statement, names, words), params)[0]
                out.append((f"profile:{section}{':epoch' if epoch else ''}", sql))
    return out


STATEMENTS = every_statement()


def test_the_gate_sees_every_kind():
    labels = {label.split(":")[0] for label, _ in STATEMENTS}
    assert {k.value for k in Kind} <= labels
    assert len(STATEMENTS) > 60


@pytest.mark.parametrize("where,statement", STATEMENTS, ids=[w for w, _ in STATEMENTS])
def test_statement_is_valid_tsql(where, statement):
    assert problems(statement) == [], statement


KNOWN_BAD = [
    "SELECT id FROM dbo.q ORDER BY id LIMIT 1",
    "DELETE FROM dbo.q WHERE id = 1 RETURNING id",
    "INSERT INTO dbo.q (id) VALUES (1) ON CONFLICT DO NOTHING",
    "SELECT id::text FROM dbo.q",
    "SELECT id FROM dbo.q FOR UPDATE SKIP LOCKED",
    "SELECT TOP 1 id FROM dbo.q",
    "SELECT `id` FROM q",
    "SELECT nextval('dbo.q_seq')",
    "SELECT id FROM dbo.q WHERE name ILIKE 'a%'",
    "SELECT id FROM dbo.q WITH (READPASTX)",
    "CREATE PROCEDURE dbo.p AS BEGIN SELECT id FROM dbo.q LIMIT 1; END",
    "DELETE TOP(1) FROM dbo.q WITH (READPAST) OUTPUT deleted.id RETURNING id",
    "UPDATE dbo.q SET a = 1 FROM dbo.q q2 WHERE q2.id = 1 RETURNING *",
]


@pytest.mark.parametrize("statement", KNOWN_BAD)
def test_gate_rejects_foreign_sql(statement):
    assert problems(statement), statement


def test_gate_accepts_the_articles_own_dequeue():
    article = (
        "WITH cte AS (SELECT TOP (1) Payload FROM FifoQueue WITH (ROWLOCK, READPAST) "
        "ORDER BY Id) DELETE FROM cte OUTPUT deleted.Payload"
    )
    assert problems(article) == []
