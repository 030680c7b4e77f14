"""The tables in docs/ that mirror qadmin's registries, generated with cog (cogapp).

Each page holds a block ``<!-- [[[cog import doc_tables; cog.out(doc_tables.NAME()) ]]] -->``
... ``<!-- [[[end]]] -->``; what is between is this module's output. After changing a registry
(kinds, engines, diagnostics metrics, telemetry fields, findings, library profiles, metrics
families, exit codes, config keys), regenerate the pages:

    PYTHONPATH=src cog -r -I scripts docs/*.md

``tests/unit/test_docs.py`` runs ``cog --check`` on them, so a registry that drifts from its
table fails the tests. What a registry does not hold (an example DSN, the commands a capability
unlocks, a metric's unit in words) is written here once, keyed by the registry's names: a new
entry without its words fails here rather than printing a row with a hole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import qadmin
from qadmin import errors
from qadmin.config import TABLE_KEYS
from qadmin.diagnostics import registry as diagnostics
from qadmin.engine_table import SCHEMES
from qadmin.engines import registry as engines
from qadmin.kinds import CAPABILITIES, KINDS, kinds_with
from qadmin.ops.metrics import FAMILIES
from qadmin.ops.telemetry import ARROW_TYPES, FIELDS
from qadmin.profiles.libraries import SHAPES
from qadmin.profiles.model import LibraryShape, Profile

REPO = Path(__file__).resolve().parents[1]
# A profile's time_unit (epoch numbers) in words.
TIME_UNITS_SPELLED = {
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
}

# docs/kinds.md: the commands and options each capability flag of KindSpec unlocks.
CAPABILITY_COMMANDS = {
    "needs_capacity": "`create --capacity` (required)",
    "allows_strict": "`create --strict`",
    "allows_watermark": "`create --watermark` (then `watermark`)",
    "due": "`push --due/--delay`, a `due_at` column in `load`'s input",
    "claims": "`ack`, `fail`, `requeue`, `export/archive --state`",
    "dead_letters": "`create --max-attempts`, `alter --max-attempts`, `dead`, `discard`, `redrive`",
    "ring": "`repair`'s park, void and skip (every kind's routines are made again or replaced)",
    "resizable": "`resize`",
    "convertible": "`convert`",
    "archivable": "`archive`",
}

# docs/commands.md#connections: an example DSN per engine of the engine registry.
CONNECTION_EXAMPLES = {
    "sqlite": "`sqlite:///relative.db`, `sqlite:////absolute/path.db`, `sqlite:///:memory:`",
    "postgresql": "`postgresql://user:pw@host:5432/db?sslmode=require` (`postgres://` too)",
    "mysql": "`mysql://user:pw@host:3306/db`, `mariadb://…`; `?dialect=mysql` forces the MySQL 8"
    " templates on a MariaDB server",
    "mssql": "`mssql://user:pw@host:1433/db?driver=FreeTDS` (driver defaults to ODBC Driver"
    " 18/17, else FreeTDS), or a raw ODBC string `DRIVER={…};SERVER=…;…`",
}

# docs/diagnostics.md#check-for-cron-and-monitoring: each metric's unit in words and what it
# measures, in the order the page lists them (the defaults come from the registry).
METRIC_WORDS = {
    "depth": (
        "messages",
        "messages waiting in the queue (a claim queue's claimed ones are not in it)",
    ),
    "oldest_age": ("duration", "age of the oldest message"),
    "dead_ratio": ("", "dead rows per live row (SQLite: free pages per page; none on InnoDB)"),
    "lock_wait": ("duration", "longest lock wait on the queue table"),
    "lock_waiters": (
        "sessions",
        "sessions waiting past the `lock-wait` warning behind one blocker (`lock_pileup`;"
        " consumers of a `--strict` queue queue behind each other for a moment by design)",
    ),
    "stale_claims": ("claims", "claims older than `--stale-after` (claim queues)"),
    "dead": (
        "messages",
        "dead letters in `QUEUE_dead` (claim queues), counted up to 10,000; a job-queue"
        " library's or a declared table's failed jobs (the figure `status` shows as dead)",
    ),
    "paused_age": (
        "duration",
        "how long the queue has been paused (`qadmin pause`): any pause warns by default; "
        "`--warn-paused-age 1h` accepts planned pauses, `--crit-paused-age 4h` pages on a "
        "forgotten one",
    ),
    "snapshot_age": (
        "duration",
        "oldest snapshot / open transaction; by default `snapshot_held` is reported only while"
        " it holds back dead rows (1,000 on PostgreSQL, a history list of 100,000 on InnoDB); a"
        " threshold given judges any snapshot. An age the role cannot read is never judged OK:"
        " PostgreSQL without `pg_read_all_stats` (or `pg_monitor`) sees another role's"
        " transaction id but not its start, MariaDB/MySQL without `PROCESS` no holders at all;"
        " the line says `snapshot_age not evaluable: ...` naming the privilege, UNKNOWN (3) unless"
        " something is CRITICAL",
    ),
    "ring_fill": ("fraction", "ring depth / capacity (rings; full refuses pushes)"),
    "ring_stall": (
        "duration",
        "how long pops have stopped at a number whose pusher died (rings)",
    ),
    "watermark_stranded": ("messages", "messages below the watermark (watermarked queues)"),
    "backlog_growth": (
        "messages/s",
        "depth growth over `--sample` (default 1 s; `0` skips rates); from estimated depths"
        " (a big MariaDB queue's) it is an estimate that proves neither side: never judged",
    ),
}

# docs/diagnostics.md#findings: each finding code's severities, what it means and what to do,
# in the order the page lists them. The codes are the ones qadmin's source emits.
FINDING_WORDS = {
    "snapshot_held": (
        "warning, critical",
        "a session's open transaction or snapshot holds back cleanup of the queue's dead rows / "
        "InnoDB's undo (PostgreSQL backends, replication slots, prepared transactions; InnoDB's "
        "oldest transactions)",
        "end that transaction (the fix names the session); then consider `create --watermark`",
    ),
    "dead_rows": (
        "warning, critical",
        "at least 1,000 dead rows and either 10x the live rows or 20 % of the table "
        "(PostgreSQL): dequeues walk them",
        "find what holds cleanup back (`snapshot_held`), then VACUUM as the fix says",
    ),
    "purge_lag": (
        "warning",
        "InnoDB's history list is long; it is server-wide (all databases)",
        "end the oldest transaction named",
    ),
    "free_pages": (
        "info",
        "SQLite free pages left by deletes",
        "`VACUUM` when convenient",
    ),
    "lock_wait": (
        "warning, critical",
        "a session waits on a lock on the queue table past `--warn-lock-wait` / "
        "`--crit-lock-wait` (5 s / 30 s)",
        "look at the blocker the finding names; end it if abandoned",
    ),
    "lock_pileup": (
        "warning, critical",
        "`--crit-lock-waiters` (2) or more sessions wait past the lock-wait warning behind one "
        "root blocker (a `LOCK TABLE`, an `ALTER` waiting on an open transaction, a metadata "
        "lock)",
        "end or finish the root blocker; on MariaDB without `metadata_lock_info` the holder is "
        "*probably* the one named: confirm before `KILL`",
    ),
    "part_blocked": (
        "warning",
        "a part of inspect gave up after its 1 s lock timeout; the rest of the report is complete",
        "the finding names the session holding the lock",
    ),
    "stale_claims": (
        "warning",
        "claims older than `--stale-after` (claim queues), and whether the claiming session "
        "still exists",
        "`qadmin requeue QUEUE --stale-after 5m --dry-run` to see them, then the same with `--yes`",
    ),
    "depth_unread": (
        "warning",
        "a profiled table's waiting rows could not be read cheaply (a big table with no index "
        "fitting the count; see [profiles.md](profiles.md)), or a ring's sequences are refused "
        "to the role (PostgreSQL: it may read the tables but has no SELECT or USAGE on the "
        "sequences; `check` says UNKNOWN: a ring whose fill is unread may be full)",
        'create the index the message names; `GRANT SELECT ON ALL SEQUENCES IN SCHEMA "s" TO '
        "<this role>`",
    ),
    "queue_unseen": (
        "warning, info",
        "`--queue NAME` names a queue no row of the table holds: a misspelt name in a monitoring"
        " definition would read as an idle queue for ever (warning where the library keeps "
        "finished rows, so a real queue would show its history; info where it deletes them)",
        "`qadmin inspect TABLE` lists its named queues",
    ),
    "claims_unread": (
        "warning",
        "a profiled table with claims whose claimed rows could not be read cheaply, or whose "
        "claims carry no claim time and no worker heartbeat (a killed consumer's rows look like "
        "a running one's: persist-queue's unacked rows): its stale claims are unknown, never "
        "reported as none",
        "create the index the message names; declare the claim time or the workers' heartbeat "
        "table ([profiles](profiles.md#declared-profiles-tablesname)); `qadmin claims QUEUE` "
        "lists the undated claims",
    ),
    "ring_push_hole": (
        "warning, critical",
        "pops stopped at a number whose pusher died (or rolled back) before writing it",
        "`qadmin repair QUEUE --yes` (or the printed `hole_fix` SQL)",
    ),
    "ring_orphan": (
        "critical",
        "a message whose popper died after taking its number: no pop delivers it, and one lap "
        "later the ring refuses pushes",
        "`qadmin repair QUEUE --yes` (or the printed `orphan_fix` SQL)",
    ),
    "ring_nearly_full": (
        "warning, critical",
        "ring depth / capacity at `--warn-ring-fill` 0.9 / `--crit-ring-fill` 1",
        "more consumers, or `qadmin resize QUEUE --capacity N`",
    ),
    "objects_missing": (
        "critical",
        "a routine or table of the queue (push, pop, a ring's overflow table, ...) the catalog "
        "records is gone from the schema (dropped by hand; looked up by exact name, not by its "
        "arguments: one replaced by a routine of the same name and other arguments is not told; "
        "every call "
        "of it fails while the rest looks well; the parts that read a missing table are noted "
        "as skipped, the others still read; on MySQL and SQL Server, which list only the "
        "routines a role may run, a role not shown them all (no EXECUTE on the database, say) "
        "is told so in a note instead); or a drop stopped "
        "half-way: on an engine without transactional DDL (MariaDB/MySQL) `drop` marks the "
        "catalog entry `dropping`, drops the "
        "objects one by one (routines first) and removes the entry last; one stopped between (a "
        "lock timeout on the table) leaves push and pop failing while the table and entry remain",
        "a routine gone: `qadmin repair QUEUE --dry-run` lists what it would make again (from the "
        "queue's template), then `qadmin repair QUEUE --yes`; a table gone (its rows with it): "
        "restore it from a backup, else `qadmin drop QUEUE --dry-run`, `qadmin drop QUEUE --yes` "
        "and create the queue again; a drop stopped: `qadmin drop QUEUE "
        "--dry-run`, then `qadmin drop QUEUE --yes` finishes the drop (`IF EXISTS`, the entry "
        "last)",
    ),
    "routines_outdated": (
        "warning",
        "the queue's routines were made from an older qadmin's template, and this engine's have "
        "changed since (the catalog entry's `revision` option; PostgreSQL revision 2: pops pick "
        "their rows in a sub-select run once, where before, after a VACUUM ANALYZE of a drained "
        "queue, one pop could take every message); read from the catalog entry alone",
        "`qadmin repair QUEUE --dry-run` lists the routines it would replace, then `qadmin "
        "repair QUEUE --yes` replaces them all and records the revision in one transaction "
        "(CREATE OR REPLACE: callers never find one missing)",
    ),
    "paused": (
        "warning (info below `--warn-paused-age`), critical at `--crit-paused-age`",
        "the queue is paused (`qadmin pause`): its pops take nothing, its pushes go on; the "
        "message says since when",
        "`qadmin resume QUEUE --yes` once its consumers are ready",
    ),
    "dead_letters": (
        "warning, critical",
        "messages of a claim queue that failed their last allowed attempt (`--max-attempts`) "
        "wait in `QUEUE_dead`; the message gives the count (up to 10,000) and how long ago the "
        "first died",
        "`qadmin dead QUEUE` to see their errors; once the cause is fixed, `qadmin redrive QUEUE"
        " --all --dry-run`, then with `--yes`",
    ),
    "watermark_stranded": (
        "warning, critical",
        "messages below the watermark: no dequeue will see them",
        "`qadmin watermark QUEUE repair --yes`",
    ),
    "watermark_lagging": (
        "warning",
        "the watermark is held back for over a minute, by an open transaction or (MySQL / "
        "MariaDB) by what the last try recorded (`held_by`: the definer lacks PROCESS, "
        "`INNODB_TRX` read by others less than 0.1 s apart, REPEATABLE READ dequeues)",
        "end the transaction, `GRANT PROCESS`, slow the monitor, or dequeue at READ COMMITTED, "
        "as named",
    ),
    "backlog_growing": (
        "warning, critical",
        "during `--sample` depth grew and more was enqueued than dequeued (with "
        "`--warn/--crit-backlog-growth`: only past that rate)",
        "more or faster consumers",
    ),
    "invalid_index": (
        "warning",
        "an INVALID index left by a failed `CREATE INDEX CONCURRENTLY` (PostgreSQL)",
        "`REINDEX INDEX CONCURRENTLY` or drop it",
    ),
    "stale_statistics": (
        "warning",
        "the planner's statistics were never gathered for the queue (PostgreSQL `reltuples` -1; "
        "InnoDB persistent statistics missing)",
        "`ANALYZE` / `ANALYZE TABLE`",
    ),
    "dequeue_index_misfit": (
        "warning, info",
        "`explain`: the dequeue's plan sorts the waiting rows (no index serves its ORDER BY: a "
        "PostgreSQL Sort node, a MariaDB/MySQL filesort, SQLite's `USE TEMP B-TREE FOR ORDER "
        "BY`), or walks an index past 1,000 rows its WHERE removes (rows of other states in "
        "front of the head); info while fewer than 1,000 rows were examined",
        "create the index the fix prints (the one `create` makes, or for a library's table its "
        "dequeue order with the waiting filter, left out where the waiting state reads the "
        "clock, as GoodJob's and django-tasks' scheduled state does: an index predicate cannot);"
        " when an existing index already fits and the planner left it unused (PostgreSQL: the "
        "head planned again with sorts and scans priced out walks it), the finding names that "
        "index and the fix is `ANALYZE`, never a duplicate",
    ),
    "dequeue_dead_entries": (
        "warning",
        "`explain` (PostgreSQL, MariaDB): reaching the head read 12 pages or more to return one "
        "row (and the filter removed fewer than 1,000 rows): dead entries every dequeue walks "
        "(article 004)",
        "`qadmin ghosts QUEUE` to see who holds cleanup back; end it, then VACUUM",
    ),
    "statistics_outdated": (
        "info",
        "`explain` (PostgreSQL): more rows changed since the last ANALYZE than 50 + 20 % of the "
        "rows it counted",
        "`ANALYZE`",
    ),
    "autovacuum_off": (
        "warning",
        "the table's `autovacuum_enabled = false`, or the server's `autovacuum = off` while the "
        "queue has dead rows",
        "switch it back on, VACUUM meanwhile",
    ),
    "index_bloat": (
        "info",
        "an index's estimated (or, with `--deep`, measured) bloat",
        "rebuild it in a quiet hour",
    ),
}

# docs/monitoring.md: what each metric family of qadmin.ops.metrics.FAMILIES measures, in
# words (its name and type are the registry's).
METRIC_FAMILY_WORDS = {
    "qadmin_up": (
        "1 when the scrape reached the server and listed its queues, else 0 (`server` label only)"
    ),
    "qadmin_scrape_error": "1 when the scrape failed, else 0",
    "qadmin_scrape_duration_seconds": "how long the scrape took",
    "qadmin_scrape_queues": "queues found",
    "qadmin_scrape_queues_unread": (
        "queues found but not read (an error, a lock held on the table past a part's 1 s lock "
        "wait, the scrape timeout): their `qadmin_queue_status` is 3 (2 when what was read of a "
        "queue is CRITICAL, as check's verdict), and the figures that were read still show"
    ),
    "qadmin_queue_status": (
        "check's verdict, with the thresholds `check --all` takes from the config's `[check]` "
        "([below](#nagios-and-icinga-qadmin-check---all)): 0 OK, 1 WARNING, 2 CRITICAL, 3 "
        "UNKNOWN (not read, or a part of it a lock kept from being read: CRITICAL still wins)"
    ),
    "qadmin_queue_depth": "messages waiting and due (a claim queue's claimed ones are apart)",
    "qadmin_queue_scheduled": (
        "messages waiting that are not due yet (exact, a floor or an estimate: "
        '`qadmin_queue_quality{figure="scheduled"}`)'
    ),
    "qadmin_queue_oldest_age_seconds": "age of the oldest due message; 0 when empty",
    "qadmin_queue_claimed": "messages claimed by a consumer (status's `running`)",
    "qadmin_queue_stale_claims": (
        "claims older than `--stale-after` (default 300 s), counted among the claims listed "
        "(the first 1,000, or a window of ids behind dead entries): a floor when more lie past "
        "them (`qadmin_queue_quality`)"
    ),
    "qadmin_queue_dead": "dead letters (claim queues), or a library's failed jobs",
    "qadmin_queue_ring_fill_ratio": "a ring's depth / capacity",
    "qadmin_queue_paused": "1 while `qadmin pause` stops the queue's pops, else 0 (qadmin queues)",
    "qadmin_queue_paused_seconds": "how long the queue has been paused (present only while it is)",
    "qadmin_queue_quality": (
        "1 for each figure that is not exact, labels `figure` (`depth`, `oldest_age`, "
        "`scheduled`, `claimed`, `stale_claims`, `dead`) and `quality` (`floor` or `estimate`)"
    ),
    "qadmin_queue_read_seconds": "how long reading the queue took",
    "qadmin_queue_pushed_total": (
        "messages ever pushed: the queue's id sequence or a ring's push sequence (qadmin queues)"
    ),
    "qadmin_queue_popped_total": "messages ever popped: a ring's pop sequence (rings)",
    "qadmin_table_size_bytes": (
        "the queue table's size on disk (labels `server`, `schema`, `table`)"
    ),
}

# docs/cli.md#exit-codes: what each exit code of qadmin.errors (``EXIT_*``) means.
EXIT_WORDS = {
    "EXIT_OK": "ok",
    "EXIT_ERROR": (
        "error: a database error qadmin does not classify, an internal error; `collect` when "
        "one of several connections failed, or a time slot was already collected; `metrics "
        "--listen` when it cannot listen (the address is taken, not this host's), `metrics "
        "--textfile` when the file cannot be written (the line names the path and the reason)"
    ),
    "EXIT_USAGE": (
        "usage: a bad option or value, an invalid name, a command not for this queue kind, a "
        "destructive command without `--yes` off a terminal, empty input to `push`, a `resize` "
        "or `convert` dry run that would refuse (the messages do not fit), a path given with "
        "`--to`/`--from` that cannot be read or written (the line names the path and the "
        "reason)"
    ),
    "EXIT_EMPTY": "queue empty (`pop`)",
    "EXIT_FULL": "queue full (ring `push`); what went in before is still printed",
    "EXIT_NOT_FOUND": (
        "not found: no such queue, message not claimed, a `--schema` (MySQL: database) or a "
        "database named in the DSN that does not exist (the server answered), a `load --from` "
        "folder with no input files"
    ),
    "EXIT_CONNECTION": (
        "connection failed: server unreachable, login failed, connect timeout; a SQLite file "
        "that does not exist, is a folder, is not a regular file or is not a SQLite database; "
        "a Spark job whose Spark Connect server was lost mid-job, or that ran past "
        "`--job-timeout` (the process ends at once)"
    ),
    "EXIT_PERMISSION": "permission missing (the message names the privilege)",
    "EXIT_LOCK_TIMEOUT": (
        "lock or statement timeout, or deadlock: nothing was changed. A read-only command "
        "(`size`, `claims`, `peek`, `ghosts`, `locks`, `fragmentation`, `explain`) waits at "
        "most 1 s for a lock, as each part of `inspect` does, then says who holds it: `lock "
        "wait exceeded 1000 ms: …; blocked by session 4242, which holds AccessExclusiveLock on "
        "the queue table (…)` (`maintain`: the actions it reports `skipped` did not run, the "
        "others did; a REINDEX CONCURRENTLY that gave up and left its INVALID copy is "
        "`failed`, exit 1, not skipped)"
    ),
    "EXIT_MISSING": "an optional dependency is missing (the message says what to install)",
    "EXIT_INCOMPLETE": (
        "`maintain` left work undone without a failure: an action was refused because its lock "
        "blocks the queue (`--allow-blocking` runs it), or a VACUUM ran and kept its dead rows "
        "because a snapshot holds the horizon (its status, `done, N dead rows kept: held by "
        "pid …`, names the holder). A failure (1) or a skipped action (8) takes precedence"
    ),
    "EXIT_UNDELIVERED": (
        "output failed part way: `pop` wrote its messages to a reader that went away (`qadmin "
        "pop q --count 500 \\| head -3`) or to a full disk. It commits only what was "
        "delivered: `qadmin: error: output failed (the reader closed the pipe): delivered 2 of "
        "500; the rest stay in the queue` ([delivery](#delivery): claim queues, rings, and "
        "when the queue cannot take back exactly the undelivered). Any other command whose "
        "output cannot be written (stdout closed, `>&-`, or full, `> /dev/full`) says "
        "`qadmin: error: output failed (No space left on device)` and exits 11 too; what a "
        "command that writes (`push`) did is committed, only its printout is lost. A reader "
        "that goes away (`\\| head -1`) is no failure of a command that only reads (exit 0), "
        "but `push` and the commands that take `--yes` exit 11 (`output failed (the reader "
        "closed the pipe): what was done is done`: their ids are lost), and `check`, "
        "`check --all` and `status` keep their verdict's exit code (a wrapper that stops "
        "reading never turns CRITICAL into OK)"
    ),
    "EXIT_INTERRUPTED": (
        "interrupted by Ctrl-C (SIGINT); SIGHUP is 129 and SIGTERM 143 (128 + the signal, as a "
        "shell reports it), with the same line naming the signal (`qadmin: interrupted "
        "(SIGTERM)`). A multi-step write says what it had done: a stop waits for the "
        "transaction in flight (a `push` chunk of 2,000) to commit or roll back, then `qadmin: "
        "interrupted: pushed 46,000 of 1,000,000 (committed; the rest were not: push only "
        "those again)` (the ids pushed are printed first, as for a full ring); a second stop "
        "ends it at once, and the line says the chunk in flight may or may not be in. A "
        "stopped `convert` says what it left: on MariaDB (resumable steps) that running the "
        "same command again resumes it; elsewhere (one transaction) that either it committed "
        "or nothing changed; a stopped `archive` that running it again into the same folder "
        "deletes what its finished file holds, then goes on"
    ),
}

# docs/kinds.md: each kind of KINDS, its design (the article behind it) and its pop.
KIND_WORDS = {
    "heap": (
        "no order [A]",
        "any unlocked row; concurrent consumers skip each other (READPAST / SKIP LOCKED)",
    ),
    "fifo": (
        "identity key [A]",
        (
            "lowest id first; lax FIFO with concurrent consumers. `--strict`: one consumer at a "
            "time takes the head, the next waits for it to commit, so order holds even when a "
            "consumer rolls back"
        ),
    ),
    "lifo": (
        "a stack on the same table [A]",
        "highest id first (`--strict` as for fifo)",
    ),
    "pending": (
        "due time in UTC [A]",
        (
            "only due messages, earliest first. Push with `--due 2026-12-01T08:00:00` or `--delay "
            "SECONDS`"
        ),
    ),
    "capped": (
        "fixed size N, a push overwrites the oldest [B]",
        "oldest first. A push that overwrites reports `overwritten_id`",
    ),
    "claim": (
        "test-and-set on `processing_started_at` [C]",
        (
            "claims (sets `processing_started_at`, `claimed_by`, `claimed_session`, `attempts`); "
            "`ack ID` deletes, `fail ID --error TEXT [--retry]` records the error (and with "
            "`--retry` releases the claim)"
        ),
    ),
    "ring": (
        "LMAX-style preallocated ring, push and pop sequences [D]",
        (
            "next message by sequence. It never holds more than its capacity, uncommitted pushes "
            "included. Push into a full ring: exit 4, nothing written, no number used. Pop from an "
            "empty ring: exit 3, no number used"
        ),
    ),
}

# docs/profiles.md: the keys of a ``[tables.NAME]`` entry (qadmin.config.TABLE_KEYS), a row
# each or a row for keys that go together, in the order the page lists them.
TABLE_KEY_WORDS = {
    ("table",): "the table (`name`, `schema.name`, quoted parts allowed); default NAME",
    ("order_by",): "the dequeue order's key (an integer or timestamp; never a uuid, text or json)",
    ("time_column",): "enqueue time (a timestamp): the oldest waiting row's age",
    ("due_column",): (
        "run-at time (a timestamp): waiting rows not yet due are not depth ([due "
        "times](#named-queues-and-due-times))"
    ),
    ("queue_column",): (
        "the column naming each row's queue, in a table that holds several ([named "
        "queues](#named-queues-and-due-times))"
    ),
    ("state_column",): "the column holding each row's state",
    ("pending", "scheduled", "retrying", "claimed", "done", "failed"): (
        "lists of that column's values (strings, integers or booleans); `scheduled`: waiting "
        "for a set time, `retrying`: waiting for a retry"
    ),
    ("states",): (
        'a table of conditions instead of a state column: `pending = "dequeued_at IS NULL"`, '
        '`failed = "failed_at IS NOT NULL"`, ... ([states from NULL '
        "columns](#states-from-null-columns))"
    ),
    ("time_unit",): (
        '`"s"`, `"ms"`, `"us"` or `"ns"`: the time columns hold numeric epochs in that unit '
        "([times](#times-epochs-and-time-zones))"
    ),
    ("naive_timezone",): (
        '`"UTC"`: timestamps without a time zone hold UTC (read right whatever the session\'s '
        'zone); `"session"` (default): in the session\'s zone'
    ),
    ("heartbeat",): (
        "a workers table: `table`, `worker_key` (its key, which `worker_column` names), "
        "`beat_column` (its last heartbeat) ([heartbeats](#states-from-null-columns))"
    ),
    ("claimed_at_column",): (
        "when a worker claimed the row (a timestamp); without a state column, a non-NULL value "
        "is a claim"
    ),
    ("worker_column", "session_column"): (
        "who claimed it (a worker's name; a database session id, checked against the server's "
        "sessions)"
    ),
    ("heartbeat_column",): "a claim's last heartbeat kept on its own row (a timestamp)",
    ("attempts_column", "error_column"): (
        "tries so far, the last error (shown with each stale claim, cut to 200 characters)"
    ),
    ("id_column",): "how a row is named in findings and requeue (default: the primary key)",
    ("library",): 'force a library\'s profile as the base (`"none"`: no detection)',
    ("requeue",): (
        "`false` forbids requeue on this table (default: allowed when derivable, see *requeue*)"
    ),
}

# The Parquet type collect writes for telemetry's short type names.
ARROW_SPELLED = {"timestamp": "timestamp[us, UTC]"}


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _same_keys(words: Mapping[str, object], registry: Iterable[str], what: str) -> None:
    names = set(registry)
    if set(words) != names:
        missing, stale = sorted(names - set(words)), sorted(set(words) - names)
        raise SystemExit(f"doc_tables: {what}: no words for {missing}; words for no {stale}")


def capabilities() -> str:
    """docs/kinds.md: each KindSpec capability, the kinds that have it, what it unlocks."""
    _same_keys(CAPABILITY_COMMANDS, CAPABILITIES, "KindSpec capabilities")
    rows = (
        (phrase, ", ".join(str(k) for k in kinds_with(flag)), CAPABILITY_COMMANDS[flag])
        for flag, phrase in CAPABILITIES.items()
    )
    return _table(("capability", "kinds", "commands and options that need it"), rows)


def connections() -> str:
    """docs/commands.md: one row per engine of the engine registry, by its label."""
    _same_keys(CONNECTION_EXAMPLES, engines.NAMES, "engines")
    rows = ((e.label, CONNECTION_EXAMPLES[e.name]) for e in engines.ENGINES)
    return _table(("scheme", "example"), rows)


def _default(metric: diagnostics.Metric) -> str:
    unit = "s" if metric.duration else ""
    levels = (("warn", metric.warn), ("crit", metric.crit))
    return ", ".join(f"{level} {value:g}{unit}" for level, value in levels if value is not None)


def metrics() -> str:
    """docs/diagnostics.md: check's metrics (the ``--warn-X/--crit-X`` options), defaults
    from the diagnostics registry."""
    by_name = {m.name: m for m in diagnostics.metrics()}
    _same_keys(METRIC_WORDS, by_name, "diagnostics metrics")
    rows = []
    for name, (unit, what) in METRIC_WORDS.items():
        metric = by_name[name]
        if metric.duration != (unit == "duration"):
            raise SystemExit(f"doc_tables: {name}: the registry says unit {metric.unit!r}")
        rows.append((f"`{name.replace('_', '-')}`", unit, _default(metric), what))
    return _table(("metric", "unit", "default", "what"), rows)


def telemetry_fields() -> str:
    """docs/diagnostics.md: the fields of a telemetry snapshot (tail --format json, collect's
    Parquet columns), straight from qadmin.ops.telemetry."""
    rows = (
        (f"`{name}`", ARROW_SPELLED.get(ARROW_TYPES[name], ARROW_TYPES[name]), unit, meaning)
        for name, unit, meaning in FIELDS
    )
    return _table(("field", "type", "unit", "meaning"), rows)


def finding_codes() -> set[str]:
    """The codes qadmin's source emits: every ``Finding(severity, "code", ...)``."""
    pattern = re.compile(r'Finding\(\s*[^,()]+,\s*"([a-z_]+)"')
    source = Path(qadmin.__file__).parent
    return {code for path in source.rglob("*.py") for code in pattern.findall(path.read_text())}


