"""From the NAME a command was given to the profile it reads the table through.

NAME is tried as a qadmin queue (its catalog), then as a ``[tables.NAME]`` declared profile in
the config, then as an existing table (``name``, ``schema.name``, ``"MixedCase"``): a job-queue
library's table when its shape matches, else a plain table (ordered by its primary key, every
row waiting). Command-line options (the config's keys) override the profile's fields, and every
column is checked against the catalog before any SQL uses it.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from qadmin import catalog, statewhen
from qadmin.config import COLUMN_KEYS, VALUE_KEYS
from qadmin.engines.base import Engine
from qadmin.errors import InvalidName, NotFound, UsageError
from qadmin.kinds import QueueSpec
from qadmin.names import validate_queue_name
from qadmin.profiles import detect, queue_names
from qadmin.profiles.model import Heartbeat, Profile, Release, Value
from qadmin.profiles.shape import ORDER_FAMILIES, TIME_FAMILIES, TableShape, read_shape

MAX_IDENTIFIER = 128
# One part of a table name: a bare identifier, or a double-quoted one ("" is a quote).
_PART = re.compile(r'"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*)')
# Why a column cannot order a queue, by its type family.
_NO_ORDER = {
    "uuid": "a uuid is random, not an enqueue order",
    "text": "text sorts by spelling, not by enqueue order",
    "json": "a json column has no order",
    "boolean": "a boolean has two values, not an order",
}


@dataclass(frozen=True)
class Resolved:
    """What NAME turned out to be: its profile, its qadmin catalog entry (qadmin queues
    only) and the table's shape from the catalog (tables qadmin did not create)."""

    profile: Profile
    spec: QueueSpec | None = None
    shape: TableShape | None = None
    notes: tuple[str, ...] = ()


def split_table_name(text: str) -> tuple[str | None, str, bool]:
    """``(schema, table, quoted)`` of ``name``, ``schema.name`` or quoted identifiers;
    InvalidName (exit 2) for anything else."""
    parts: list[tuple[str, bool]] = []
    rest = text.strip()
    while True:
        match = _PART.match(rest)
        if match is None:
            hint = " (a named queue is TABLE --queue NAME)" if "[" in text else ""
            raise InvalidName(
                f'invalid table name {text[:60]!r}: use name, schema.name or "Name"{hint}'
            )
        quoted = match.group(1) is not None
        part = match.group(1).replace('""', '"') if quoted else match.group(2)
        if len(part) > MAX_IDENTIFIER or "\x00" in part:
            raise InvalidName(f"invalid table name {text[:60]!r}: a part is too long")
        parts.append((part, quoted))
        rest = rest[match.end() :]
        if not rest:
            break
        if not rest.startswith(".") or len(parts) == 2:
            hint = " (a named queue is TABLE --queue NAME)" if "[" in text else ""
            raise InvalidName(
                f'invalid table name {text[:60]!r}: use name, schema.name or "Name"{hint}'
            )
        rest = rest[1:]
    if len(parts) == 1:
        return None, parts[0][0], parts[0][1]
    return parts[0][0], parts[1][0], parts[1][1]


def from_spec(spec: QueueSpec, schema: str | None = None) -> Profile:
    """A qadmin queue as a profile: what its kind's template keeps in its table."""
    columns = spec.info.table
    return Profile(
        name=spec.name,
        table=spec.name,
        schema=schema,
        source="qadmin",
        id_column=columns.id,
        # A ring is read by its push and pop sequences (its rows are slots), never by a key.
        order_by=columns.order,
        time_column=columns.time,
        due_column=columns.due,
        claimed_at_column=columns.claimed_at,
        worker_column=columns.worker,
        session_column=columns.session,
        attempts_column=columns.attempts,
        release=Release(None, columns.claim) if columns.claim else None,
    )


def option_words(given: dict[str, Any]) -> tuple[str, ...]:
    """The one-off profile options as typed (``--state-column State --pending new``), for a
    printed fix to carry; ``--queue`` and ``--queue-null`` are left to ``Profile.command``."""
    words: list[str] = []
    for key, value in given.items():
        if key in ("queue", "queue_null"):
            continue
        flag = "--" + key.replace("_", "-")
        for one in value if isinstance(value, list | tuple) else [value]:
            words += [flag, str(one)]
    return tuple(words)


