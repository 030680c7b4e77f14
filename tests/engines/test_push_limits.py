"""A push too big for one statement: chunks sized by bytes as well as by count (MariaDB refuses
a statement over its max_allowed_packet and drops the connection), a message no statement can
carry refused before anything is sent, and an error after earlier chunks went in saying how
many did (those chunks are committed: docs/commands.md, push)."""

from __future__ import annotations

import base64
import json

import pytest

from qadmin.ops import messages, queues
from tests.conftest import make_target
from tests.helpers import invoke


def _run(*args: str, input: bytes | None = None):
    result = invoke(*args, input=input)
    assert "Traceback" not in result.stderr
    return result


def _packet(engine) -> int:
    return int(engine.query("SELECT @@max_allowed_packet AS p")[0]["p"])


def test_a_batch_over_max_allowed_packet_goes_in_chunks_by_bytes(request, tmp_path):
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("big_q", "fifo", None, False))
    # 8 KiB lines, enough that one chunk of PUSH_CHUNK would pass the packet limit (base64)
    line = 8 * 1024
    count = max(_packet(engine) // line + 200, 600)
    sent = [b"%06d" % n + b"x" * (line - 6) for n in range(count)]
    pushed = messages.push(engine, spec, sent)
    assert len(pushed) == count
    got = messages.pop(engine, spec, count)
    assert [m.payload for m in got] == sent
    engine.close()


@pytest.mark.parametrize("kind", ["fifo", "ring"])
def test_a_message_over_half_max_allowed_packet_goes_in_alone(kind, request, tmp_path):
    # PyMySQL writes bytes as hex (twice their size): such a message takes the batch routine,
    # whose base64 is 4/3 of it, instead of failing as "cannot reach" (the server hangs up)
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("big_q", kind, 4 if kind == "ring" else None, False))
    payload = bytes(range(256)) * (_packet(engine) * 6 // 10 // 256)
    engine.close()
    dsn = ["--dsn", target.dsn]
    pushed = _run("push", "big_q", "--file", "-", *dsn, input=payload)
    assert pushed.exit_code == 0, pushed.stderr
    popped = _run("pop", "big_q", "--format", "json", *dsn)
    assert popped.exit_code == 0, popped.stderr
    [got] = json.loads(popped.stdout)
    assert got["encoding"] == "base64" and base64.b64decode(got["payload"]) == payload


@pytest.mark.parametrize("batch", [False, True], ids=["alone", "in-a-batch"])
def test_a_message_over_max_allowed_packet_is_refused_before_anything_is_sent(
    batch, request, tmp_path
):
    target = make_target("mariadb", request, tmp_path)
    engine = target.engine()
    queues.create(engine, queues.make_spec("big_q", "fifo", None, False))
    size = _packet(engine) + 1
    engine.close()
    dsn = ["--dsn", target.dsn]
    if batch:
        data = b"small\n" + b"y" * size + b"\nsmall\n"
        result = _run("push", "big_q", "--lines", "--file", "-", *dsn, input=data)
    else:
        result = _run("push", "big_q", "--file", "-", *dsn, input=b"z" * size)
    assert result.exit_code == 2, result.stderr
    line = result.stderr.strip()
    assert "\n" not in line and "too large" in line and "max_allowed_packet" in line
    assert ("message 2 " if batch else "message 1 ") in line
    depth = _run("size", "big_q", "--format", "json", *dsn)
    assert json.loads(depth.stdout)["depth"] == 0, "nothing was pushed"


def test_an_error_after_earlier_chunks_says_how_many_went_in(request, tmp_path):
    """A user's trigger refuses one message of the third chunk: the first two chunks stay
    committed, and the error line and the output say so."""
    target = make_target("postgresql", request, tmp_path)
    engine = target.engine()
    spec = queues.create(engine, queues.make_spec("poison_q", "fifo", None, False))
    table = engine.qualified(spec.name)
    function = engine.qualified("refuse_poison")
    engine.run(
        [
            f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.payload = 'poison'::bytea THEN RAISE EXCEPTION 'poisoned message'; END IF; "
            "RETURN NEW; END $$",
            f"CREATE TRIGGER refuse_poison BEFORE INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()",
        ]
    )
    engine.close()
    chunk = messages.PUSH_CHUNK
    lines = [f"m{n}" for n in range(3 * chunk)]
    lines[2 * chunk + 10] = "poison"
    data = ("\n".join(lines) + "\n").encode()
    dsn = ["--dsn", target.dsn, "--schema", target.schema]
    result = _run(
        "push", "poison_q", "--lines", "--file", "-", "--format", "json", *dsn, input=data
    )
    assert result.exit_code == 1, result.stderr
    line = result.stderr.strip()
    assert "\n" not in line and "poisoned message" in line
    assert f"pushed {2 * chunk:,} of {3 * chunk:,} before it" in line
    assert len(json.loads(result.stdout)) == 2 * chunk, "what went in is shown"
    depth = _run("size", "poison_q", "--format", "json", *dsn)
    assert json.loads(depth.stdout)["depth"] == 2 * chunk
