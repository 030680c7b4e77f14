"""``qadmin demo``: the first thing to run, on the embedded SQLite file with no setup."""

from __future__ import annotations

import dataclasses

import click

from qadmin import catalog, render
from qadmin.cli.inspect import show
from qadmin.cli.options import Target, connection_options, report_format_option
from qadmin.diagnostics import run
from qadmin.errors import NotFound, UsageError, counted
from qadmin.kinds import Kind
from qadmin.ops import messages, queues

DEMO_QUEUE = "orders_q"
DEMO_MARK = "demo"  # in the catalog entry's options of the orders_q demo made
DEMO_KIND = Kind.FIFO


@click.command()
@click.option(
    "--messages",
    "n_messages",
    type=click.IntRange(1, 100_000),
    default=10,
    show_default=True,
    help="How many messages to push.",
)
@click.option(
    "--pop",
    "n_pop",
    type=click.IntRange(0, 100_000),
    default=3,
    show_default=True,
    help="How many of them to pop again.",
)
@connection_options
@report_format_option
def demo(n_messages: int, n_pop: int, target: Target, fmt: str | None) -> None:
    """Create orders_q (a fifo), push and pop some messages, then inspect it: on the embedded
    SQLite file unless --dsn or -c names another place (never QADMIN_DSN or the config's
    default, where a real orders_q may live). An orders_q demo did not make is refused."""
    engine = target.engine(create=True, embedded=True)
    try:
        spec = catalog.get(engine, DEMO_QUEUE)
    except NotFound:
        made = queues.make_spec(DEMO_QUEUE, DEMO_KIND.value, None, False)
        spec = queues.create(engine, dataclasses.replace(made, options={DEMO_MARK: True}))
        render.note(
            f"created {DEMO_KIND} queue {DEMO_QUEUE} in {engine.label} schema {engine.schema}"
        )
    if not spec.options.get(DEMO_MARK):  # someone's own orders_q: its messages are not ours
        elsewhere = (
            "give it a file of its own: --dsn sqlite:///PATH of a new file"
            if engine.hooks.file and target.dsn is None and target.connection is None
            else "run demo without --dsn or -c: it uses the embedded SQLite file"
        )
        raise UsageError(
            f"{DEMO_QUEUE} in {engine.label} schema {engine.schema} was not made by demo: demo "
            f"pushes and pops messages, so it leaves that queue alone ({elsewhere})"
        )
    payloads = [
        f'{{"order": {i}, "item": "widget-{i}"}}'.encode() for i in range(1, n_messages + 1)
    ]
    pushed = messages.push(engine, spec, payloads)
    ids = f"{pushed[0].id}..{pushed[-1].id}"
    render.note(f"pushed {counted(len(pushed), 'message')} (ids {ids})")
    if n_pop:
        popped = messages.pop(engine, spec, n_pop)
        render.note(f"popped {len(popped)}: ids {', '.join(str(r.id) for r in popped)}")
    show(run.inspect(engine, spec), fmt)


COMMANDS = [demo]
