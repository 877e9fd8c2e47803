"""Gemini CLI per-project side files: logs.json, shell_history, saved chats, edit checkpoints, tracker.

* ``tmp/<id>/logs.json`` (secondary): a JSON array rewritten whole on each
  prompt, ``[{sessionId, messageId, timestamp, type: "user", message}]``;
  every prompt and slash command as typed. Session cleanup leaves it, so it
  recovers the prompts of deleted sessions; its user rows equal to a
  transcript's user rows are dropped by the run. A file cut off mid-write
  (``fs.writeFile`` is not atomic) still gives the entries before the cut;
  ``logs.json.<reason>.<ms>.bak`` copies the CLI set aside are read the same way.
  The reader is shared with the fork Qwen Code (``formats/gemini_logs.py``).
* ``tmp/<id>/shell_history`` (secondary): shell-mode commands, one per line,
  oldest first, deduplicated, at most 100; the last line is the newest command
  and was written at the file's mtime.
* ``tmp/<id>/checkpoint-<tag>.json`` (secondary, ``/chat save <tag>``):
  ``{history: Content[], authType?}``, the API history; read like chat messages
  (``role: model`` as ``gemini``) without times.
* ``tmp/<id>/checkpoints/<ISO time, ':'→'-', '.'→'_'>-<file>-<tool>.json``:
  ``{history?, clientHistory?, commitHash?, toolCall {name, args}, messageId?}``,
  written before a restorable edit runs: one ``checkpoint:`` row.
* ``tmp/<id>/<sessionId>/tracker/<6 hex>.json``: one ``TrackerTask``
  ``{id, title, description, type, status, parentId?, dependencies[], subagentSessionId?}``:
  one ``task:`` row at the file's mtime.

References: google-gemini/gemini-cli@5411f113ca packages/core/src/core/logger.ts:17-31,84-130,142-250,290-345;
packages/cli/src/ui/hooks/useShellHistory.ts:12-105; packages/cli/src/ui/components/InputPrompt.tsx:409-421;
packages/core/src/utils/checkpointUtils.ts:15-66,86-160; packages/core/src/services/trackerTypes.ts:9-42;
packages/core/src/services/trackerService.ts:17-60 (research/formats-cli-agents.md 3.3, 3.4, 3.8).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from aitrail.analyzer.formats.gemini_content import compact
from aitrail.analyzer.formats.gemini_logs import prompt_log_rows
from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, bad_line, bad_record, json_document
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .messages import (
    Message,
    SessionRenderer,
)
from .projects import folder_of, project_path

_CHECKPOINT_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d)_(\d{3})Z-")
_PROMPT_SEPARATOR = "########"  # prompt ids are <sessionId>########<turn>


def _load_object(ctx: ParseContext, what: str) -> tuple[dict | None, Draft | None]:
    return json_document(ctx.data, what)


# -- logs.json -------------------------------------------------------------------------------------------


def parse_logs_json(ctx: ParseContext) -> Iterator[Draft]:
    """logs.json (secondary): the prompt log, a user row per user entry and a system row for other types."""
    yield from prompt_log_rows(ctx, project_path(ctx))


# -- shell_history ------------------------------------------------------------------------------------------


def parse_shell_history(ctx: ParseContext) -> Iterator[Draft]:
    """One user row per command line; streamed, one line behind, since only the last has a time."""
    project = project_path(ctx)
    previous: RawLine | Draft | None = None
    for item in ctx.lines():
        if isinstance(item, RawLine) and not item.raw.strip():
            continue
        if previous is not None:
            yield _shell_line(ctx, previous, project, last=False)
        previous = item
    if previous is not None:
        yield _shell_line(ctx, previous, project, last=True)


def _shell_line(ctx: ParseContext, item: RawLine | Draft, project: str, last: bool) -> Draft:
    if isinstance(item, Draft):
        return item  # a line too long to read
    try:
        text = item.raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        return bad_line(item.number, f"not UTF-8 at byte {exc.start}", item.raw)
    # the file is rewritten whole when a command is added, newest last: only that line has a time
    when = file_mtime(ctx) if last else {"timestamp_source": "none"}
    return Draft("user", text, f"line:{item.number}", project_path=project, **when)


# -- saved chats (/chat save) --------------------------------------------------------------------------------


def parse_saved_chat(ctx: ParseContext) -> Iterator[Draft]:
    """A ``/chat save`` checkpoint-<tag>.json (secondary): a ``saved chat:`` row, then its turns as rows."""
    document, problem = _load_object(ctx, "saved chat")
    if problem is not None:
        yield problem
        return
    base = {"project_path": project_path(ctx)}
    tag = unquote(ctx.source.name[len("checkpoint-"):-len(".json")])
    history = document.get("history")
    count = len(history) if isinstance(history, list) else 0
    yield Draft("system", f"saved chat: /chat save {tag} ({count} turns, authType={compact(document.get('authType'))};"
                          f" file mtime)", "file", **file_mtime(ctx), **base)
    if not isinstance(history, list):
        yield bad_record("json:/history", "history is not an array", compact(history))
        return
    messages = []
    for index, content in enumerate(history):
        if not isinstance(content, dict):
            yield bad_record(f"json:/history/{index}", "turn is not an object", compact(content))
            continue
        role = content.get("role") if isinstance(content.get("role"), str) else ""
        record = {"type": {"user": "user", "model": "gemini"}.get(role, role), "content": content.get("parts")}
        messages.append(Message(record, f"json:/history/{index}"))
    renderer = SessionRenderer(messages, base)
    for message in messages:
        yield from renderer.rows(message)
    yield from renderer.finish()


# -- edit checkpoints ----------------------------------------------------------------------------------------


def parse_edit_checkpoint(ctx: ParseContext) -> Iterator[Draft]:
    """A restorable edit checkpoint: one ``checkpoint:`` row naming the tool call it precedes."""
    document, problem = _load_object(ctx, "edit checkpoint")
    if problem is not None:
        yield problem
        return
    call = document.get("toolCall")
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        yield bad_file("edit checkpoint without a toolCall name")
        return
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    prompt = document.get("messageId")
    session = prompt.split(_PROMPT_SEPARATOR, 1)[0] if isinstance(prompt, str) and _PROMPT_SEPARATOR in prompt else ""
    turns = document.get("clientHistory")
    text = (f"checkpoint: before {call['name']} {args.get('file_path', '')} (restorable edit; shadow commit "
            f"{document.get('commitHash') or 'none'}; {len(turns) if isinstance(turns, list) else 0} turns of "
            f"conversation kept in the file)")
    yield Draft("system", text, "file", tool_name=call["name"], session_id=session, project_path=project_path(ctx),
                **_checkpoint_time(ctx))


def _checkpoint_time(ctx: ParseContext) -> dict:
    """The file name's UTC time (``new Date().toISOString()`` with ':'→'-', '.'→'_'), else the mtime."""
    match = _CHECKPOINT_TIME.match(ctx.source.name)
    ns = ns_from_iso(f"{match.group(1)}:{match.group(2)}:{match.group(3)}.{match.group(4)}Z") if match else None
    return {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else file_mtime(ctx)


# -- tracker tasks -------------------------------------------------------------------------------------------


def parse_tracker(ctx: ParseContext) -> Iterator[Draft]:
    """A task tracker file: one ``task:`` row with its id, type, status and links, at the file mtime."""
    task, problem = _load_object(ctx, "tracker task")
    if problem is not None:
        yield problem
        return
    if not isinstance(task.get("title"), str):
        yield bad_file("tracker task without a title")
        return
    text = (f"task: {task['title']} | id={task.get('id', '')} type={task.get('type', '')} "
            f"status={task.get('status', '')}")
    for key in ("parentId", "dependencies", "subagentSessionId"):
        if task.get(key) not in (None, [], ""):
            text += f" {key}={compact(task[key])}"
    if task.get("description"):
        text += f" | {task['description']}"
    yield Draft("system", text, "file", session_id=_tracker_session(ctx), project_path=project_path(ctx),
                **file_mtime(ctx))


def _tracker_session(ctx: ParseContext) -> str:
    """``tmp/<id>/<sessionId>/tracker/…`` names the session; ``tmp/<id>/tracker/…`` (older) does not."""
    folder = folder_of(ctx.source.path)
    if folder is None:
        return ""
    inner = ctx.source.path[len(folder.root) + len(folder.kind) + len(folder.name) + 2:].split("/")
    return inner[0] if len(inner) > 2 and inner[1] == "tracker" else ""
