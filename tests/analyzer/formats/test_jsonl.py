"""each_line: rows per decoded line, with the lines not read reported in place."""

from __future__ import annotations

from aitrail.analyzer.formats.jsonl import each_line
from aitrail.analyzer.rows import Draft
from tests.analyzer.formats.walk import context


def test_rows_per_line_and_parser_rows_in_file_order():
    data = b'{"a": 1}\nnot json\n\n{"a": 2}\n[3]\n'
    ctx = context({("fork.log", "log.jsonl"): data}, "log.jsonl")
    rows = list(each_line(ctx, lambda line: [Draft("system", str(line.value["a"]), line.locator)]))
    assert [(row.text.split(":")[0], row.locator) for row in rows] == [
        ("1", "line:1"), ("parser", "line:2"), ("2", "line:4"), ("parser", "line:5")]
