"""Reading and writing qadmin's catalog: the queues it manages and the objects it created.

``qadmin_queues`` has one row per queue; ``qadmin_objects`` one row per table, sequence,
routine or (where it is an object of its own) index that qadmin created for a queue. Drop, the
clean-up after a failed create, convert and load touch only recorded objects, so a queue never
drops what another queue or a user owns, however the names look alike.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from typing import Any

from qadmin.engines.base import CATALOG_TABLE, Engine, Execute
from qadmin.errors import NotFound, PermissionMissing, UsageError
from qadmin.kinds import Kind, QueueSpec, derived_names
from qadmin.names import validate_queue_name
from qadmin.values import iso

OBJECTS_TABLE = "qadmin_objects"
# Bumped when the tables or routines qadmin creates change shape. 2: qadmin_objects.
QADMIN_SCHEMA = 2
CREATING = "creating"
READY = "ready"
# A drop under way, one object at a time (no transactional DDL): one that stopped half-way
# stays visible (the objects_missing finding) and is finished by running the drop again.
DROPPING = "dropping"

# (object type, name)
Obj = tuple[str, str]

_CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:UNLOGGED\s+|UNIQUE\s+|(?:NON)?CLUSTERED\s+)*"
    r"(TABLE|SEQUENCE|FUNCTION|PROCEDURE|TRIGGER|INDEX|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?",
    re.IGNORECASE,
)
# Attribution order when a catalog from before qadmin_objects is upgraded: what is created
# first is dropped last.
_TYPE_ORDER = {"sequence": 0, "table": 1, "index": 2, "function": 3, "procedure": 3}


def _spec(row: dict[str, Any]) -> QueueSpec:
    options = json.loads(row["options"] or "{}")
    return QueueSpec(
        name=row["name"],
        kind=Kind(row["kind"]),
        capacity=int(row["capacity"]) if row["capacity"] is not None else None,
        strict=bool(options.pop("strict", False)),
        state=str(options.pop("state", READY)),
        options=options,
        created_at=iso(row["created_at"]),
    )


def _sql(engine: Engine, section: str, obj: Obj | None = None) -> list[str]:
    return engine.hooks.catalog_sql(section, None if obj is None else obj[1])


def ensure(engine: Engine) -> None:
    """Create the catalog, or bring one made by an earlier qadmin up to date."""
    if not engine.table_exists(CATALOG_TABLE):
        engine.require_schema()
        engine.claim_database()
        engine.run_catalog("create")
        engine.run_catalog("objects_create")
    elif not engine.table_exists(OBJECTS_TABLE):
        _upgrade(engine)


def _upgrade(engine: Engine) -> None:
    """Record, for each queue of an older catalog, the objects that are its own: those its
    kind creates that exist and are not another queue's table."""
    attributed = _attribute(engine, all_queues(engine, creating=True))
    engine.run_catalog("objects_create")
    for queue, objs in attributed.items():
        for position, obj in enumerate(objs):
            _add(engine, queue, obj, position)


def _attribute(engine: Engine, specs: list[QueueSpec]) -> dict[str, list[Obj]]:
    tables = {s.name for s in specs}
    taken: set[Obj] = set()
    out: dict[str, list[Obj]] = {}
    for spec in sorted(specs, key=lambda s: s.name):
        # Only what create made: a table called <q>_stage or <q>_loaded may be load's or
        # anybody's, and an upgrade cannot tell, so it is left unowned (never dropped).
        expected = {
            obj for _, obj in planned(engine, spec, engine.hooks.section(spec, "create")) if obj
        }
        found = [
            obj
            for obj in schema_objects(engine, spec.name)
            if obj in expected
            and obj not in taken
            and not (obj[0] == "table" and obj[1] in tables and obj[1] != spec.name)
        ]
        found.sort(key=lambda o: (_TYPE_ORDER.get(o[0], 9), o[1] != spec.name, o[1]))
        taken.update(found)
        out[spec.name] = found
    return out


def row(spec: QueueSpec) -> dict[str, Any]:
    """The catalog ``insert`` parameters for a spec."""
    return {
        "name": spec.name,
        "kind": spec.kind.value,
        "capacity": spec.capacity,
        "options": _options(spec),
        "qadmin_schema": QADMIN_SCHEMA,
    }


def _options(spec: QueueSpec) -> str:
    options: dict[str, Any] = dict(spec.options, strict=spec.strict)
    if spec.state != READY:
        options["state"] = spec.state
    return json.dumps(options, sort_keys=True)


def record(engine: Engine, spec: QueueSpec) -> None:
    engine.run_catalog("insert", row(spec))


