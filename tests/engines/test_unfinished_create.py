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
