"""Message commands: push, pop, peek, ack, fail."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

import click

from qadmin import catalog, interrupts, render
from qadmin.cli import output, progress
from qadmin.cli.options import (
    ATTEMPT,
    MESSAGE_ID,
    Duration,
    Target,
    connection_options,
    count_option,
    format_option,
)
from qadmin.diagnostics import run
from qadmin.diagnostics.model import Options
from qadmin.errors import (
    EXIT_UNDELIVERED,
    Interrupted,
    QadminError,
    QueueEmpty,
    QueueFull,
    UsageError,
)
from qadmin.kinds import QueueSpec
from qadmin.ops import messages
from qadmin.profiles.resolve import Resolved, from_spec

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# A push this large takes seconds: show it runs (on a terminal).
BAR_FROM = 10_000
# What peek shows of a message's claim, on kinds with claims.
CLAIM_STATE = ("processing_started_at", "claimed_by", "attempts", "last_error")


def _read(stream: BinaryIO) -> bytes:
    data = stream.read(MAX_MESSAGE_BYTES + 1)
    if len(data) > MAX_MESSAGE_BYTES:
        raise UsageError(f"input is larger than {MAX_MESSAGE_BYTES // (1024 * 1024)} MiB")
    return data


def _text(text: str, position: int) -> bytes:
    """Message arguments are text: bytes that are not UTF-8 are refused, not guessed at."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"message argument {position} is not valid UTF-8 text; "
            "push binary data with --file PATH or on stdin"
        ) from None


def _payloads(
    texts: tuple[str, ...], file: str | None, lines: bool, allow_empty: bool = False
) -> list[bytes]:
    if texts and file:
        raise UsageError("give messages as arguments or with --file, not both")
    if texts:
        if not allow_empty and any(not t or t.isspace() for t in texts):
            raise UsageError("an empty or blank MESSAGE: nothing pushed (--allow-empty pushes it)")
        return [_text(t, i) for i, t in enumerate(texts, 1)]
    if file and file != "-":
        try:
            with open(file, "rb") as fh:
                data = _read(fh)
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror}") from None
    else:
        if sys.stdin.isatty() and not file:
            raise UsageError("nothing to push: give a MESSAGE, --file F, or pipe into stdin")
        data = _read(sys.stdin.buffer)
    if lines:  # blank (whitespace-only) lines are not messages; CRLF ends a line too
        split = (line.removesuffix(b"\r") for line in data.split(b"\n"))
        return [line for line in split if line and not line.isspace()]
    if (not data or data.isspace()) and not allow_empty:
        # `push q </dev/null` in a script whose producer died: nothing to send, not a message.
        what = "empty" if not data else "blank (whitespace only)"
        raise UsageError(f"{file or 'stdin'} is {what}: nothing pushed (--allow-empty pushes it)")
    return [data]


def _due(due: datetime | None, delay: float | None) -> datetime | None:
    if due is not None and delay is not None:
        raise UsageError("give --due or --delay, not both")
    if delay is not None:
        return datetime.now(UTC) + timedelta(seconds=delay)
    if due is not None:
        return due.replace(tzinfo=UTC) if due.tzinfo is None else due
    return None


def _columns(spec: QueueSpec) -> list[str]:
    return ["id", "enqueued_at", *spec.info.columns, "payload"]