def mark_ready(engine: Engine, spec: QueueSpec) -> None:
    ready = dataclasses.replace(spec, state=READY)
    engine.run_catalog("set_options", {"name": spec.name, "options": _options(ready)})


def set_options(engine: Engine, spec: QueueSpec) -> None:
    """Rewrite the entry's options (e.g. max_attempts, which a claim queue's fail reads)."""
    engine.run_catalog("set_options", {"name": spec.name, "options": _options(spec)})


def options_params(spec: QueueSpec) -> dict[str, Any]:
    """The ``set_options`` parameters for a spec (for a caller's own transaction)."""
    return {"name": spec.name, "options": _options(spec)}


def merge_options(
    engine: Engine, spec: QueueSpec, changes: dict[str, Any], execute: Execute
) -> QueueSpec:
    """In the caller's transaction: the entry's row locked, its options as they are now (a
    pause or alter made since ``spec`` was read is kept) with ``changes``, written back."""
    execute(_sql(engine, "lock_entry")[0], {"name": spec.name})
    rows = execute(_sql(engine, "get")[0], {"name": spec.name})
    now = _spec(rows[0]) if rows else spec
    ready = dataclasses.replace(now, options={**now.options, **changes})
    execute(_sql(engine, "set_options")[0], options_params(ready))
    return ready


def mark_sql(engine: Engine, section: str) -> list[str]:
    """A catalog write's statements (``pause``, ``resume``, ``set_options``), rendered."""
    return _sql(engine, section)


def forget(engine: Engine, name: str, execute: Execute | None = None) -> None:
    """Remove the queue's entry and its objects' records (the objects are gone by then);
    ``execute``: inside the caller's transaction (a drop, all or nothing)."""
    if execute is None:
        engine.run_catalog("objects_forget", {"queue": name})
        engine.run_catalog("delete", {"name": name})
        return
    for statement in engine.hooks.catalog_sql("objects_forget"):
        execute(statement, {"queue": name})
    for statement in engine.hooks.catalog_sql("delete"):
        execute(statement, {"name": name})


def find(engine: Engine, name: str) -> QueueSpec | None:
    validate_queue_name(name)
    if not engine.table_exists(CATALOG_TABLE):
        return None
    rows = _read(engine, "get", {"name": name})
    return _spec(rows[0]) if rows else None


def _read(engine: Engine, section: str, params: dict[str, Any] | None = None) -> list[Any]:
    """A catalog read; a role refused it is told the grant (the server names only the table)."""
    try:
        return engine.run_catalog(section, params, write=False)
    except PermissionMissing as exc:
        table = engine.qualified(CATALOG_TABLE)
        raise PermissionMissing(
            f"{exc}: reading qadmin's catalog needs SELECT on {table}", privilege="SELECT"
        ) from None


def get(engine: Engine, name: str, *, creating: bool = False) -> QueueSpec:
    """The managed queue called ``name``, or NotFound naming the schema searched. A queue
    still being created is refused unless the caller can handle one (list, inspect, drop)."""
    spec = find(engine, name)
    if spec is None:
        engine.require_schema()
        raise NotFound(f"no queue {name!r} in schema {engine.schema} (see 'qadmin list')")
    if spec.state == CREATING and not creating:
        raise UsageError(unfinished(name))
    return spec


def unfinished(name: str) -> str:
    """What a queue whose create has not finished is, and the fix (every command that meets
    one says it the same way: a refusal, a status or check --all line)."""
    return (
        f"queue {name} is still being created (or its create was interrupted): run the "
        f"same 'qadmin create' again to finish it, or 'qadmin drop {name}'"
    )


def all_queues(engine: Engine, *, creating: bool = False) -> list[QueueSpec]:
    """Every managed queue; those still being created only when asked for (list)."""
    if not engine.table_exists(CATALOG_TABLE):
        engine.require_schema()
        return []
    specs = [_spec(r) for r in _read(engine, "list")]
    return [s for s in specs if creating or s.state != CREATING]


# -- the objects of each queue --------------------------------------------------------------


def schema_objects(engine: Engine, prefix: str) -> list[Obj]:
    """Objects of any type in the schema whose name starts with ``prefix``."""
    pattern = prefix.replace("!", "!!").replace("_", "!_").replace("%", "!%") + "%"
    rows = engine.query(
        engine.hooks.catalog_sql("schema_objects")[0], {"schema": engine.schema, "prefix": pattern}
    )
    return [(str(r["object_type"]), str(r["name"])) for r in rows]


ROUTINE_TYPES = ("function", "procedure")