def findings() -> str:
    """docs/diagnostics.md: one row per finding code the source emits."""
    _same_keys(FINDING_WORDS, finding_codes(), "finding codes")
    rows = ((f"`{code}`", *words) for code, words in FINDING_WORDS.items())
    return _table(("code", "severity", "what it means", "what to do"), rows)


# docs/libraries.md: what the library profiles registry (qadmin.profiles.libraries.SHAPES)
# does not hold, keyed by each shape's ``library``. The engines, tables, states, named-queue
# and due columns, time zones, ``requeue``'s change and redrive's change are read from the
# profiles; these words say the rest.
class LibraryWords(NamedTuple):
    title: str  # the library and the versions read
    stale: str  # how a stale claim is told (must name the heartbeat or claim-time column)
    requeue: str  # after "yes: <the release>, " or "no: ": the library's own recovery
    verified: str  # the test (a tests/... path must exist) and what it was checked against
    per_queue: str = ""  # checked per named queue against (a live library with a queue column)
    engines: str = ""  # after the engines
    tables: str = ""  # after the table names: schemas, the named queue, what is not read
    states: str = ""  # after the states: how a derived state is derived, what values mean
    queues: str = ""  # after the named-queue column
    due: str = ""  # after the due column
    not_due: str = ""  # after the not-due states


