"""The one placeholder grammar: each form, fragments within fragments, and the errors."""

from __future__ import annotations

import re

import pytest

from qadmin import sqlfiles
from qadmin.engines import open_engine
from qadmin.engines.base import Engine
from qadmin.kinds import KINDS, Kind, QueueSpec
from qadmin.ops.convert_sql import ConvertSql, Source, ring_spec
from qadmin.sqltext import Target, TemplateError, render

FRAGMENTS = {
    "next_value": "SELECT nextval({obj.lit}) -- in {obj.schema_lit}",
    "take": "SET v = ({next_value(obj)})",
    "begin": "BEGIN {mode}",
    "guard": "RAISE 'ring {w} only' -- {obj.bare_lit} {order_by}",
}


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


TARGET = Target(_quote_ident, _quote_literal, "app's", FRAGMENTS.__getitem__)
NAMES = {"table": 'Order "Q"', "seq": "q_seq"}


def fill(text: str, keywords: dict[str, str] | None = None) -> str:
    return render(text, TARGET, NAMES, keywords)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("{table}", '"app\'s"."Order ""Q"""'),
        ("{table.bare}", '"Order ""Q"""'),
        ("{table.lit}", '\'"app\'\'s"."Order ""Q"""\''),
        ("{table.bare_lit}", "'Order \"Q\"'"),
        ("{table.schema_lit}", "'app''s'"),
        ("{order_by}", "ORDER BY id"),
    ],
)
def test_each_form(text, expected):
    assert fill(text, {"order_by": "ORDER BY id"}) == expected


def test_a_statement_and_its_bound_values_untouched():
    text = "DELETE FROM {table} WHERE id = :id {order_by}"
    out = fill(text, {"order_by": "ORDER BY id"})
    assert out == 'DELETE FROM "app\'s"."Order ""Q""" WHERE id = :id ORDER BY id'


def test_fragments_apply_to_an_object_and_nest():
    assert fill("{take(seq)}") == "SET v = (SELECT nextval('\"app''s\".\"q_seq\"') -- in 'app''s')"


def test_a_fragment_without_an_object_takes_the_callers_keywords():
    assert fill("{begin()}", {"mode": "WORK"}) == "BEGIN WORK"


def test_a_fragment_takes_words_beside_its_object():
    """``{f(x, k=w)}``: the template's own word ``w`` stands for ``{k}`` in the fragment only."""
    words = {"order_by": "ORDER BY id"}
    assert fill("{guard(seq, w=push)}", words) == "RAISE 'ring push only' -- 'q_seq' ORDER BY id"
    assert fill("{guard(table, w=pop)} {order_by}", words).startswith("RAISE 'ring pop only'")
    with pytest.raises(TemplateError, match="w} names nothing given"):
        fill("{guard(seq)}", words)
    with pytest.raises(TemplateError, match="seq is a name"):
        fill("{guard(table, seq=x)}", words)
    with pytest.raises(TemplateError, match="is not a placeholder"):
        fill("{guard(seq, w=Push)}", words)


def test_filled_text_is_never_read_again():
    """A name that looks like a placeholder is a name, quoted once."""
    target = Target(_quote_ident, _quote_literal, "{table}", FRAGMENTS.__getitem__)
    assert render("{t.bare}", target, {"t": "{seq}"}) == '"{seq}"'
    assert render("{t}", target, {"t": "x"}) == '"{table}"."x"'


@pytest.mark.parametrize(
    "text,complaint",
    [
        ("SELECT {nothing}", "{nothing} names nothing given"),
        ("{order_by.bare}", "names nothing given"),
        ("{table.quoted}", ".quoted is not one of"),
        ("{next_value(nothing)}", "names nothing given"),
        ("{missing(seq)}", "no fragment 'missing'"),
        ("{next_value:seq}", "is not a placeholder"),
        ("{Table}", "is not a placeholder"),
        ("SELECT '{}'", "is not a placeholder"),
        ("a } b", "is not a placeholder"),
        ("{begin()}", "{mode} names nothing given"),
    ],
)
def test_what_names_nothing_fails_at_render_time(text, complaint):
    with pytest.raises(TemplateError, match=re.escape(complaint)):
        fill(text, {"order_by": "ORDER BY id"})


def test_a_name_is_never_also_a_keyword():
    with pytest.raises(TemplateError, match="both as a name and a keyword"):
        fill("{table}", {"table": "x"})


