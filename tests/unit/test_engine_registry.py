"""The engine registry is the one list of engines: its entries match the engine modules, the
SQL folders and the connections table of docs/commands.md, and reading it imports no engine
module (no driver)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qadmin import dsn, sqlfiles
from qadmin.engines import registry

SRC = Path(registry.__file__).parents[2]
COMMANDS_DOC = SRC.parent / "docs" / "commands.md"


@pytest.mark.parametrize("entry", registry.ENGINES, ids=lambda e: e.name)
def test_each_entry_names_its_module_class_and_sql_folder(entry):
    module, _, cls = entry.code.partition(":")
    source = (SRC / (module.replace(".", "/") + ".py")).read_text()
    assert f"class {cls}(Engine)" in source
    assert f'name = "{entry.name}"' in source
    assert (sqlfiles.sql_root() / "queues" / entry.name).is_dir()
    assert f"| {entry.label} |" in COMMANDS_DOC.read_text(), "the connections table lists it"


@pytest.mark.parametrize("entry", registry.ENGINES, ids=lambda e: e.name)
def test_every_scheme_parses_to_its_engine(entry):
    for scheme in (*entry.schemes, *entry.aliases):
        text = f"{scheme}:///x.db" if entry.file else f"{scheme}://u@h/db"
        assert dsn.parse(text).engine == entry.name


def test_unknown_scheme_lists_the_registry_schemes():
    with pytest.raises(Exception, match="use sqlite, postgresql, mysql, mariadb or mssql"):
        dsn.parse("oracle://u@h/db")


def test_reading_the_engine_table_and_parsing_a_dsn_import_no_engine_module():
    code = (
        "import sys, qadmin.dsn; qadmin.dsn.parse('postgresql://u@h/db');"
        "print(sorted(m for m in sys.modules if m.startswith('qadmin.engines.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
