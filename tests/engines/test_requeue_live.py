"""requeue judges a claim by its age: a consumer still connected may have lost track of it (a
pooled connection outlives its worker). --skip-live leaves the claims of sessions still
connected where the engine can tell (PostgreSQL, MariaDB/MySQL), says how many it skipped and
why, and --dry-run shows the same."""

from __future__ import annotations

import json
import time

import pytest

from qadmin.diagnostics.entries import claims as claims_part
from qadmin.ops import dead, messages, queues
from tests.conftest import make_target
from tests.helpers import invoke_on

SERVERS = ["postgresql", "mariadb", "mysql8"]


def _claim_queue(engine, name: str, max_attempts: int | None = None):
    return queues.create(engine, queues.make_spec(name, "claim", None, False, False, max_attempts))


def _age_claims(engine, spec) -> None:
    """Every claim an hour old, so --stale-after 60 judges it stale without waiting."""
    hour = "INTERVAL 1 HOUR" if engine.base_dialect == "mysql" else "interval '1 hour'"
    engine.run(
        [
            engine.hooks.render(
                "UPDATE {table} SET processing_started_at = processing_started_at - "
                + hour
                + " WHERE processing_started_at IS NOT NULL",
                spec,
            )
        ]
    )


def _until_gone(engine, spec, claim_id: int) -> None:
    """A closed session leaves the server's session list a moment after the client closes."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        stale = claims_part.measure(engine, spec, 60).stale
        if any(c["id"] == claim_id and c["session_alive"] is False for c in stale):
            return
        time.sleep(0.2)


def _json(result):
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("label", SERVERS)
def test_requeue_skip_live_keeps_the_claim_of_a_session_still_connected(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    slow, lost = target.engine(), target.engine()
    try:
        spec = _claim_queue(engine, "cl")
        messages.push(engine, spec, [b"slow", b"lost"])
        [held] = messages.pop(slow, spec, 1, worker="slow")  # stays connected
        [gone] = messages.pop(lost, spec, 1, worker="lost")
        lost.close()  # this consumer died
        _age_claims(engine, spec)
        _until_gone(engine, spec, gone.id)

        shown = invoke_on(target, "claims", "cl", "--stale-after", "60", "--format", "json")
        listed = _json(shown)
        assert "1 of these claims are held by sessions still connected" in shown.stderr
        alive = {c["id"]: c["session_alive"] for c in listed}
        assert alive == {held.id: True, gone.id: False}

        skip = ["--stale-after", "60", "--skip-live", "--format", "json"]
        dry = invoke_on(target, "requeue", "cl", *skip, "--dry-run")
        outcomes = {c["id"]: c["outcome"] for c in _json(dry)}
        assert outcomes == {held.id: "skipped", gone.id: "requeued"}
        assert "1 stale claims would be skipped" in dry.stderr
        assert "1 would be requeued, 0 would be dead" in dry.stderr
        plain = ["--stale-after", "60", "--format", "json"]
        dry_all = invoke_on(target, "requeue", "cl", *plain, "--dry-run")
        assert {c["id"]: c["outcome"] for c in _json(dry_all)} == {
            held.id: "requeued",
            gone.id: "requeued",
        }

        done = invoke_on(target, "requeue", "cl", *skip, "--yes")
        assert _json(done) == [{"id": gone.id, "outcome": "requeued"}]
        assert "1 stale claims skipped" in done.stderr
        assert "still connected" in done.stderr and "--skip-live" in done.stderr
        assert "1 requeued, 0 dead" in done.stderr
        # The slow consumer still holds its claim and its ack still counts.
        still = claims_part.measure(engine, spec, 60).stale
        assert [(c["id"], c["session_alive"]) for c in still] == [(held.id, True)]

        released = invoke_on(target, "requeue", "cl", *plain, "--yes")
        assert _json(released) == [{"id": held.id, "outcome": "requeued"}]
        assert "skipped" not in released.stderr
    finally:
        slow.close()
        engine.close()


@pytest.mark.parametrize("label", SERVERS)
def test_requeue_skip_live_does_not_kill_a_live_claim_at_its_last_attempt(label, request, tmp_path):
    """--skip-live guards the dead-letter path too: a live claim at max_attempts stays."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    slow = target.engine()
    try:
        spec = _claim_queue(engine, "last", max_attempts=1)
        messages.push(engine, spec, [b"m"])
        [held] = messages.pop(slow, spec, 1)
        _age_claims(engine, spec)
        assert claims_part.guards_sessions(engine, spec)
        kept = claims_part.requeue(engine, spec, 60, skip_live=True)
        assert (kept.requeued, kept.dead) == ([], [])
        assert dead.listing(engine, spec, 10) == []
        messages.ack(slow, spec, held.id, attempt=held.attempts)  # its ack counts
    finally:
        slow.close()
        engine.close()


@pytest.mark.parametrize("label", SERVERS)
def test_requeue_passes_a_claim_whose_row_is_locked(label, request, tmp_path):
    """A consumer's ack in progress (its transaction open on the row) is skipped, not waited
    for: the other stale claims are released at once (one locked row had failed the whole
    requeue with exit 8, so a cron requeue never released anything), and the next requeue
    takes the row if it is still stale."""
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    busy = target.engine()
    try:
        spec = _claim_queue(engine, "locked", max_attempts=5)
        messages.push(engine, spec, [b"acking", b"lost", b"lost too"])
        claimed = messages.pop(engine, spec, 3)
        _age_claims(engine, spec)
        acking = next(m for m in claimed if m.payload == b"acking")
        with busy.transaction() as execute:  # the consumer's ack, not yet committed
            execute(
                busy.hooks.render("UPDATE {table} SET claimed_by = 'acking' WHERE id = :id", spec),
                {"id": acking.id},
            )
            done = invoke_on(
                target, "requeue", "locked", "--stale-after", "60", "--yes", "--format", "json"
            )
            assert done.exit_code == 0, done.stderr
            released = {r["id"] for r in _json(done)}
            assert released == {m.id for m in claimed} - {acking.id}
        again = claims_part.requeue(engine, spec, 60)
        assert again.requeued == [acking.id]
    finally:
        busy.close()
        engine.close()


def test_a_requeue_blocked_by_a_table_lock_names_the_holder(request, tmp_path):
    """A lock on the whole table (the rows' own are passed) still stops a requeue: its exit-8
    line names the session holding it and how to end it, as a read-only command's does."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    holder = target.engine()
    try:
        spec = _claim_queue(engine, "tablelocked")
        messages.push(engine, spec, [b"m"])
        messages.pop(engine, spec, 1)
        _age_claims(engine, spec)
        pid = holder.query("SELECT pg_backend_pid() AS p")[0]["p"]
        with holder.transaction() as execute:
            execute(holder.hooks.render("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE", spec))
            done = invoke_on(
                target,
                "--lock-timeout",
                "300ms",
                "requeue",
                "tablelocked",
                "--stale-after",
                "60",
                "--yes",
            )
        assert done.exit_code == 8, done.stderr
        assert f"blocked by session {pid}" in done.stderr, done.stderr
        assert f"pg_terminate_backend({pid})" in done.stderr, done.stderr
    finally:
        holder.close()
        engine.close()
