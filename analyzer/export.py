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


_PLAIN_COLUMNS = frozenset(COLUMNS.index(name) for name in (
    "timestamp_utc", "turn_type", "agent", "source_sha256", "timestamp_source", "origin", "event_id"))
_QUOTABLE = tuple(index for index in range(len(COLUMNS)) if index not in _PLAIN_COLUMNS)
_SEPARATORS = len(COLUMNS) - 1


def timeline_csv_line(row: tuple, ending: str = "\n") -> str:
    """csv_line for a timeline row: columns whose values can never need quoting are not checked.

    ``ending``: what follows the 17 fields (the trailing columns, already
    rendered once per bundle, and the line end). The fields are joined first:
    when the joined text holds no quote, CR or LF and no comma beyond the 16
    separators, no field needs quoting (most rows but those with prose).
    """
    line = ",".join(row)
    if line.count(",") == _SEPARATORS and '"' not in line and "\n" not in line and "\r" not in line:
        return line + ending
    fields = list(row)
    for index in _QUOTABLE:  # _csv_field, inline: most rows with prose come here
        field = fields[index]
        if '"' in field or "," in field or "\n" in field or "\r" in field:
            fields[index] = '"' + field.replace('"', '""') + '"'
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