def _overlay(profile: Profile, fields: dict[str, Any], source: str) -> Profile:
    changes: dict[str, Any] = {}
    new_state = fields.get("state_column") not in (None, profile.state_column)
    if new_state or "states" in fields:
        # Another state: the declared or detected values belong to the old one, so only the
        # values given with it are kept (and the release derived again).
        changes.update(dict.fromkeys(VALUE_KEYS, ()), state_sql=None, state_when=(), release=None)
        if "states" in fields:
            changes["state_column"] = None
    if fields.get("time_column") not in (None, profile.time_column):
        changes["oldest_from"] = ()  # the library's ages run from its columns, not this one
    for key, value in fields.items():
        if key in COLUMN_KEYS:
            changes[key] = value
        elif key in VALUE_KEYS:
            changes[key] = tuple(value)
        elif key == "time_unit":
            changes["time_unit"] = value
        elif key == "naive_timezone":
            changes["naive_utc"] = value == "UTC"
        elif key == "queue":
            changes["queue"] = value
        elif key == "queue_null":
            changes["queue_null"] = bool(value)
        elif key == "states":
            when = statewhen.parse_states(value, f"[tables.{profile.name}]")
            changes["state_when"] = when
            changes.update({group: (group,) for group, _ in when})
    if "heartbeat" in fields:
        worker = changes.get("worker_column", profile.worker_column)
        if worker is None:
            raise UsageError(
                f"[tables.{profile.name}] heartbeat needs worker_column: the column naming "
                "the claiming worker"
            )
        beat = fields["heartbeat"]
        changes["heartbeat"] = Heartbeat(
            beat["table"], worker, beat["worker_key"], beat["beat_column"]
        )
    return dataclasses.replace(profile, source=source, **changes) if changes else profile


def _release(profile: Profile, allowed: bool) -> Profile:
    """A declared claim can be given back when the profile says what waiting looks like:
    the first pending value (or, without states, a NULL claim time) and the claim columns."""
    if not allowed:
        why = f"requeue = false in [tables.{profile.name}] forbids it"
        return dataclasses.replace(profile, release=None, no_release=why)
    if profile.release is not None or profile.claimed_at_column is None:
        return profile
    if profile.library is not None:  # a library's profile says itself whether it can be
        return profile  # released (profiles/libraries.py); --library none reads it as a table
    if profile.has_states and not (profile.pending and profile.claimed):
        return profile
    if profile.state_sql is not None:
        return profile
    clear = tuple(
        c
        for c in (profile.claimed_at_column, profile.worker_column, profile.session_column)
        if c is not None
    )
    state = profile.pending[0] if profile.state_column else None
    return dataclasses.replace(profile, release=Release(state, clear))


def _fit(shape: TableShape, key: str, column: str, time_unit: str | None = None) -> str:
    """The column as the catalog spells it, or one line saying why it cannot serve."""
    found = shape.column(column)
    where = f"{shape.schema}.{shape.table}"
    if found is None:
        raise UsageError(f"{key.replace('_', '-')}: no column {column!r} in {where}")
    family = found.family
    # An engine with no timestamp type (SQLite) keeps dates as text or numbers by convention.
    times: tuple[str, ...] = (
        (*TIME_FAMILIES, "text", "number", "integer") if shape.untyped_times else TIME_FAMILIES
    )
    if time_unit is not None:
        times = ("integer", "number")
    # SQLite lets a column have no declared type: it holds whatever was stored, times too
    # (each value read is checked: one line for one that is not a time)
    untyped = shape.untyped_times and not found.data_type.strip()
    if key in ("time_column", "due_column", "claimed_at_column", "heartbeat_column") and (
        family not in times and not untyped
    ):
        kind = f"an epoch in {time_unit}" if time_unit else "a timestamp"
        raise UsageError(
            f"{key.replace('_', '-')}: column {found.name} of {where} is "
            f"{_type_name(found.data_type)}, not {kind}"
        )
    if key == "order_by" and family not in ORDER_FAMILIES:
        why = _NO_ORDER.get(family, f"{_type_name(found.data_type)} is not an enqueue order")
        raise UsageError(f"order-by: column {found.name} of {where} cannot order a queue: {why}")
    if key == "attempts_column" and family not in ("integer", "number"):
        raise UsageError(f"attempts-column: column {found.name} of {where} is not a number")
    return found.name


