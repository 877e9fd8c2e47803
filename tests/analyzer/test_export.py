"""The hand-written CSV renderer agrees with the csv module on every field."""

from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer.outputs.export import csv_line

fields = st.text(alphabet=st.sampled_from(['a', ',', '"', '\n', '\r', ' ', 'é', '\t', '\\', "'"]) | st.characters(),
                 max_size=30)


@settings(max_examples=400, deadline=None)
@given(row=st.lists(fields, min_size=2, max_size=17).map(tuple))
def test_csv_reader_reads_back_every_field(row):
    line = csv_line(row)
    assert line.endswith("\n")
    assert next(csv.reader(io.StringIO(line, newline=""))) == list(row)


def test_matches_the_csv_module_on_ordinary_rows():
    row = ("2025-10-02T10:15:03.000Z", "a,b", 'say "hi"', "two\nlines", "", "plain")
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(row)
    assert csv_line(row) == buffer.getvalue()


@settings(max_examples=200, deadline=None)
@given(row=st.lists(fields, min_size=17, max_size=17).map(tuple))
def test_timeline_renderer_checks_every_column_that_can_need_quotes(row):
    from aitrail.analyzer.outputs.export import PLAIN_COLUMNS, TimelineCsv
    from aitrail.analyzer.view.rows import COLUMNS

    # the columns left unchecked only ever hold values without , " CR or LF
    row = tuple("x" if COLUMNS[index] in PLAIN_COLUMNS else value for index, value in enumerate(row))
    assert next(csv.reader(io.StringIO(TimelineCsv()(row), newline=""))) == list(row)
    assert TimelineCsv()(row) == csv_line(row)  # byte for byte the general renderer's line


def test_an_agent_or_digest_a_hostile_bundle_wrote_cannot_shift_the_columns():
    # agent and source_sha256 come from files.jsonl: once written unquoted, "evil,\"agent" made 11 fields of 17
    from aitrail.analyzer.outputs.export import TimelineCsv

    row = ("2026-01-01T00:00:00.000Z", "s", "p", "b", "user", "m", "", "", "hello", 'evil,"agent', "store",
           "data/x", "abc,\ndef", "line:1", "record", "primary", "e" * 32)
    assert next(csv.reader(io.StringIO(TimelineCsv()(row), newline=""))) == list(row)


# rows drawn from a few shared objects (as a file's rows share theirs) and from fresh equal copies
_SHARED = ["s1", "/home/u/p", "main", "a,b", 'q"x', "", "line:1", "a\nb"]
_VALUES = st.one_of(st.sampled_from(_SHARED), fields, st.sampled_from(_SHARED).map(lambda value: (value + "!")[:-1]))


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.lists(_VALUES, min_size=17, max_size=17).map(tuple), max_size=8))
def test_the_timeline_renderer_gives_each_row_the_line_of_that_row_alone(rows):
    """What TimelineCsv keeps from the rows before never shows in a row's line: each is csv_line's."""
    from aitrail.analyzer.outputs.export import PLAIN_COLUMNS, TimelineCsv
    from aitrail.analyzer.view.rows import COLUMNS

    render = TimelineCsv(",h,c,d\n")
    for row in rows:
        row = tuple("x" if COLUMNS[index] in PLAIN_COLUMNS else value for index, value in enumerate(row))
        assert render(row) == csv_line(row)[:-1] + ",h,c,d\n"
