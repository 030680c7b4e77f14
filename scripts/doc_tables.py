"""The tables in docs/ that mirror qadmin's registries, generated with cog (cogapp).

Each page holds a block ``<!-- [[[cog import doc_tables; cog.out(doc_tables.NAME()) ]]] -->``
... ``<!-- [[[end]]] -->``; what is between is this module's output. After changing a registry
(kinds, engines, diagnostics metrics, telemetry fields), regenerate the pages:

    PYTHONPATH=src cog -r -I scripts docs/*.md

``tests/unit/test_docs.py`` runs ``cog --check`` on them, so a registry that drifts from its
table fails the tests. What a registry does not hold (an example DSN, the commands a capability
unlocks, a metric's unit in words) is written here once, keyed by the registry's names: a new
entry without its words fails here rather than printing a row with a hole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import qadmin
from qadmin.diagnostics import registry as diagnostics
from qadmin.engines import registry as engines
from qadmin.kinds import CAPABILITIES, kinds_with
from qadmin.ops.telemetry import ARROW_TYPES, FIELDS

# docs/kinds.md: the commands and options each capability flag of KindSpec unlocks.
CAPABILITY_COMMANDS = {
    "needs_capacity": "`create --capacity` (required)",
    "allows_strict": "`create --strict`",
    "allows_watermark": "`create --watermark` (then `watermark`)",
    "due": "`push --due/--delay`, a `due_at` column in `load`'s input",
    "claims": "`ack`, `fail`, `requeue`, `export/archive --state`",
    "dead_letters": "`create --max-attempts`, `alter --max-attempts`, `dead`, `discard`, `redrive`",
    "ring": "`repair`",
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
    "dead": ("messages", "dead letters in `QUEUE_dead` (claim queues), counted up to 10,000"),
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
        " the line says `snapshot_age not evaluable: ...` naming the privilege, UNKNOWN (3) when"
        " nothing else is wrong",
    ),
    "ring_fill": ("fraction", "ring depth / capacity (rings; full refuses pushes)"),
    "ring_stall": (
        "duration",
        "how long pops have stopped at a number whose pusher died (rings)",
    ),
    "watermark_stranded": ("messages", "messages below the watermark (watermarked queues)"),
    "backlog_growth": (
        "messages/s",
        "depth growth over `--sample` (default 1 s; `0` skips rates)",
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
        "sequences; `check` says WARNING, not OK)",
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
        "a drop stopped half-way: on an engine without transactional DDL (MariaDB/MySQL) `drop` "
        "marks the catalog entry `dropping`, drops the objects one by one (routines first) and "
        "removes the entry last; one stopped between (a lock timeout on the table) leaves push "
        "and pop failing while the table and entry remain",
        "`qadmin drop QUEUE --dry-run`, then `qadmin drop QUEUE --yes` finishes the drop "
        "(`IF EXISTS`, the entry last)",
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
