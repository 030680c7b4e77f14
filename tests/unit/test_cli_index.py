"""`qadmin --help` lists the commands from cli/index.py without importing them."""

from __future__ import annotations

import subprocess
import sys

from qadmin.cli import cli, index


def test_the_index_lists_every_command_with_its_own_help() -> None:
    assert index.generate() == index.INDEX, (
        "cli/index.py is out of date: python -c 'from qadmin.cli import index; index.write()'"
    )
    assert set(cli.load_all()) == set(index.INDEX)


def test_help_lists_every_command_without_importing_any() -> None:
    probe = (
        "import sys\n"
        "from qadmin.cli import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('qadmin.cli.inspect', "
        "'qadmin.diagnostics', 'qadmin.ops', 'rich', 'psycopg', 'pymysql')))\n"
        "print('LOADED', loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    for name in index.INDEX:
        assert f"\n  {name} " in out, name
    assert "LOADED []" in out


def test_a_command_run_by_name_is_loaded_on_demand() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "qadmin", "ping", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "Usage: qadmin ping" in out.stdout
