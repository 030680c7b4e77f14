"""Profiles without a server: table names as users type them, library detection by shape."""

from __future__ import annotations

import pytest

from qadmin.errors import InvalidName
from qadmin.profiles import detect
from qadmin.profiles.model import LibraryShape, Profile
from qadmin.profiles.resolve import split_table_name
from qadmin.profiles.shape import Column, TableShape


@pytest.mark.parametrize(
    "text,parsed",
    [
        ("jobs", (None, "jobs", False)),
        ("app.jobs", ("app", "jobs", False)),
        ('"JobQueue"', (None, "JobQueue", True)),
        ('app."Mixed Case"', ("app", "Mixed Case", True)),
        ('"a""b"', (None, 'a"b', True)),
    ],
)
def test_table_names_as_users_type_them(text, parsed):
    assert split_table_name(text) == parsed


@pytest.mark.parametrize("text", ["", "x;drop", "a.b.c", '"open', "a.", "1jobs", "a b"])
def test_anything_else_is_an_invalid_name(text):
    with pytest.raises(InvalidName):
        split_table_name(text)


def _shape(table: str, *columns: str) -> TableShape:
    cols = tuple(Column(c, "text", "text", True, None) for c in columns)
    return TableShape("app", table, cols, ())


def test_a_library_is_recognised_by_name_and_columns_or_forced_by_columns(monkeypatch):
    lib = LibraryShape(
        library="jobslib",
        tables=("jobslib_jobs",),
        columns=frozenset({"status", "queue_name"}),
        dialects=("postgresql",),
        verified="shape",
        profile=Profile(name="", table="", library="jobslib", noun="job"),
    )
    monkeypatch.setattr(detect, "SHAPES", (lib,))
    found = detect.detect(_shape("jobslib_jobs", "id", "Status", "queue_name"), "postgresql")
    assert found is not None and (found.table, found.schema, found.source) == (
        "jobslib_jobs",
        "app",
        "detected",
    )
    renamed = _shape("app_jobs", "id", "status", "queue_name")
    assert detect.detect(renamed, "postgresql") is None, "another name: not guessed"
    assert detect.detect(renamed, "postgresql", "jobslib") is not None, "named: forced"
    assert detect.detect(_shape("app_jobs", "id", "status"), "postgresql", "jobslib") is None
    assert detect.detect(renamed, "mysql", "jobslib") is None
