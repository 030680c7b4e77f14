"""The README and docs/ state facts the code can check: the commands and their options, the
finding codes, the exit codes, the links between pages, the README's size and its test command.
A change to any of these that forgets the docs fails here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import click
import pytest

from qadmin import errors
from qadmin.cli import cli

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
# The connection options and --format, listed once at the top of docs/commands.md.
SHARED_OPTIONS = {"--dsn", "--connection", "--config", "--schema", "--connect-timeout"}
SHARED_OPTIONS |= {"--lock-timeout", "--statement-timeout", "--format"}
# The profile options (a table read as a queue) are documented once, in docs/profiles.md.
PROFILE_LINK = "[profile options](profiles.md#the-same-keys-as-options)"
INTERRUPTED = 130  # Ctrl-C: the shell's convention, 128 + SIGINT


def prose_keep_headings(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code, where links are not links."""
    return re.sub(r"`[^`\n]*`", "", prose_keep_headings(text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose_keep_headings(text), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        candidate, n = slug, 0
        while candidate in found:
            n += 1
            candidate = f"{slug}-{n}"
        found.add(candidate)
    return found


def section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_tables_generated_from_the_registries_are_current():
    """The tables that mirror a registry (the kinds and their capabilities, engines, check's
    metrics, telemetry fields, findings, the library profiles, the metrics families, the exit
    codes, a [tables.NAME] entry's keys; docs/layout.md lists them) are cog blocks filled by
    scripts/doc_tables.py: ``cog --check`` fails when a registry changed and the page was not
    regenerated (``PYTHONPATH=src cog -r -I scripts docs/*.md``)."""
    from cogapp import Cog

    pages = [p for p in PAGES if "[[[cog" in p.read_text()]
    blocks = "".join(p.read_text() for p in pages)
    generated = ("capabilities", "connections", "metrics", "telemetry_fields", "findings")
    generated += ("libraries", "library_queues", "library_retries", "prometheus_metrics")
    generated += ("exit_codes", "kinds", "table_keys")
    for table in generated:
        assert f"doc_tables.{table}()" in blocks, table
    status = Cog().main(["cog", "--check", "-I", str(REPO / "scripts"), *map(str, pages)])
    assert status == 0, "a generated table differs from its registry: regenerate it with cog -r"


def test_readme_fits_in_twelve_kilobytes():
    assert len(README.read_bytes()) <= 12 * 1024


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_reaches_a_file_and_anchor(page):
    text = page.read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(text)):
        if re.match(r"[a-z]+:", target):
            continue
        path_part, _, anchor = target.partition("#")
        path = (page.parent / path_part).resolve() if path_part else page
        relative = path.relative_to(REPO).as_posix()
        assert path.exists(), f"{page.name}: {target} does not exist"
        if anchor:
            assert anchor in anchors(path.read_text()), f"{page.name}: no #{anchor} in {relative}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_docs_cite_nothing_outside_the_repository(page):
    text = page.read_text()
    assert "../shared" not in text and "/work/" not in text and "seeds/" not in text


def test_ci_runs_the_readme_test_command():
    section = README.read_text().split("## Quick start: the two commands", 1)[1]
    block = section.split("```sh\n", 1)[1]
    block = block.split("```", 1)[0]
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert commands[-1] == "./scripts/test"
    assert "exec ./scripts/test" in (REPO / ".ci" / "run").read_text()
    assert "qadmin demo" in commands[0] and "demo" in cli.load_all()


def _commands() -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, command in cli.load_all().items():
        if isinstance(command, click.Group):
            out.update({f"{name} {sub}": c for sub, c in command.commands.items()})
        else:
            out[name] = command
    return out


def _command_rows() -> dict[str, str]:
    table = section((DOCS / "commands.md").read_text(), "## Commands")
    return {m[1]: m[0] for m in re.finditer(r"^\| `([a-z ]+)`.*$", table, re.MULTILINE)}


def test_command_reference_lists_exactly_the_cli_commands():
    assert set(_command_rows()) == set(_commands())


@pytest.mark.parametrize("name", sorted(_commands()))
def test_command_reference_lists_every_option(name):
    row = _command_rows()[name]
    for param in _commands()[name].params:
        if not isinstance(param, click.Option) or set(param.opts) & SHARED_OPTIONS:
            continue
        if param.name and param.name.startswith(("warn_", "crit_")):
            assert "`--warn-X/--crit-X`" in row, name
            continue
        long = max(param.opts, key=len)
        profiled = any(p.name == "library" for p in _commands()[name].params)
        if profiled and param.name in _profile_option_names():
            assert PROFILE_LINK in row, f"docs/commands.md: {name} lacks the profile options"
            continue
        assert f"`{long}" in row, f"docs/commands.md: {name} does not list {long}"


def _profile_option_names() -> set[str]:
    from qadmin.cli import options

    names = {key for key, _ in (*options._PROFILE_COLUMNS, *options._PROFILE_VALUES)}
    return names | set(options.PROFILE_EXTRA)


def _finding_codes_in_source() -> set[str]:
    codes: set[str] = set()
    for path in (REPO / "src" / "qadmin" / "diagnostics").rglob("*.py"):
        codes |= set(re.findall(r'Finding\(\s*[^,()]+,\s*"([a-z_]+)"', path.read_text()))
    return codes


def test_findings_table_lists_exactly_the_finding_codes():
    table = section((DOCS / "diagnostics.md").read_text(), "## Findings")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, re.MULTILINE))
    assert len(_finding_codes_in_source()) > 10  # the pattern still finds them
    assert documented == _finding_codes_in_source()


def test_readme_playbook_names_only_real_finding_codes():
    playbook = section(README.read_text(), "## The 3 a.m. playbook")
    named = set(re.findall(r"`([a-z]+_[a-z_]+)`", playbook))
    named -= {"metadata_lock_info", "idle_in_transaction_session_timeout", "session_alive"}
    assert named and named <= _finding_codes_in_source()


def test_readme_exit_codes_match_the_error_family():
    table = section(README.read_text(), "## Exit codes")
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)}
    constants = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    assert documented == constants | {INTERRUPTED}
    assert "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN" in table


def test_no_binaries_are_tracked():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    assert [p for p in tracked if re.search(r"\.(whl|jar|tar\.gz|zip)$", p)] == []
