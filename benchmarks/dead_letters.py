"""Dead-letter console throughput: redrive, redrive --to, discard (batches of 100, each one
transaction that locks each id by its key), and a filter picking 1 in 10 by error text.

Each run makes ``--messages`` dead messages in a claim queue of its own (pushed, popped and
failed through qadmin, max attempts 1), then times one operation over all of them; msg/s is
messages taken / elapsed. The figures bound a paced redrive's --rate from above.

    .venv/bin/python benchmarks/dead_letters.py [--messages 2000]
        [--engines postgresql,mariadb,sqlite]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from places import place

from qadmin.engines import Engine, Timeouts, open_engine
from qadmin.ops import dead, messages, queues


def _open(dsn: str, schema: str | None) -> Engine:
    return open_engine(dsn, schema, Timeouts(lock_ms=30_000, statement_ms=600_000))


def _dead(engine: Engine, count: int) -> Any:
    """A fresh claim queue with ``count`` dead messages, 1 in 10 dying of 'rare'."""
    with_name = f"d{time.monotonic_ns() % 10**9}"
    spec = queues.create(engine, queues.make_spec(with_name, "claim", None, False, False, 1))
    messages.push(engine, spec, [b"m%d" % n for n in range(count)])
    done = 0
    while done < count:
        for row in messages.pop(engine, spec, 500):
            error = "rare failure" if done % 10 == 0 else "common failure"
            messages.fail(engine, spec, row.id, error)
            done += 1
    return spec


def _time(work: Callable[[], dead.Outcome]) -> tuple[int, float]:
    started = time.perf_counter()
    result = work()
    taken = result.count
    return taken, time.perf_counter() - started


Case = tuple[str, Callable[[Any, Any], dead.Outcome]]


def _cases(engine: Engine) -> list[Case]:
    """(label, run(spec, other)): each operation over every dead message of ``spec``."""
    rare = dead.Filter(error="rare")
    return [
        ("redrive --all", lambda s, o: dead.redrive(engine, s, None)),
        ("redrive --all --to fifo", lambda s, o: dead.redrive(engine, s, None, to=o)),
        ("discard --all", lambda s, o: dead.discard(engine, s, None)),
        ("discard --error rare (1/10)", lambda s, o: dead.discard(engine, s, None, picked=rare)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--engines", default="postgresql,mariadb,sqlite")
    args = parser.parse_args()
    print(f"{'engine':<11} {'operation':<28} {'taken':>6} {'seconds':>8} {'msg/s':>8}")
    for name in args.engines.split(","):
        dsn, schema, drop = place(name)
        engine = _open(dsn, schema)
        try:
            cases = _cases(engine)
            for label, run in cases:
                spec = _dead(engine, args.messages)
                other = queues.create(
                    engine, queues.make_spec(spec.name + "_to", "fifo", None, False)
                )
                taken, seconds = _time(lambda: run(spec, other))  # noqa: B023
                print(f"{name:<11} {label:<28} {taken:>6} {seconds:>8.2f} {taken / seconds:>8.0f}")
        finally:
            engine.close()
            drop()


if __name__ == "__main__":
    main()