@click.command()
@click.argument("name")
@click.argument("message", nargs=-1)
@click.option("--file", "-f", metavar="PATH", help="Read the message from a file ('-': stdin).")
@click.option("--lines", is_flag=True, help="One message per input line (file or stdin).")
@click.option("--allow-empty", is_flag=True, help="Push empty or blank input as one message.")
@click.option(
    "--due",
    type=click.DateTime(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"]),
    help="Pending queues: due time, UTC unless an offset is given.",
)
@click.option(
    "--delay",
    type=Duration(fractional=True, high=10 * 365 * 86400),
    metavar="DURATION",
    help="Pending queues: due this many seconds from now.",
)
@connection_options
@format_option
def push(
    name: str,
    message: tuple[str, ...],
    file: str | None,
    lines: bool,
    allow_empty: bool,
    due: datetime | None,
    delay: float | None,
    target: Target,
    fmt: str | None,
) -> None:
    """Push MESSAGE(s), a file, or stdin onto queue NAME (binary-safe)."""
    payloads = _payloads(message, file, lines, allow_empty)
    when = _due(due, delay)
    if not payloads:
        raise UsageError(
            "nothing to push: the input has no lines, or only blank ones (--lines skips those)"
        )
    engine = target.engine()
    used: list[QueueSpec] = []

    def push_to(spec: QueueSpec) -> list[messages.Pushed]:
        used.append(spec)
        # One transaction cannot report how far it got: a large push shows a running bar.
        bar = (
            progress.bar(f"pushing {len(payloads):,} messages")
            if len(payloads) >= BAR_FROM
            else nullcontext()
        )
        with bar:
            return messages.push(engine, spec, payloads, when)

    output.if_reader_leaves(EXIT_UNDELIVERED)  # the ids of what went in are its printout
    try:
        pushed = messages.on_queue(engine, name, push_to)
    except QadminError as stopped:  # a full ring, or an error after earlier chunks went in
        if used and (stopped.pushed or isinstance(stopped, QueueFull)):
            render.rows(stopped.pushed, _pushed_columns(used[-1]), fmt)
        raise
    try:
        render.rows(pushed, _pushed_columns(used[-1]), fmt)
    except KeyboardInterrupt:  # all went in: only the list of their ids was cut short
        raise Interrupted(
            f"pushed {len(pushed):,} of {len(payloads):,} (committed, all of them); "
            "the list of their ids was cut short"
        ) from None


def _pushed_columns(spec: QueueSpec) -> list[str]:
    columns = ["id", "enqueued_at"]
    if spec.info.due:
        columns.append("due_at")
    if spec.info.overwrites:
        columns.append("overwritten_id")
    return columns


@click.command()
@click.argument("name")
@count_option(1, "Pop up to this many messages in one transaction.")
@click.option(
    "--wait",
    "wait_s",
    type=Duration(fractional=True, high=86400),
    default=0.0,
    metavar="DURATION",
    help="Wait this long for a message to arrive.",
)
@click.option(
    "--worker",
    metavar="LABEL",
    help="Claim queues: who claims (default host:pid), shown for stale claims.",
)
@click.option("--raw", is_flag=True, help="Write the payload bytes alone to stdout (count 1).")
@connection_options
@format_option
def pop(
    name: str,
    count: int,
    wait_s: float,
    worker: str | None,
    raw: bool,
    target: Target,
    fmt: str | None,
) -> None:
    """Take messages off queue NAME (claim queues: claim them). Exit 3 when empty."""
    if raw and count != 1:
        raise UsageError("--raw writes one payload; use it with --count 1")
    engine = target.engine()
    used: list[QueueSpec] = []
    # From the first message written until the pop has committed, a stop (Ctrl-C, SIGTERM,
    # SIGHUP) is held: the output stops after the message being written, the pop commits
    # those written and puts the rest back, then the stop is said (docs/cli.md "Delivery").
    holding = ExitStack()
    held: list[interrupts.Held] = []
    written: list[int] = []

    def stopped() -> bool:
        return held[0].signum is not None

    def ending() -> bool:
        """Stop writing: a stop is held, or the server ended the pop's session (its commit
        will fail: nothing more is written that would be delivered again)."""
        return stopped() or engine.session_lost()

    def pop_from(spec: QueueSpec) -> messages.Delivery:
        used.append(spec)
        columns = _columns(spec)

        def deliver(rows: list[messages.Message]) -> int:
            if not held:
                held.append(holding.enter_context(interrupts.deferred()))
            written.append(0)
            if raw:
                written[-1] = output.deliver("", [rows[0].payload], ending)
            elif (pieces := render.row_texts(rows, columns, fmt)) is None:
                # the table format is drawn whole: all or nothing
                draw = lambda: render.rows(rows, columns, fmt)  # noqa: E731
                written[-1] = output.deliver_all(draw, len(rows))
            else:
                written[-1] = output.deliver(*pieces, ending)
            return written[-1]

        return messages.pop_delivering(engine, spec, count, deliver, wait_s, worker)

    try:
        with holding:
            done = messages.on_queue(engine, name, pop_from)
    except QueueEmpty:
        if not raw:
            render.rows([], _columns(used[-1]), fmt)
        raise
    except (QadminError, KeyboardInterrupt) as exc:
        if written and written[-1]:
            # The transaction did not commit: what was written is still in the queue.
            said = (
                f"the {written[-1]} messages written were not removed from the queue "
                "and will be delivered again"
            )
            if isinstance(exc, KeyboardInterrupt):  # stopped twice: at once
                raise Interrupted(
                    f"stopped twice, the commit in doubt: {said} if it did not commit"
                ) from None
            exc.args = (f"{exc}; {said}",)
        raise
    popped, delivered = len(done.rows), done.delivered
    if held and stopped():
        stays = (
            f"{popped - delivered} stay queued"
            if done.exact
            else _rest(used[-1], engine.hooks.has_routines, done)
        )
        raise Interrupted(f"delivered {delivered} of {popped}; {stays}")
    if delivered < popped:
        raise output.Undelivered(
            f"output failed ({output.reason()}): delivered {delivered} of {popped}; "
            f"{_rest(used[-1], engine.hooks.has_routines, done)}"
        )


def _rest(spec: QueueSpec, numbered: bool, done: messages.Delivery) -> str:
    """Where the undelivered messages are. A ring's rolled-back pop leaves its numbers
    behind (on engines with sequences): repair parks those messages, then they are served."""
    back = f"all {len(done.rows)} stay, the {done.delivered} delivered too (served again)"
    if spec.info.ring and numbered:
        what = "the rest" if done.exact else back
        return f"{what} come back once 'qadmin repair {spec.name} --yes' parks them"
    if not done.exact:
        return f"{back}: the queue could not take back exactly the undelivered"
    if spec.info.claims:
        return "the rest stay in the queue (their claims released)"
    return "the rest stay in the queue"


@click.command()
@click.argument("name")
@count_option(10, "Show up to this many messages.")
@connection_options
@format_option
def peek(name: str, count: int, target: Target, fmt: str | None) -> None:
    """Show the next messages of queue NAME without taking them."""
    engine = target.engine()
    used: list[QueueSpec] = []

    def peek_at(spec: QueueSpec) -> list[messages.Message]:
        used.append(spec)
        # A look, as inspect's parts: a lock is waited for 1 s, then its holder named.
        ctx = run.context(engine, Resolved(from_spec(spec), spec), Options())
        return run.bounded(ctx, lambda: messages.peek(engine, spec, count))

    shown = run.catalog_bounded(engine, lambda: messages.on_queue(engine, name, peek_at))
    spec = used[-1]
    columns = _columns(spec)
    if spec.info.claims:
        columns = ["id", "enqueued_at", *CLAIM_STATE, "payload"]
    render.rows(shown, columns, fmt)


def attempt_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--attempt N``: the fencing token pop returned (its ``attempts``)."""
    return click.option(
        "--attempt",
        type=ATTEMPT,
        default=None,
        help="The attempts value pop returned: act only if the message is still at it.",
    )(func)


@click.command()
@click.argument("name")
@click.argument("message_id", type=MESSAGE_ID)
@attempt_option
@connection_options
@format_option
def ack(name: str, message_id: int, attempt: int | None, target: Target, fmt: str | None) -> None:
    """Claim queues: delete claimed message MESSAGE_ID after it was processed."""
    engine = target.engine()
    done = messages.ack(engine, catalog.get(engine, name), message_id, attempt)
    render.rows([done], ["id"], fmt)


@click.command()
@click.argument("name")
@click.argument("message_id", type=MESSAGE_ID)
@click.option("--error", "error_text", required=True, help="What went wrong (stored).")
@click.option("--retry", is_flag=True, help="Release the claim so another consumer retries.")
@attempt_option
@connection_options
@format_option
def fail(
    name: str,
    message_id: int,
    error_text: str,
    retry: bool,
    attempt: int | None,
    target: Target,
    fmt: str | None,
) -> None:
    """Claim queues: record that processing MESSAGE_ID failed."""
    try:
        error_text.encode("utf-8")
    except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8: not guessed at
        raise UsageError("fail: --error is not valid UTF-8 text") from None
    engine = target.engine()
    done = messages.fail(engine, catalog.get(engine, name), message_id, error_text, retry, attempt)
    render.rows([done], ["id", "attempts", "dead"], fmt)


COMMANDS = [push, pop, peek, ack, fail]