@dataclasses.dataclass(frozen=True)
class Missing:
    """The queue's recorded objects the schema no longer lists (dropped by hand). ``unseen``:
    some of its routines are not listed for this role (MySQL and SQL Server list only the
    routines a role may run), so whether they exist is not known: they are left out of
    ``objects``, never reported missing."""

    objects: list[Obj]
    unseen: bool = False

    @property
    def routines(self) -> list[Obj]:
        return [o for o in self.objects if o[0] in ROUTINE_TYPES]


def missing_objects(engine: Engine, spec: QueueSpec) -> Missing:
    """What of the queue's recorded objects is gone, by one look-up of each by exact name
    (status and metrics make it for every queue). A catalog from before the record has
    nothing to miss: its upgrade records only what exists."""
    gone = _gone(engine, spec.name)
    if engine.hooks.routines_hidden and any(o[0] in ROUTINE_TYPES for o in gone):
        shown = engine.run_catalog("routines_listed", {"schema": engine.schema}, write=False)
        if not (shown and shown[0]["listed"]):
            return Missing([o for o in gone if o[0] not in ROUTINE_TYPES], unseen=True)
    return Missing(gone)


def _gone(engine: Engine, queue: str) -> list[Obj]:
    """The queue's recorded objects the schema no longer lists; in a run over many queues
    (Engine.memo) read once for every queue of the schema."""
    if engine.memo is None:
        if not engine.table_exists(OBJECTS_TABLE):
            return []
        rows = engine.run_catalog(
            "objects_gone", {"queue": queue, "schema": engine.schema}, write=False
        )
        return [(str(r["object_type"]), str(r["name"])) for r in rows]
    key = ("objects_gone", engine.schema)
    if key not in engine.memo:
        by_queue: dict[str, list[Obj]] = {}
        if engine.table_exists(OBJECTS_TABLE):
            params = {"queue": None, "schema": engine.schema}
            for r in engine.run_catalog("objects_gone", params, write=False):
                by_queue.setdefault(str(r["queue"]), []).append(
                    (str(r["object_type"]), str(r["name"]))
                )
        engine.memo[key] = by_queue
    found: dict[str, list[Obj]] = engine.memo[key]
    return found.get(queue, [])


def owns(engine: Engine, queue: str, obj: Obj) -> bool:
    """Whether ``obj`` is recorded as ``queue``'s (a user's table of the same name is not)."""
    if not engine.table_exists(OBJECTS_TABLE):
        return False
    rows = engine.run_catalog("objects_of", {"queue": queue}, write=False)
    return any((str(r["object_type"]), str(r["name"])) == obj for r in rows)


def owned(engine: Engine, spec: QueueSpec) -> list[Obj]:
    """The queue's objects in the order they were created. A catalog from before the record
    existed is read as its upgrade would record it (nothing is written: dry runs use this)."""
    if not engine.table_exists(OBJECTS_TABLE):
        return _attribute(engine, all_queues(engine, creating=True)).get(spec.name, [])
    rows = engine.run_catalog("objects_of", {"queue": spec.name}, write=False)
    return [(str(r["object_type"]), str(r["name"])) for r in rows]


def _add(
    engine: Engine, queue: str, obj: Obj, position: int, execute: Execute | None = None
) -> None:
    params = {"queue": queue, "object_type": obj[0], "name": obj[1], "position": position}
    if execute is None:
        engine.run_catalog("object_add", params)
    else:
        execute(_sql(engine, "object_add")[0], params)


def own(engine: Engine, spec: QueueSpec, obj: Obj, execute: Execute | None = None) -> bool:
    """Record ``obj`` as the queue's before it is created; False if it already was."""
    if execute is None:
        rows = engine.run_catalog("objects_of", {"queue": spec.name}, write=False)
    else:
        rows = execute(_sql(engine, "objects_of")[0], {"queue": spec.name})
    if any((r["object_type"], r["name"]) == obj for r in rows):
        return False
    _add(engine, spec.name, obj, max((int(r["position"]) for r in rows), default=-1) + 1, execute)
    return True


def own_all(engine: Engine, spec: QueueSpec, execute: Execute) -> None:
    """Record every object ``spec``'s create section makes, in the caller's transaction (a
    convert creates the ring there)."""
    for _, obj in planned(engine, spec, engine.hooks.section(spec, "create")):
        if obj is not None:
            own(engine, spec, obj, execute)


def made_by_create(engine: Engine, spec: QueueSpec) -> list[Obj]:
    """The queue's recorded objects that its kind's create section makes (not load's)."""
    made = {obj for _, obj in planned(engine, spec, engine.hooks.section(spec, "create"))}
    return [obj for obj in owned(engine, spec) if obj in made]


