"""Named queues whose names live in a table of their own (kombu: ``kombu_message.queue_id`` is
``kombu_queue.id``, the name ``kombu_queue.name``): ``--queue`` takes the name, or the key as
before, and output shows the name. The SQL is ``sql/profiles/queue_names.sql``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

from qadmin import sqlfiles
from qadmin.engines.base import Engine
from qadmin.errors import NotFound, QadminError, UsageError
from qadmin.profiles.model import Profile


@contextmanager
def _in(engine: Engine, schema: str | None) -> Iterator[None]:
    before = engine.schema
    if schema:
        engine.use_schema(schema)
    try:
        yield
    finally:
        engine.use_schema(before)


def _rows(
    engine: Engine, profile: Profile, schema: str | None, section: str, **params: str
) -> list[tuple[str, str]]:
    """The names table's rows; NotFound when it cannot be read (a table of the library's
    shape without its names table, a role that may not read it)."""
    names = profile.queue_names
    assert names is not None
    file = sqlfiles.load("profiles/queue_names.sql")
    mapping = {"names": names.table, "key": names.key_column, "label": names.name_column}
    with _in(engine, schema or profile.schema):
        statements = [engine.hooks.render_text(s, mapping) for s in file.statements(section)]
        try:
            rows = engine.run(statements, params, write=False)
        except QadminError as exc:
            raise NotFound(f"{names.table} unreadable: {exc}") from exc
    return [(str(r["queue_key"]), str(r["queue_label"])) for r in rows]


def named(engine: Engine, profile: Profile, schema: str | None = None) -> Profile:
    """The profile with ``--queue`` read as a name (its key found in the names table) or, when
    no queue has that name, as a key (the number it always was); the name kept to show. A
    names table that cannot be read leaves ``--queue`` a key, as it always was."""
    if profile.queue is None or profile.queue_names is None:
        return profile
    given = profile.queue
    try:
        found = _rows(engine, profile, schema, "by_label", label=given)
        if not found and given.isdigit():
            found = _rows(engine, profile, schema, "by_key", key=given)
    except NotFound:
        return profile
    if not found:
        key = f" (nor a {profile.queue_names.key_column} {given})" if given.isdigit() else ""
        raise UsageError(
            f"{profile.name}: no queue named {given!r} in {profile.queue_names.table}{key}"
        )
    key, label = found[0]
    return dataclasses.replace(profile, queue=key, queue_label=label)


def labels(engine: Engine, profile: Profile, schema: str | None = None) -> dict[str, str]:
    """Every queue's name by its key (empty for a profile that keeps no names table, or
    when it cannot be read: keys are then shown as they are)."""
    if profile.queue_names is None:
        return {}
    try:
        return dict(_rows(engine, profile, schema, "every"))
    except NotFound:
        return {}