LIBRARY_WORDS = {
    "procrastinate": LibraryWords(
        title="procrastinate 3.x",
        stale="`doing` whose worker (`worker_id`) has no heartbeat in "
        "`procrastinate_workers.last_heartbeat` newer than max(`--stale-after`, 30 s: 3 × its "
        "default heartbeat interval), or no worker row (`worker_id` NULL once procrastinate "
        "pruned the dead worker); the claim's time is its latest `started` event in "
        "`procrastinate_events`",
        requeue="as its own `procrastinate_retry_job` does (its status trigger records the event)",
        verified="tests/libraries/test_procrastinate.py",
        per_queue="queues `work` and `idle`: depth, scheduled, retrying (a "
        "`RetryStrategy(wait=3600)` retry: `todo`, attempted, an hour ahead), running, failed "
        "and stale per queue equal its own `list_jobs` read by due time",
        due="(NULL: due now)",
        not_due="(its retry sets `scheduled_at`)",
    ),
    "pgqueuer": LibraryWords(
        title="pgqueuer 1.x",
        stale="`picked` whose own `heartbeat` column is older than `--stale-after` (worker: "
        "`queue_manager_id`)",
        requeue="pgqueuer's workers re-pick a picked job whose heartbeat is older than their "
        "`heartbeat_timeout` themselves",
        verified="tests/libraries/test_pgqueuer.py",
        per_queue="entrypoints `later`, `ok`, `sleepy`, `boom`: per entrypoint against its own "
        "`queue_size` (which counts the jobs ahead too); pgqueuer retries in its worker's "
        "memory, so no retry waits in the table",
        states="(finished jobs leave the table unless held)",
        queues="(pgqueuer's queues are its entrypoints)",
    ),
    "kombu": LibraryWords(
        title="kombu 5.x, SQLAlchemy transport",
        engines="(recognised on SQL Server, not run there)",
        stale="none visible: the transport keeps no acknowledgement in the table, so a message "
        'whose consumer died is already "delivered"',
        requeue="nothing in the table to release",
        verified="on all three: tests/libraries/test_kombu.py",
        per_queue="against kombu's own size of each queue",
        states="(`false`: delivered, kept, never delivered again)",
        queues="(the id of the queue's `kombu_queue` row; `--queue` takes its name, "
        "`kombu_queue.name`, or the id: `--queue celery` or `--queue 2`; output shows the name)",
        due="(no delayed delivery in the transport: nothing is scheduled)",
    ),
    "django-q2": LibraryWords(
        title="django-q2 1.x, ORM broker",
        stale="a locked task is a lease: it becomes waiting again when `lock` passes (the "
        "cluster's `retry`); its claim time is not kept, so `claims` lists a locked task with "
        "its age unknown (`claims_unread`)",
        requeue="django-q2 redelivers a task once its lease passes",
        verified="on all three: tests/libraries/test_django_q2.py",
        per_queue="against the broker's own `queue_size` and `lock_size` of each cluster",
        tables="(a schedule waits in `django_q_schedule`, not read, until the cluster's "
        "scheduler enqueues it when due)",
        states='(from `lock`, "locked until": in the future locked, else available; finished '
        "tasks are deleted)",
        queues="(the cluster's name)",
        due="(`lock`: a task is waiting once its lock passes)",
    ),
    "pg-boss": LibraryWords(
        title="pg-boss 10",
        stale="`active` with `started_on` older than `--stale-after` (pg-boss 10 keeps no "
        "worker heartbeat)",
        requeue="its maintenance fails an active job past `expire_in` and retries it per "
        "`retry_limit`",
        verified="tests/libraries/test_pg_boss.py",
        per_queue="queues `work` and `idle`: per queue against its fetch condition (`state < "
        "'active' AND start_after < now()`) and `getQueueSize` (which counts the jobs ahead "
        "too); a `retryDelay: 3600` retry is `retrying`",
        tables="(schema `pgboss`; partitioned by queue, read through the parent)",
    ),
    "graphile-worker": LibraryWords(
        title="graphile-worker 0.16",
        stale="locked with `locked_at` older than `--stale-after` (worker: `locked_by`; no "
        "heartbeat)",
        requeue="`graphile_worker.force_unlock_workers()` also unlocks the job's named queue, "
        "which an UPDATE of the job row alone would leave locked",
        verified="tests/libraries/test_graphile_worker.py",
        per_queue="named queues `orders` and `mailers`, through the view, against its own rows; "
        "its retry backoff (about e^attempts seconds) is too short to hold a retry an hour "
        "ahead, so none is tested",
        tables="(schema `graphile_worker`; `jobs` is its documented view: no index, so counted "
        "bounded)",
        states="(`locked_at` set: locked; `attempts >= max_attempts`: failed, kept; finished "
        "jobs are deleted)",
        queues="(`_private_jobs` keeps only `job_queue_id`: `--queue` needs the view)",
    ),
    "river": LibraryWords(
        title="River",
        stale="`running` with `attempted_at` older than `--stale-after`",
        requeue="River's rescuer moves stuck running jobs back to retryable (or discards them)",
        verified="tests/libraries/test_shapes.py",
        states="(`pending` waits for an outside action)",
    ),
    "oban": LibraryWords(
        title="Oban (Elixir), and Oban for Python 0.7 (PyPI `oban`)",
        stale="`executing` whose producer (`attempted_by[2]`, the producer's uuid) has no "
        "`oban_producers.updated_at` newer than max(`--stale-after`, 60 s: Oban for Python's "
        "refresher prunes producers silent that long; it beats every 15 s), or no producer "
        "row. Without `oban_producers` (Elixir Oban without Pro) an `executing` job with "
        "`attempted_at` older than `--stale-after`",
        requeue="Oban's Lifeline plugin rescues orphaned executing jobs (by age: "
        "`rescue_after`, 5 min in Python)",
        verified="Oban for Python: tests/libraries/test_oban.py; Elixir Oban: shape only",
        per_queue="two queues, each worked by its own `Oban` instance, one SIGKILLed mid-job: "
        "depth, scheduled, retrying, running, stale and oldest per queue equal Oban's own "
        "`count_jobs` per queue and state; the stale job is the one whose producer Oban's "
        "refresher prunes (`cleanup_expired_producers`), the live worker's long job is not; "
        "ages read under `Asia/Tokyo`",
        states="(`suspended`, Oban Pro's workflows: held until other jobs finish, installed by "
        "Oban for Python, never set by it, is counted apart, not waiting)",
    ),
    "chancy": LibraryWords(
        title="chancy 0.26",
        stale="`running` whose worker (`taken_by`) has no `chancy_workers.last_seen` newer than "
        "max(`--stale-after`, 90 s: its `heartbeat_timeout`), or no worker row",
        requeue="its Recovery plugin gives such jobs back itself (and raises their "
        "`max_attempts`: more than the row's claim)",
        verified="tests/libraries/test_chancy.py",
        per_queue="two queues, each worked by its own `Worker` (tagged), one SIGKILLed: depth "
        "per queue equals what its fetch would take now (its `fetch_jobs` condition); "
        "scheduled and retrying (an hour ahead) apart; the stale job is the one its Recovery "
        "plugin gives back (run in a rolled-back transaction), the live worker's is not",
        tables="(default prefix `chancy_`)",
        states="(`retrying`: its Retry plugin's backoff, in `scheduled_at`)",
    ),
    "dramatiq-pg": LibraryWords(
        title="dramatiq-pg 0.12",
        stale="`consumed` while no session holds the message's advisory lock "
        "(`dramatiq_pg.broker.message_lock`, computed in SQL and looked up in `pg_locks`): its "
        "consumer's session ended, whatever the claim's age; a live consumer's long job is "
        "never stale",
        requeue="as its own `dramatiq-pg recover` does (by age; qadmin only for messages whose "
        "lock is gone)",
        verified="tests/libraries/test_dramatiq_pg.py",
        per_queue="two queues, a dramatiq `Worker` each, one SIGKILLed: depth per queue equals "
        "its `queued` count; stale are exactly the messages whose advisory lock a new session "
        "can take (dramatiq-pg's own rule for taking a message again: the killed worker's "
        "running and delayed ones), never the live worker's; `requeue` gives them back and a "
        "new worker runs them",
        tables="(schema `dramatiq`)",
        queues="(a delayed message waits in `<queue>.DQ`)",
        due="(the eta is inside the message, `options.eta`, epoch ms)",
        not_due="(the `.DQ` queues' rows are the scheduled ones)",
    ),
    "solid-queue": LibraryWords(
        title="Solid Queue",
        stale="a claim whose process (`process_id`) has no "
        "`solid_queue_processes.last_heartbeat_at` newer than max(`--stale-after`, 300 s: its "
        "process_alive_threshold), or no process row",
        requeue="its supervisor releases the claims of a process whose heartbeat expired",
        verified="tests/libraries/test_shapes.py",
        states="(every row of the claimed executions is a claim)",
        due="(a due scheduled execution is depth until its dispatcher moves it to the ready "
        "executions)",
    ),
    "good_job": LibraryWords(
        title="GoodJob",
        stale="`running` whose process (`locked_by_id`) has no `good_job_processes.updated_at` "
        "newer than `--stale-after`",
        requeue="claims are advisory locks that end with the session, and GoodJob runs the job "
        "again",
        verified="tests/libraries/test_shapes.py",
        states="(as its scopes derive them: finished with an error discarded; finished "
        "succeeded; performed running; `scheduled_at` ahead scheduled; else queued)",
    ),
    "que": LibraryWords(
        title="Que 1.x/2.x",
        stale="none visible: a job being worked is held by an advisory lock, not a column",
        requeue="the lock ends with the worker's session",
        verified="tests/libraries/test_shapes.py",
        states="(`finished_at` set: finished; `expired_at` set: expired)",
        queues="(1.x and later)",
    ),
    "delayed_job": LibraryWords(
        title="Delayed::Job",
        stale="locked with `locked_at` older than `--stale-after` (worker: `locked_by`)",
        requeue="as its own `Delayed::Job.clear_locks!` does",
        verified="tests/libraries/test_shapes.py",
        states="(`failed_at` set: failed; `locked_at` set: locked; finished jobs are deleted)",
        queues="(where the column exists; `--queue-null` reads the jobs that name none)",
    ),
    "hangfire": LibraryWords(
        title="Hangfire (Hangfire.PostgreSql; SQL Server)",
        stale="a fetched `jobqueue` row with `fetchedat` older than `--stale-after`",
        requeue="Hangfire fetches a row again once its invisibility timeout passes",
        verified="tests/libraries/test_shapes.py; SQL Server: detection only, no server here",
        tables="(schema `hangfire` on PostgreSQL, lower-case; `HangFire` on SQL Server, "
        "PascalCase)",
    ),
    "django-tasks": LibraryWords(
        title="django-tasks' database backend (`django_tasks.backends.database` to "
        "django-tasks 0.11; django-tasks-db 0.13 since, the same table)",
        stale="RUNNING with `started_at` older than `--stale-after`: no heartbeat, so a live "
        "task running longer is stale too",
        requeue="the backend recovers nothing itself (a dead worker's task stays RUNNING); "
        "enqueue it again with its own API",
        verified="on all three: tests/libraries/test_django_tasks.py",
        per_queue="its `ready()`, `running()`, `failed()` querysets",
        states="(SCHEDULED: READY with `run_after` still ahead and before year 9000; no retries)",
        due="(`run_after`, read in the state: a task enqueued without one holds the sentinel "
        '9999-01-01, "whenever", which a due column would call never due; a waiting task\'s '
        "age runs from its `run_after` when one is set and later than its `enqueued_at`, else "
        "from `enqueued_at`)",
    ),
    "huey": LibraryWords(
        title="huey 2.x/3.x, SQLite storage (`SqliteHuey`)",
        stale="none visible: a running task is not in the database (a killed consumer's task is "
        "lost, for huey too)",
        requeue="nothing in the table to release",
        verified="both tables: tests/libraries/test_huey.py",
        per_queue="its `pending_count()` and its `scheduled()` tasks' etas",
        tables="(`task`: the waiting tasks, deleted when a consumer takes one; `schedule`: the "
        "tasks with an eta)",
        states="(no enqueue time, so no oldest age on `task`)",
        queues="(the huey instance's name)",
        not_due="(a retry with a `retry_delay` is a `schedule` row like any other; a due one "
        "is depth until the consumer's scheduler moves it into `task`)",
    ),
    "persist-queue": LibraryWords(
        title="persist-queue 1.x, SQLite queues",
        stale="none can be told: an unacked item keeps no claim time and no owner, so `claims` "
        "lists every one with its age unknown (exit 1) and `inspect`/`check` warn "
        "`claims_unread`, for a live consumer's item as for a dead one's",
        requeue="persist-queue's own `resume_unack_tasks()` (run when a queue is opened with "
        "`auto_resume`, its default) gives every unacked item back, live consumer or not; run "
        "it when no consumer is running",
        verified="`ack_queue_NAME` with two named queues and a consumer killed mid-item; the "
        "FILO, unique and plain queues through persist-queue's own put/get in the test's "
        "process: tests/libraries/test_persist_queue.py",
        per_queue="its `qsize()`, `unack_count()`, `acked_count()`, `ack_failed_count()`",
        tables="(one table per named queue, NAME the queue: `SQLiteAckQueue`, "
        "`FILOSQLiteAckQueue` newest first, `UniqueAckQ`, `SQLiteQueue` with no acks)",
        states="(0 inited, 1 ready: nack'ed, 2 unack, 5 acked, 9 ack_failed)",
        queues="(a table per named queue)",
    ),
}

