"""AI Assistant agent sessions: ``<JetBrains config>/<Product><ver>/aia-task-history/**/*.events``.

[obs] sfinktah/junie-export@eaa5838705 ``extract_aichat.py``
(``decode_event_records``, ``build_turn_summaries``, ``EVENT_PROMPT_TYPE``,
``EVENT_MESSAGE_BLOCK_TYPE``, ``EVENT_FILENAME_UID_RE``): not SQLite but
lines, the first ``AUI_EVENTS_V1``, each other line one JSON record encoded
in base64. A record's ``type`` is
``com.intellij.ml.llm.chat.shared.ChatSessionUserPromptEvent`` (``prompt``:
a ``user`` row) or ``...ChatSessionMessageBlockEvent`` (``event``: one of
the agent UI blocks, blocks.py); any other type is an ``event <type>:`` row.

Join: the chat whose ``uid`` is the UUID in the file's name (junie-export
tries that first, then the first prompt's exact text); so a row's session_id
is that UUID, or the file's stem when the name holds none. Time: no record
has one; every row takes the file's mtime (``file-mtime``): the file was last
written then, so each event happened at or before it. Project: none.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.json_values import as_text
from aitrail.analyzer.formats.text import bad_line, excerpt
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .blocks import Steps, block_rows, other_block, short_kind

HEADER = b"AUI_EVENTS_V1"
PROMPT = "ChatSessionUserPromptEvent"
BLOCK = "ChatSessionMessageBlockEvent"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def session_of(path: str) -> str:
    """The chat uid in an .events file's name (lower case), else its stem."""
    name = path.rsplit("/", 1)[-1]
    found = _UUID.search(name)
    return found.group(0).lower() if found else name.removesuffix(".events")


def parse_task_events(ctx: ParseContext) -> Iterator[Draft]:
    """An .events file: the prompts and the last snapshot of each agent block, as rows."""
    steps = Steps()
    for item in _records(ctx):
        if isinstance(item, tuple) and short_kind(item[1].get("type")) == BLOCK and isinstance(item[1].get("event"),
                                                                                                dict):
            steps.note(item[1]["event"], item[0])
    columns = {"session_id": session_of(ctx.source.path), **file_mtime(ctx)}
    for item in _records(ctx):
        if isinstance(item, Draft):
            yield item
        else:
            yield from _record(item[0], item[1], steps, columns)
    yield from steps.over_limit_rows()


def _record(number: int, record: dict, steps: Steps, columns: dict) -> Iterator[Draft]:
    kind, where = short_kind(record.get("type")), f"line:{number}"
    if kind == PROMPT:
        yield Draft("user", as_text(record.get("prompt")), where, **columns)
    elif kind == BLOCK and isinstance(record.get("event"), dict):
        event = record["event"]
        if steps.superseded(event, number):
            return
        rows = list(block_rows(event, where, columns, steps.updates(event)))
        yield from rows or [other_block(event, where, columns)]
    else:
        yield Draft("system", f"event {kind}: {excerpt(as_text(record))}", where, **columns)


def _records(ctx: ParseContext) -> Iterator[tuple[int, dict] | Draft]:
    """(line number, record) of each line after the header; a ``parser:`` row for each line not read."""
    for item in ctx.lines():
        if isinstance(item, Draft):
            yield item
            continue
        line: RawLine = item
        raw = line.raw.strip()
        if not raw or (line.number == 1 and raw == HEADER):
            continue
        if line.number == 1:
            yield bad_line(1, f"no {HEADER.decode()} header", line.raw)
        record = _decoded(line, raw)
        yield record if isinstance(record, Draft) else (line.number, record)


def _decoded(line: RawLine, raw: bytes) -> dict | Draft:
    torn = "" if line.terminated else "torn last line, no newline: "
    try:
        text = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        return bad_line(line.number, f"{torn}not base64: {exc}", line.raw)
    try:
        value = decode_json(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return bad_line(line.number, f"{torn}the decoded record is not JSON: {exc}", text)
    if not isinstance(value, dict):
        return bad_line(line.number, f"the decoded record is a JSON {type(value).__name__}, not an object", text)
    return value
