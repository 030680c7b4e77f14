"""Producer and consumer processes for the concurrency tests, and the exactly-once check.

Each producer pushes uniquely named messages and records what the queue said (ids, and for a
capped queue the id each push overwrote); each consumer pops (claim queues: pops then acks) and
records what it got. ``reconcile`` then counts lost, duplicated and unexpected messages.
Everything runs in separate processes with their own connections, as real clients would.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qadmin import catalog
from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.errors import LockTimeout, QadminError, QueueEmpty, QueueFull
from qadmin.kinds import Kind
from qadmin.ops import messages

PUSH_BATCH = 100
POP_BATCH = 25
TRICKLE_S = 0.005
# SQLite has no routines: after a convert, a client holding the fifo's SQL fails on the ring's
# table (and nothing is written), reloads the queue from the catalog and tries again.
STALE = "no such column"


def _engine(dsn: str, schema: str | None) -> Engine:
    return open_engine(dsn, schema, Timeouts(lock_ms=30_000, statement_ms=120_000))


def produce(
    dsn: str,
    schema: str | None,
    queue: str,
    producer: int,
    count: int,
    out: str,
    push_batch: int | None = None,
    reload_stale: bool = False,
    stop: Any = None,
) -> None:
    """``count`` messages, and more until ``stop`` is set (an admin operation has ended): the
    operation meets traffic however fast this machine pushes. Past ``count`` one message goes
    in every few milliseconds, a trickle the consumers outpace: a flood would grow the backlog
    past what a shrink or convert accepts, on a machine whose consumers lag."""
    engine = _engine(dsn, schema)
    spec = catalog.get(engine, queue)
    batch = push_batch or (1 if spec.kind is Kind.RING else PUSH_BATCH)
    records: list[dict[str, Any]] = []
    refused = 0
    i = 0
    while i < count or (stop is not None and not stop.is_set()):
        size = min(batch, count - i) if i < count else 1
        if i >= count:
            time.sleep(TRICKLE_S)
        chunk = [f"p{producer}-{n}".encode() for n in range(i, i + size)]
        try:
            pushed = messages.push(engine, spec, chunk)
        except QueueFull as full:
            # A ring batch commits what went in before the refusal: keep it, retry the rest.
            refused += 1
            pushed = full.pushed
            time.sleep(0.002)
        except LockTimeout:
            time.sleep(0.002)
            continue
        except QadminError as exc:
            if not (reload_stale and STALE in str(exc)):
                raise
            spec = catalog.get(engine, queue)
            continue
        chunk = chunk[: len(pushed)]
        for payload, row in zip(chunk, pushed, strict=True):
            records.append(
                {
                    "payload": payload.decode(),
                    "id": row.id,
                    "overwritten_id": row.overwritten_id,
                }
            )
        i += len(chunk)
    Path(out).write_text(json.dumps(records))
    Path(out).with_suffix(".refused").write_text(str(refused))
    engine.close()


def consume(
    dsn: str, schema: str | None, queue: str, done: Any, out: str, reload_stale: bool = False
) -> None:
    engine = _engine(dsn, schema)
    spec = catalog.get(engine, queue)
    got: list[dict[str, Any]] = []
    idle_after_done = 0
    while True:
        try:
            rows = messages.pop(engine, spec, POP_BATCH)
        except QueueEmpty:
            if done.is_set():
                idle_after_done += 1
                if idle_after_done >= 3:
                    break
            time.sleep(0.01)
            continue
        except LockTimeout:
            continue
        except QadminError as exc:
            if not (reload_stale and STALE in str(exc)):
                raise
            spec = catalog.get(engine, queue)
            continue
        idle_after_done = 0
        for row in rows:
            if spec.kind is Kind.CLAIM:
                _ack(engine, spec, row.id)
            got.append({"payload": row.payload.decode(), "id": row.id})
    Path(out).write_text(json.dumps(got))
    engine.close()


def _ack(engine: Engine, spec: Any, message_id: int) -> None:
    """Ack as an application would: a deadlock or lock timeout rolled the ack back, so retry."""
    while True:
        try:
            messages.ack(engine, spec, message_id)
            return
        except LockTimeout:
            time.sleep(0.002)


@dataclass
class Outcome:
    pushed: int
    popped: int
    dropped: int
    lost: int
    duplicated: int
    unexpected: int
    leftover: int
    consumer_orders: list[list[dict[str, Any]]]
    # Whether producers were still running when the admin operation (``during``) finished.
    overlapped: bool | None = None
    # Pushes a ring or capped queue refused as full (the producer waited and tried again).
    refused: int = 0


def run(
    dsn: str,
    schema: str | None,
    queue: str,
    *,
    producers: int,
    consumers: int,
    messages_each: int,
    workdir: Path,
    during: Callable[[], Any] | None = None,
    push_batch: int | None = None,
    reload_stale: bool = False,
) -> Outcome:
    """Run the clients to the end; ``during`` (an admin operation) runs in this process once
    messages are flowing, while producers and consumers keep going (producers push at least
    ``messages_each`` each, and on until ``during`` has ended). ``reload_stale``: clients
    reload the queue when its SQL no longer fits its table (SQLite after a convert)."""
    # Fresh processes without pytest's open connections, forked from a server that imported
    # qadmin once (spawn paid the interpreter start and imports for each of the 8 clients).
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["tests.engines.load"])
    done = ctx.Event()
    stop = ctx.Event()  # producers go on past messages_each until ``during`` has ended
    if during is None:
        stop.set()
    prod_files = [workdir / f"prod-{p}.json" for p in range(producers)]
    cons_files = [workdir / f"cons-{c}.json" for c in range(consumers)]
    cons = [
        ctx.Process(target=consume, args=(dsn, schema, queue, done, str(f), reload_stale))
        for f in cons_files
    ]
    prods = [
        ctx.Process(
            target=produce,
            args=(dsn, schema, queue, p, messages_each, str(f), push_batch, reload_stale, stop),
        )
        for p, f in enumerate(prod_files)
    ]
    for proc in cons + prods:
        proc.start()
    overlapped = None
    if during is not None:
        time.sleep(1.0)
        try:
            during()
        finally:
            overlapped = any(p.is_alive() for p in prods)
            stop.set()
    for proc in prods:
        proc.join(timeout=600)
    done.set()
    for proc in cons:
        proc.join(timeout=600)
    for proc in prods + cons:
        if proc.is_alive():
            proc.kill()
        assert proc.exitcode == 0, f"worker {proc.name} failed with exit code {proc.exitcode}"
    pushed = [r for f in prod_files for r in json.loads(f.read_text())]
    orders = [json.loads(f.read_text()) for f in cons_files]
    engine = _engine(dsn, schema)
    leftover = messages.peek(engine, catalog.get(engine, queue), 10_000)
    engine.close()
    outcome = reconcile(pushed, orders, leftover)
    outcome.overlapped = overlapped
    outcome.refused = sum(int(f.with_suffix(".refused").read_text()) for f in prod_files)
    return outcome


def reconcile(
    pushed: list[dict[str, Any]],
    orders: list[list[dict[str, Any]]],
    leftover: list[messages.Message],
) -> Outcome:
    """Exactly-once accounting: every pushed message is popped, dropped (overwritten by a
    capped queue, which said so) or still in the queue; nothing else appears."""
    by_id = {r["id"]: r["payload"] for r in pushed}
    pushed_set = {r["payload"] for r in pushed}
    dropped = {by_id[r["overwritten_id"]] for r in pushed if r["overwritten_id"] is not None}
    popped = [r["payload"] for order in orders for r in order]
    popped_set = set(popped)
    left = {r.payload.decode() for r in leftover}
    return Outcome(
        pushed=len(pushed_set),
        popped=len(popped),
        dropped=len(dropped),
        lost=len(pushed_set - popped_set - dropped - left),
        duplicated=len(popped) - len(popped_set) + len(popped_set & dropped),
        unexpected=len(popped_set - pushed_set),
        leftover=len(left),
        consumer_orders=orders,
    )
