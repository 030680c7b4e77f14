"""What a convert would break, found before anything changes, so it can refuse and say why.

A convert moves every row of the table into a ring and retires the table (renamed and kept,
or dropped for a qadmin queue). That is only right when every row is a waiting message and
nothing else uses the table: a state column (delivered rows kept with ``visible = 0``) means
some rows are not messages, and foreign keys, triggers, views and routines would go on
pointing at the retired table (or fail). qadmin's own tables are never a source. The detection
SQL is the ``columns`` and ``blockers`` sections of ``sql/queues/<dialect>/convert.sql``.
"""

from __future__ import annotations

import re

from qadmin import catalog
from qadmin.engines.base import Engine
from qadmin.kinds import KINDS, Kind
from qadmin.names import RESERVED_PREFIX
from qadmin.ops.convert_sql import (
    BACKUP_SUFFIX,
    GATE_SUFFIX,
    STAGED_SUFFIX,
    ConvertSql,
    Source,
    gate_exists,
)

QADMIN_OWN = "it is qadmin's own table"
# Words that, as part of a column's name, say the row has a state beside "waiting"
# (visible, status, deleted_at, is_processed, acked, processing_started_at ...).
STATE_WORDS = frozenset(
    {
        "ack",
        "acked",
        "archived",
        "claimed",
        "completed",
        "consumed",
        "deleted",
        "delivered",
        "dequeued",
        "done",
        "failed",
        "finished",
        "handled",
        "hidden",
        "invisible",
        "leased",
        "locked",
        "processed",
        "processing",
        "reserved",
        "sent",
        "state",
        "status",
        "visibility",
        "visible",
    }
)


_WORKING = (GATE_SUFFIX, STAGED_SUFFIX, BACKUP_SUFFIX)


def internal_owner(engine: Engine, name: str) -> str | None:
    """Why ``name`` is qadmin's own table (its catalog, an object of a catalog queue other
    than the queue's own table, or one a convert under way made), or None."""
    if name.startswith(RESERVED_PREFIX):
        return QADMIN_OWN
    for spec in catalog.all_queues(engine):
        if spec.name == name:
            continue
        if name in spec.objects().values() or name in (spec.name + s for s in _WORKING):
            return f"it belongs to qadmin's {spec.kind} queue {spec.name}"
    # A staged convert of a hand-built table makes the ring's objects before the table is in
    # the catalog; its gate table marks them.
    for suffix in (*KINDS[Kind.RING].objects.values(), *_WORKING):
        stem = name[: -len(suffix)]
        if name.endswith(suffix) and stem and gate_exists(engine, stem):
            return f"it belongs to the convert of {stem} under way (run that convert again)"
    return None


def _qadmin_routines(engine: Engine, sql: ConvertSql) -> set[str]:
    """Routine names qadmin made (this convert's and every catalog queue's): their bodies name
    the table, and they are replaced with it."""
    names = set(sql.staged.values()) | set(sql.ring.objects().values())
    for spec in catalog.all_queues(engine):
        names |= set(spec.objects().values())
        names |= {spec.name + STAGED_SUFFIX + s for s in ("_push", "_push_many", "_pop")}
    if sql.src.managed is not None:
        names |= set(sql.src.managed.objects().values())
    return names


def _state_columns(engine: Engine, src: Source, sql: ConvertSql, table: str) -> list[str]:
    rows = engine.run(
        sql.section("columns"), {"schema": engine.schema, "table": table}, write=False
    )
    mapped = {src.id_col, src.time_col, src.state_col, *src.payload_cols}
    flagged = [
        str(r["column_name"])
        for r in rows
        if r["column_name"] not in mapped
        and (bool(r["flag"]) or STATE_WORDS & set(re.split(r"_+", str(r["column_name"]).lower())))
    ]
    if not flagged:
        return []
    if len(flagged) == 1 and not src.state_col:
        return [
            f"column {flagged[0]} looks like a row state, so not every row may be a waiting "
            f"message (give --state-column {flagged[0]} --waiting VALUE to move only the "
            "waiting rows)"
        ]
    return [
        f"column(s) {', '.join(flagged)} look like row states, so not every row may be a "
        "waiting message (a convert filters on one --state-column)"
    ]


def refusals(engine: Engine, src: Source, sql: ConvertSql, table: str = "") -> list[str]:
    """Everything the convert of ``src`` would break, one short phrase each (empty: none).

    ``table``: where the source's rows are now (a staged switch's renamed table)."""
    if src.switched:
        return []  # the rows have moved; only the clean-up is left
    table = table or src.table
    out = []
    if src.managed is None:
        out += _state_columns(engine, src, sql, table)
    own = _qadmin_routines(engine, sql)
    found: list[str] = []
    params = {"schema": engine.schema, "table": table}
    for row in engine.run(sql.section("blockers"), params, write=False):
        what, name = str(row["what"]), str(row["name"])
        mine = what in ("routine", "trigger") and row["in_schema"] in (None, engine.schema)
        if mine and name in own:
            continue
        text = f"{what} {name}" + (f" ({row['detail']})" if row.get("detail") else "")
        if text not in found:
            found.append(text)
    if found:
        out.append(
            f"{', '.join(found)} use{'s' if len(found) == 1 else ''} the table, which the "
            "convert retires (drop or change them first)"
        )
    return out + _name_clashes(engine, sql)


def _name_clashes(engine: Engine, sql: ConvertSql) -> list[str]:
    """Names the ring's create would take that something not recorded as the queue's holds
    (a user's table called <q>_ctl made a converted queue's routines call themselves)."""
    ring = sql.ring
    planned = catalog.planned(engine, ring, engine.hooks.section(ring, "create"))
    wanted = {obj[1] for _, obj in planned if obj} - {ring.name}
    if sql.file.has("gate_table"):  # a staged switch's gate marks a convert under way
        wanted.add(ring.name + GATE_SUFFIX)
    mine = {name for _, name in catalog.owned(engine, ring)}
    taken = sorted(
        {
            f"{kind} {name}"
            for kind, name in catalog.schema_objects(engine, ring.name)
            if name in wanted and name not in mine
        }
    )
    if not taken:
        return []
    verb = "exists" if len(taken) == 1 else "exist"
    return [f"{', '.join(taken)} already {verb} (the ring needs the name)"]