# docs/libraries.md#dead-jobs-and-redrive: what each library's own retry is, for the
# libraries whose profile has a ``Retry`` (redrive's change is read from it).
RETRY_WORDS = {
    "procrastinate": "its admin's retry of a failed job; priority, queue and lock kept",
    "river": "River does not run here; checked on a table of its shape",
    "oban": "`retry_many_jobs.sql` in Oban for Python",
}

GROUP_WORDS = {
    "pending": "waiting",
    "scheduled": "scheduled",
    "retrying": "waiting for a retry",
    "claimed": "claimed",
    "done": "done",
    "failed": "failed",
}


def _shapes() -> dict[str, list[LibraryShape]]:
    by_library: dict[str, list[LibraryShape]] = {}
    for shape in SHAPES:
        by_library.setdefault(shape.library, []).append(shape)
    return by_library


def _code(value: object) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"`{text}`"


def _values(values: Iterable[object]) -> str:
    return ", ".join(_code(v) for v in values)


def _with(generated: str, words: str) -> str:
    return f"{generated} {words}".strip() if words else generated


def _per_table(shapes: list[LibraryShape], cell: Callable[[Profile], str]) -> str:
    """One cell for a library's tables: the text once where every table reads alike, else
    each text after the tables it holds for."""
    by_text: dict[str, dict[str, str]] = {}
    for shape in shapes:
        for table in shape.tables:
            name = table.replace("*", "NAME")
            by_text.setdefault(cell(shape.profile), {}).setdefault(name.lower(), name)
    if len(by_text) == 1:
        return next(iter(by_text))
    return "; ".join(
        f"{', '.join(f'`{t}`' for t in tables.values())}: {text}"
        for text, tables in by_text.items()
    )


