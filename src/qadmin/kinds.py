"""The queue kinds qadmin manages and the facts each one needs about itself."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any

from qadmin.errors import WrongKind, listed

# The most messages one push, pop or peek takes (the --count and --lines limit).
MAX_BATCH = 10_000


class Kind(enum.StrEnum):
    HEAP = "heap"
    FIFO = "fifo"
    LIFO = "lifo"
    PENDING = "pending"
    CAPPED = "capped"
    CLAIM = "claim"
    RING = "ring"


def _can(what: str, default: bool = False) -> Any:
    """A capability flag. ``what`` names the capability in the one line a command prints when
    it is refused for a kind that lacks it (``QueueSpec.require``)."""
    return field(default=default, metadata={"what": what})


@dataclass(frozen=True)
class TableColumns:
    """The columns a kind's template gives its table, as qadmin reads its own queues through a
    profile (``profiles.resolve.from_spec``): None where the kind has no such column."""

    id: str = "id"  # the message id
    order: str | None = "id"  # the key read in order; None: a ring, read by its sequences
    time: str = "enqueued_at"
    due: str | None = None
    claimed_at: str | None = None
    worker: str | None = None
    session: str | None = None
    attempts: str | None = None

    @property
    def claim(self) -> tuple[str, ...]:
        """The columns a released claim clears."""
        return tuple(c for c in (self.claimed_at, self.worker, self.session) if c)


CLAIM_COLUMNS = TableColumns(
    claimed_at="processing_started_at",
    worker="claimed_by",
    session="claimed_session",
    attempts="attempts",
)


@dataclass(frozen=True)
class KindSpec:
    """Everything qadmin knows about one kind, in one place: the CLI, the operations, the
    diagnostics and the pipeline read these flags instead of keeping their own tables."""

    # The template under sql/queues/<dialect>/ (heap, fifo and lifo share ``basic``).
    template: str
    # The dequeue order as a fixed SQL fragment (``{order_by}`` in the templates).
    order_by: str = "ORDER BY id"
    needs_capacity: bool = _can("a capacity")
    allows_strict: bool = _can("an order to keep strictly")
    # Dequeues can range-scan from a watermark (article 004).
    allows_watermark: bool = _can("a watermark")
    # Messages carry a due time (``due_at``): push takes --due, diagnostics count the due ones.
    due: bool = _can("due times")
    # Claim / ack / fail with ``processing_started_at``: claims, requeue, claimed-state export.
    claims: bool = _can("claims")
    # Driven by push and pop sequences over preallocated slots: ring state, repair. Its table's
    # rows are slots, not messages, so nothing reads the table directly (Spark export).
    ring: bool = _can("push and pop sequences over slots")
    # resize changes the capacity in place.
    resizable: bool = _can("a capacity that can change")
    # convert turns it into a ring (a ring serves first in, first out: a lifo, pending or claim
    # backlog would change meaning).
    convertible: bool = _can("a backlog a ring can take over")
    # archive moves its messages out (a ring's slots and a capped queue's overwrites are not rows
    # to move).
    archivable: bool = _can("messages kept as rows it can delete", default=True)
    # A push into a full queue replaces the oldest message: push reports which one
    # (``overwritten_id``).
    overwrites: bool = False
    # Load goes through the kind's push (it must take sequence numbers) rather than a set insert.
    load_pushes: bool = False
    # Counting every message is always cheap (a ring: the two sequences).
    depth_from_sequences: bool = False
    # Every dequeue deletes a row, so the server's delete counter is a dequeue rate (claims are
    # deleted on ack only; a capped queue deletes what it overwrites).
    deletes_are_dequeues: bool = True
    # A fail that records the queue's ``max_attempts``-th attempt moves the message to
    # ``<queue>_dead`` (with its error history); dead and redrive read and empty that table.
    dead_letters: bool = _can("a dead-letter table")
    # Its rows are updated in place (a claim's columns, a ring's slots), not only inserted and
    # deleted: maintain weighs a rebuild's fill factor by it.
    updates_in_place: bool = False
    # Columns shown beside id, payload and enqueued_at when messages are listed.
    columns: tuple[str, ...] = ()
    # Its table's columns as a profile reads them.
    table: TableColumns = TableColumns()
    # Objects beside the table: placeholder -> suffix of the object name. Routines exist only
    # on engines that have them; the SQLite templates never mention them.
    objects: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def newest_first(self) -> bool:
        """Dequeues take the newest message first (a lifo): a popped batch is sorted so."""
        return self.order_by.endswith(" DESC")


KINDS: dict[Kind, KindSpec] = {
    Kind.HEAP: KindSpec("basic", order_by="", convertible=True),
    Kind.FIFO: KindSpec("basic", allows_strict=True, allows_watermark=True, convertible=True),
    Kind.LIFO: KindSpec("basic", order_by="ORDER BY id DESC", allows_strict=True),
    Kind.PENDING: KindSpec(
        "pending", due=True, columns=("due_at",), table=TableColumns(due="due_at")
    ),
    Kind.CAPPED: KindSpec(
        "capped",
        needs_capacity=True,
        resizable=True,
        archivable=False,
        overwrites=True,
        load_pushes=True,
        deletes_are_dequeues=False,
        objects={"seq": "_seq", "ctl": "_ctl"},
    ),
    Kind.CLAIM: KindSpec(
        "claim",
        allows_watermark=True,
        claims=True,
        deletes_are_dequeues=False,
        columns=("attempts",),
        table=CLAIM_COLUMNS,
        dead_letters=True,
        updates_in_place=True,
        # MySQL/MariaDB: ack and fail taking the fencing attempt (procedures have no defaults).
        objects={
            "dead": "_dead",
            "dead_idx": "_dead_idx",
            "ack_fenced": "_ack_fenced",
            "fail_fenced": "_fail_fenced",
        },
    ),
    Kind.RING: KindSpec(
        "ring",
        needs_capacity=True,
        ring=True,
        resizable=True,
        archivable=False,
        load_pushes=True,
        depth_from_sequences=True,
        updates_in_place=True,
        table=TableColumns(id="message_id", order=None),
        objects={
            "push_seq": "_push_seq",
            "pop_seq": "_pop_seq",
            "overflow": "_overflow",
            "pending": "_pending",
            "ctl": "_ctl",
        },
    ),
}
CAPABILITIES = {f.name: str(f.metadata["what"]) for f in fields(KindSpec) if "what" in f.metadata}


def kinds_with(capability: str) -> list[Kind]:
    """The kinds that have a capability flag set, in registry order."""
    return [kind for kind, spec in KINDS.items() if getattr(spec, capability)]


def said(kinds: list[Kind], joiner: str = "and") -> str:
    """``heap, fifo and lifo``: kinds as a sentence names them."""
    return listed([str(k) for k in kinds], joiner)


# A dequeue that takes a message whose id is a multiple of this tries to advance the watermark.
WATERMARK_EVERY = 100
# A claim message's error history keeps its first error and its latest ones, this many in all,
# so a message retried forever (no max_attempts) does not grow without bound.
ERRORS_KEPT = 100
# A claim message's error text is kept to this many characters, then "... (truncated, N chars)":
# the fail routines cut it (a MariaDB TEXT parameter refuses 64 KiB and more, which left the
# message claimed for ever) and qadmin cuts it before binding (SQLite has no routines).
ERROR_CHARS = 4000
MAX_CAPACITY = 10_000_000
# Catalog option keys of pause (ops/pause.py): when the queue was paused, and that its routines
# read it (every queue created since pause exists).
PAUSED_AT = "paused_at"
PAUSABLE = "pausable"
# Catalog option: the revision of the templates the queue's routines were made from; repair
# replaces older ones on an engine whose routines changed since (Dialect.routines_revised).
# 1: pops read the pause (a queue with only ``pausable``); 2: PostgreSQL's pops pick their rows
# in one sub-select run once (before, after a VACUUM ANALYZE of a drained queue, a pop of one
# could take every message).
REVISION = "revision"
ROUTINES_REVISION = 2
# What each revision changed, as routines_outdated says it to a DBA.
REVISIONS = {
    1: "pops read the pause",
    2: (
        "their pops pick rows in a sub-select the server may run again for every row, so "
        "after a VACUUM ANALYZE of a drained queue one pop can take every message"
    ),
}

# Routines beside every kind's table, on engines that have them.
ROUTINES = {
    "push": "_push",
    "push_many": "_push_many",
    "pop": "_pop",
    "ack": "_ack",
    "fail": "_fail",
}


# Bulk load's staging table (and its key index) and the idempotency keys it recorded.
DATA_OBJECTS = {"stage": "_stage", "stage_idx": "_stage_idx", "loaded": "_loaded"}
WATERMARK_OBJECTS = {"wm": "_wm", "wm_seq": "_wm_seq", "wm_advance": "_wm_advance"}
INDEXES = {"pop_idx": "_pop_idx", "claimed_idx": "_claimed_idx", "slot_idx": "_slot_pk"}
# Names a convert to a ring uses beside the ring's own: the retired table, and a staged
# (MariaDB) switch's gate, slot table and routines (ops/convert_sql.py).
CONVERT_SUFFIXES = (
    "_before_ring",
    "__gate",
    "__ring",
    "__ring_push",
    "__ring_push_many",
    "__ring_pop",
)


def derived_names(name: str, kind: Kind) -> set[str]:
    """Every name qadmin may give an object of a queue ``name`` of this kind, whatever its
    options and whatever is done to it later (load's staging, a watermark, a convert to a
    ring): the names a new queue must find free, and another queue must never take. Only a
    capped queue has ``_seq`` (PostgreSQL names queue ``q``'s identity sequence ``q_id_seq``,
    which must not keep a queue ``q_id`` from being created)."""
    extras = KINDS[Kind.RING].objects | KINDS[kind].objects
    suffixes = [
        *ROUTINES.values(),
        *extras.values(),
        *DATA_OBJECTS.values(),
        *WATERMARK_OBJECTS.values(),
        *INDEXES.values(),
        *CONVERT_SUFFIXES,
    ]
    return {name, *(name + s for s in suffixes)}


@dataclass(frozen=True)
class QueueSpec:
    """What the catalog records about one managed queue."""

    name: str
    kind: Kind
    capacity: int | None = None
    strict: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    # "creating" from the catalog entry's first write until its last object exists: a create
    # that was killed leaves this for the same create to finish or drop to remove.
    state: str = "ready"

    @property
    def info(self) -> KindSpec:
        """What this queue's kind can do (the registry entry)."""
        return KINDS[self.kind]

    def require(self, capability: str, command: str, hint: str = "") -> None:
        """Refuse ``command`` in one line (exit 2) unless this queue's kind has the capability,
        so a command never reaches SQL its kind's template does not have."""
        if getattr(self.info, capability):
            return
        line = (
            f"{command}: {self.name} is a {self.kind} queue, and only "
            f"{said(kinds_with(capability))} queues have {CAPABILITIES[capability]}"
        )
        raise WrongKind(f"{line} ({hint})" if hint else line)

    @property
    def template(self) -> str:
        return self.info.template

    @property
    def watermark(self) -> bool:
        return bool(self.options.get("watermark"))

    @property
    def max_attempts(self) -> int | None:
        """The attempt whose failure moves a message to the dead table (None: never). The
        fail routine reads it from the catalog entry on every call."""
        value = self.options.get("max_attempts")
        return None if value is None else int(value)

    @property
    def paused_at(self) -> str | None:
        """When ``qadmin pause`` paused the queue (``paused_at`` in its catalog options; the pop
        routines read it there on every call), or None while it serves."""
        value = self.options.get(PAUSED_AT)
        return None if value is None else str(value)

    @property
    def pausable(self) -> bool:
        """Whether the queue's routines read the pause (``pausable`` in its catalog options): a
        queue created by a qadmin from before pause has routines that never look."""
        return bool(self.options.get(PAUSABLE))

    @property
    def revision(self) -> int:
        """The template revision the queue's routines come from (``REVISION``); one that is
        not a whole number (edited by hand) reads as 0, the oldest: repair writes it anew."""
        value = self.options.get(REVISION, 1 if self.pausable else 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    @property
    def dead_table(self) -> bool:
        """Whether the queue has its dead-letter table (``dead_table`` in its catalog options):
        a claim queue made by a qadmin from before dead letters has none, nor an ``errors``
        column, and keeps its own fail routine, which never moves a message."""
        return self.info.dead_letters and bool(self.options.get("dead_table"))

    @property
    def overlays(self) -> tuple[str, ...]:
        """Templates laid over the kind's own: their sections replace the kind's sections of
        the same name, except ``create`` and ``drop``, which they extend."""
        layers: tuple[str, ...] = ()
        if self.info.dead_letters and not self.dead_table:
            layers = (f"{self.template}_before_dead",)
        if self.watermark:
            layers += ("watermark", f"watermark_{self.template}")
        return layers

    def keywords(self) -> dict[str, str]:
        """Fixed SQL fragments a template may take, chosen from constants here, never user text."""
        return {
            "order_by": self.info.order_by,
            "strict": "TRUE" if self.strict else "FALSE",
            "wm_every": str(WATERMARK_EVERY),
            "errors_kept": str(ERRORS_KEPT),
            "error_chars": str(ERROR_CHARS),
        }

    def sort_rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Put a popped batch in queue order: DELETE ... RETURNING gives rows in any order."""
        if not self.info.order_by:
            return rows
        if self.info.due:
            return sorted(rows, key=lambda r: (str(r["due_at"]), r["id"]))
        return sorted(rows, key=lambda r: r["id"], reverse=self.info.newest_first)

    def objects(self) -> dict[str, str]:
        """Placeholder -> database object name, all derived from the validated queue name."""
        names = {"table": self.name}
        names.update({k: self.name + suffix for k, suffix in INDEXES.items()})
        names.update({k: self.name + suffix for k, suffix in ROUTINES.items()})
        names.update({k: self.name + suffix for k, suffix in DATA_OBJECTS.items()})
        names.update({k: self.name + s for k, s in self.info.objects.items()})
        if self.watermark:
            names.update({k: self.name + s for k, s in WATERMARK_OBJECTS.items()})
        return names
