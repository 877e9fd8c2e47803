"""Timeline writers: CSV (RFC 4180, header row) and JSON Lines, both UTF-8 with \\n line ends.

Columns and their order are ``rows.COLUMNS``; the JSONL objects keep that key
order. Both files are opened exclusively: an existing output is never replaced.
"""

from __future__ import annotations

import csv
import json
from typing import Iterable

from aitrail.analyzer.rows import COLUMNS

FORMATS = ("csv", "jsonl")


def write(path: str, format_name: str, rows: Iterable[tuple]) -> int:
    if format_name not in FORMATS:
        raise ValueError(f"unknown format {format_name!r}")
    count = 0
    with open(path, "x", encoding="utf-8", newline="") as handle:
        if format_name == "csv":
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(COLUMNS)
            for row in rows:
                writer.writerow(row)
                count += 1
        else:
            for row in rows:
                handle.write(json.dumps(dict(zip(COLUMNS, row)), ensure_ascii=False) + "\n")
                count += 1
    return count