def test_every_shipped_placeholder_is_in_the_grammar():
    braced = re.compile(r"\{[^{}]*\}|[{}]")
    form = re.compile(
        r"\{[a-z_][a-z0-9_]*(\.(bare|lit|bare_lit|schema_lit)"
        r"|\(([a-z_][a-z0-9_]*)?((, )?[a-z_][a-z0-9_]*=[a-z0-9_]+)*\))?\}"
    )
    root = sqlfiles.sql_root()
    for path in [*root.glob("queues/*/*.sql"), *root.glob("engine/*.sql")]:
        for token in braced.findall(path.read_text(encoding="utf-8")):
            assert form.fullmatch(token), f"{path}: {token}"


@pytest.mark.parametrize(
    "dsn,expected",
    [
        ("postgresql://u@h/db", '"App"."Order ""Q""" / \'Order "Q"\''),
        ("mysql://u@h/db", '`App`.`Order "Q"` / \'Order "Q"\''),
        ("mssql://u@h/db?driver=FreeTDS", '[App].[Order "Q"] / N\'Order "Q"\''),
    ],
)
def test_each_engine_spells_names_and_literals_its_own_way(dsn, expected):
    engine = open_engine(dsn, schema="App")
    assert engine.base_hooks.render_text("{t} / {t.bare_lit}", {"t": 'Order "Q"'}) == expected


def test_sql_server_clusters_the_ordered_kinds_only():
    engine = open_engine("mssql://u@h/db?driver=FreeTDS", schema="dbo")

    def create(kind: Kind) -> str:
        return " ".join(engine.hooks.section(QueueSpec("q", kind), "create"))

    assert "PRIMARY KEY NONCLUSTERED (id)" in create(Kind.HEAP)
    assert "PRIMARY KEY CLUSTERED (id)" in create(Kind.FIFO)


def _specs() -> list[QueueSpec]:
    out = []
    for kind, info in KINDS.items():
        capacity = 100 if info.needs_capacity else None
        out.append(QueueSpec("q", kind, capacity))
        if info.allows_watermark:
            out.append(QueueSpec("q", kind, options={"watermark": True}))
    return out


# convert.sql's column expressions, rendered on their own into the statements.
CONVERT_EXPRESSIONS = {"payload_bytes", "payload_text", "payload_json", "time_col", "time_now"}


def _renders(engine: Engine, spec: QueueSpec, section: str) -> bool:
    try:
        return bool(engine.hooks.data_section(spec, section))
    except TemplateError:
        return False


@pytest.mark.parametrize(
    "dsn,schema", [("sqlite:///:memory:", "main"), ("postgresql://u@h/db", "app")]
)
def test_every_shipped_statement_renders_offline(dsn, schema):
    """Every name and keyword a template asks for is given (MySQL's keywords need a server:
    its engine tests render the same files)."""
    engine = open_engine(dsn, schema=schema)
    for spec in _specs():
        for section in engine.hooks.template(spec).sections:
            assert engine.hooks.section(spec, section)
    for section in engine.hooks.data_file().sections:  # each kind uses its own export and load
        assert any(_renders(engine, spec, section) for spec in _specs()), section
    for section in engine.hooks.catalog().sections:
        assert engine.hooks.catalog_sql(section, "q_push")
    profile = sqlfiles.load(f"queues/{engine.base_dialect}/profile.sql")
    names = {"table": "t", "time_col": "at", "order_col": "id", "id_col": "id", "col": "at"}
    names.update(hb_table="w", hb_worker="id", hb_job="worker", hb_beat="beat", sess="sess")
    names.update(ev_table="e", ev_job="job", ev_type="type", ev_at="at", head_idx="t_head")
    names.update(queue_col="queue")
    keys = ("filter", "columns", "assignments", "stale", "age", "state", "at", "order", "keys")
    words = dict.fromkeys((*keys, "state_keys", "where", "instant", "scale"), "1")
    for section in profile.sections:
        assert all(engine.hooks.render_text(s, names, words) for s in profile.statements(section))
    src = Source(table="q", managed=QueueSpec("q", Kind.FIFO))
    sql = ConvertSql(engine, src, ring_spec(src, 100))
    for section in set(sql.file.sections) - CONVERT_EXPRESSIONS:
        assert sql.section(section)


def test_postgresql_imports_a_snapshot_by_its_id_as_a_literal():
    engine = open_engine("postgresql://u@h/db", schema="app")
    names = {"snapshot": "00000003-0000001B-1"}
    text = engine.hooks.render_text(engine.base_hooks.engine_sql("import_snapshot"), names)
    assert text.endswith("SET TRANSACTION SNAPSHOT '00000003-0000001B-1'")
