r"""Timesketch-ready rows: the timeline's columns plus ``message``, ``datetime`` and ``timestamp_desc``.

Timesketch's importers require ``message``, ``datetime`` and
``timestamp_desc`` on every event (timesketch/lib/utils.py
``TIMESKETCH_FIELDS``) and drop rows whose ``datetime`` is empty. Each row
here carries:

* ``message``: ``<agent> <turn type>[ <tool>]: <text>``, the text cut at
  MESSAGE_CHARS with its length given (the whole text stays in ``text``);
* ``datetime``: the row's ``timestamp_utc``; ``timestamp``: the same in
  microseconds (what Timesketch stores);
* ``timestamp_desc``: what the time means, from the turn type and the fixed
  prefixes (``Prompt submitted``, ``Tool call``, ``Permission decision``...),
  with the kind of time when it is not the record's own (``File modified
  (...)``, ``... (session time)``, ``... (log folder time)``);
* ``data_type``: ``aitrail:<agent>:<kind>`` in plaso's and Timesketch's
  convention (lower case, ``_`` for ``-``): the turn type (``user``,
  ``tool_use`` ...), or for a system row its fixed prefix
  (``permission_decision``, ``parser``, ``model`` ...) else ``event``, so a
  Timesketch filter or analyzer can select one kind of row
  (``data_type:"aitrail:claude_code:tool_use"``);
* the 17 timeline columns under their own names, then ``hostname`` and
  ``case_id`` from collection.json and the bundle's ``bundle_sha256``;
* a row with no time is **kept**: its ``datetime`` is the collection's start
  (the moment the evidence is known to have existed),
  ``timestamp_desc`` is ``No time recorded (collection time)``,
  ``aitrail_no_timestamp`` is true and ``tag`` is ``["aitrail-no-timestamp"]``,
  so it can be filtered out or found in one query;
* a row whose time pandas cannot hold (Timesketch's importers parse
  ``datetime`` with pandas, whose range is 1677-09-21 to 2262-04-11) is kept
  the same way: ``datetime`` the collection's start, ``timestamp_desc``
  ``Time outside Timesketch's range: <time> (collection time)``, ``tag``
  ``["aitrail-time-out-of-range"]``; its own time stays in ``timestamp_utc``.
  A collection start that is itself unreadable or out of range (a re-sealed
  collection.json) gives ``1970-01-01T00:00:00.000Z`` and says so, so no row is
  ever dropped by the importer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime

from aitrail.analyzer.view.rows import COLUMNS

MESSAGE_CHARS = 2000
EXTRA_COLUMNS = ("message", "datetime", "timestamp", "timestamp_desc", "data_type")
TRAILING_COLUMNS = ("hostname", "case_id", "bundle_sha256", "aitrail_no_timestamp", "tag")
CSV_COLUMNS = (*EXTRA_COLUMNS, *COLUMNS, *TRAILING_COLUMNS)
NO_TIME_TAG = "aitrail-no-timestamp"
OUT_OF_RANGE_TAG = "aitrail-time-out-of-range"
# The times Timesketch keeps, in microseconds: from 1700-01-01T00:00:00Z (its CSV reader drops a year before 1700:
# google/timesketch timesketch/lib/utils.py read_and_validate_csv, @45b339bb) to pandas.Timestamp.max
# (2262-04-11T23:47:16.854775Z; pandas.Timestamp.min is 1677-09-21)
PANDAS_MIN_US, PANDAS_MAX_US = -8_520_336_000_000_000, 9_223_372_036_854_775
EPOCH_TEXT = "1970-01-01T00:00:00.000Z"

_INDEX = {name: COLUMNS.index(name) for name in COLUMNS}
TURN_DESCRIPTIONS = {"user": "Prompt submitted", "assistant": "Assistant reply", "thinking": "Model thinking",
                     "tool_use": "Tool call", "tool_result": "Tool result"}
PREFIX_DESCRIPTIONS = (("permission decision:", "Permission decision"), ("permission setting:", "Permission setting"),
                       ("model:", "Model in use"), ("task:", "Task entry"), ("parser:", "Parser problem"),
                       ("integrity:", "Integrity finding"),
                       ("verify:", "Verification result"), ("session", "Session record"))
TIME_KINDS = {"index": "{} (session time)", "log-dir": "{} (log folder time)", "file-mtime": "File modified ({})"}


def describe(turn_type: str, text: str, timestamp_source: str) -> str:
    """The ``timestamp_desc`` of a row: what happened, and what kind of time says when."""
    base = TURN_DESCRIPTIONS.get(turn_type)
    if base is None:
        base = next((label for prefix, label in PREFIX_DESCRIPTIONS if text.startswith(prefix)), "Agent event")
    return TIME_KINDS.get(timestamp_source, "{}").format(base)


def data_type(agent: str, turn_type: str, text: str) -> str:
    """``aitrail:<agent>:<kind>``: the turn type, or a system row's fixed prefix (``event`` for any other)."""
    kind = turn_type if turn_type in TURN_DESCRIPTIONS else next(
        (prefix.rstrip(":").replace(" ", "_") for prefix, _ in PREFIX_DESCRIPTIONS if text.startswith(prefix)), "event")
    return f"aitrail:{agent.replace('-', '_')}:{kind}"


