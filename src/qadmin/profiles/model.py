"""How to read a table as a queue: the one description every read-only command works from.

A profile says which column orders the queue, which rows are waiting, claimed, done or failed,
where a claim's time, owner and liveness are kept, and how (if at all) a stale claim can be
given back safely. qadmin's own kinds, a job-queue library's tables (detected from their shape)
and a hand-built table (declared in the config or on the command line) are all profiles, so a
diagnostic is written once against this type.
"""

from __future__ import annotations

from dataclasses import dataclass

# A state value as the table stores it: text (procrastinate's 'todo'), a number (an enum kept
# as an int), or a boolean (kombu's ``visible``). Bound as a parameter, never formatted.
Value = str | int | bool

# Numeric epoch time columns: the unit and how many of it make a second.
TIME_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(frozen=True)
class Heartbeat:
    """A claim's liveness kept in another table: a workers table beating every few seconds
    (procrastinate's ``procrastinate_workers``, pgqueuer's ``pgqueuer_...``). A claim whose
    worker's last beat is older than the stale limit, or whose worker row is gone, is dead."""

    table: str  # the related table, in the queue table's schema
    job_column: str  # the queue table's column naming the worker (its foreign key)
    worker_column: str  # the related table's key that ``job_column`` refers to
    beat_column: str  # the related table's last-heartbeat timestamp
    # Where the worker's key is part of a column rather than the column itself (Oban's
    # ``attempted_by[2]``, the producer's uuid after the node name): a fixed SQL template from
    # qadmin's own registry over the queue table's columns (``{column.bare}`` placeholders),
    # never text from a user. Keys are compared as text. ``job_column`` is the column it reads.
    key_sql: str | None = None


@dataclass(frozen=True)
class QueueNames:
    """A table's named queues named in a table of their own: the queue column holds a key
    (kombu's ``kombu_message.queue_id``), the names table maps it to the name users know
    (``kombu_queue``: ``id`` to ``name``). In the queue table's schema."""

    table: str
    key_column: str
    name_column: str


@dataclass(frozen=True)
class ClaimEvent:
    """A claim's start kept as an event row in another table (procrastinate's
    ``procrastinate_events`` 'started'), for a library whose job row has no claim time."""

    table: str  # the events table, in the queue table's schema
    job_column: str  # the events table's column naming the job (indexed by the library)
    type_column: str
    type_value: str  # bound as a parameter
    at_column: str  # the event's timestamp


@dataclass(frozen=True)
class Release:
    """How a stale claim is given back so another worker takes it: its state set back to a
    waiting value and the claim's columns cleared. A profile without one cannot be requeued
    by qadmin (the library's own tooling must do it), and requeue says so."""

    state: Value | None  # the waiting value to set (None: the profile has no state column)
    clear: tuple[str, ...] = ()  # columns set to NULL (claimed_at, worker id, ...)


