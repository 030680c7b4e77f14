"""Issue 16's CLI conventions: options before the command, missing optional packages, empty
input, SQLite paths, collect's labels, Ctrl-C, dry-run plans, ping's timings, text formats and
progress bars on a terminal only (docs/cli.md states each)."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

import pytest

from qadmin import extras, render
from qadmin.cli import cli
from qadmin.cli.collect import _server
from qadmin.diagnostics.entries.ghosts import Holder, _holding
from qadmin.pipeline import report_html
from qadmin.pipeline.report import Report
from tests.helpers import one_line, run, run_qadmin

REPO = Path(__file__).resolve().parents[2]


qadmin = run_qadmin


@pytest.fixture
def db(tmp_path) -> list[str]:
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    assert run("create", "q", "--kind", "fifo", *dsn).exit_code == 0
    return dsn


# -- 1. connection options before the command -----------------------------------------------


def test_connection_options_work_before_the_command_and_the_commands_own_win(request, tmp_path):
    from tests.conftest import make_target

    pg = make_target("postgresql", request, tmp_path)
    given = ["--dsn", pg.dsn, "--schema", pg.schema, "--lock-timeout", "2s"]
    assert run(*given, "create", "before_q", "--kind", "fifo").exit_code == 0
    listed = run("--dsn", pg.dsn, "list", "--schema", pg.schema, "--format", "json")
    assert [q["name"] for q in json.loads(listed.stdout)] == ["before_q"]
    local = f"sqlite:///{tmp_path / 'local.db'}"
    run("create", "local_q", "--kind", "heap", "--dsn", local)
    after_wins = run("--dsn", pg.dsn, "--schema", pg.schema, "list", "--dsn", local)
    assert after_wins.exit_code == 2 and "--schema" in one_line(after_wins)  # SQLite's main
    after_wins = run("--dsn", pg.dsn, "list", "--dsn", local, "--format", "json")
    assert [q["name"] for q in json.loads(after_wins.stdout)] == ["local_q"]
    bad = run("--lock-timeout", "soon", "list")
    assert bad.exit_code == 2 and "'soon' is not a time" in one_line(bad)


def test_config_and_named_connection_before_the_command(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(f'[connections.local]\ndsn = "sqlite:///{tmp_path / "n.db"}"\n')
    assert (
        run("--config", str(config), "-c", "local", "create", "q", "--kind", "heap").exit_code == 0
    )
    listed = run("--config", str(config), "-c", "local", "list", "--format", "json")
    assert [q["name"] for q in json.loads(listed.stdout)] == ["q"]
    names = run("--config", str(config), "conn", "list", "--format", "json")
    assert [r["name"] for r in json.loads(names.stdout)] == ["local"]


def test_completion_still_offers_commands_and_options_after_a_global_option():
    def complete(words: str, cword: int) -> set[str]:
        env = dict(
            os.environ, COMP_WORDS=words, COMP_CWORD=str(cword), _QADMIN_COMPLETE="bash_complete"
        )
        out = subprocess.run(
            [sys.executable, "-m", "qadmin"], capture_output=True, text=True, env=env, timeout=60
        )
        return set(out.stdout.split())

    assert complete("qadmin --dsn sqlite:///x.db pu", 3) == {"plain,push", "plain,purge"}
    assert complete("qadmin --sch", 1) == {"plain,--schema"}


# -- 2. missing optional dependencies ---------------------------------------------------------

BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
sys.argv = ["qadmin", *{args!r}]
from qadmin.cli import main
main()
"""


def without(blocked: set[str], *args: str, cwd: Path | None = None, env=None):
    """qadmin run with these packages failing to import, as on a machine without them."""
    code = BLOCK.format(blocked=blocked, args=list(args))
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ, **(env or {})),
        timeout=120,
        check=False,
    )


