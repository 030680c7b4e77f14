"""The plain format: qadmin's own layout of one-line ASCII cells writes the bytes tabulate's
``plain`` writes (scripts parse it, and a table of any other cells still goes through
tabulate)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from qadmin import render
from qadmin.render import plain_lines

ASCII = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
ANY = st.text(st.characters(max_codepoint=0x30FF), max_size=6)  # tabs, CJK, accents


def _tabulate(table: list[list[str]], headers: list[str]) -> list[str]:
    return str(tabulate(table, headers=headers, tablefmt="plain", disable_numparse=True)).split(
        "\n"
    )


@st.composite
def tables(draw: st.DrawFn, cells: st.SearchStrategy[str]) -> tuple[list[list[str]], list[str]]:
    width = draw(st.integers(1, 4))
    headers = draw(st.lists(ASCII.filter(str.strip), min_size=width, max_size=width))
    rows = draw(st.lists(st.lists(cells, min_size=width, max_size=width), min_size=1, max_size=5))
    return rows, headers


@settings(max_examples=400, deadline=None)
@given(tables(ASCII))
def test_ascii_cells_are_laid_out_as_tabulate_does(case):
    rows, headers = case
    assert plain_lines(rows, headers) == _tabulate(rows, headers)


@settings(max_examples=200, deadline=None)
@given(tables(ANY))
def test_any_other_cell_goes_through_tabulate(case):
    rows, headers = case
    assert plain_lines(rows, headers) == _tabulate(rows, headers)


def test_a_push_of_ids_and_times():
    rows = [["1", "2026-11-29T05:36:55.542689Z"], ["10", "2026-11-29T05:36:55.542904Z"]]
    assert plain_lines(rows, ["id", "enqueued_at"]) == [
        "id    enqueued_at",
        "1     2026-11-29T05:36:55.542689Z",
        "10    2026-11-29T05:36:55.542904Z",
    ]


def test_rows_too_wide_for_the_terminal_are_shown_one_record_at_a_time(monkeypatch, capsys):
    """A table wider than 80 columns cut its times to ``2026-11…``: it is shown as records of
    ``column value`` lines instead (psql's expanded display), every value whole; a table that
    fits stays a table."""
    monkeypatch.setenv("COLUMNS", "80")
    at = "2026-11-29T12:30:39.627000Z"
    error = "boom: a long error message from the worker about what went wrong"
    wide = [{"id": 1, "first_error": error, "last_error": error, "enqueued_at": at, "died_at": at}]
    render.rows(wide, list(wide[0]), "table")
    shown = capsys.readouterr().out
    assert "record 1" in shown and shown.count(at) == 2 and shown.count(error) == 2
    assert max(len(line) for line in shown.splitlines()) <= 80
    render.rows([{"id": 1, "at": at}], ["id", "at"], "table")
    shown = capsys.readouterr().out
    assert "record" not in shown and at in shown