@dataclass(frozen=True)
class Profile:
    """One table read as a queue. Column names are as the catalog spells them (validated
    against it before use, quoted by the engine); values are bound parameters."""

    name: str  # what the user calls it: a config [tables.NAME], a qadmin queue, or the table
    table: str  # the table's own name, as the catalog spells it
    schema: str | None = None  # None: the connection's schema
    # Where the profile came from: "qadmin" (a managed queue), "declared" (config),
    # "options" (command-line one-off), "detected" (a library's shape), "plain" (a table
    # with nothing known but its primary key).
    source: str = "plain"
    library: str | None = None  # "procrastinate", "pg-boss", ...: findings name it
    noun: str = "message"  # "job" for job libraries: "procrastinate job 109 has been doing..."
    id_column: str | None = None  # how one row is named in findings and requeue output
    order_by: str | None = None  # the dequeue order's key (never a uuid or other random key)
    # The library's own dequeue order, where it is more than ``order_by`` ascending: columns,
    # each with an optional " DESC" (procrastinate: "priority DESC", "id"). Read by explain,
    # which plans the library's dequeue; columns are checked against the catalog first.
    dequeue_order: tuple[str, ...] = ()
    time_column: str | None = None  # enqueue time: the oldest waiting row's age
    # Where a waiting row's age runs from another column on some rows (django-tasks: its
    # run_after, when one was set, from the time it became due): (column, filter) pairs,
    # each read on the rows its filter picks, the oldest of them taken. Each filter is a
    # fixed SQL template from qadmin's registry over the table's columns (``{column.bare}``
    # placeholders), never text from a user; they pick every waiting row between them.
    oldest_from: tuple[tuple[str, str], ...] = ()
    due_column: str | None = None  # run-at time: waiting but not yet due rows
    # A table holding several named queues (procrastinate's queue_name, Oban's queue): the
    # column, and the one queue a command was asked about (--queue NAME; None: all of them).
    queue_column: str | None = None
    queue: str | None = None
    # Where the queue column holds a key of another table (kombu's queue_id): that table,
    # and the asked-about queue's name there (shown in output; ``queue`` holds its key).
    queue_names: QueueNames | None = None
    queue_label: str | None = None
    # The rows whose queue column is NULL (Delayed::Job's default queue): --queue-null.
    queue_null: bool = False
    # How the time columns hold time: None, timestamps (naive ones in the session's time zone
    # unless ``naive_utc``: a library that always writes UTC, so ages are right whatever the
    # session's TimeZone); or numeric epochs in one of TIME_UNITS.
    time_unit: str | None = None
    naive_utc: bool = False
    state_column: str | None = None
    # A library whose state is derived from several columns (GoodJob's finished_at and error,
    # Delayed::Job's locked_at and failed_at) gives the state as a CASE expression instead of
    # a column: a fixed template from qadmin's own registry (``{column.bare}`` placeholders,
    # rendered by qadmin.sqltext), never text from a user. Its values are the groups' values.
    state_sql: str | None = None
    # A declared table's states from which columns are NULL (qadmin.statewhen): (group,
    # ((column, is_null), ...)) in the order tried; the groups' values are the group names.
    state_when: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = ()
    pending: tuple[Value, ...] = ()  # waiting values: depth counts these rows (when due)
    # Waiting for a set time (Oban's 'scheduled') or for a retry (Oban's 'retryable'): counted
    # apart while not due; once due (the due column passed) they are waiting like ``pending``.
    scheduled: tuple[Value, ...] = ()
    retrying: tuple[Value, ...] = ()
    claimed: tuple[Value, ...] = ()  # taken by a worker, not finished
    done: tuple[Value, ...] = ()  # finished and kept
    failed: tuple[Value, ...] = ()  # failed and kept
    # Without a state column, a claim is a non-NULL ``claimed_at_column`` (qadmin's claim kind:
    # waiting rows have it NULL).
    claimed_at_column: str | None = None
    session_column: str | None = None  # the claiming database session's id, when recorded
    worker_column: str | None = None  # the claiming worker's name or id, when recorded
    heartbeat: Heartbeat | None = None
    claim_event: ClaimEvent | None = None  # where the claim time is, without a claimed_at column
    heartbeat_column: str | None = None  # a claim's last beat kept on its own row (pgqueuer)
    # A worker is dead only when its last beat is older than max(--stale-after, this): a
    # library's few-heartbeat-intervals floor, so a short --stale-after never calls a worker
    # between two beats dead (qadmin.profiles.libraries says each library's figure).
    heartbeat_floor_s: float = 0.0
    # A claim's liveness as a condition on its row, where the library keeps it in a lock, not
    # a beat (dramatiq-pg: the consumer's session holds an advisory lock keyed on the message
    # while it works it): a fixed SQL template from qadmin's own registry over the table's
    # columns (``{column.bare}`` placeholders), never text from a user. True: the claim is
    # alive, whatever its age; false: its worker is gone.
    claim_alive_sql: str | None = None
    attempts_column: str | None = None
    error_column: str | None = None
    release: Release | None = None
    no_release: str | None = None  # why requeue is refused when the user forbade it
    # When a failed job failed (Oban's discarded_at): dead --older-than / --newer-than.
    failed_at_column: str | None = None
    retry: Retry | None = None  # how redrive gives a failed job back (None: it refuses)
    # The one-off profile options it was read with (``--state-column State``...), as words:
    # a printed fix carries them, or it would read the table another way (``--queue`` apart).
    options: tuple[str, ...] = ()

    @property
    def has_states(self) -> bool:
        return self.state_column is not None or self.state_sql is not None or bool(self.state_when)

    @property
    def waiting(self) -> tuple[Value, ...]:
        """Every state that waits for a worker, due or not."""
        return (*self.pending, *self.scheduled, *self.retrying)

    @property
    def has_claims(self) -> bool:
        return bool(self.claimed) or self.claimed_at_column is not None

    @property
    def shown(self) -> str:
        """The queue as output names it: ``oban_jobs[mailers]`` for one named queue,
        ``river_job['']`` for the queue named by the empty string, ``delayed_jobs[]`` for the
        rows that name none."""
        if self.queue_null:
            return self.name + bracketed(None)
        return self.name + bracketed(self.queue_shown) if self.queue is not None else self.name

    @property
    def queue_shown(self) -> str | None:
        """The asked-about queue as users name it: its name where a names table keeps one."""
        return self.queue_label if self.queue_label is not None else self.queue

    def command(self, verb: str) -> str:
        """A qadmin command on this queue, as a fix prints it (names shell-quoted)."""
        text = f"qadmin {verb} " + " ".join(shell_word(w) for w in (self.name, *self.options))
        if self.queue_null:
            return text + " --queue-null"
        shown = self.queue_shown
        return text + f" --queue {shell_word(shown)}" if shown is not None else text

    def label(self, row_id: object) -> str:
        """How a finding names one row: ``procrastinate job 109``, ``message 17``."""
        who = f"{self.library} {self.noun}" if self.library else self.noun
        return f"{who} {row_id}"


