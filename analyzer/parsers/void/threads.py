"""Void's chat threads: one JSON object of every thread, the value of one ItemTable key, turned into rows.

The value (``JSON.stringify(threads)``, browser/chatThreadService.ts:394-423) maps
each thread id to ``{id, createdAt, lastModified, messages[], state,
filesWithUserChanges}``; ``createdAt`` and ``lastModified`` are ISO 8601 UTC
(``new Date().toISOString()``, chatThreadService.ts:208-222). Messages have NO
time of their own: every message row takes its thread's ``createdAt`` with
``timestamp_source`` ``index``, its locator (``…/<thread>/messages/<n>``) and
the parse order keep the order; no time is invented. The thread itself is one
``thread:`` row at its ``createdAt`` that also says when it was last modified.

Messages (common/chatThreadServiceTypes.ts:11-69):

* ``user`` ``{content (sent to the model), displayContent (typed), selections}``:
  a ``user`` row of what was typed, an ``attachment:`` row per selection (file,
  code selection with its line range, folder);
* ``assistant`` ``{displayContent, reasoning, anthropicReasoning}``: ``thinking``
  then ``assistant`` rows;
* ``tool`` ``{id, name, type, params, rawParams, result, content, mcpServerName}``:
  the call and its outcome in one record (a same-record join): a ``tool_use`` row
  (the params) and, by ``type``: ``success`` a ``tool_result`` of ``content`` (the
  text given to the model); ``tool_error`` a ``tool_result`` ``error: <message>``;
  ``invalid_params`` a ``tool_result`` ``invalid params: <message>``; ``rejected``
  a ``tool_result`` of ``content`` and, when that is Void's denial text ("Tool call
  was rejected by the user.", chatThreadService.ts:595), a ``permission decision:
  denied`` row (a call cut off while running is also ``rejected``, with other text:
  no decision); ``tool_request`` (awaiting the user's approval when last saved) and
  ``running_now`` get the ``parser: no result recorded`` row. An MCP call's text
  starts ``MCP server <name>: ``;
* ``interrupted_streaming_tool`` ``{name}``: ``interrupted: tool call <name> cut
  off while it streamed``;
* ``checkpoint`` ``{type, voidFileSnapshotOfURI}``: ``checkpoint (<type>): <paths>``
  (the snapshots' file contents are not rows).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, setting_value
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.vscode_db import pointer_suffix
from aitrail.analyzer.view.rows import Draft, ns_from_iso

DENIAL = "Tool call was rejected by the user."  # toolErrMsgs.rejected
PENDING = ("tool_request", "running_now")  # no outcome yet when the blob was last written
MAX_PATHS_SHOWN = 50


def thread_rows(threads: object, locator: str, key: str, *, settled: frozenset[str] = frozenset()) -> Iterator[Draft]:
    """The rows of one thread blob (its decoded JSON), thread by thread, in the blob's order.

    Args:
        threads: the decoded value of a ``void.chatThreadStorage*`` key.
        locator: the row's locator (``sqlite:ItemTable:<rowid>``).
        key: the ItemTable key, named in each ``thread:`` row.
        settled: threads the live database still holds (for an older copy): a call of theirs that had no
            outcome in this copy gets no ``no result recorded`` row, the live copy says how it ended.
    """
    if not isinstance(threads, dict):
        yield bad_record(locator, f"{key} is a JSON {type(threads).__name__}, not an object of threads")
        return
    for thread_key, thread in threads.items():
        where = locator + pointer_suffix(thread_key)
        if not isinstance(thread, dict):
            yield bad_record(where, "thread is not a JSON object", json.dumps(thread)[:2000])
            continue
        yield from _one_thread(thread_key, thread, where, key, settled)


def thread_session(thread_key: object, thread: dict) -> str:
    """A thread's session id: its ``id``, else the key it is stored under."""
    return thread["id"] if isinstance(thread.get("id"), str) and thread["id"] else str(thread_key)


def _one_thread(thread_key: str, thread: dict, where: str, key: str, settled: frozenset[str]) -> Iterator[Draft]:
    session = thread_session(thread_key, thread)
    created = ns_from_iso(thread.get("createdAt"))
    messages = thread.get("messages")
    count = len(messages) if isinstance(messages, list) else 0
    yield Draft("system", f"thread: created {_when(thread.get('createdAt'))}, last modified "
                          f"{_when(thread.get('lastModified'))}, {count} messages (key {key})", where,
                timestamp_ns=created, timestamp_source="record" if created is not None else "none", session_id=session)
    moment = {"timestamp_ns": created, "timestamp_source": "index" if created is not None else "none",
              "session_id": session}
    if messages is not None and not isinstance(messages, list):
        yield bad_record(f"{where}/messages", "messages is not an array")
        return
    for index, message in enumerate(messages or ()):
        yield from message_rows(message, f"{where}/messages/{index}", moment, session not in settled)


