"""The SQL qadmin ships: every referenced file and section exists, every file is used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qadmin import sqlfiles
from qadmin.kinds import ALLOWS_WATERMARK, TEMPLATE, Kind

ROOT = sqlfiles.sql_root()
QUEUE_DIALECTS = ["sqlite", "postgresql", "mysql", "mssql"]
REQUIRED = {"create", "drop", "push", "pop", "peek", "purge", "depth"}


@pytest.mark.parametrize("dialect", QUEUE_DIALECTS)
@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_has_a_template_with_every_section(dialect, kind):
    template = sqlfiles.load(f"queues/{dialect}/{TEMPLATE[kind]}.sql")
    needed = REQUIRED | ({"ack", "fail"} if kind is Kind.CLAIM else set())
    assert needed <= set(template.sections)
    assert template.header.startswith("--"), "each template explains itself in a header"


def test_every_queue_file_is_used():
    used = (
        {f"{t}.sql" for t in TEMPLATE.values()}
        | {
            "catalog.sql",
            "fragments.sql",
            "external.sql",
            "watermark.sql",
            "convert.sql",
            "data.sql",
        }
        | {f"watermark_{TEMPLATE[k]}.sql" for k in ALLOWS_WATERMARK}
    )
    for path in (ROOT / "queues").rglob("*.sql"):
        assert path.name in used, f"{path} is not referenced by qadmin"


def test_fragments_referenced_by_templates_exist_for_each_mysql_dialect():
    pattern = re.compile(r"\{([a-z_]+):[a-z_]+\}")
    wanted = set()
    for path in (ROOT / "queues" / "mysql").glob("*.sql"):
        wanted |= set(pattern.findall(path.read_text()))
    for dialect in ("mysql", "mariadb"):
        have = set(sqlfiles.load(f"queues/{dialect}/fragments.sql").sections)
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


def test_readme_documents_every_telemetry_field():
    from qadmin.ops.collect import ARROW_TYPES
    from qadmin.ops.telemetry import FIELDS

    readme = (ROOT.parent / "README.md").read_text()
    assert {name for name, _, _ in FIELDS} == set(ARROW_TYPES)
    for name, _, _ in FIELDS:
        assert f"| `{name}` |" in readme, name
