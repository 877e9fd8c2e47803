"""``--format xlsx``: the timeline as a workbook in which every cell is text, never a formula.

A CSV opened in a spreadsheet turns a prompt such as ``=HYPERLINK(...)`` into
a formula; here every cell is written with XlsxWriter's ``write_string`` (and
the workbook's string-to-formula, -number and -URL conversions are off), so
``=``, ``+``, ``-`` and ``@`` stay characters. A cell holds at most 32,767
characters (Excel's limit): a longer field is cut with a marker saying how
long it was; the whole text is in the CSV and JSONL forms. A sheet holds at
most 1,048,576 rows: the timeline continues on ``timeline (2)``, ``(3)``...
XlsxWriter's constant-memory mode writes row by row, so memory does not grow
with the timeline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import xlsxwriter

from aitrail.analyzer.outputs.export import OUTPUT_COLUMNS

MAX_CELL_CHARS = 32_767
MAX_SHEET_ROWS = 1_048_576
WIDTHS = {"timestamp_utc": 24, "text": 80, "source": 40, "project_path": 30}


def cell_text(value: str) -> str:
    """``value`` as one cell: cut, with a marker, past Excel's 32,767 characters."""
    if len(value) <= MAX_CELL_CHARS:
        return value
    marker = f"… [cut: {len(value)} characters; the whole text is in the CSV or JSONL timeline]"
    return value[:MAX_CELL_CHARS - len(marker)] + marker


class TimelineBook:
    """A workbook of timeline sheets, filled row by row."""

    def __init__(self, path: str):
        self.book = xlsxwriter.Workbook(path, {"constant_memory": True, "strings_to_formulas": False,
                                               "strings_to_numbers": False, "strings_to_urls": False})
        self.sheet = None
        self.sheets = 0
        self.row = MAX_SHEET_ROWS

    def _next_sheet(self) -> None:
        self.sheets += 1
        self.sheet = self.book.add_worksheet("timeline" if self.sheets == 1 else f"timeline ({self.sheets})")
        bold = self.book.add_format({"bold": True})
        for column, name in enumerate(OUTPUT_COLUMNS):
            self.sheet.set_column(column, column, WIDTHS.get(name, 16))
            self.sheet.write_string(0, column, name, bold)
        self.sheet.freeze_panes(1, 0)
        self.row = 1

    def add(self, values: Iterable[str]) -> None:
        """One timeline row, every field a string cell."""
        if self.row >= MAX_SHEET_ROWS:
            self._next_sheet()
        for column, value in enumerate(values):
            self.sheet.write_string(self.row, column, cell_text(value))
        self.row += 1

    def close(self) -> None:
        """Finish the file (a timeline with no rows still has its header sheet)."""
        if self.sheet is None:
            self._next_sheet()
        self.book.close()


def write_xlsx(jsonl_path: str, output: str) -> int:
    """The JSONL timeline at ``jsonl_path`` as a workbook at ``output``; the number of rows."""
    book = TimelineBook(output)
    count = 0
    try:
        with open(jsonl_path, encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                book.add(str(row[name]) for name in OUTPUT_COLUMNS)
                count += 1
    finally:
        book.close()
    return count
