r"""Timeline formats: CSV (RFC 4180, header row), JSON Lines, and both for Timesketch; UTF-8, \n line ends.

Columns and their order are ``rows.COLUMNS`` and then the bundle's
``TRAILING_COLUMNS`` (host, case_id, bundle_sha256); the JSONL objects keep
that key order. Rows are rendered to text by the workers that parse them
(``renderer``); analyzer/runs.py merges the lines into the output, which it
opens exclusively: an existing output is never replaced.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aitrail.analyzer import timesketch
from aitrail.analyzer.rows import COLUMNS

FORMATS = ("csv", "jsonl", "timesketch", "timesketch-csv")
# after the 17 columns of rows.COLUMNS, which keep their order and meaning: where each row's bundle came from
TRAILING_COLUMNS = ("host", "case_id", "bundle_sha256")
OUTPUT_COLUMNS = (*COLUMNS, *TRAILING_COLUMNS)


def _csv_field(field: str) -> str:
    if '"' in field or "," in field or "\n" in field or "\r" in field:
        return '"' + field.replace('"', '""') + '"'
    return field


def csv_line(row: tuple) -> str:
    """One RFC 4180 record: a field with a comma, quote, CR or LF is quoted, its quotes doubled.

    Written by hand because the csv module costs about five times as much per
    row; tests/analyzer/test_export.py checks that csv.reader reads every line
    back to the same fields.
    """
    return ",".join([_csv_field(field) for field in row]) + "\n"


# Columns only the analyzer writes, from closed sets or its own formatting, never quoted. Not so agent and
# source_sha256: files.jsonl gives them, and a hostile bundle can put a comma or quote there.
_PLAIN_COLUMNS = frozenset(COLUMNS.index(name) for name in (
    "timestamp_utc", "turn_type", "timestamp_source", "origin", "event_id"))
_QUOTABLE = tuple(index for index in range(len(COLUMNS)) if index not in _PLAIN_COLUMNS)
_TEXT = COLUMNS.index("text")
_HEAD_COMMAS, _TAIL_COMMAS = _TEXT - 1, len(COLUMNS) - _TEXT - 2  # separators before and after the text


def timeline_csv_line(row: tuple, ending: str = "\n") -> str:
    """csv_line for a timeline row: only the fields that can need quoting are checked.

    ``ending``: what follows the 17 fields (the trailing columns, already
    rendered once per bundle, and the line end). The fields before and
    after the text are joined first: when they hold no quote, CR or LF and
    no comma beyond their separators, only the text can need quoting (every
    row measured on the bench corpora: prose and tool output sit in the text).
    """
    head, tail = ",".join(row[:_TEXT]), ",".join(row[_TEXT + 1:])
    if (head.count(",") == _HEAD_COMMAS and tail.count(",") == _TAIL_COMMAS and '"' not in head and '"' not in tail
            and "\n" not in head and "\n" not in tail and "\r" not in head and "\r" not in tail):
        return f"{head},{_csv_field(row[_TEXT])},{tail}{ending}"
    fields = list(row)
    for index in _QUOTABLE:
        fields[index] = _csv_field(fields[index])
    return ",".join(fields) + ending


def trailing_values(context: dict | None) -> tuple[str, str, str]:
    """The host, case_id and bundle_sha256 a bundle's rows end with."""
    context = context or {}
    return context.get("hostname", ""), context.get("case_id", ""), context.get("bundle_sha256", "")


def bundle_context(collection: dict, bundle_sha256: str = "") -> dict:
    """hostname, case id and collection start of a bundle's collection.json (missing values empty), its SHA-256."""
    host = collection.get("host") if isinstance(collection.get("host"), dict) else {}
    case = collection.get("case") if isinstance(collection.get("case"), dict) else {}
    started = collection.get("started_utc") if isinstance(collection.get("started_utc"), str) else ""
    return {"hostname": str(host.get("hostname") or ""), "case_id": str(case.get("case_id") or ""),
            "collected_utc": started, "bundle_sha256": bundle_sha256}


def renderer(format_name: str, context: dict | None = None) -> Callable[[tuple], str]:
    """A function from a row to its line (with the line end), the bundle's trailing columns added.

    ``context``: the bundle's hostname, case id, collection start and SHA-256
    (``bundle_context``).
    """
    trailing = trailing_values(context)
    if format_name == "csv":
        ending = "," + ",".join(_csv_field(value) for value in trailing) + "\n"
        return lambda row: timeline_csv_line(row, ending)
    if format_name == "jsonl":
        extra = dict(zip(TRAILING_COLUMNS, trailing, strict=True))
        return lambda row: json.dumps({**dict(zip(COLUMNS, row, strict=True)), **extra}, ensure_ascii=False) + "\n"
    if format_name == "timesketch":
        return timesketch.jsonl_renderer(context or {})
    if format_name == "timesketch-csv":
        return timesketch.csv_renderer(context or {}, csv_line)
    raise ValueError(f"unknown format {format_name!r}")


def header(format_name: str) -> str:
    """The text before the first row: the column-name record for the CSV formats, nothing for JSON Lines."""
    if format_name == "csv":
        return csv_line(OUTPUT_COLUMNS)
    if format_name == "timesketch-csv":
        return csv_line(timesketch.CSV_COLUMNS)
    return ""
