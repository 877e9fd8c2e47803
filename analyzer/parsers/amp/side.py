"""Amp's files beside the threads: prompt history, the last thread ids, file-change backups.

* ``history.jsonl`` (secondary): ``{"text", "cwd"}`` per line, or a bare JSON
  string; at most 1000, no time and no thread: one untimed
  ``user`` row per prompt, written as a thread writes it (a prompt of a thread
  still in the bundle is dropped by the run), the folder as project_path.
* ``history.json`` (secondary, older builds): a JSON array of prompt strings.
* ``session.json``: one ``session metadata:`` row naming the last thread ids,
  at the file's mtime.
* ``~/.amp/file-changes/<thread>/<toolUseID>.<fileChangeID>``: ``{id, uri,
  before, after, diff, isNewFile, reverted, timestamp (Unix ms)}``: one
  ``file change:`` row with the diff, on the tool call that made it (the full
  ``before``/``after`` texts stay in the file, not in the row).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote, urlsplit

from aitrail.analyzer.formats.idioms import file_mtime, pointer
from aitrail.analyzer.formats.json_values import as_text, facts, label, mapping
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line, bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms


def parse_history(ctx: ParseContext) -> Iterator[Draft]:
    """history.jsonl (secondary): the prompts typed, untimed, each with its folder."""
    yield from each_line(ctx, _history_row, require_object=False)


def _history_row(line: Line) -> Iterator[Draft]:
    value = line.value
    if isinstance(value, str):  # an older line: the prompt alone
        yield Draft("user", value, line.locator, timestamp_source="none")
        return
    record = mapping(value)
    if not isinstance(record.get("text"), str):
        yield bad_line(line.number, "no prompt text", line.raw)
        return
    yield Draft("user", record["text"], line.locator, timestamp_source="none", project_path=as_text(record.get("cwd")))


def parse_history_legacy(ctx: ParseContext) -> Iterator[Draft]:
    """history.json (secondary): an array of prompt strings, untimed."""
    entries, problem = json_document(ctx.data, "history.json", kind=list)
    if problem is not None:
        yield problem
        return
    for position, entry in enumerate(entries):
        if isinstance(entry, str):
            yield Draft("user", entry, pointer(position), timestamp_source="none")
        else:
            yield bad_record(pointer(position), "history entry is not text", as_text(entry))


SESSION_KEYS = ("lastThreadId", "lastExecuteThreadId", "agentMode", "launchCount", "lastReasoningEffortByMode")


def parse_session_state(ctx: ParseContext) -> Iterator[Draft]:
    """session.json: the last thread ids and agent mode, at the file's mtime, in the last thread."""
    document, problem = json_document(ctx.data, "session.json")
    if problem is not None:
        yield problem
        return
    yield Draft("system", f"session metadata: {facts(document, SESSION_KEYS)} (session.json)", "file",
                session_id=label(document.get("lastThreadId")), **file_mtime(ctx))


def parse_file_change(ctx: ParseContext) -> Iterator[Draft]:
    """file-changes/<thread>/<toolUseID>.<id>: one ``file change:`` row with the diff, at its time, on its call."""
    document, problem = json_document(ctx.data, "file-change record")
    if problem is not None:
        yield problem
        return
    parts = ctx.source.path.split("/")
    thread = parts[-2] if len(parts) >= 2 else ""
    call_id = ctx.source.name.split(".", 1)[0]
    moment = ns_from_ms(document.get("timestamp"))
    when = {"timestamp_ns": moment, "timestamp_source": "record"} if moment is not None else file_mtime(ctx)
    uri = as_text(document.get("uri"))
    path = unquote(urlsplit(uri).path) if uri.startswith("file://") else uri
    kind = "new file" if document.get("isNewFile") is True else "edited"
    details = ", ".join(part for part in (kind, facts(document, ("reverted", "id"))) if part)
    yield Draft("system", f"file change: {path} ({details}; tool call {call_id}): {as_text(document.get('diff'))}",
                "json:/diff", session_id=thread, tool_use_id=call_id, **when)
