r"""Timeline formats: CSV (RFC 4180, header row), JSON Lines, both for Timesketch, ECS bulk NDJSON; UTF-8, \n ends.

Columns and their order are ``rows.COLUMNS`` and then the bundle's
``TRAILING_COLUMNS`` (host, case_id, bundle_sha256); the JSONL objects keep
that key order. Rows are rendered to text by the workers that parse them
(``renderer``); analyzer/engine/sorted_runs.py merges the lines into the output, which it
opens exclusively: an existing output is never replaced.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.outputs import ecs, timesketch
from aitrail.analyzer.view.rows import COLUMNS

FORMATS = ("csv", "jsonl", "timesketch", "timesketch-csv", "ecs")
# after the 17 columns of rows.COLUMNS, which keep their order and meaning: where each row's bundle came from
TRAILING_COLUMNS = ("host", "case_id", "bundle_sha256")
OUTPUT_COLUMNS = (*COLUMNS, *TRAILING_COLUMNS)


def _csv_field(field: str) -> str:
    if '"' in field:
        return '"' + field.replace('"', '""') + '"'
    if "," in field or "\n" in field or "\r" in field:
        # no quote to double: str.replace would still count quotes byte by byte through a multi-KB tool output
        return '"' + field + '"'
    return field


def csv_line(row: tuple) -> str:
    """One RFC 4180 record: a field with a comma, quote, CR or LF is quoted, its quotes doubled.

    Written by hand because the csv module costs about five times as much per
    row; tests/analyzer/test_export.py checks that csv.reader reads every line
    back to the same fields.
    """
    return ",".join([_csv_field(field) for field in row]) + "\n"


# Columns only the analyzer writes, from closed sets or its own formatting: TimelineCsv never quotes them. Not
# so agent and source_sha256: files.jsonl gives them, and a hostile bundle can put a comma or quote there.
PLAIN_COLUMNS = ("timestamp_utc", "turn_type", "timestamp_source", "origin", "event_id")


class TimelineCsv:
    """``csv_line`` for timeline rows, one after another (a file's, then the next's): what repeats is rendered once.

    A file's rows share their thread (session, project, branch) and always
    their provenance (agent, store, source, digest): those columns are
    rendered again only when a row holds other objects for them (an equal
    string in another object is rendered again too: never a stale text).
    Four short columns that vary (model, tool name, tool id, locator) are
    checked together, and quoted one by one only when one needs it. The
    text, where prose and tool output sit, is checked alone. PLAIN_COLUMNS
    are never checked.
    """

    __slots__ = ("ending", "_thread_key", "_thread_text", "_provenance", "_provenance_text")

    def __init__(self, ending: str = "\n"):
        self.ending = ending
        self._thread_key: tuple | None = None
        self._provenance: tuple | None = None
        self._thread_text = self._provenance_text = ""

    def __call__(self, row: tuple) -> str:
        """The row's line, ``ending`` included."""
        (stamp, session, project, branch, turn, model, tool, tool_id, text, agent, store, source, digest, locator,
         stamp_source, origin, event_id) = row
        thread = self._thread_key
        if thread is None or session is not thread[0] or project is not thread[1] or branch is not thread[2]:
            self._thread_key = (session, project, branch)
            self._thread_text = f"{_csv_field(session)},{_csv_field(project)},{_csv_field(branch)}"
        provenance = self._provenance
        if (provenance is None or source is not provenance[2] or digest is not provenance[3]
                or agent is not provenance[0] or store is not provenance[1]):
            self._provenance = (agent, store, source, digest)
            self._provenance_text = ",".join([_csv_field(agent), _csv_field(store), _csv_field(source),
                                              _csv_field(digest)])
        short = f"{model}{tool}{tool_id}{locator}"
        if '"' in short or "," in short or "\n" in short or "\r" in short:
            model, tool, tool_id, locator = (_csv_field(model), _csv_field(tool), _csv_field(tool_id),
                                             _csv_field(locator))
        return (f"{stamp},{self._thread_text},{turn},{model},{tool},{tool_id},{_csv_field(text)},"
                f"{self._provenance_text},{locator},{stamp_source},{origin},{event_id}{self.ending}")


def trailing_values(context: dict | None) -> tuple[str, str, str]:
    """The host, case_id and bundle_sha256 a bundle's rows end with."""
    context = context or {}
    return context.get("hostname", ""), context.get("case_id", ""), context.get("bundle_sha256", "")


def bundle_context(collection: dict, bundle_sha256: str = "") -> dict:
    """hostname, case id and collection start of a bundle's collection.json (missing values empty), its SHA-256."""
    host, case = as_dict(collection.get("host")), as_dict(collection.get("case"))
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
        return TimelineCsv("," + ",".join(_csv_field(value) for value in trailing) + "\n")
    if format_name == "jsonl":
        extra = dict(zip(TRAILING_COLUMNS, trailing, strict=True))
        return lambda row: json.dumps({**dict(zip(COLUMNS, row, strict=True)), **extra}, ensure_ascii=False) + "\n"
    if format_name == "timesketch":
        return timesketch.jsonl_renderer(context or {})
    if format_name == "timesketch-csv":
        return timesketch.csv_renderer(context or {}, csv_line)
    if format_name == "ecs":
        return ecs.renderer(context or {})
    raise ValueError(f"unknown format {format_name!r}")


def header(format_name: str) -> str:
    """The text before the first row: the column-name record for the CSV formats, nothing for JSON Lines."""
    if format_name == "csv":
        return csv_line(OUTPUT_COLUMNS)
    if format_name == "timesketch-csv":
        return csv_line(timesketch.CSV_COLUMNS)
    return ""
