"""The SQL qadmin ships: every referenced file and section exists, every file is used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qadmin import sqlfiles
from qadmin.engines import registry
from qadmin.engines.base import PARAM_PATTERN
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
            "library_pause.sql",
        }
        | {f"watermark_{spec.template}.sql" for spec in KINDS.values() if spec.allows_watermark}
        | {f"{spec.template}_before_dead.sql" for spec in KINDS.values() if spec.dead_letters}
    )
    for path in (ROOT / "queues").rglob("*.sql"):
        assert path.name in used, f"{path} is not referenced by qadmin"


FOLDERS = {"sqlite": ["sqlite"], "postgresql": ["postgresql"], "mysql": ["mysql"]}
FOLDERS.update(mariadb=["mariadb", "mysql"], mssql=["mssql"])
FRAGMENT_CALL = re.compile(r"\{([a-z_]+)\([^{}]*\)\}")


def _fragments(folders: list[str]) -> dict[str, str]:
    """The fragments a dialect's templates can call: its folder's fragments.sql (with what it
    extends) over its base's, as Dialect.fragment looks them up."""
    found: dict[str, str] = {}
    for folder in reversed(folders):
        if (ROOT / "queues" / folder / "fragments.sql").is_file():
            file = sqlfiles.load(f"queues/{folder}/fragments.sql")
            found.update({name: body[0] for name, body in file.sections.items()})
    return found


@pytest.mark.parametrize("dialect", list(FOLDERS))
def test_every_fragment_a_dialect_calls_exists_there(dialect):
    """Templates, the common files they extend, and fragments calling fragments: each call
    names a fragment of the dialect's chain (a missing one fails only when rendered)."""
    have = _fragments(FOLDERS[dialect])
    texts = list(have.values())
    for folder in FOLDERS[dialect]:
        for path in (ROOT / "queues" / folder).glob("*.sql"):
            merged = sqlfiles.load(path.relative_to(ROOT).as_posix())  # with what it extends
            texts += [s for statements in merged.sections.values() for s in statements]
    wanted = {name for text in texts for name in FRAGMENT_CALL.findall(text)}
    assert wanted <= set(have), f"{dialect} lacks {wanted - set(have)}"


def _statement_runs(path: Path, run: int) -> list[tuple[int, tuple[str, ...]]]:
    """Each run of ``run`` statement lines (white space folded; blank, comment-only and
    punctuation-only lines passed over) with the line it starts at."""
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = " ".join(line.split())
        if text and not text.startswith("--") and re.search(r"[A-Za-z0-9]", text):
            lines.append((number, text))
    return [
        (lines[i][0], tuple(t for _, t in lines[i : i + run])) for i in range(len(lines) - run + 1)
    ]


def test_no_sql_is_written_twice():
    """A duplicate-code scan of sql/: no run of 6 statement lines stands in two places
    (issue 28: 46 pairs of files before the common bases and fragments). Diagnostic files
    stay whole, each runnable by hand, so their own repeats are allowed (2 pairs)."""
    places: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    for path in sorted(ROOT.rglob("*.sql")):
        for line, key in _statement_runs(path, 6):
            places.setdefault(key, []).append((path.relative_to(ROOT).as_posix(), line))
    pairs = set()
    for spots in places.values():
        for i, (a, line_a) in enumerate(spots):
            for b, line_b in spots[i + 1 :]:
                if a != b or abs(line_a - line_b) >= 6:
                    pairs.add((a, b))
    outside = {pair for pair in pairs if not all(p.startswith("diagnostics/") for p in pair)}
    assert not outside, f"written twice: {sorted(outside)}"
    assert len(pairs) <= 2, sorted(pairs)


def _overrides() -> list[tuple[str, sqlfiles.SqlFile, sqlfiles.SqlFile]]:
    """(what, a file as written, what it is laid over): every chain qadmin builds."""
    out = []
    for path in sorted(ROOT.rglob("*.sql")):
        relative = path.relative_to(ROOT).as_posix()
        own = sqlfiles.own_file(relative)
        bases = [sqlfiles.load(b) for b in sqlfiles.extends(own.header)]
        if bases:
            under = bases[0]
            for base in bases[1:]:
                under = under.extended_by(base)
            out.append((relative, own, under))
    for path in sorted((ROOT / "queues" / "mariadb").glob("*.sql")):  # a flavour's folder
        if (ROOT / "queues" / "mysql" / path.name).is_file():
            mine = sqlfiles.load(f"queues/mariadb/{path.name}")
            out.append(
                (
                    f"mariadb over mysql {path.name}",
                    mine,
                    sqlfiles.load(f"queues/mysql/{path.name}"),
                )
            )
    for folder in FOLDERS:  # overlays laid over a kind's template (Dialect.template)
        for spec in KINDS.values():
            layers = [f"watermark_{spec.template}", "watermark", f"{spec.template}_before_dead"]
            for layer in layers:
                if (ROOT / "queues" / folder / f"{layer}.sql").is_file():
                    template = sqlfiles.load(f"queues/{folder}/{spec.template}.sql")
                    top = sqlfiles.load(f"queues/{folder}/{layer}.sql")
                    replaced = {
                        k: v for k, v in top.sections.items() if k not in ("create", "drop")
                    }
                    top = sqlfiles.SqlFile(top.path, top.header, replaced)
                    out.append((f"{folder}/{layer} over {spec.template}", top, template))
    return out


def test_no_section_repeats_within_a_chain():
    """A section identical to the one it replaces (a base's, the MySQL folder's under
    MariaDB's, a kind's under its overlay) is written twice: a defect."""
    chains = _overrides()
    assert len(chains) > 20
    for what, top, under in chains:
        same = [n for n, s in top.sections.items() if under.sections.get(n) == s]
        assert not same, f"{what}: {same} repeat what they replace"


def test_a_file_reads_its_bases_in_order():
    """A claim queue takes messages as a basic queue does: its push comes from basic.sql,
    its peek from the engines' shared claim file over that, its pop from its own file."""
    own = sqlfiles.own_file("queues/mysql/claim.sql")
    claim = sqlfiles.load("queues/mysql/claim.sql")
    assert "push" not in own.sections and "peek" not in own.sections
    assert claim.statements("push") == sqlfiles.load("queues/mysql/basic.sql").statements("push")
    assert claim.statements("peek") == sqlfiles.load("queues/common/claim.sql").statements("peek")
    assert claim.statements("pop") == own.statements("pop")
    assert claim.header == own.header


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


def test_a_server_wide_file_takes_no_queue_parameters():
    """A file an entry declares server-wide is read once for every queue of a status run: on
    every engine that has it, it must read the server, never the queue (no parameters but
    the run's own :sibling, which every diagnostic is given by its connection)."""
    from qadmin.diagnostics import registry as diagnostics

    declared = {f for d in diagnostics.entries() for f in d.server_wide}
    assert declared, "the horizon's holders, at least, are read once per run"
    for name in declared:
        for path in (ROOT / "diagnostics").glob(f"*/{name}.sql"):
            file = sqlfiles.load(path.relative_to(ROOT).as_posix())
            said = sqlfiles.header_fields(file.header)["params"]
            assert said == "none" or said.startswith(":sibling "), path
            text = "\n".join(file.statements("main"))
            code = "\n".join(line.split("--")[0] for line in text.splitlines())
            assert set(PARAM_PATTERN.findall(code)) <= {"sibling"}, path
