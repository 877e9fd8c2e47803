"""formats/sqlite_values.py: values too long to read become parser rows, the rest of the row stays."""

from __future__ import annotations

from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.view import sqlite_safe


def test_an_oversize_value_is_reported_and_left_out():
    row = {"_rowid": 3, "data": sqlite_safe.Oversize(70_000_000), "id": "a"}
    [problem] = oversize_rows(row, "sqlite:part:3")
    assert problem.locator == "sqlite:part:3/data" and "value too long to read (70000000 long" in problem.text
    assert problem.text.startswith("parser: unparseable record (")
    assert row == {"_rowid": 3, "data": None, "id": "a"}


def test_a_row_without_oversize_values_gives_no_row_and_is_unchanged():
    row = {"_rowid": 1, "data": "{}", "id": None}
    assert list(oversize_rows(row, "sqlite:part:1")) == []
    assert row == {"_rowid": 1, "data": "{}", "id": None}