def _states(profile: Profile) -> str:
    groups = "; ".join(
        f"{_values(getattr(profile, group))} {words}"
        for group, words in GROUP_WORDS.items()
        if getattr(profile, group)
    )
    if profile.state_column is not None:
        return f"`{profile.state_column}`: {groups}"
    if profile.state_sql is not None:
        return f"derived: {groups}"
    return "no state: every row waits"


def _engines(shapes: list[LibraryShape]) -> str:
    names = {SCHEMES[d] for shape in shapes for d in shape.dialects}
    return ", ".join(e.label for e in engines.ENGINES if e.name in names)


def _tables(shapes: list[LibraryShape]) -> str:
    names = dict.fromkeys(t.replace("*", "NAME") for shape in shapes for t in shape.tables)
    return ", ".join(f"`{name}`" for name in names)


def _release(shapes: list[LibraryShape]) -> str | None:
    for profile in (s.profile for s in shapes):
        if profile.release is not None:
            parts = []
            if profile.release.state is not None:
                parts.append(f"`{profile.state_column}` back to {_code(profile.release.state)}")
            if profile.release.clear:
                parts.append(f"{', '.join(f'`{c}`' for c in profile.release.clear)} cleared")
            return ", ".join(parts)
    return None


def _names_in(words: str, shapes: list[LibraryShape]) -> list[str]:
    """The columns the stale-claim words must name: where a claim's liveness is read."""
    needed = []
    for p in (s.profile for s in shapes):
        if p.heartbeat is not None:
            needed.append(f"`{p.heartbeat.table}.{p.heartbeat.beat_column}`")
            if p.heartbeat_floor_s:
                needed.append(f"{p.heartbeat_floor_s:g} s")
        elif p.heartbeat_column is not None:
            needed.append(f"`{p.heartbeat_column}`")
        elif p.claimed_at_column is not None and p.claim_alive_sql is None:
            needed.append(f"`{p.claimed_at_column}`")
    return [n for n in needed if n.lower() not in words.lower()]


