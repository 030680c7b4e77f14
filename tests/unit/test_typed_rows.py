"""Typed rows: each diagnostic SQL file's row dataclass has exactly the columns the file's
SELECT gives, on every engine (their union: a column an engine lacks reads None), and the
report is typed per entry."""

from __future__ import annotations

import re
from dataclasses import fields, replace
from functools import cache

import pytest

from qadmin.diagnostics import registry
from qadmin.diagnostics.entries import ghosts, invalid_indexes, ring
from qadmin.diagnostics.model import Row, json_safe
from qadmin.engines import Engine, open_engine
from qadmin.kinds import Kind, QueueSpec

# Each engine (and MySQL's flavours) offline: its own SQL lookup chain finds each file.
ENGINES = {
    "sqlite": "sqlite:///:memory:",
    "postgresql": "postgresql://u@h/db",
    "mysql": "mysql://u@h/db?dialect=mysql",
    "mariadb": "mysql://u@h/db?dialect=mariadb",
    "mssql": "mssql://u@h/db?driver=FreeTDS",
}
TOKEN = re.compile(
    r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`|\[[^\]]*\]"
    r"|::|[A-Za-z_@#][\w$#@]*|:\w+|\d+(?:\.\d+)?|\S",
    re.S,
)
END_OF_LIST = {"FROM", "UNION", "ORDER", "WHERE", "GROUP", "LIMIT", "INTO", ";"}


def select_aliases(statement: str) -> list[str]:
    """The column names of a statement's outer SELECT (after any WITH), as a driver names
    them: ``expr AS name``, else a qualified column's last part, else the bare column."""
    tokens = [t for t in TOKEN.findall(statement) if not t.startswith(("--", "/*"))]
    depth, start = 0, None
    for i, token in enumerate(tokens):
        depth += (token == "(") - (token == ")")
        if depth == 0 and token.upper() == "SELECT":
            start = i + 1
            break
    assert start is not None, "no outer SELECT"
    items: list[list[str]] = [[]]
    for token in tokens[start:]:
        depth += (token == "(") - (token == ")")
        if depth == 0 and token.upper() in END_OF_LIST:
            break
        if depth == 0 and token == ",":
            items.append([])
        else:
            items[-1].append(token)
    names = []
    for item in items:
        if item and item[0].upper() == "DISTINCT":
            item = item[1:]
        names.append(item[-1].strip('"`[]'))
    return names


@cache
def engine(dialect: str) -> Engine:
    return open_engine(ENGINES[dialect], schema="app")


def columns_on(dialect: str, name: str) -> list[str] | None:
    """The file's columns on one engine (as its lookup finds the file), None without one."""
    file = engine(dialect).hooks.diagnostic_file(name)
    return None if file is None else select_aliases(file.statements("main")[-1])


TYPED = [(name, row) for entry in registry.entries() for name, row in entry.rows]
# Rows a queue template's section gives (template, section): read by a diagnostic too.
TEMPLATE_ROWS = [(Kind.RING, "ring_state", ring.RingState)]


def template_columns(dialect: str, kind: Kind, section: str) -> list[str]:
    template = engine(dialect).hooks.template(QueueSpec("q", kind, capacity=10))
    return select_aliases(template.statements(section)[-1])


def test_the_alias_reader_reads_what_a_driver_names():
    sql = "WITH x AS (SELECT 1 AS a, 2 AS b) SELECT t.a, f(x, y) AS [c], d, 'q, r' AS e FROM x"
    assert select_aliases(sql) == ["a", "c", "d", "e"]


def test_typed_files_are_the_entries_own():
    for entry in registry.entries():
        for name, _ in entry.rows:
            assert name in entry.sql, f"{entry.name} types {name} without reading it"
    assert len(TYPED) >= 6


@pytest.mark.parametrize(("name", "row"), TYPED, ids=[n for n, _ in TYPED])
def test_a_row_type_has_exactly_its_files_columns(name, row):
    have = [f.name for f in fields(row) if f.name != "columns"]
    per_dialect = {d: columns_on(d, name) for d in ENGINES}
    given = {d: c for d, c in per_dialect.items() if c is not None}
    assert given, f"no dialect has {name}.sql"
    for dialect, columns in given.items():
        assert len(columns) == len(set(columns)), f"{dialect}/{name}.sql repeats a column"
        missing = [c for c in columns if c not in have]
        assert not missing, f"{row.__name__} lacks {dialect}/{name}.sql's {missing}"
    unused = set(have) - {c for columns in given.values() for c in columns}
    assert not unused, f"{row.__name__} has {sorted(unused)}, which no engine's {name}.sql gives"


@pytest.mark.parametrize(("kind", "section", "row"), TEMPLATE_ROWS)
def test_a_template_sections_row_type_has_exactly_its_columns(kind, section, row):
    have = [f.name for f in fields(row) if f.name != "columns"]
    given = {d: template_columns(d, kind, section) for d in ENGINES}
    for dialect, columns in given.items():
        missing = [c for c in columns if c not in have]
        assert not missing, f"{row.__name__} lacks {dialect}'s {kind} {section} {missing}"
    unused = set(have) - {c for columns in given.values() for c in columns}
    assert not unused, f"{row.__name__} has {sorted(unused)}, which no engine's SELECT gives"


def test_a_row_keeps_the_engines_columns_and_their_order_in_json():
    raw = {"index_name": "q_idx", "index_bytes": 8192, "definition": "CREATE INDEX q_idx"}
    row = invalid_indexes.InvalidIndex.of(raw)
    assert row.index_bytes == 8192
    assert json_safe(row) == raw
    assert list(json_safe(row)) == list(raw)  # the SELECT's order, not the fields'
    assert row.as_dict() == raw


def test_a_column_no_field_names_is_refused():
    with pytest.raises(TypeError, match="surprise"):
        ghosts.Holder.of({"holder_kind": "backend", "holder": "1", "surprise": 1})
    with pytest.raises(TypeError, match="columns"):
        ghosts.Holder.of({"holder_kind": "backend", "columns": ()})


def test_no_row_read_is_an_empty_row():
    empty = ghosts.GhostFacts()
    assert json_safe(empty) == {} and not empty.has("dead_rows")
    assert isinstance(empty, Row)


def test_an_invalid_unique_index_whose_duplicates_are_not_known_says_to_list_them_first():
    engine = open_engine("postgresql://u@h/db", schema="s")
    row = invalid_indexes.InvalidIndex(
        index_name="q_once",
        definition="CREATE UNIQUE INDEX q_once ON s.q USING btree (payload)",
        is_unique=True,
        duplicates_query="SELECT payload, count(*) AS copies FROM s.q GROUP BY 1",
        duplicate_keys=None,
    )
    fix = invalid_indexes.finding(row, engine).fix
    assert fix.startswith("list the keys rows share with SELECT payload, count(*)")
    assert fix.index("SELECT payload") < fix.index("CREATE UNIQUE INDEX CONCURRENTLY")
    found = invalid_indexes.finding(replace(row, duplicate_keys=True), engine).fix
    assert "CREATE" not in found and "REINDEX" not in found
    none = invalid_indexes.finding(replace(row, duplicate_keys=False), engine).fix
    assert none.startswith("DROP INDEX CONCURRENTLY")