def _type_name(data_type: str) -> str:
    """A column's type as a message names it: SQLite lets a column have none (an empty
    name read "is , not a timestamp")."""
    return data_type if data_type.strip() else "untyped (no declared type: SQLite stores any value)"


def typed_values(
    values: tuple[Value, ...], family: str | None, labels: tuple[str, ...] = ()
) -> tuple[Value, ...]:
    """Values as the state column holds them (7 for an integer column, true for a boolean
    one, text for a text or enum one); a value the column cannot hold (a number on a boolean,
    true on a text column, a word that is not one of an enum's labels) is one line, exit 2,
    before any SQL runs."""
    out: list[Value] = []
    for value in values:
        shown = repr(value)[:40]
        if family == "integer":
            # kombu's visible on MariaDB: BOOL is TINYINT(1), so true is 1
            numeric = isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value)
            if numeric or isinstance(value, bool):
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise UsageError(f"state value {shown} is not a number (the column is)")
        elif family == "boolean":
            if isinstance(value, str) and value.lower() in ("true", "false", "t", "f", "1", "0"):
                value = value.lower() in ("true", "t", "1")
            elif isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
                value = bool(value)
            if not isinstance(value, bool):
                raise UsageError(f"state value {shown} is not true or false")
        elif family in ("text", "enum"):
            if isinstance(value, bool):
                raise UsageError(f"state value {shown} is true/false; the column holds text")
            value = str(value)
            if labels and value not in labels:
                raise UsageError(
                    f"state value {shown} is not one of the enum's labels ({', '.join(labels)})"
                )
        out.append(value)
    return tuple(out)


def check(profile: Profile, shape: TableShape, dialect: str) -> Profile:
    """The profile with every column checked against the catalog and spelled as it is there."""
    state = shape.column(profile.state_column) if profile.state_column else None
    family = state.family if state else None
    labels = state.labels if state else ()
    typed: dict[str, Any] = {
        g: typed_values(getattr(profile, g), family, labels) for g in VALUE_KEYS
    }
    profile = dataclasses.replace(profile, **typed)
    if profile.release is not None and isinstance(profile.release.state, str):
        released = typed_values((profile.release.state,), family, labels)[0]
        profile = dataclasses.replace(profile, release=Release(released, profile.release.clear))
    changes: dict[str, Any] = {
        key: _fit(shape, key, getattr(profile, key), profile.time_unit)
        for key in COLUMN_KEYS
        if getattr(profile, key) is not None
    }
    if profile.state_when:
        changes["state_when"] = tuple(
            (group, tuple((_fit(shape, "states", c), null) for c, null in terms))
            for group, terms in profile.state_when
        )
    if (profile.queue is not None or profile.queue_null) and profile.queue_column is None:
        raise UsageError(
            f"{profile.name} keeps one queue (no queue-name column): --queue applies to tables "
            "that hold several (give --queue-column COLUMN)"
        )
    if profile.queue is not None and profile.queue_null:
        raise UsageError("--queue and --queue-null name two queues: give one")
    queue_col = shape.column(profile.queue_column) if profile.queue_column else None
    if profile.queue_null and queue_col is not None and not queue_col.nullable:
        # Read, it would be an idle queue that can never fill: an OK check of nothing.
        raise UsageError(
            f"--queue-null: {profile.name}.{queue_col.name} is NOT NULL, so no row can name "
            f"no queue (qadmin inspect {profile.name} lists its named queues; --queue '' is "
            "the queue named by the empty string)"
        )
    given = [g for g in VALUE_KEYS if getattr(profile, g)]
    if given and not profile.has_states:
        raise UsageError(f"{profile.name}: --{given[0]} needs a state column (--state-column COL)")
    if profile.has_states and not profile.pending:
        raise UsageError(f"{profile.name}: a state column needs its waiting values (--pending V)")
    if profile.release is not None:
        release = Release(
            profile.release.state,
            tuple(_fit(shape, "release", c) for c in profile.release.clear),
        )
        changes["release"] = release
    return dataclasses.replace(profile, **changes)


def _plain(shape: TableShape, name: str) -> tuple[Profile, list[str]]:
    """A table with nothing known but its primary key: every row waiting, oldest by the key."""
    notes = []
    keys = shape.primary_key()
    order = None
    if len(keys) == 1:
        column = shape.column(keys[0])
        if column is not None and column.family in ORDER_FAMILIES:
            order = column.name
            notes.append(f"ordering key detected: primary key column {order}")
        elif column is not None:
            notes.append(
                f"primary key {column.name} is {column.data_type}: not an order; "
                "give --order-by COLUMN"
            )
    else:
        notes.append("no single-column primary key: give --order-by COLUMN for the oldest row")
    profile = Profile(
        name=name,
        table=shape.table,
        schema=shape.schema,
        source="plain",
        id_column=keys[0] if len(keys) == 1 else None,
        order_by=order,
    )
    return profile, notes