def _verified(shape: LibraryShape, words: str) -> str:
    for path in re.findall(r"tests/[\w/]+\.py", words):
        if not (REPO / path).exists():
            raise SystemExit(f"doc_tables: {shape.library}: {path} does not exist")
    return f"{'live' if shape.verified == 'live' else 'shape only'} ({words})"


def libraries() -> str:
    """docs/libraries.md: one row per library of the profiles registry."""
    by_library = _shapes()
    _same_keys(LIBRARY_WORDS, by_library, "library profiles")
    rows = []
    for library, shapes in by_library.items():
        words = LIBRARY_WORDS[library]
        missing = _names_in(words.stale, shapes)
        if missing:
            raise SystemExit(f"doc_tables: {library}: the stale-claim words do not name {missing}")
        release = _release(shapes)
        requeue = f"yes: {release}, {words.requeue}" if release else f"no: {words.requeue}"
        rows.append(
            (
                words.title,
                _with(_engines(shapes), words.engines),
                _with(_tables(shapes), words.tables),
                _with(_per_table(shapes, _states), words.states),
                words.stale,
                requeue,
                _verified(shapes[0], words.verified),
            )
        )
    header = ("library (version read)", "engines", "table(s)", "states", "stale claim")
    return _table((*header, "`requeue`", "verified"), rows)


