"""Reading and writing qadmin's catalog table, which records each managed queue."""

from __future__ import annotations

import json
from typing import Any

from qadmin.engines.base import Engine
from qadmin.errors import NotFound
from qadmin.kinds import Kind, QueueSpec
from qadmin.names import validate_queue_name
from qadmin.ops.values import iso

CATALOG_TABLE = "qadmin_queues"
# Bumped when the tables or routines qadmin creates change shape.
QADMIN_SCHEMA = 1


def _spec(row: dict[str, Any]) -> QueueSpec:
    options = json.loads(row["options"] or "{}")
    return QueueSpec(
        name=row["name"],
        kind=Kind(row["kind"]),
        capacity=int(row["capacity"]) if row["capacity"] is not None else None,
        strict=bool(options.pop("strict", False)),
        options=options,
        created_at=iso(row["created_at"]),
    )


def ensure(engine: Engine) -> None:
    if not engine.table_exists(CATALOG_TABLE):
        engine.run_catalog("create")


def row(spec: QueueSpec) -> dict[str, Any]:
    """The catalog ``insert`` parameters for a spec."""
    options = dict(spec.options, strict=spec.strict)
    return {
        "name": spec.name,
        "kind": spec.kind.value,
        "capacity": spec.capacity,
        "options": json.dumps(options, sort_keys=True),
        "qadmin_schema": QADMIN_SCHEMA,
    }


def record(engine: Engine, spec: QueueSpec) -> None:
    engine.run_catalog("insert", row(spec))


def forget(engine: Engine, name: str) -> None:
    engine.run_catalog("delete", {"name": name})


def get(engine: Engine, name: str) -> QueueSpec:
    """The managed queue called ``name``, or NotFound naming the schema searched."""
    validate_queue_name(name)
    rows = []
    if engine.table_exists(CATALOG_TABLE):
        rows = engine.run_catalog("get", {"name": name}, write=False)
    if not rows:
        raise NotFound(f"no queue {name!r} in schema {engine.schema} (see 'qadmin list')")
    return _spec(rows[0])


def all_queues(engine: Engine) -> list[QueueSpec]:
    if not engine.table_exists(CATALOG_TABLE):
        return []
    return [_spec(r) for r in engine.run_catalog("list", write=False)]