def disown(engine: Engine, spec: QueueSpec, obj: Obj, execute: Execute | None = None) -> None:
    params = {"queue": spec.name, "object_type": obj[0], "name": obj[1]}
    if execute is None:
        engine.run_catalog("object_forget", params)
    else:
        execute(_sql(engine, "object_forget")[0], params)


def planned(
    engine: Engine, spec: QueueSpec, statements: Iterable[str]
) -> list[tuple[str, Obj | None]]:
    """Each rendered statement with the object it creates, if it creates one of ``spec``'s
    (a temporary table or a row is not an object of the queue)."""
    forms: list[tuple[str, str]] = []
    for name in spec.objects().values():
        forms += [(engine.qualified(name), name), (engine.quote_ident(name), name)]
    forms.sort(key=lambda f: -len(f[0]))
    out: list[tuple[str, Obj | None]] = []
    for statement in statements:
        body = "\n".join(
            line for line in statement.splitlines() if not line.lstrip().startswith("--")
        ).lstrip()
        match = _CREATE.match(body)
        obj = None
        if match:
            rest = body[match.end() :]
            for form, name in forms:
                if rest.startswith(form):
                    obj = (match.group(1).lower(), name)
                    break
        out.append((statement, obj))
    return out


_CREATE_ROUTINE = re.compile(r"\bCREATE\s+(FUNCTION|PROCEDURE)\b", re.IGNORECASE)


def replacements(
    engine: Engine, spec: QueueSpec, names: Iterable[str] | None = None
) -> list[tuple[Obj, str]]:
    """(routine, statement) replacing each of the queue's routines (those in ``names``, else
    all) by the current template's in one statement, callers never finding it missing;
    [] where the engine cannot (``replace_routine`` None)."""
    verb = engine.hooks.replace_routine
    if verb is None:
        return []
    wanted = None if names is None else set(names)
    out = []
    for statement, obj in planned(engine, spec, engine.hooks.section(spec, "create")):
        if (
            obj is None
            or obj[0] not in ROUTINE_TYPES
            or (wanted is not None and obj[1] not in wanted)
        ):
            continue
        out.append((obj, _CREATE_ROUTINE.sub(rf"{verb} \1", statement, 1)))
    return out


def outdated(engine: Engine, spec: QueueSpec) -> bool:
    """Whether the queue's routines predate a template change on this engine (repair
    replaces them)."""
    return engine.hooks.has_routines and spec.revision < engine.hooks.routines_revised


def dependents(engine: Engine, objs: list[Obj]) -> list[str]:
    """What outside the queue depends on one of its tables and would make its drop refuse
    (a view, another table's foreign key), each as ``view s.v``; none where the engine's
    catalog file cannot say (``dependents`` section absent)."""
    if not engine.hooks.catalog().has("dependents"):
        return []
    mine = {name for kind, name in objs}
    found: list[str] = []
    for kind, name in objs:
        if kind != "table":
            continue
        params = {"schema": engine.schema, "table": name}
        for row in engine.run_catalog("dependents", params, write=False):
            schema, other = str(row["dependent_schema"]), str(row["dependent_name"])
            if schema == engine.schema and other in mine:
                continue  # the queue's own (its dead table's key, say): dropped with it
            said = f"{row['dependent_kind']} {schema}.{other} (on {name})"
            if said not in found:
                found.append(said)
    return found


def drop_statements(engine: Engine, objs: list[Obj]) -> list[str]:
    """DROP ... IF EXISTS for each object, last created first; an index whose engine names
    indexes per table goes with its table."""
    out = []
    for obj in reversed(objs):
        section = f"drop_{obj[0]}"
        if engine.hooks.catalog().has(section):
            out += _sql(engine, section, obj)
    return out


def collisions(engine: Engine, spec: QueueSpec) -> list[str]:
    """Why ``spec`` cannot be created: each existing object, or other queue's (derived or
    recorded) name, that one of the names it may ever use would collide with."""
    mine = derived_names(spec.name, spec.kind)
    found = [
        f"a {kind} named {name} exists"
        for kind, name in schema_objects(engine, spec.name)
        if name in mine
    ]
    recorded: dict[str, set[str]] = {}
    if engine.table_exists(OBJECTS_TABLE):
        for r in engine.run_catalog("objects_all", write=False):
            recorded.setdefault(str(r["queue"]), set()).add(str(r["name"]))
    for other in all_queues(engine, creating=True):
        if other.name == spec.name:
            continue
        theirs = derived_names(other.name, other.kind) | recorded.get(other.name, set())
        found += [f"queue {other.name} owns or would use {n}" for n in sorted(mine & theirs)]
    return sorted(set(found))
