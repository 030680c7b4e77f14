"""Reading a table through its profile within the cost rules: depth, states, oldest waiting
row, claims, and giving a stale claim back.

The SQL is ``sql/queues/<dialect>/profile.sql``, filled by qadmin.sqltext with the profile's
columns (checked against the catalog) as names; the ``{filter}``-style keywords are built here
from those names and fixed text, and every state value is a bound parameter. A figure is read
only when it is cheap: the table is small (a bounded count says so), or an index fits the
query (``TableShape.index_leading``); otherwise it comes from the planner's estimate and says
so, or it is not read and a note names the index that would make it cheap.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from qadmin import sqlfiles
from qadmin.catalog import sql
from qadmin.engines.base import Engine
from qadmin.errors import UnsupportedError, UsageError
from qadmin.profiles.model import TIME_UNITS, Profile, Value
from qadmin.profiles.shape import TableShape
from qadmin.values import to_utc

# A count stops here: above it the figure is "at least this many" or an estimate.
COUNT_LIMIT = 100_001
# On a big table a state is counted (through its index) only when the planner puts it under
# this: its estimate can be 2x off (InnoDB's index dives), and counting a majority state
# would read ~COUNT_LIMIT index entries or scan the table.
SMALL_STATE = 10_000
# A state with fewer rows than this (by the planner) is walked through its index to count the
# rows of it that are due: its due count is exact, where the planner's would be a guess.
DUE_SCAN_LIMIT = 50_000
CLAIMS_SHOWN = 1000
HEARTBEATS_READ = 10_000
# The keyword a library's state template writes for "now" (Reader.template).
CLOCK = "qadmin_clock"
# An epoch that reads as a time before this is in a larger unit than the one given (epoch
# seconds read as milliseconds are January 1970: an age of 56 years): refused, never judged.
EPOCH_FLOOR = datetime(2000, 1, 1, tzinfo=UTC)
GROUPS = ("pending", "scheduled", "retrying", "claimed", "done", "failed")
QUEUES_SHOWN = 1000
_KEY = re.compile(r"[a-z_][a-z0-9_]*")


def state_text(value: object) -> str | None:
    """A state value as output shows it: NULL stays null (never the text "None"), a boolean
    is true/false as on every engine (MariaDB's 1 for kombu's true is read as an int)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class Count:
    """One figure: its rows (None: not read), whether counted exactly, and from where."""

    rows: int | None
    exact: bool
    source: str | None = None  # None: counted
    # A planner's estimate from its statistics (pg_stats' fractions, InnoDB's index dives):
    # its error grows with the age of the last ANALYZE, with no bound (60,000 rows analyzed
    # and 120,000 pushed since read as 18,000 for 126,000). Only ``counted`` bounds it below.
    planner: bool = False
    counted: int | None = None  # rows seen by a count (None: rows, when exact or a floor)

    @property
    def seen(self) -> int:
        """Rows a count saw: the truth is at least this."""
        if self.counted is not None:
            return self.counted
        return 0 if self.planner or self.rows is None else self.rows


def total(counts: list[Count]) -> Count:
    """The sum of some counts: unknown if one is, exact only if all are, a planner's
    estimate if one is (at least the rows the counts saw)."""
    if any(c.rows is None for c in counts):
        return Count(None, False, next(c.source for c in counts if c.rows is None))
    sources = sorted({c.source for c in counts if c.source})
    rows = sum(c.rows or 0 for c in counts)
    planner = any(c.planner for c in counts)
    seen = sum(c.seen for c in counts) if planner else None
    return Count(rows, all(c.exact for c in counts), "; ".join(sources) or None, planner, seen)


