"""Every command's name, module and first help paragraph, so ``qadmin --help`` lists the
commands without importing them (a few hundred milliseconds of imports on a slow server).

Generated from the commands themselves, after adding or re-wording a command:
``python -c 'from qadmin.cli import index; index.write()' && ruff format src/qadmin/cli/index.py``;
tests/unit/test_cli_index.py fails when it is out of date.
"""

# ruff: noqa: E501  (generated: the help texts are kept whole)

from __future__ import annotations

from pathlib import Path

# The modules of qadmin.cli that hold commands (each has a COMMANDS list), in help order.
MODULES = (
    "queues",
    "messages",
    "dead",
    "pause",
    "inspect",
    "status",
    "metrics",
    "storage",
    "tail",
    "collect",
    "pipeline",
    "demo",
    "connections",
    "completion",
)

# name -> (module, first paragraph of its help)
INDEX: dict[str, tuple[str, str]] = {
    # [index]
    "ack": ("messages", "Claim queues: delete claimed message MESSAGE_ID after it was processed."),
    "alter": (
        "dead",
        "Change a setting of queue NAME in its catalog entry; its routines read it on their next call (nothing is recreated).",
    ),
    "archive": (
        "pipeline",
        "Export old messages, verify the file, then delete exactly those (safe to re-run).",
    ),
    "check": (
        "inspect",
        "Nagios-style check of queue NAME: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
    ),
    "claims": (
        "inspect",
        "Claimed messages older than --stale-after, and whether their consumer's session (or worker's heartbeat) is still alive: claim queues and profiled tables with claims.",
    ),
    "collect": (
        "collect",
        "Sample queues once and append the figures to a Parquet history (safe every minute).",
    ),
    "completion": (
        "completion",
        "Print the completion script for SHELL; e.g. qadmin completion bash > ~/.qadmin.bash",
    ),
    "conn": ("connections", "Named connections from the config file."),
    "convert": (
        "storage",
        "Turn a fifo/heap queue or a hand-built queue table into a ring, backlog and ids kept.",
    ),
    "create": ("queues", "Create queue NAME: its table, its routines and its catalog entry."),
    "dead": (
        "dead",
        "Claim queues: list the messages that failed their last allowed attempt (NAME_dead), or (--id) one message's whole error history; a job-queue library's table: its failed jobs with their errors.",
    ),
    "demo": (
        "demo",
        "Create orders_q (a fifo), push and pop some messages, then inspect it: on the embedded SQLite file unless --dsn or -c names another place (never QADMIN_DSN or the config's default, where a real orders_q may live). An orders_q demo did not make is refused.",
    ),
    "discard": (
        "dead",
        "Claim queues: throw dead messages away (from NAME_dead only; the live queue is never touched), each exactly once even beside other discards and redrives.",
    ),
    "drop": (
        "queues",
        "Drop queue NAME: the objects qadmin recorded as its own, and its catalog entry.",
    ),
    "explain": (
        "inspect",
        "Why is dequeue slow? The plan of NAME's dequeue (its head, read-only: no row lock): seek or scan, the index, rows and page accesses to reach the head, whether an index fits the order, INVALID indexes, stale statistics; findings with their fix. PostgreSQL and MariaDB run the head's SELECT (EXPLAIN ANALYZE, READ ONLY, under the timeouts) only when the estimated plan reaches it through an index: a head that would scan or sort a big table is shown as estimated, never run. A lock held on the table is waited for 1 s, then named.",
    ),
    "export": (
        "pipeline",
        "Write a consistent, read-only snapshot of a queue's messages to Parquet or JSON lines.",
    ),
    "fail": ("messages", "Claim queues: record that processing MESSAGE_ID failed."),
    "fragmentation": (
        "inspect",
        "Index size and bloat of queue NAME (estimated; measured with --deep).",
    ),
    "ghosts": (
        "inspect",
        "Dead / ghost records of queue NAME and the sessions that hold their cleanup back.",
    ),
    "inspect": (
        "inspect",
        "One screen on queue NAME: size, rates, ghosts and who holds them, locks, claims, index bloat, findings. NAME may also be a table qadmin did not create: a declared [tables.NAME] profile, a job-queue library's table, or any table (docs/profiles.md).",
    ),
    "list": ("queues", "List the queues qadmin manages in the schema."),
    "load": (
        "pipeline",
        "Bulk enqueue from a file in file order, through the queue kind's own push semantics.",
    ),
    "locks": ("inspect", "Lock waits on queue NAME: waiter, blocker, lock, wait time."),
    "maintain": (
        "storage",
        "Propose, and with --yes run, the online maintenance a queue's table needs, each action's lock stated first (VACUUM, REINDEX CONCURRENTLY, an in-place rebuild...).",
    ),
    "metrics": ("metrics", "Prometheus metrics for every queue status finds."),
    "pause": (
        "pause",
        "Pause queue NAME: its pops (qadmin's and applications' calls of its routines) take nothing until resume; pushes go on, claims already made can still be acked or failed.",
    ),
    "peek": ("messages", "Show the next messages of queue NAME without taking them."),
    "ping": (
        "connections",
        "Connect, and say which server answered and how fast (exit 6 when it cannot): the time to connect and log in, and one query's round trip after it, apart (the driver's import is timed by neither).",
    ),
    "pop": (
        "messages",
        "Take messages off queue NAME (claim queues: claim them). Exit 3 when empty.",
    ),
    "purge": ("queues", "Delete every message in queue NAME; the queue itself stays."),
    "push": ("messages", "Push MESSAGE(s), a file, or stdin onto queue NAME (binary-safe)."),
    "redrive": (
        "dead",
        "Claim queues: move dead messages back to queue NAME as waiting messages (or --to another queue), one transaction per batch, each under a new id (so acks fenced with its old attempts find nothing), attempts reset, error history kept. A library's table: its failed jobs given back as its own retry does, where that is one row's change.",
    ),
    "repair": (
        "inspect",
        "Make again the routines of queue NAME someone dropped (objects_missing), replace those an older qadmin made (routines_outdated); rings: also get a ring stalled by a dead pusher or popper moving again. Safe from cron.",
    ),
    "report": (
        "pipeline",
        "Hourly rates, percentiles and findings from the telemetry history (a Spark job).",
    ),
    "requeue": (
        "inspect",
        "Release stale claims of queue NAME so another consumer gets the messages (at-least-once: a consumer that was only slow may still finish and find its ack refused). A profiled table is released only as its profile says (state back, claim columns cleared), and only rows still claimed and still stale when the UPDATE runs. A claim whose session is still connected is released too (a pooled connection outlives its worker), unless --skip-live.",
    ),
    "resize": (
        "storage",
        "Grow or shrink a ring while producers and consumers run (never below its backlog).",
    ),
    "resume": (
        "pause",
        "Resume queue NAME after a pause: its pops take messages again from their next call.",
    ),
    "size": (
        "inspect",
        "Depth (estimate; exact when cheap), oldest message, bytes on disk; a profiled table's waiting rows and each state's rows.",
    ),
    "status": ("status", "Every queue on the server, one line each, worst first."),
    "tail": (
        "tail",
        "Watch queues live: enqueue/s, dequeue/s, depth, oldest age, claims, ghosts, lock waits.",
    ),
    "watermark": (
        "storage",
        "Show, advance or repair the watermark of a fifo or claim queue (safe from cron).",
    ),
    # [end]
}


def generate() -> dict[str, tuple[str, str]]:
    """The index as the commands say it (imports every command)."""
    import importlib

    out: dict[str, tuple[str, str]] = {}
    for module in MODULES:
        for command in importlib.import_module(f"qadmin.cli.{module}").COMMANDS:
            first = " ".join((command.help or "").partition("\n\n")[0].split())
            out[str(command.name)] = (module, first)
    return dict(sorted(out.items()))


def write() -> None:
    """Rewrite INDEX in this file from the commands."""
    path = Path(__file__)
    text = path.read_text()
    head, rest = text.split("    # [index]\n", 1)
    tail = rest.split("    # [end]\n", 1)[1]
    body = "".join(f"    {name!r}: ({m!r}, {h!r}),\n" for name, (m, h) in generate().items())
    path.write_text(f"{head}    # [index]\n{body}    # [end]\n{tail}")
