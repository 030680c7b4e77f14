"""The SQL qadmin ships: every referenced file and section exists, every file is used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qadmin import sqlfiles
from qadmin.engines import registry
from qadmin.kinds import CAPABILITIES, KINDS, Kind, kinds_with

ROOT = sqlfiles.sql_root()
QUEUE_DIALECTS = list(registry.NAMES)
REQUIRED = {"create", "drop", "push", "pop", "peek", "purge", "depth"}


@pytest.mark.parametrize("dialect", QUEUE_DIALECTS)
@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_has_a_template_with_every_section(dialect, kind):
    template = sqlfiles.load(f"queues/{dialect}/{KINDS[kind].template}.sql")
    claim_sections = {"ack", "fail", "claims", "requeue"}
    if KINDS[kind].claims:
        assert REQUIRED | claim_sections <= set(template.sections)
    else:  # the KindSpec flag and the template agree: no claim SQL on a kind without claims
        assert set(template.sections) >= REQUIRED
        assert not claim_sections & set(template.sections)
    assert template.header.startswith("--"), "each template explains itself in a header"


def test_every_queue_file_is_used():
    used = (
        {f"{spec.template}.sql" for spec in KINDS.values()}
        | {
            "catalog.sql",
            "fragments.sql",
            "profile.sql",
            "watermark.sql",
            "convert.sql",
            "data.sql",
        }
        | {f"watermark_{spec.template}.sql" for spec in KINDS.values() if spec.allows_watermark}
        | {f"{spec.template}_before_dead.sql" for spec in KINDS.values() if spec.dead_letters}
    )
    for path in (ROOT / "queues").rglob("*.sql"):
        assert path.name in used, f"{path} is not referenced by qadmin"


def test_fragments_referenced_by_templates_exist_for_each_mysql_dialect():
    pattern = re.compile(r"\{([a-z_]+)\([a-z_]*\)\}")
    wanted = set()
    for dialect in ("mysql", "mariadb"):
        for path in (ROOT / "queues" / dialect).glob("*.sql"):
            wanted |= set(pattern.findall(path.read_text()))
    shared = set(sqlfiles.load("queues/mysql/fragments.sql").sections)
    for dialect in ("mysql", "mariadb"):
        have = shared | set(sqlfiles.load(f"queues/{dialect}/fragments.sql").sections)
        assert wanted <= have, f"{dialect} lacks {wanted - have}"


@pytest.mark.parametrize("engine", QUEUE_DIALECTS)
def test_engine_plumbing_queries_exist(engine):
    assert "table_exists" in sqlfiles.load(f"engine/{engine}.sql").sections


def test_sections_keep_comments_and_strings_intact():
    parsed = sqlfiles.parse("-- head\n-- name: a\nSELECT '-- not a comment' AS x\n", Path("x"))
    assert parsed.statements("a") == ("SELECT '-- not a comment' AS x",)
    assert parsed.header == "-- head"


def test_every_diagnostic_file_is_used_and_explains_itself():
    from qadmin.diagnostics import registry

    for path in (ROOT / "diagnostics").rglob("*.sql"):
        assert path.stem in registry.sql_files(), f"{path} is not referenced by qadmin"
        file = sqlfiles.load(path.relative_to(ROOT).as_posix())
        fields = sqlfiles.header_fields(file.header)
        assert {"answers", "params", "min version", "privilege"} <= set(fields), path


SERVER_DIAGNOSTICS = {
    "size",
    "ghosts",
    "horizon",
    "locks",
    "sessions",
    "fragmentation",
    "primary_key",
}


@pytest.mark.parametrize(
    "dialect,expected",
    [
        (
            "postgresql",
            SERVER_DIAGNOSTICS
            | {"counters", "fragmentation_deep", "ghosts_deep", "maintenance", "lock_holders"},
        ),
        ("mysql", SERVER_DIAGNOSTICS | {"maintenance"}),
        ("mariadb", {"ghosts", "locks"}),
        ("mssql", SERVER_DIAGNOSTICS | {"counters", "fragmentation_deep"}),
        ("sqlite", {"size", "ghosts", "fragmentation_deep", "primary_key"}),
    ],
)
def test_every_engine_has_its_diagnostics(dialect, expected):
    """At least these (a new diagnostic adds its file without touching this list; the test
    above holds every file to a registry entry)."""
    have = {p.stem for p in (ROOT / "diagnostics" / dialect).glob("*.sql")}
    assert expected <= have


def test_docs_document_every_telemetry_field():
    from qadmin.ops.collect import ARROW_TYPES
    from qadmin.ops.telemetry import FIELDS

    doc = (ROOT.parent / "docs" / "diagnostics.md").read_text()
    assert {name for name, _, _ in FIELDS} == set(ARROW_TYPES)
    for name, _, _ in FIELDS:
        assert f"| `{name}` |" in doc, name


def test_docs_capability_table_matches_the_kind_registry():
    doc = (ROOT.parent / "docs" / "kinds.md").read_text()
    for capability, phrase in CAPABILITIES.items():
        row = re.search(rf"^\| {re.escape(phrase)} \| ([a-z, ]+) \|", doc, re.MULTILINE)
        assert row, f"docs/kinds.md's capability table has no row for {phrase!r}"
        assert row[1].split(", ") == [str(k) for k in kinds_with(capability)]


def test_every_resizable_kind_has_its_resize_steps():
    from qadmin.ops import resize

    assert {spec.template for spec in KINDS.values() if spec.resizable} == set(resize.STEPS)


@pytest.mark.parametrize(
    "dialect", [d for d in QUEUE_DIALECTS if (ROOT / "queues" / d / "data.sql").is_file()]
)
def test_data_sql_pages_archives_and_loads_every_kind_that_takes_it(dialect):
    data = sqlfiles.load(f"queues/{dialect}/data.sql")
    for spec in KINDS.values():
        operations = ["export"]
        operations += ["archive"] if spec.archivable else []
        operations += [] if spec.load_pushes else ["load"]
        for op in operations:
            assert data.has(f"{op}_{spec.template}") or data.has(f"{op}_rows"), (op, spec)


def test_every_maintenance_file_and_section_is_used():
    """sql/maintenance/<engine>.sql: one per engine maintain plans for, each section read or
    run by qadmin.ops.maintain (a section nothing names would be dead SQL)."""
    import inspect
    import re

    from qadmin.ops import maintain

    source = inspect.getsource(maintain)
    named = set(re.findall(r'(?:_sql|_read)\(\s*engine,\s*"([a-z_]+)"', source))
    files = sorted((ROOT / "maintenance").glob("*.sql"))
    planners = {e: registry.dialect_class(e).maintenance_planner for e in registry.NAMES}
    assert {p.stem for p in files} == {e for e, p in planners.items() if p in maintain.PLANNERS}
    assert set(planners.values()) == set(maintain.PLANNERS), "a planner no dialect names"
    for path in files:
        sections = set(sqlfiles.load(f"maintenance/{path.name}").sections)
        assert sections <= named, f"{path}: {sections - named} not used"
