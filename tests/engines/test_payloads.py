"""Payloads go in and come out byte for byte on every engine: empty, 1 MiB, binary with NUL
bytes, and text from every Unicode plane."""

from __future__ import annotations

import os

import pytest

from qadmin.ops import messages, queues
from tests.conftest import make_target

LABELS = ["sqlite", "postgresql", "mariadb"]
# One character from each of the 17 planes (no surrogates: they are not characters).
EVERY_PLANE = "".join(chr(plane * 0x10000 + 0x41) for plane in range(17)) + "\u00e9\u4e2d"
PAYLOADS = [
    b"",
    os.urandom(1 << 20),
    b"\x00" * 10 + b"\xff\xfe\x00binary\x00",
    EVERY_PLANE.encode("utf-8"),
]


@pytest.mark.parametrize("kind", ["fifo", "claim", "ring"])
@pytest.mark.parametrize("label", LABELS)
def test_payloads_round_trip_byte_for_byte(label, kind, request, tmp_path):
    engine = make_target(label, request, tmp_path).engine()
    capacity = 8 if kind == "ring" else None
    spec = queues.create(engine, queues.make_spec("pay_q", kind, capacity, False))
    messages.push(engine, spec, PAYLOADS)
    got = messages.pop(engine, spec, count=len(PAYLOADS))
    assert [m.payload for m in got] == PAYLOADS