def _queue_column(profile: Profile) -> str:
    return f"`{profile.queue_column}`" if profile.queue_column else "—"


def _due_column(profile: Profile) -> str:
    if profile.due_column is None:
        return "—"
    unit = f" (epoch {TIME_UNITS_SPELLED[profile.time_unit]})" if profile.time_unit else ""
    return f"`{profile.due_column}`{unit}"


def _not_due(profile: Profile) -> str:
    """As qadmin.diagnostics.entries.size._not_due counts them."""
    later = _values((*profile.pending, *profile.scheduled))
    if profile.due_column is None:
        parts = [f"{_values(profile.scheduled)}: scheduled"] if profile.scheduled else []
        parts += [f"{_values(profile.retrying)}: retrying"] if profile.retrying else []
        return "; ".join(parts) or "—"
    if not later:
        later = "every row"
    if profile.retrying:
        return f"{later} not due: scheduled; {_values(profile.retrying)} not due: retrying"
    if profile.attempts_column is not None:
        tries = profile.attempts_column
        return f"{later} not due: retrying when `{tries}` > 0, else scheduled"
    return f"{later} not due: scheduled"


def _times(profile: Profile) -> str:
    if profile.time_unit is not None:
        return f"epoch {TIME_UNITS_SPELLED[profile.time_unit]}"
    if not (profile.time_column or profile.due_column or profile.claimed_at_column):
        return "—"
    return "UTC (read as UTC in any session zone)" if profile.naive_utc else "with time zone"