def _shape(engine: Engine, text: str) -> TableShape:
    schema, table, quoted = split_table_name(text)
    shape = read_shape(engine, table, schema)
    if shape is None and not quoted and table != table.lower():
        shape = read_shape(engine, table.lower(), schema)
    if shape is None:
        where = schema or engine.schema
        engine.require_schema(where)
        raise NotFound(f"no queue or table {text!r} in schema {where} (see 'qadmin list')")
    return shape


def resolve(
    engine: Engine,
    name: str,
    declared: dict[str, dict[str, Any]],
    given: dict[str, Any],
    *,
    table_only: bool = False,
    creating: bool = False,
) -> Resolved:
    """NAME's profile (see the module's docstring); ``given`` holds the one-off options.

    The profile names its schema: a command reading it moves the engine there first
    (``Engine.use_schema``), so every part (catalog queries, locks, ghosts) reads that table."""
    if not table_only:
        spec = _managed(engine, name, creating)
        if spec is not None:
            if given:
                keys = ", ".join(f"--{k.replace('_', '-')}" for k in sorted(given))
                verb = "applies" if len(given) == 1 else "apply"
                raise UsageError(f"{name} is a qadmin queue: {keys} {verb} to other tables only")
            return Resolved(from_spec(spec, engine.schema), spec)
    entry = declared.get(name, {})
    library = given.get("library", entry.get("library"))
    if library not in (None, "none") and library not in detect.libraries():
        known = ", ".join(detect.libraries())
        raise UsageError(f"unknown library {library} (known: {known}, or none)")
    shape = _shape(engine, str(entry.get("table", name)))
    notes: list[str] = []
    profile: Profile | None = None
    if library != "none":
        profile = detect.detect(shape, engine.dialect, library)
        if profile is None and library is not None:
            raise UsageError(
                f"{shape.schema}.{shape.table} does not have the shape of {library}'s table "
                f"(known: {', '.join(detect.libraries()) or 'none'})"
            )
    if profile is None:
        profile, notes = _plain(shape, name)
    profile = dataclasses.replace(profile, name=name)
    if entry:
        profile = _overlay(profile, entry, "declared")
    if given:
        profile = _overlay(profile, given, "options")
        profile = dataclasses.replace(profile, options=option_words(given))
    profile = _release(profile, bool(entry.get("requeue", True)))
    profile = check(profile, shape, engine.dialect)
    profile = queue_names.named(engine, profile, shape.schema)
    if profile.heartbeat is not None and "heartbeat" in entry:  # a declared workers table
        profile = _check_heartbeat(engine, profile, shape)
    return Resolved(profile, None, shape, tuple(notes))


def _check_heartbeat(engine: Engine, profile: Profile, shape: TableShape) -> Profile:
    """A declared workers table exists, in the queue table's schema, with the columns named:
    one line, exit 2, before any SQL reads it (a heartbeat table qadmin cannot read would
    make every live worker's claim look stale)."""
    beat = profile.heartbeat
    assert beat is not None
    schema, table, _ = split_table_name(beat.table)
    where = f"[tables.{profile.name}] heartbeat"
    if schema is not None and schema != shape.schema:
        raise UsageError(
            f"{where}: table {beat.table} must be in the queue table's schema {shape.schema}"
        )
    workers = read_shape(engine, table, shape.schema)
    if workers is None:
        raise UsageError(f"{where}: no table {table!r} in schema {shape.schema}")
    key = _fit(workers, "heartbeat worker_key", beat.worker_column)
    at = _fit(workers, "heartbeat_column", beat.beat_column, profile.time_unit)
    return dataclasses.replace(
        profile, heartbeat=Heartbeat(workers.table, beat.job_column, key, at)
    )


def _managed(engine: Engine, name: str, creating: bool) -> QueueSpec | None:
    try:
        validate_queue_name(name)
    except InvalidName:
        return None
    try:
        return catalog.get(engine, name, creating=creating)
    except NotFound:
        return None
