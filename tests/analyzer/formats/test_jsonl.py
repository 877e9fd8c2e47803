"""each_line: rows per decoded line, with the lines not read reported in place."""

from __future__ import annotations

from aitrail.analyzer.formats.jsonl import each_line
from aitrail.analyzer.view.rows import Draft
from tests.analyzer.formats.walk import context


def test_rows_per_line_and_parser_rows_in_file_order():
    data = b'{"a": 1}\nnot json\n\n{"a": 2}\n[3]\n'
    ctx = context({("fork.log", "log.jsonl"): data}, "log.jsonl")
    rows = list(each_line(ctx, lambda line: [Draft("system", str(line.value["a"]), line.locator)]))
    assert [(row.text.split(":")[0], row.locator) for row in rows] == [
        ("1", "line:1"), ("parser", "line:2"), ("2", "line:4"), ("parser", "line:5")]


def test_each_decoded_line_cites_its_number_offset_and_bytes():
    from aitrail.analyzer.formats.jsonl import Line, read_jsonl

    data = b'{"a": 1}\r\n\n  {"b": [2]}  \nnot json\n{"c": 3}'
    ctx = context({("fork.log", "log.jsonl"): data}, "log.jsonl")
    items = list(read_jsonl(ctx))
    lines = [(item.number, item.offset, item.raw, item.value, item.locator, item.terminated)
             for item in items if isinstance(item, Line)]
    assert lines == [(1, 0, b'{"a": 1}\r', {"a": 1}, "line:1", True),
                     (3, 11, b'  {"b": [2]}  ', {"b": [2]}, "line:3", True),
                     (5, 35, b'{"c": 3}', {"c": 3}, "line:5", False)]
    assert [item.locator for item in items if isinstance(item, Draft)] == ["line:4"]
