"""What a Mistral Vibe session folder says about its messages: ids, project, branch, time, and its parent's copies.

A session folder is ``logs/session/<prefix>_<UTC YYYYmmdd_HHMMSS>_<first 8 of the id>/``
(sub-agents: ``<session folder>/agents/<agent>_<UTC>_<id8>/``) holding
``messages.jsonl`` and ``meta.json``. Messages carry no time, session or
project, so every row of ``messages.jsonl`` takes ``meta.json``'s
``session_id``, ``environment.working_directory`` and ``git_branch``, and its
``start_time`` (ISO 8601 with ``+00:00``) as an ``index`` time; without a
readable ``meta.json`` the folder name gives the UTC start (``log-dir``) and
the first 8 characters of the id.

A rewind and a fork start a new session (``parent_session_id`` = the old one)
whose ``messages.jsonl`` begins with copies of the messages kept, under the
same ``message_id``: ``parent_copies`` reads the parent's ids (a join, once per
parent) so those copies are told apart.

References: mistralai/mistral-vibe@ac8f1a09fd (PyPI mistral-vibe 2.18.4)
vibe/core/session/session_logger.py ``save_folder``, ``_initialize_session_metadata``, ``reset_session``;
vibe/core/session/session_id.py ``shorten_session_id``; vibe/core/rewind/manager.py ``rewind_to_message``;
vibe/core/agent_loop.py ``_reset_session``, ``fork``; vibe/core/tools/builtins/task.py (``agents/`` folders).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aitrail.analyzer.formats.idioms import as_dict, setting_value
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import ns_from_iso

_FOLDER = re.compile(r"^.+_(\d{4})(\d\d)(\d\d)_(\d\d)(\d\d)(\d\d)_([^_/]+)$")
# Message and call ids of one parent session held to recognise copies; a real session holds hundreds.
MAX_COPY_IDS = 262_144

compact = setting_value  # a JSON value as one line, key order kept


def as_text(value) -> str:
    """A string as it is, nothing as '', anything else as compact JSON (a field of an unexpected type)."""
    return value if isinstance(value, str) else "" if value is None else compact(value)


@dataclass
class SessionFacts:
    """The columns every row of a session folder shares, and the session it was copied from."""

    columns: dict
    parent: str = ""


@dataclass
class Copies:
    """The message and call ids of a parent session (empty when there is none in the bundle)."""

    parent: str = ""
    message_ids: frozenset = field(default_factory=frozenset)
    call_ids: frozenset = field(default_factory=frozenset)

    def holds(self, message: dict) -> bool:
        """Whether the parent session holds this message (a copy made by a rewind or a fork)."""
        message_id = message.get("message_id")
        if isinstance(message_id, str) and message_id in self.message_ids:
            return True
        call_id = message.get("tool_call_id")
        return message.get("role") == "tool" and isinstance(call_id, str) and call_id in self.call_ids


def read_json(ctx: ParseContext, source) -> dict | None:
    """Another member as a JSON object; None when it cannot be read or is not one."""
    try:
        value = decode_json(ctx.read(source))
    except (MemberUnreadable, OSError, ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def folder_time(directory: str) -> tuple[int | None, str]:
    """The UTC start a session folder's name gives, and the 8 characters of the id it ends with."""
    match = _FOLDER.match(directory.rsplit("/", 1)[-1])
    if match is None:
        return None, ""
    year, month, day, hour, minute, second, short = match.groups()
    return ns_from_iso(f"{year}-{month}-{day}T{hour}:{minute}:{second}Z"), short


def facts_of(ctx: ParseContext) -> SessionFacts:
    """The session columns of a messages.jsonl, from the meta.json beside it (else from the folder name)."""
    meta_source = ctx.sibling("meta.json")
    meta = read_json(ctx, meta_source) if meta_source is not None else None
    start, short = folder_time(ctx.source.directory)
    if meta is None:
        when = {"timestamp_ns": start, "timestamp_source": "log-dir" if start is not None else "none"}
        return SessionFacts({"session_id": short, **when})
    meta_start = ns_from_iso(meta.get("start_time"))
    if meta_start is not None:
        when = {"timestamp_ns": meta_start, "timestamp_source": "index"}
    else:  # a start_time without a zone is no time: the folder's UTC name is
        when = {"timestamp_ns": start, "timestamp_source": "log-dir" if start is not None else "none"}
    columns = {"session_id": as_text(meta.get("session_id")) or short,
               "project_path": as_text(as_dict(meta.get("environment")).get("working_directory")),
               "git_branch": as_text(meta.get("git_branch")), **when}
    return SessionFacts(columns, as_text(meta.get("parent_session_id")))


def parent_copies(ctx: ParseContext, parent: str) -> Copies:
    """The ids the parent session's messages.jsonl holds, read once per parent; empty when it is not here."""
    if not parent:
        return Copies()
    return ctx.cached(("mistral-vibe parent copies", parent), lambda: _read_parent(ctx, parent))


def _read_parent(ctx: ParseContext, parent: str) -> Copies:
    for store in ("session_meta", "subagent_meta"):
        for source in ctx.related(store):
            if not source.directory.endswith("_" + parent[:8]):
                continue
            meta = read_json(ctx, source)
            messages = ctx.at(f"{source.directory}/messages.jsonl")
            if meta is not None and meta.get("session_id") == parent and messages is not None:
                return _ids(ctx, messages, parent)
    return Copies()


def _ids(ctx: ParseContext, source, parent: str) -> Copies:
    message_ids: set[str] = set()
    call_ids: set[str] = set()
    try:
        data = ctx.read(source)
    except (MemberUnreadable, OSError):
        return Copies()
    for raw in data.split(b"\n"):
        if len(message_ids) + len(call_ids) >= MAX_COPY_IDS:
            break
        try:
            message = decode_json(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(message, dict):
            continue
        if isinstance(message.get("message_id"), str):
            message_ids.add(message["message_id"])
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                call_ids.add(call["id"])
    return Copies(parent, frozenset(message_ids), frozenset(call_ids))