def message_rows(message: object, locator: str, moment: dict, pending_rows: bool = True) -> Iterator[Draft]:
    """The rows of one message of a thread (see the module docstring), all at the thread's time."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        yield bad_record(locator, "message without a role", json.dumps(message)[:2000])
        return
    role = message["role"]
    if role == "user":
        yield from _user(message, locator, moment)
    elif role == "assistant":
        yield from _assistant(message, locator, moment)
    elif role == "tool":
        yield from _tool(message, locator, moment, pending_rows)
    elif role == "interrupted_streaming_tool":
        yield Draft("system", f"interrupted: tool call {_text(message.get('name'))} cut off while it streamed",
                    locator, tool_name=_text(message.get("name")), **moment)
    elif role == "checkpoint":
        paths = list(as_dict(message.get("voidFileSnapshotOfURI")))
        shown = ", ".join(paths[:MAX_PATHS_SHOWN]) + (f" (+{len(paths) - MAX_PATHS_SHOWN} more)"
                                                      if len(paths) > MAX_PATHS_SHOWN else "")
        yield Draft("system", f"checkpoint ({_text(message.get('type'))}): {shown or 'no files'}", locator, **moment)
    else:
        yield bad_record(locator, f"unknown message role {role[:100]!r}", json.dumps(message)[:2000])


def _when(value: object) -> str:
    """A thread time as stored (ISO 8601 text), or ``(not recorded)``."""
    return value if isinstance(value, str) and value else "(not recorded)"


def revived(value: object, depth: int = 0) -> object:
    """``value`` with each marshalled URI (``{"$mid": 1, "scheme": "file", "path": …}``) as its path text.

    Void revives these objects into URIs when it reads the blob (chatThreadService.ts:394-403);
    a row shows the path (``scheme://path`` for a scheme other than ``file``). Past 64 levels
    the value is left as it is.
    """
    if depth > 64:
        return value
    if isinstance(value, dict):
        if value.get("$mid") == 1:
            return _uri_text(value)
        return {key: revived(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [revived(item, depth + 1) for item in value]
    return value


def _uri_text(uri: dict) -> str:
    path = uri.get("fsPath") or uri.get("path") or ""
    path = path if isinstance(path, str) else ""
    scheme = uri.get("scheme")
    return f"{scheme}://{path}" if isinstance(scheme, str) and scheme not in ("", "file") else path


def _text(value: object) -> str:
    return value if isinstance(value, str) else ("" if value is None else setting_value(value))


def _user(message: dict, locator: str, moment: dict) -> Iterator[Draft]:
    typed = message.get("displayContent")
    field = "displayContent" if isinstance(typed, str) and typed.strip() else "content"
    text = _text(message.get(field))
    if text.strip():
        yield Draft("user", text, f"{locator}/{field}", **moment)
    for position, selection in enumerate(as_list(message.get("selections"))):
        yield Draft("system", "attachment: " + _selection(selection), f"{locator}/selections/{position}", **moment)


def _selection(selection: object) -> str:
    """``<type> <path>`` (and ``lines a-b`` for a code selection) of one staging selection."""
    item = as_dict(selection)
    text = f"{_text(item.get('type')) or 'selection'} {_uri_text(as_dict(item.get('uri')))}"
    lines = item.get("range")
    if isinstance(lines, list) and len(lines) == 2:
        text += f" lines {lines[0]}-{lines[1]}"
    return text


def _assistant(message: dict, locator: str, moment: dict) -> Iterator[Draft]:
    reasoning = message.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        yield Draft("thinking", reasoning, f"{locator}/reasoning", **moment)
    else:  # Anthropic's thinking blocks, kept for the next request
        for position, block in enumerate(as_list(message.get("anthropicReasoning"))):
            block = as_dict(block)
            text = _text(block.get("thinking")) if block.get("type") == "thinking" else \
                "[redacted thinking]" if block.get("type") == "redacted_thinking" else ""
            if text.strip():
                yield Draft("thinking", text, f"{locator}/anthropicReasoning/{position}", **moment)
    text = _text(message.get("displayContent"))
    if text.strip():
        yield Draft("assistant", text, f"{locator}/displayContent", **moment)


def _tool(message: dict, locator: str, moment: dict, pending_rows: bool) -> Iterator[Draft]:
    name, call_id, kind = _text(message.get("name")), _text(message.get("id")), _text(message.get("type"))
    server = message.get("mcpServerName")
    prefix = f"MCP server {server}: " if isinstance(server, str) and server else ""
    params = message.get("params") if "params" in message and kind != "invalid_params" else message.get("rawParams")
    ids = {"tool_name": name, "tool_use_id": call_id, **moment}
    yield Draft("tool_use", prefix + setting_value(revived(params)), f"{locator}/params" if kind != "invalid_params"
                else f"{locator}/rawParams", **ids)
    content = _text(message.get("content"))
    if kind in PENDING:
        if pending_rows:
            yield Draft("system", f"parser: no result recorded for tool call {call_id} ({name})", locator, **ids)
    elif kind == "tool_error":
        yield Draft("tool_result", f"error: {content or _text(message.get('result'))}", f"{locator}/content", **ids)
    elif kind == "invalid_params":
        yield Draft("tool_result", f"invalid params: {content}", f"{locator}/content", **ids)
    elif kind == "rejected":
        yield Draft("tool_result", content, f"{locator}/content", **ids)
        if content == DENIAL:
            yield Draft("system", "permission decision: denied", f"{locator}/type", **ids)
    elif kind == "success":
        yield Draft("tool_result", content, f"{locator}/content", **ids)
    else:
        yield bad_record(f"{locator}/type", f"unknown tool message type {kind[:100]!r}")