def library_queues() -> str:
    """docs/libraries.md#named-queues-and-due-times: each library's named-queue and due
    columns, its not-due states and how its times are read, from the profiles registry."""
    by_library = _shapes()
    _same_keys(LIBRARY_WORDS, by_library, "library profiles")
    rows = []
    for library, shapes in by_library.items():
        words = LIBRARY_WORDS[library]
        if shapes[0].verified == "live" and not words.per_queue:
            raise SystemExit(f"doc_tables: {library}: live, but no per_queue words")
        rows.append(
            (
                f"`{library}`",
                _with(_per_table(shapes, _queue_column), words.queues),
                _with(_per_table(shapes, _due_column), words.due),
                _with(_per_table(shapes, _not_due), words.not_due),
                _per_table(shapes, _times),
                words.per_queue or "shape only",
            )
        )
    header = ("library", "named-queue column", "due column", "not due: scheduled / retrying")
    return _table((*header, "times", "checked per named queue against"), rows)


def _sql_words(template: str) -> str:
    return template.replace("{qadmin_clock}", "now").replace(".bare}", "").replace("{", "")


def library_retries() -> str:
    """docs/libraries.md#dead-jobs-and-redrive: redrive's change for each library whose
    profile has the library's own retry (``Profile.retry``)."""
    retried = {s.library: s.profile for s in SHAPES if s.profile.retry is not None}
    _same_keys(RETRY_WORDS, retried, "library retries")
    rows = []
    for library, profile in retried.items():
        retry = profile.retry
        assert retry is not None
        sets = [f"`{column}` = `{_sql_words(value)}`" for column, value in retry.sets]
        change = "; ".join(
            [f"`{profile.state_column}` {_values(profile.failed)} → {_code(retry.state)}", *sets]
        )
        rows.append((f"`{library}`", f"{retry.source}: {RETRY_WORDS[library]}", change))
    return _table(("library", "its own retry", "the row change"), rows)


def prometheus_metrics() -> str:
    """docs/monitoring.md: one row per metric family qadmin metrics exposes."""
    _same_keys(METRIC_FAMILY_WORDS, (f.name for f in FAMILIES), "metric families")
    rows = ((f"`{f.name}`", f.type, METRIC_FAMILY_WORDS[f.name]) for f in FAMILIES)
    return _table(("metric", "type", "what"), rows)


def exit_codes() -> str:
    """docs/cli.md: one row per exit code of qadmin.errors, in order."""
    codes = {k: v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    _same_keys(EXIT_WORDS, codes, "exit codes")
    rows = ((str(code), EXIT_WORDS[name]) for name, code in sorted(codes.items(), key=_second))
    return _table(("code", "meaning"), rows)


def _second(item: tuple[str, int]) -> int:
    return item[1]


def kinds() -> str:
    """docs/kinds.md: one row per kind of KINDS."""
    _same_keys(KIND_WORDS, (str(k) for k in KINDS), "kinds")
    rows = ((f"`{kind}`", *KIND_WORDS[str(kind)]) for kind in KINDS)
    return _table(("kind", "design", "pop"), rows)


def table_keys() -> str:
    """docs/profiles.md: the keys a ``[tables.NAME]`` entry takes (qadmin.config.TABLE_KEYS)."""
    listed = [key for keys in TABLE_KEY_WORDS for key in keys]
    if len(listed) != len(set(listed)):
        raise SystemExit("doc_tables: a [tables.NAME] key has two rows")
    _same_keys(dict.fromkeys(listed), TABLE_KEYS, "[tables.NAME] keys")
    rows = ((", ".join(f"`{k}`" for k in keys), what) for keys, what in TABLE_KEY_WORDS.items())
    return _table(("key", "what"), rows)
