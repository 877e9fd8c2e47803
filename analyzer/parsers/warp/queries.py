"""ai_queries: every prompt the user sent to Warp's agent, with its directory, branch, model and status.

[src] One row per exchange (``NewAIQuery``, app/src/persistence/block_list.rs:60-87):
``input`` is ``serde_json::to_string(Vec<PersistedAIInputType>)``, an array of
``{"Query": {"text", "context": [AIAgentContext...], "referenced_attachments"}}``
(app/src/ai/blocklist/persistence.rs:44-57); each context item is an
externally tagged ``AIAgentContext`` (app/src/ai/agent/mod.rs:2229-2320):
``Directory{pwd, home_dir}``, ``Git{head, branch}``, ``SelectedText``, ``File``,
``Image``, ``CurrentTime``, ``ExecutionEnvironment``, ``Codebase``,
``ProjectRules``, ``Repository``, ``PullRequest``, ``Skills``, or an untagged
block. ``output_status`` is the JSON of ``AIQueryHistoryOutputStatus``
(``"Pending"``, ``"Cancelled"``, ``"Failed"``, ``"Completed"``); ``model_id`` the
model chosen for the exchange (from 2025-01-22).

Rows: each query's text is a ``user`` row (session ``conversation_id``,
project ``working_directory`` else the Directory context's ``pwd``, branch the
Git context's ``branch`` else its ``head``, model ``model_id``); a selected text,
file, image or block attached as context is an ``attachment:`` row; a status
other than Completed a ``reply status:`` row; ``model:`` rows where a
conversation's model first appears or changes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list
from aitrail.analyzer.formats.json_values import compact, label
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .tables import read_table, text_value, when

ATTACHED_CONTEXTS = ("SelectedText", "File", "Image", "Block")  # what the user put into the prompt
STATUS_SHOWN = {"Pending": "Pending (not finished when last written)", "Cancelled": "Cancelled (by the user)",
                "Failed": "Failed (the output stream failed)"}


def query_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """Every exchange's rows, conversation by conversation in time order."""
    conversation_seen, model_seen = None, ""  # the rows come conversation by conversation
    for row, problems in read_table(connection, "ai_queries", order="conversation_id, start_ts, rowid"):
        yield from problems
        conversation = label(row.get("conversation_id"), 1024)
        model = label(row.get("model_id"))
        locator = f"sqlite:ai_queries:{row.get('_rowid')}"
        columns = {"session_id": conversation, "project_path": text_value(row.get("working_directory")),
                   "model": model, **when(row.get("start_ts"))}
        if conversation != conversation_seen:
            conversation_seen, model_seen = conversation, ""
        if model and model != model_seen:
            change = f"{model_seen} -> {model}" if model_seen else model
            model_seen = model
            yield Draft("system", f"model: {change}", f"{locator}/model_id", **columns)
        yield from _input_rows(row.get("input"), locator, columns)
        yield from _status_rows(row.get("output_status"), locator, columns)


def _input_rows(raw, locator: str, columns: dict) -> Iterator[Draft]:
    if raw is None:
        return
    try:
        items = decode_json(text_value(raw))
    except (ValueError, UnicodeDecodeError) as exc:
        yield _bad(f"{locator}/input", f"input is not JSON: {exc}", raw, columns)
        return
    if not isinstance(items, list):
        yield _bad(f"{locator}/input", "input is not an array", compact(items), columns)
        return
    for index, item in enumerate(items):
        query = as_dict(item).get("Query")
        if not isinstance(query, dict):
            yield _bad(f"{locator}/input/{index}", "an input that is not a Query", compact(item), columns)
            continue
        yield from _query_rows(query, f"{locator}/input/{index}", columns)


def _query_rows(query: dict, locator: str, columns: dict) -> Iterator[Draft]:
    context = as_list(query.get("context"))
    own = dict(columns)
    directory = _context(context, "Directory")
    if not own["project_path"]:
        own["project_path"] = label(directory.get("pwd"), 4096)
    git = _context(context, "Git")
    own["git_branch"] = label(git.get("branch")) or label(git.get("head"))
    text = query.get("text")
    if isinstance(text, str):
        yield Draft("user", text, locator, **own)
    else:
        yield _bad(locator, "a Query without text", compact(query), own)
    for index, item in enumerate(context):
        kind = next(iter(item), "") if isinstance(item, dict) and len(item) == 1 else ""
        if kind in ATTACHED_CONTEXTS:
            yield Draft("system", f"attachment: {kind}: {compact(item[kind])}", f"{locator}/context/{index}", **own)
        elif not kind and isinstance(item, dict) and item:  # the untagged Block context
            yield Draft("system", f"attachment: Block: {compact(item)}", f"{locator}/context/{index}", **own)


def _context(context: list, kind: str) -> dict:
    """The first context item of ``kind`` (an externally tagged enum: ``{"Git": {...}}``), or {}."""
    for item in context:
        if isinstance(item, dict) and isinstance(item.get(kind), dict):
            return item[kind]
    return {}


def _status_rows(raw, locator: str, columns: dict) -> Iterator[Draft]:
    if raw is None:
        return
    text = text_value(raw)
    try:
        status = decode_json(text)
    except (ValueError, UnicodeDecodeError):
        status = text  # an older or hand-made row: the value as it is
    if status == "Completed":
        return
    shown = STATUS_SHOWN.get(status) if isinstance(status, str) else None
    yield Draft("system", f"reply status: {shown or compact(status)}", f"{locator}/output_status", **columns)


def _bad(locator: str, reason: str, raw, columns: dict) -> Draft:
    row = bad_record(locator, reason, raw if isinstance(raw, (str, bytes)) else compact(raw))
    row.session_id = columns.get("session_id", "")
    return row
