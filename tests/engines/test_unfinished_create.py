"""A queue left ``creating`` by a killed create is a line of status and check --all (UNKNOWN,
with its state and the fix qadmin prints for it), never left out of the server's picture."""

from __future__ import annotations

import dataclasses
import json

import pytest

from qadmin import catalog
from qadmin.ops import queues
from tests.conftest import make_target
from tests.helpers import invoke_on

FIX = "run the same 'qadmin create' again to finish it, or 'qadmin drop kq'"


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_status_and_check_all_list_a_queue_left_creating(label, request, tmp_path):
    target = make_target(label, request, tmp_path)
    engine = target.engine()
    try:
        queues.create(engine, queues.make_spec("fine", "fifo", None, False))
        # A create killed right after its first write: the catalog entry, no objects yet.
        spec = queues.make_spec("kq", "fifo", None, False)
        catalog.record(engine, dataclasses.replace(spec, state=catalog.CREATING))

        one = invoke_on(target, "check", "kq")
        assert one.exit_code == 3 and FIX in one.stdout + one.stderr

        # status reads the whole server (other tests' schemas too): this test's schema only.
        status = invoke_on(target, "status", "--format", "json")
        [home] = {
            line["schema"] for line in json.loads(status.stdout)["lines"] if line["table"] == "kq"
        }
        mine = [line for line in json.loads(status.stdout)["lines"] if line["schema"] == home]
        lines = {line["table"]: line for line in mine}
        assert set(lines) == {"fine", "kq"}, status.stdout
        assert lines["kq"]["status"] == "UNKNOWN" and "state creating" in lines["kq"]["error"]
        # fine is judged (OK, or WARNING from a shared server's own state: purge lag)
        assert FIX in lines["kq"]["error"] and lines["fine"]["status"] in ("OK", "WARNING")

        every = invoke_on(target, "check", "--all", "--format", "json")
        verdicts = {
            line["name"].removeprefix(f"{home}."): line
            for line in json.loads(every.stdout)["lines"]
            if line["name"].startswith(f"{home}.")
        }
        assert set(verdicts) == {"fine", "kq"}, every.stdout
        assert verdicts["kq"]["status"] == "UNKNOWN" and FIX in verdicts["kq"]["summary"]
        plain = invoke_on(target, "check", "--all")
        assert f"UNKNOWN {home}.kq: not read: state creating: queue kq" in plain.stdout
    finally:
        engine.close()


@pytest.mark.parametrize("label", ["sqlite", "postgresql", "mariadb"])
def test_a_queue_dropped_while_status_runs_is_left_out_not_unknown(label, request, tmp_path):
    """A tester dropped queues while status ran: on SQLite a queue dropped after status
    listed it and before it read it was an UNKNOWN line ("no such table"), exit 3, a page for
    nothing. Now a queue the catalog no longer lists is left out on every engine."""
    from qadmin.ops import status as status_ops

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    for name in ("sa_q", "sb_q"):
        queues.create(engine, queues.make_spec(name, "claim", None, False))
    dropper = target.engine()

    def drop_one(items):  # after status listed the queues, before it reads them
        queues.drop(dropper, catalog.get(dropper, "sb_q"))
        return items

    found = status_ops.gather(engine, {}, order=drop_one, schema=engine.schema)
    mine = [line for line in found.lines if line.table in ("sa_q", "sb_q")]
    assert [line.table for line in mine] == ["sa_q"] and mine[0].error is None, mine
    dropper.close()
    engine.close()
