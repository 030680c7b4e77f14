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

from collections.abc import Iterable, Mapping

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
    "dead_letters": "`create --max-attempts`, `alter --max-attempts`, `dead`, `redrive`",
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
    "snapshot_age": (
        "duration",
        "oldest snapshot / open transaction; by default `snapshot_held` is reported only while"
        " it holds back dead rows (1,000 on PostgreSQL, a history list of 100,000 on InnoDB); a"
        " threshold given judges any snapshot",
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