def test_a_missing_optional_package_is_one_line_naming_the_install(db, tmp_path):
    lines = {}
    for args, blocked in (
        (["export", "q", "--to", str(tmp_path / "x.parquet"), *db], {"pyarrow"}),
        (["collect", "--all", "--to", str(tmp_path / "h"), *db], {"pyarrow"}),
        (["report", "--history", str(tmp_path)], {"pyspark"}),
        (["ping", "--dsn", "mssql://sa:pw-9@127.0.0.1:1/db?driver=FreeTDS"], {"pyodbc"}),
    ):
        result = without(blocked, *args, cwd=REPO)
        assert result.returncode == 9, result.stderr
        assert "Traceback" not in result.stderr and "pw-9" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        lines[args[0]] = result.stderr.strip()
    # From the checkout's folder, the install line installs the checkout, not PyPI's copy.
    assert "pip install '.[collect]'" in lines["export"]
    assert "pip install '.[collect]'" in lines["collect"]
    assert "pip install '.[spark]'" in lines["report"]
    assert "pip install '.[mssql]'" in lines["ping"]
    assert lines["export"].startswith("qadmin: error: qadmin export needs pyarrow")


def test_the_install_line_fits_a_wheel_a_checkout_and_another_folder(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    assert extras.install_line("collect") == "pip install '.[collect]'"
    monkeypatch.chdir(tmp_path)
    assert extras.install_line("spark") == f"pip install '{REPO}[spark]'"
    monkeypatch.setattr(extras, "checkout", lambda: None)
    assert extras.install_line("collect") == "pip install 'qadmin[collect]'"


def test_an_unmapped_import_error_stays_an_internal_error():
    assert extras.from_import_error(ModuleNotFoundError("x", name="nosuchmodule")) is None
    found = extras.from_import_error(ModuleNotFoundError("x", name="pandas.core"))
    assert found is not None and found.exit_code == 9


def test_spark_without_java_is_one_line(tmp_path):
    (tmp_path / "h").mkdir()
    env = {"PATH": "/nonexistent", "JAVA_HOME": ""}
    result = qadmin("report", "--history", str(tmp_path / "h"), env=env)
    assert result.returncode == 9, result.stderr
    assert result.stderr.decode().strip().splitlines() == [
        "qadmin: error: Spark needs Java 17, which is not installed: apt-get install "
        "openjdk-17-jre-headless (or set JAVA_HOME)"
    ]


# -- 3. empty input ------------------------------------------------------------------------


def test_push_refuses_empty_input_unless_asked(db, tmp_path):
    refused = run("push", "q", *db, input=b"")
    assert refused.exit_code == 2 and "stdin is empty" in one_line(refused)
    (tmp_path / "empty").write_bytes(b"")
    refused = run("push", "q", "--file", str(tmp_path / "empty"), *db)
    assert refused.exit_code == 2 and "is empty" in one_line(refused)
    assert json.loads(run("peek", "q", "--format", "json", *db).stdout) == []
    assert run("push", "q", "--allow-empty", *db, input=b"").exit_code == 0
    popped = json.loads(run("pop", "q", "--format", "json", *db).stdout)
    assert [m["payload"] for m in popped] == [""]


# -- 4. SQLite paths ----------------------------------------------------------------------


def test_only_create_makes_a_sqlite_file_and_never_a_folder(tmp_path):
    missing_dir = tmp_path / "nodir" / "x.db"
    made = run("create", "q", "--kind", "fifo", "--dsn", f"sqlite:///{missing_dir}")
    assert made.exit_code == 6 and "does not exist" in one_line(made)
    assert not missing_dir.parent.exists()
    typo = tmp_path / "typo.db"
    for args in (["list"], ["ping"], ["push", "q", "x"], ["inspect", "q"], ["tail", "--all"]):
        result = run(*args, "--dsn", f"sqlite:///{typo}")
        assert result.exit_code == 6, (args, result.stderr)
        assert "no database file" in one_line(result)
    assert not typo.exists()
    for args in (["list"], ["ping"]):
        folder = run(*args, "--dsn", f"sqlite:///{tmp_path}")
        assert folder.exit_code == 6 and "is a folder" in one_line(folder)
    assert run("create", "q", "--kind", "fifo", "--dsn", f"sqlite:///{typo}").exit_code == 0
    assert run("list", "--dsn", f"sqlite:///{typo}").exit_code == 0


def test_the_embedded_default_makes_its_file_and_folder(tmp_path):
    home = tmp_path / "fresh" / "home"
    listed = run("list", "--format", "json", env={"QADMIN_HOME": str(home), "QADMIN_DSN": ""})
    assert listed.exit_code == 0 and json.loads(listed.stdout) == []
    assert (home / "qadmin.db").exists()


# -- 5. collect's labels ----------------------------------------------------------------------


def test_collect_labels_each_server_and_never_skips_silently(tmp_path):
    history = tmp_path / "h"
    written = {}
    for name in ("a.db", "b.db"):
        dsn = f"sqlite:///{tmp_path / name}"
        run("create", "q", "--kind", "fifo", "--dsn", dsn)
        args = ["collect", "--all", "--to", str(history), "--resolution", "86400"]
        result = run(*args, "--dsn", dsn, "--format", "json")
        assert result.exit_code == 0, result.stderr
        row = json.loads(result.stdout)[0]
        assert row["status"] == "written" and row["connection"] == f"sqlite {tmp_path / name}"
        written[name] = row["file"]
    assert written["a.db"] != written["b.db"]
    again = run(*args, "--dsn", dsn, "--format", "json")
    assert again.exit_code == 1
    assert json.loads(again.stdout)[0]["status"] == "slot already collected"
    assert "already collected" in one_line(again)


def test_a_server_label_has_no_password():
    assert _server("postgresql://app:s3cret@db1:5433/app") == "postgresql db1:5433/app"
    assert _server("mysql://root:pw@127.0.0.1/test") == "mysql 127.0.0.1/test"
    assert _server("sqlite:////var/lib/q.db") == "sqlite /var/lib/q.db"


# -- 6. Ctrl-C ------------------------------------------------------------------------------


def test_ctrl_c_exits_130_saying_interrupted(db, monkeypatch):
    from qadmin.ops import messages

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(messages, "pop_delivering", interrupted)
    result = run("pop", "q", *db)
    assert result.exit_code == 130
    assert result.stderr == "qadmin: interrupted\n"


def _has_open(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (a descriptor may close while it is read)."""
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with suppress(FileNotFoundError):
            if str(path) in os.readlink(fd):
                return True
    return False


def test_sigint_to_a_waiting_pop_exits_130(tmp_path):
    path = tmp_path / "q.db"
    run("create", "q", "--kind", "fifo", "--dsn", f"sqlite:///{path}")
    child = subprocess.Popen(
        [sys.executable, "-m", "qadmin", "pop", "q", "--wait", "60", "--dsn", f"sqlite:///{path}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not _has_open(child.pid, path):
        assert child.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)  # until it has opened the database: past start-up, in the command
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130 and err == b"qadmin: interrupted\n"


def test_sigint_while_the_cli_is_still_importing_exits_130_in_one_line(tmp_path):
    """The script's first import (click, rich, every command) takes a few hundred ms: Ctrl-C
    there is the same line as later. A child whose import of qadmin.cli is interrupted, as a
    SIGINT arriving then would interrupt it."""
    code = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'qadmin.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from qadmin.launch import main\n"
        "main()\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert child.returncode == 130 and child.stderr == b"qadmin: interrupted\n", child.stderr


# -- 7. dry-run plans in every format ------------------------------------------------------


def test_resize_and_convert_dry_runs_show_their_plan_in_table_and_plain(tmp_path):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    run("create", "r", "--kind", "ring", "--capacity", "4", *dsn)
    run("create", "f", "--kind", "fifo", *dsn)
    run("push", "f", "a", "b", "c", *dsn)
    for fmt in ("plain", "table"):
        plan = run("resize", "r", "--capacity", "8", "--dry-run", "--format", fmt, *dsn)
        assert plan.exit_code == 0, plan.stderr
        assert "steps" in plan.stdout and "capacity gate" in plan.stdout
        assert 'SELECT capacity FROM "main"."r_ctl";' in plan.stdout
        args = ["convert", "f", "--to", "ring", "--capacity", "8", "--dry-run", "--format", fmt]
        fits = run(*args, *dsn)
        assert fits.exit_code == 0 and "lock the table" in fits.stdout
        assert "CREATE TABLE" in fits.stdout
    too_small = run("convert", "f", "--to", "ring", "--capacity", "2", "--dry-run", *dsn)
    assert too_small.exit_code == 2 and "does not fit" in one_line(too_small)
    assert "lock the table" in too_small.stdout
    run("push", "r", "a", "b", "c", *dsn)
    shrink = run("resize", "r", "--capacity", "2", "--dry-run", "--format", "json", *dsn)
    assert shrink.exit_code == 2 and json.loads(shrink.stdout)["fits"] is False
    assert "do not fit" in one_line(shrink)


def _documented_keys(command: str) -> tuple[set[str], set[str]]:
    """commands.md's JSON keys of a command (its row of the output table): the run's, and
    those its dry run adds."""
    docs = Path(__file__).parents[2] / "docs" / "commands.md"
    row = next(x for x in docs.read_text().splitlines() if x.startswith(f"| `{command}` |"))
    keys = re.search(r"`\{([^}]*)\}`", row)
    added = re.search(r"a dry run adds `([^`]*)`", row)
    assert keys and added, row
    return set(keys[1].split(", ")), set(added[1].split(", "))


def test_resize_dry_run_json_has_the_keys_the_docs_give_and_no_refused(tmp_path):
    """commands.md and cli.md once disagreed on whether the plan has ``refused``: it has not
    (convert's has); the reason is the error line."""
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    run("create", "r", "--kind", "ring", "--capacity", "4", *dsn)
    run("push", "r", "a", "b", "c", *dsn)
    run_keys, dry_keys = _documented_keys("resize")
    for capacity, code in (("8", 0), ("2", 2)):
        plan = run("resize", "r", "--capacity", capacity, "--dry-run", "--format", "json", *dsn)
        assert plan.exit_code == code, plan.stderr
        assert set(json.loads(plan.stdout)) == run_keys | dry_keys
    assert "refused" not in run_keys | dry_keys
    cli_md = " ".join((Path(__file__).parents[2] / "docs" / "cli.md").read_text().split())
    assert "its JSON has no `refused` key" in cli_md


# -- 8. ping -------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["sqlite", "postgresql"])
def test_ping_reports_connect_and_round_trip_apart(label, request, tmp_path):
    from tests.conftest import make_target

    target = make_target(label, request, tmp_path)
    engine = target.engine()
    engine.server_version()  # SQLite: now the file exists
    engine.close()
    pinged = run("ping", "--format", "json", *target.cli_args())
    assert pinged.exit_code == 0, pinged.stderr
    data = json.loads(pinged.stdout)
    assert set(data) == {"engine", "server_version", "connect_ms", "round_trip_ms"}
    assert data["connect_ms"] >= 0 and data["round_trip_ms"] >= 0


# -- 9. text formats and wording -----------------------------------------------------------


def test_tail_plain_is_text_and_csv_booleans_match_the_other_commands(db):
    plain = run("tail", "q", "--count", "1", "--format", "plain", *db)
    header, line = plain.stdout.splitlines()
    assert header.split()[:4] == ["time", "queue", "kind", "enq/s"]
    assert line.split()[1:3] == ["q", "fifo"] and "{" not in plain.stdout
    tailed = list(
        csv.DictReader(io.StringIO(run("tail", "q", "--count", "1", "--format", "csv", *db).stdout))
    )
    listed = list(csv.DictReader(io.StringIO(run("list", "--format", "csv", *db).stdout)))
    assert tailed[0]["depth_exact"] == "yes" and listed[0]["strict"] == "no"


def test_floats_are_rounded_for_people_and_whole_for_machines(capsys):
    data = [{"rate": 0.0013461538461538463, "big": 12345.678, "half": 0.5}]
    render.rows(data, ["rate", "big", "half"], "plain")
    assert capsys.readouterr().out.splitlines()[1].split() == ["0.001346", "12346", "0.5"]
    render.rows(data, ["rate"], "csv")
    assert capsys.readouterr().out.splitlines()[1] == "0.0013461538461538463"
    render.rows(data, ["rate"], "json")
    assert json.loads(capsys.readouterr().out)[0]["rate"] == 0.0013461538461538463


def test_html_charts_draw_one_hour_of_history():
    from datetime import UTC, datetime

    hour = {
        "hour": datetime(2026, 11, 24, 12, tzinfo=UTC),
        **{c: 3.0 for _, _, series in report_html.CHARTS for _, c in series},
    }
    page = report_html.render(Report("h", 60, [], [], charted={("c", "q"): [hour]}))
    polylines = page.split('points="')[1:]
    assert len(polylines) == sum(len(s) for _, _, s in report_html.CHARTS)
    for points in polylines:
        xs = {p.split(",")[0] for p in points.split('"')[0].split()}
        assert len(xs) == 2, points  # a line across the chart, not one invisible point


def test_counts_and_holders_read_right(tmp_path):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    run("create", "c", "--kind", "claim", *dsn)
    run("push", "c", "job", *dsn)
    run("pop", "c", *dsn)
    time.sleep(1.1)
    report = json.loads(run("inspect", "c", "--stale-after", "1", "--format", "json", *dsn).stdout)
    stale = [f["message"] for f in report["findings"] if f["code"] == "stale_claims"]
    assert stale and stale[0].startswith("1 claim older than 1 s"), stale
    assert _holding(Holder.of({"holder_kind": "session", "holder": "55"})) == (
        "session 55 has had a transaction open"
    )


def test_empty_answers_say_so(db, tmp_path):
    (tmp_path / "empty.toml").write_text("")
    conns = run("conn", "list", "--config", str(tmp_path / "empty.toml"))
    assert conns.exit_code == 0 and "no named connections" in one_line(conns)
    dsn = db[1]
    run("create", "c", "--kind", "claim", "--dsn", dsn)
    claims = run("claims", "c", "--dsn", dsn)
    assert claims.exit_code == 0 and claims.stdout == ""
    assert "qadmin: no claim of c is older than 300 s" in claims.stderr.splitlines()


# -- 10. progress only on a terminal -------------------------------------------------------


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """Run qadmin with stderr on a pseudo-terminal (drained while it runs): exit, stdout and
    what the terminal received."""
    master, slave = pty.openpty()
    received = bytearray()

    def drain() -> None:
        try:
            while chunk := os.read(master, 65536):
                received.extend(chunk)
        except OSError:  # the child's side closed
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    clean = {k: v for k, v in os.environ.items() if k != "CI"}
    child = subprocess.run(
        [sys.executable, "-m", "qadmin", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=dict(clean, **(env or {})),
        timeout=120,
        check=False,
    )
    os.close(slave)
    reader.join(10)
    os.close(master)
    return child.returncode, child.stdout, bytes(received)


LONG = (
    (["create", "big", "--kind", "ring", "--capacity", "100000"], "creating big"),
    (["resize", "big", "--capacity", "120000", "--yes"], "resizing big"),
    (["push", "f", "--lines", "--file", "LINES"], "pushing 10,000 messages"),
    (["convert", "f", "--to", "ring", "--capacity", "20000", "--yes"], "converting f"),
)


@pytest.mark.parametrize("terminal", [True, False])
def test_progress_on_a_terminal_only(terminal, tmp_path):
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]
    run("create", "f", "--kind", "fifo", *dsn)
    (tmp_path / "lines").write_text("".join(f"m{i}\n" for i in range(10_000)))
    for args, says in LONG:
        args = [str(tmp_path / "lines") if a == "LINES" else a for a in args]
        if terminal:
            code, _, shown = on_a_terminal(*args, *dsn)
            assert code == 0, shown
            assert says.encode() in shown
        else:
            done = qadmin(*args, *dsn)
            assert done.returncode == 0 and done.stderr == b"", done.stderr
    if terminal:
        code, _, shown = on_a_terminal(
            "resize", "big", "--capacity", "100000", "--yes", *dsn, env={"CI": "true"}
        )
        assert code == 0 and shown == b""


def test_docs_list_every_exit_code_and_install_line():
    import re

    from qadmin import errors

    text = (REPO / "docs" / "cli.md").read_text()
    documented = {int(n) for n in re.findall(r"^\| (\d+) \|", text, re.M)}
    codes = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    assert documented == codes
    helped = " ".join((cli.help or "").split())
    assert all(f"{code} " in helped for code in codes)
    for extra in set(extras.EXTRAS.values()):
        assert f"pip install 'qadmin[{extra}]'" in text and f"pip install '.[{extra}]'" in text