def message(row: tuple) -> str:
    """``<agent> <turn type>[ <tool>]: <text>``, bounded."""
    text = row[_INDEX["text"]]
    if len(text) > MESSAGE_CHARS:
        text = f"{text[:MESSAGE_CHARS]}… ({len(text)} characters; the whole text is in the text field)"
    tool = row[_INDEX["tool_name"]]
    return f"{row[_INDEX['agent']]} {row[_INDEX['turn_type']]}{' ' + tool if tool else ''}: {text}"


def microseconds(iso: str) -> int:
    """An aitrail ``timestamp_utc`` (``...Z``, ms or ns) as microseconds since the epoch."""
    seconds, _, fraction = iso.rstrip("Z").partition(".")
    whole = datetime.fromisoformat(seconds + "+00:00")
    return int(whole.timestamp()) * 1_000_000 + int((fraction + "000000")[:6])


def pandas_micros(iso: str) -> int | None:
    """Microseconds of an aitrail time Timesketch keeps (1700 to pandas' end); None for any other text."""
    if not iso:
        return None
    try:
        micros = microseconds(iso)
    except (ValueError, OverflowError):
        return None
    return micros if PANDAS_MIN_US <= micros <= PANDAS_MAX_US else None


def _collection_time(context: dict) -> tuple[str, int, str]:
    """(datetime, microseconds, how it is described) of the collection's start, or the epoch when unusable."""
    collected = context.get("collected_utc", "")
    micros = pandas_micros(collected) if isinstance(collected, str) else None
    if micros is None:
        return EPOCH_TEXT, 0, "epoch: the collection time is unreadable"
    return collected, micros, "collection time"


def event(row: tuple, context: dict) -> dict:
    """The Timesketch event of one timeline row, keys in CSV_COLUMNS order."""
    timestamp = row[_INDEX["timestamp_utc"]]
    micros = pandas_micros(timestamp)
    missing = not timestamp
    if micros is not None:
        when, tags = timestamp, []
        desc = describe(row[_INDEX["turn_type"]], row[_INDEX["text"]], row[_INDEX["timestamp_source"]])
    else:
        when, micros, kind = _collection_time(context)
        if missing:
            desc, tags = f"No time recorded ({kind})", [NO_TIME_TAG]
        else:
            desc, tags = f"Time outside Timesketch's range: {timestamp} ({kind})", [OUT_OF_RANGE_TAG]
    out = {"message": message(row), "datetime": when, "timestamp": micros, "timestamp_desc": desc,
           "data_type": data_type(row[_INDEX["agent"]], row[_INDEX["turn_type"]], row[_INDEX["text"]])}
    out.update(zip(COLUMNS, row, strict=True))
    out.update(hostname=context.get("hostname", ""), case_id=context.get("case_id", ""),
               bundle_sha256=context.get("bundle_sha256", ""), aitrail_no_timestamp=missing, tag=tags)
    return out


def jsonl_renderer(context: dict) -> Callable[[tuple], str]:
    """Rows as Timesketch JSONL events."""
    return lambda row: json.dumps(event(row, context), ensure_ascii=False) + "\n"


def csv_renderer(context: dict, csv_line: Callable[[tuple], str]) -> Callable[[tuple], str]:
    """Rows as Timesketch CSV records (``tag`` as a JSON list, booleans as true/false)."""

    def render(row: tuple) -> str:
        values = event(row, context)
        values["timestamp"] = str(values["timestamp"])
        values["aitrail_no_timestamp"] = "true" if values["aitrail_no_timestamp"] else "false"
        values["tag"] = json.dumps(values["tag"])
        return csv_line(tuple(values[name] for name in CSV_COLUMNS))

    return render