@dataclass(frozen=True)
class Retry:
    """A failed job given back as the library's own retry gives it back: the same UPDATE of
    the same row (redrive), and only where that is all the library's retry does. ``sets``
    are further assignments, each a fixed SQL template from qadmin's registry over the
    table's columns (``{column.bare}`` placeholders), never text from a user."""

    source: str  # the library's own call this is, as docs and output name it
    state: Value  # the waiting value set (bound as a parameter)
    sets: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class LibraryShape:
    """How one job-queue library's table is recognised from the catalog alone (its name and
    columns: a cheap, read-only look), and the profile it is read with once recognised."""

    library: str
    tables: tuple[str, ...]  # the table names the library creates (schema-less)
    columns: frozenset[str]  # every one of these must be present (lower-case)
    dialects: tuple[str, ...]  # "postgresql", "mysql", "sqlite", "mssql"
    # How it was verified, for the docs: "live" (its own workers run in tests/libraries) or
    # "shape" (a table of its documented shape, tested without the library).
    verified: str
    profile: Profile  # its ``table`` and ``schema`` are replaced by the table found


def bracketed(queue: str | None) -> str:
    """A named queue as status, check --all and findings show it after its table:
    ``[mailers]``; ``['']`` the queue named by the empty string; ``[]`` the rows that name no
    queue (NULL). A control character in a name is shown as its escape (``\\n``) by the
    output, as bash's ``$'...'`` quoting takes it back (shell_word)."""
    if queue is None:
        return "[]"
    return "['']" if queue == "" else f"[{queue}]"


def shell_word(text: str) -> str:
    """``text`` as one shell word a printed fix carries and a user pastes back: shlex's
    quoting, or bash's ``$'...'`` when it holds a control character (a newline in a queue's
    name), so the printed command stays one line and names the same queue."""
    import shlex

    if not any(ord(c) < 32 or ord(c) == 127 for c in text):
        return shlex.quote(text)
    named = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    body = "".join(
        named.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c) for c in text
    )
    return f"$'{body}'"
