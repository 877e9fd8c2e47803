"""The per-project prompt log ``logs.json`` of Gemini CLI and its fork Qwen Code.

``tmp/<project id>/logs.json`` is a JSON array rewritten whole on each prompt,
``[{sessionId, messageId, timestamp, type: "user", message}]``: every prompt,
shell-mode command and slash command of a project, as typed. The file is
rewritten with a plain ``writeFile`` (not atomic), so a cut file still gives
the entries before the cut; ``logs.json.<invalid_json|malformed_array>.<ms>.bak``
is a copy the CLI set aside when it could not read it, read the same way.

    [{"sessionId":"3b8f6a4e-…","messageId":0,"type":"user","message":"Why does the nightly job skip Mondays?",
      "timestamp":"2026-08-02T06:40:15.990Z"}]

Rows: a ``user`` row per ``type: "user"`` entry, ``log entry (<type>): …`` for
any other type, each at its ``timestamp`` with its ``sessionId``; the store is
secondary, so a prompt that equals a transcript's user row is dropped by the
run and one of a deleted session stays.

References: google-gemini/gemini-cli@5411f113ca packages/core/src/core/logger.ts:17-31,84-130,142-250;
npm @qwen-code/qwen-code@0.24.4 chunks/chunk-CK5HUN74.js (packages/core/src/core/logger.ts:
``LOG_FILE_NAME = "logs.json"``, ``_readLogFile``, ``_backupCorruptedLogFile``).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.gemini_content import compact, moment
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json, decode_json_at
from aitrail.analyzer.view.rows import Draft

_WHITESPACE = " \t\r\n"


def array_items(data: bytes) -> tuple[list, Draft | None]:
    """Items of a JSON array, or of as much of it as was written before a cut, and the problem if any."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return [], bad_file(f"not UTF-8 at byte {exc.start}")
    try:
        value = decode_json(text)
    except ValueError:
        return _salvage(text)
    if not isinstance(value, list):
        return [], bad_file(f"a JSON {type(value).__name__}, not an array")
    return value, None


def _salvage(text: str) -> tuple[list, Draft]:
    """Decode item after item; the first that does not decode ends the array (a torn rewrite)."""
    items: list = []
    position = _skip(text, 0)
    if not text.startswith("[", position):
        return [], bad_file("not a JSON array")
    position = _skip(text, position + 1)
    while position < len(text) and text[position] != "]":
        try:
            value, end = decode_json_at(text, position)
        except ValueError as exc:
            return items, bad_record(f"json:/{len(items)}", f"the array is cut off or damaged here after "
                                                            f"{len(items)} items: {exc}", text[position:])
        items.append(value)
        position = _skip(text, end)
        if text.startswith(",", position):
            position = _skip(text, position + 1)
        elif not text.startswith("]", position):
            return items, bad_record(f"json:/{len(items)}", f"the array ends without ']' after {len(items)} items",
                                     text[position:])
    if position >= len(text):
        return items, bad_record(f"json:/{len(items)}", f"the array ends without ']' after {len(items)} items")
    return items, bad_record("file", "text after the array's ']'", text[position + 1:])


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position


def prompt_log_rows(ctx: ParseContext, project: str) -> Iterator[Draft]:
    """logs.json: a user row per user entry and a system row for other types, then the file's problem if any."""
    items, problem = array_items(ctx.data)
    for index, entry in enumerate(items):
        locator = f"json:/{index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("message"), str):
            yield bad_record(locator, "log entry without a message string", compact(entry))
            continue
        fields = {"session_id": str(entry.get("sessionId") or ""), "project_path": project,
                  **moment(entry.get("timestamp"))}
        kind = entry.get("type")
        if kind == "user":
            yield Draft("user", entry["message"], locator, **fields)
        else:
            yield Draft("system", f"log entry ({compact(kind)}): {entry['message']}", locator, **fields)
    if problem is not None:
        yield problem