@dataclass
class Reader:
    """One profiled table on one connection."""

    engine: Engine
    profile: Profile
    shape: TableShape
    notes: list[str] = field(default_factory=list)
    _small: bool | None = None
    _estimate: int | None = None

    # -- SQL text -----------------------------------------------------------------------------

    def _file(self) -> sqlfiles.SqlFile:
        found = self.engine.hooks.sql_file("queues", "profile")
        if found is None:
            raise UnsupportedError(
                f"tables qadmin did not create are not read on {self.engine.dialect}"
            )
        return found

    def section_text(self, section: str) -> str:
        return self._file().statements(section)[0]

    def has(self, section: str) -> bool:
        return self._file().has(section)

    def name(self, column: str) -> str:
        return self.engine.hooks.render_text("{c.bare}", {"c": column})

    def _timed(self, section: str, column: str) -> str:
        """A time section for ``column``: its ``_epoch`` form (scaled by the profile's unit)
        when the profile's times are numeric epochs."""
        unit = self.profile.time_unit
        keywords = {}
        if unit is not None:
            section, keywords = f"{section}_epoch", {"scale": str(TIME_UNITS[unit])}
        text = self._file().statements(section)[0]
        return self.engine.hooks.render_text(text, {"col": column}, keywords)

    def age(self, column: str) -> str:
        """SQL for the seconds since the time in ``column``, by the server's clock."""
        return self._timed("age", column)

    def dead_worker(self, names: dict[str, str]) -> str:
        """SQL true while a claim's worker has no heartbeat newer than :beat_s."""
        unit = self.profile.time_unit
        if unit is None:
            return self.engine.hooks.render_text(self.section_text("dead_worker"), names)
        text = self.section_text("dead_worker_epoch")
        return self.engine.hooks.render_text(text, names, {"scale": str(TIME_UNITS[unit])})

    def due(self, column: str) -> str:
        """SQL true when the time in ``column`` has come (an index on it still fits)."""
        return self._timed("due", column)

    def instant(self, column: str) -> str:
        """SQL for ``column`` as an instant (PostgreSQL reads a naive timestamp in the
        session's TimeZone); the column itself where the engine has no such section, or
        where it holds epoch numbers (``when`` converts those)."""
        if self.profile.time_unit is not None or not self.has("instant"):
            return self.name(column)
        return self.engine.hooks.render_text(self._file().statements("instant")[0], {"col": column})

    def when(self, value: object, column: str | None) -> datetime | None:
        """A time read back as a UTC instant; one line (exit 2) for a value that is not one
        (an epoch in another unit than the profile says, a year past 9999)."""
        unit = self.profile.time_unit
        where = f"{self.profile.table}.{column or 'time'}"
        try:
            if unit is not None and isinstance(value, int | float | Decimal):
                instant = datetime.fromtimestamp(float(value) / TIME_UNITS[unit], UTC)
                if float(value) > 0 and instant < EPOCH_FLOOR:
                    # a unit too small (seconds read as ms: an age of 56 years), never judged
                    raise UsageError(
                        f"{where}: {repr(value)[:40]} is not an epoch in {unit}: it reads as "
                        f"{instant:%Y-%m-%d}, before {EPOCH_FLOOR:%Y}; give the unit the "
                        "column holds (--time-unit s, ms, us or ns, or time_unit in "
                        "[tables.NAME])"
                    )
                return instant
            return to_utc(value)
        except (OverflowError, OSError, ValueError, TypeError):
            shown = repr(value)[:40]
            hint = (
                f"not an epoch in {unit}"
                if unit
                else "not a time (numbers are read as epoch seconds: give --time-unit ms, us "
                "or ns, or time_unit in [tables.NAME])"
            )
            raise UsageError(f"{where}: {shown} is {hint}") from None

    @property
    def state(self) -> str | None:
        """The state as SQL: the column, the registry's CASE template over the columns, or
        a declared table's NULL-ness conditions (qadmin.statewhen) with quoted names."""
        if self.profile.state_column is not None:
            return self.name(self.profile.state_column)
        if self.profile.state_sql is not None:
            return self.template(self.profile.state_sql)
        if self.profile.state_when:
            arms = [
                "WHEN "
                + " AND ".join(
                    f"{self.name(c)} IS {'' if null else 'NOT '}NULL" for c, null in terms
                )
                + f" THEN '{group}'"
                for group, terms in self.profile.state_when
            ]
            return "CASE " + " ".join(arms) + " ELSE 'other' END"
        return None

    def template(self, text: str) -> str:
        """A registry template over the table's columns (``{column.bare}``) as SQL, and
        ``{qadmin_clock}``: the server's current time at the precision a library's times
        have (profile.sql's ``clock``: SQLite's CURRENT_TIMESTAMP and MariaDB's keep whole
        seconds, so a run-at time would stay ahead for up to a second after it passed)."""
        names = {
            c.name: c.name for c in self.shape.columns if _KEY.fullmatch(c.name) and c.name != CLOCK
        }
        clock = "CURRENT_TIMESTAMP"
        if self.has("clock"):
            lines = self.section_text("clock").splitlines()
            clock = " ".join(x for x in lines if not x.lstrip().startswith("--")).strip()
        return self.engine.hooks.render_text(text, names, {CLOCK: clock})

    def where(
        self,
        values: tuple[Value, ...],
        due: bool | None = None,
        *,
        whole: bool = False,
        extra: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """``state = :v0 OR state = :v1 ...`` with the values bound, in the named queue asked
        about (unless ``whole``), due or not due (``due``; NULL is due), and ``extra`` (fixed
        SQL of qadmin's) ("1 = 1": every row)."""
        parts: list[str] = []
        params: dict[str, Any] = {}
        state = self.state
        if state is not None and values:
            params = {f"v{i}": v for i, v in enumerate(values)}
            parts.append("(" + " OR ".join(f"{state} = :{k}" for k in params) + ")")
        profile = self.profile
        if not whole and profile.queue is not None and profile.queue_column is not None:
            parts.append(f"{self.name(profile.queue_column)} = :queue_name")
            params["queue_name"] = profile.queue
        elif not whole and profile.queue_null and profile.queue_column is not None:
            parts.append(f"{self.name(profile.queue_column)} IS NULL")
        if due is not None and profile.due_column is not None:
            column = profile.due_column
            if due:
                parts.append(f"({self.name(column)} IS NULL OR {self.due(column)})")
            else:
                parts.append(f"NOT ({self.due(column)})")
        if extra:
            parts.append(extra)
        return " AND ".join(parts) or "1 = 1", params

    def run(
        self,
        section: str,
        keywords: dict[str, str],
        params: dict[str, Any],
        names: dict[str, str] | None = None,
        *,
        write: bool = False,
    ) -> list[dict[str, Any]]:
        statements = [
            self.engine.hooks.render_text(
                s, {"table": self.profile.table, **(names or {})}, keywords
            )
            for s in self._file().statements(section)
        ]
        return self.engine.run(statements, params, write=write)

    # -- what is cheap -----------------------------------------------------------------------

    def adopt(self, parent: Reader) -> None:
        """Take what ``parent`` (the same table) already learned of its size."""
        self._small, self._estimate = parent._small, parent._estimate

    @property
    def small(self) -> bool:
        """Fewer rows than COUNT_LIMIT in all: anything may be counted. The catalog's row
        estimate decides when it has one; a bounded probe confirms a small one (SQLite has
        no estimate: the probe alone, reading at most COUNT_LIMIT rows)."""
        if self._small is None:
            params = {"schema": self.engine.schema, "table": self.profile.table}
            facts = sql.read(self.engine, "size", params).first
            self._estimate = sql.as_int(facts.get("estimated_rows"))
            big = self._estimate is not None and self._estimate >= COUNT_LIMIT
            self._small = not big and self.count((), whole=True).exact
        return self._small

    def count_rows(self, due: bool | None = None) -> Count:
        """Every row (of the queue asked about, due or not): counted on a small table, else
        the catalog's or the planner's estimate."""
        if self.small:
            return self.count((), due)
        filtered = due is not None or self.profile.queue is not None
        if not filtered:
            return Count(self._estimate, False, "catalog row estimate (every row waits)")
        estimate = self.estimate((), due, unindexed=True)
        if estimate is not None:
            return Count(estimate, False, "planner estimate", planner=True)
        return Count(None, False, f"not counted: {self.index_hint(self.profile.queue_column)}")

    @property
    def state_indexed(self) -> bool:
        column = self.profile.state_column
        return column is not None and self.shape.index_leading(column) is not None

    @property
    def queue_indexed(self) -> bool:
        """One named queue is asked about and an index leads with (state, queue) (or the
        queue, without states): a count of a state in it walks that queue's own entries,
        bounded, whatever the other queues hold (the planner's guess for one queue of a
        state is the state's rows split evenly: 51,300 for a queue of 5)."""
        p = self.profile
        if (p.queue is None and not p.queue_null) or p.queue_column is None:
            return False
        keys = (p.state_column, p.queue_column) if p.state_column else (p.queue_column,)
        return self.shape.index_leading(*keys) is not None

    def count(
        self,
        values: tuple[Value, ...],
        due: bool | None = None,
        *,
        whole: bool = False,
        extra: str | None = None,
        limit: int = COUNT_LIMIT,
        estimate: int | None = None,
    ) -> Count:
        """Rows with one of ``values`` (every row for ()), counted up to ``limit``; past it,
        at least that many, or the planner's ``estimate`` (read when not given) when it is
        higher, which the rows counted bound below. An ``estimate`` given is a big state's,
        counted through its index (``count_indexed``, where the engine has one)."""
        where, params = self.where(values, due, whole=whole, extra=extra)
        section = "count_indexed" if estimate is not None and self.has("count_indexed") else "count"
        rows = self.run(section, {"filter": where}, {**params, "limit": limit})
        n = int(rows[0]["n"])
        if n < limit:
            return Count(n, True)
        if estimate is None:
            estimate = self.estimate(values, due, extra=extra)
        if estimate is not None and estimate > n:
            source = f"planner estimate; more than {n - 1:,} counted (count stopped there)"
            return Count(estimate, False, source, planner=True, counted=n)
        return Count(n, False, f"at least {n:,} (count stopped there)")

    def estimate(
        self,
        values: tuple[Value, ...],
        due: bool | None = None,
        *,
        extra: str | None = None,
        unindexed: bool = False,
    ) -> int | None:
        """The planner's row estimate for ``values`` (PostgreSQL's from pg_stats, MariaDB's
        and MySQL's from the index statistics); None where the engine has none, or, for a
        filter no index fits (``unindexed``), none worth reading."""
        section = "estimate_unindexed" if unindexed else "estimate"
        if not self.has(section):
            return None
        where, params = self.where(values, due, extra=extra)
        rows = self.run(section, {"filter": where}, params)
        if not rows:
            return None
        first = rows[0]
        if "rows" in first:
            return None if first["rows"] is None else int(first["rows"])
        plan = next(iter(first.values()))
        if isinstance(plan, str):
            plan = json.loads(plan)
        return int(plan[0]["Plan"]["Plan Rows"])

    def count_state(
        self, values: tuple[Value, ...], due: bool | None = None, *, extra: str | None = None
    ) -> Count:
        """A state's rows within the cost rules (see the module's docstring)."""
        if self.small:
            return self.count(values, due, extra=extra)
        if self.state_indexed:
            # A state the estimate calls big (the kept done/failed rows, or a backlog) is
            # counted through the index only up to SMALL_STATE + 1 entries: exact under it,
            # else at least that many (the estimate shown when higher). The estimate alone
            # is never the figure: its error has no bound (its fraction is the last
            # ANALYZE's: 18,000 read for 126,000 after 120,000 pushes).
            estimate = self.estimate(values, due, extra=extra)
            if estimate is not None and estimate >= SMALL_STATE:
                return self.count(
                    values, due, extra=extra, limit=SMALL_STATE + 1, estimate=estimate
                )
            return self.count(values, due, extra=extra)
        estimate = self.estimate(values, due, extra=extra, unindexed=True)
        if estimate is not None:
            source = "planner estimate (pg_stats), no index on the state"
            return Count(estimate, False, source, planner=True)
        return Count(None, False, f"not counted: {self.index_hint()}")

    def count_due(self, values: tuple[Value, ...], due: bool, *, extra: str | None = None) -> Count:
        """Rows of these states that are due (or not). A planner misjudges the due range
        (it multiplies the state's and the time's selectivities: 20,000 jobs scheduled for
        tomorrow read as 19,000 due), so on a big table each state is counted through its
        index while the state alone is small enough to walk, else estimated, and said so."""
        if self.queue_indexed and values:
            # one named queue's own entries of each state, through (state, queue, ...)
            return total([self.count((value,), due, extra=extra) for value in values])
        if self.small or not self.state_indexed or not values:
            return self.count_state(values, due, extra=extra)
        counts = []
        for value in values:
            alone = self.estimate((value,))
            if alone is not None and alone < DUE_SCAN_LIMIT:
                counts.append(self.count((value,), due, extra=extra))
                continue
            guess = self.estimate((value,), due, extra=extra)
            source = "planner estimate (too many rows of the state to walk)"
            counts.append(Count(guess, False, source, planner=True))
        return total(counts)

    def queue_names(self) -> tuple[list[str], str | None]:
        """The named queues of a table that holds several, and how they were read (None:
        all of them, read exactly); ([], why) when no cheap read finds them."""
        column = self.profile.queue_column
        if column is None:
            return [], None
        if self.small or self.shape.index_leading(column) is not None:
            return self._names("1 = 1", {})
        state = self.profile.state_column
        if state is not None and self.shape.index_leading(state, column) is not None:
            # The library's (state, queue, ...) index: the queues holding a job that waits,
            # runs or failed, one loose scan per state value.
            found: list[str] = []
            live = (*self.profile.waiting, *self.profile.claimed, *self.profile.failed)
            for value in live:
                where, params = self.where((value,), whole=True)
                names, more = self._names(where, params)
                found += [n for n in names if n not in found]
                if more:
                    return found[:QUEUES_SHOWN], more
            return sorted(found)[
                :QUEUES_SHOWN
            ], "named queues holding a waiting, running or failed job"
        if self.has("queue_names_estimated"):
            params = {
                "limit": QUEUES_SHOWN + 1,
                "schema": self.shape.schema,
                "table_name": self.shape.table,
                "column": column,
            }
            rows = self.run("queue_names_estimated", {}, params)
            if rows:
                return (
                    [str(r["queue"]) for r in rows][:QUEUES_SHOWN],
                    "named queues from the planner's statistics (a rare one may be missing)",
                )
        return [], f"named queues not read: {self.index_hint(column)}"

    def holds_unnamed(self) -> bool:
        """Whether rows name no queue (NULL: Delayed::Job's default queue), read where the
        names are read: through the same index, or on a small table."""
        column = self.profile.queue_column
        if column is None:
            return False
        null = f"{self.name(column)} IS NULL"
        state = self.profile.state_column
        if self.small or self.shape.index_leading(column) is not None:
            filters: list[tuple[str, dict[str, Any]]] = [("1 = 1", {})]
        elif state is not None and self.shape.index_leading(state, column) is not None:
            live = (*self.profile.waiting, *self.profile.claimed, *self.profile.failed)
            filters = [self.where((value,), whole=True) for value in live]
        else:
            return False
        for where, params in filters:
            rows = self.run("count", {"filter": f"{where} AND {null}"}, {**params, "limit": 1})
            if int(rows[0]["n"]):
                return True
        return False

    def _names(self, where: str, params: dict[str, Any]) -> tuple[list[str], str | None]:
        column = self.profile.queue_column or ""
        limit = {**params, "limit": QUEUES_SHOWN + 1}
        rows = self.run("queue_names", {"filter": where}, limit, {"queue_col": column})
        found = [str(r["queue"]) for r in rows]
        if len(found) > QUEUES_SHOWN:
            return found[:QUEUES_SHOWN], f"the first {QUEUES_SHOWN} named queues"
        return found, None

    def index_hint(self, *extra: str | None, state: bool = True) -> str:
        """The index that would make a read cheap, as the statement a DBA runs (every name
        qualified and quoted: a fix runs as printed)."""
        columns = [c for c in (self.profile.state_column if state else None, *extra) if c]
        if not columns:
            return "an index leading with the state would make it cheap"
        table = self.profile.table
        index = self.engine.quote_ident(f"{table}_{'_'.join(columns)}_idx"[:60])
        on = self.engine.hooks.render_text("{t}", {"t": table})
        what = ", ".join(self.name(c) for c in columns)
        return f"an index would make it cheap: CREATE INDEX {index} ON {on} ({what})"


def index_fix(text: str) -> str | None:
    """The CREATE INDEX statement an ``index_hint`` ends with, as printed."""
    start = text.find("CREATE INDEX ")
    return None if start < 0 else text[start : text.rfind(")") + 1]
