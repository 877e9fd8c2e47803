"""Gemini CLI chat sessions: the JSONL event log (and its sub-agent and unreadable copies), legacy .json.

JSONL (``tmp/<id>/chats/session-<UTC minute>-<id8>.jsonl``, sub-agents in
``chats/<parent sessionId>/<sessionId>.jsonl``, set-aside copies
``<file>.unreadable-<ms>``) is replayed by ``replay``; rows per line:

* metadata line: ``session metadata: projectHash="…" startTime="…" kind="main"`` at ``startTime``;
* a message: its rows (``messages``) at its first copy's place, from its last copy;
* each earlier copy of a message: ``superseded: …`` naming where the last copy is;
* ``$set``: ``session update: key=value …`` at its ``lastUpdated`` when it has one;
* ``$rewindTo``: ``rewind: …`` (no time: the record has none); the messages it
  removed keep their rows, marked ``/rewound@line:R`` at the end of the locator;
* anything else: ``unknown record …`` (decodable) or ``parser: unparseable line …``.

Legacy ``session-*.json`` (2025-08-18 to 2026-04) is one ``ConversationRecord``
``{sessionId, projectHash, startTime, lastUpdated, messages[], summary?}``;
resuming one copies it into ``<name>.jsonl`` beside it, so messages found
there are not repeated from the ``.json``.

References: google-gemini/gemini-cli@5411f113ca packages/core/src/services/chatRecordingService.ts:151-345,
436-467 (migration), 478-530 (file names), 580-615 (unreadable copies), 1041-1102 (legacy fallback)
(research/formats-cli-agents.md 3.3-3.5).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.gemini_content import compact, moment
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_record, excerpt, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_cost, decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

from .messages import (
    Message,
    SessionRenderer,
)
from .projects import project_path
from .replay import (
    EVENT,
    MESSAGE,
    Entry,
    LineEvent,
    Replay,
)

_UNREADABLE = re.compile(r"\.unreadable-(\d+)$")
_SUBAGENT = re.compile(r"/chats/([^/]+)/[^/]+$")


def fields_text(fields: dict, skip: tuple[str, ...] = ()) -> str:
    """``key=<JSON value>`` pairs, long values cut (a scratchpad can be large)."""
    pairs = []
    for key, value in fields.items():
        if key in skip:
            continue
        if key == "messages" and isinstance(value, list):
            pairs.append(f"messages=[{len(value)} messages]")
        else:
            pairs.append(f"{key}={excerpt(compact(value))}")
    return " ".join(pairs)


# -- JSONL ---------------------------------------------------------------------------------------------


def parse_chat_jsonl(ctx: ParseContext) -> Iterator[Draft]:
    """A session-*.jsonl event log, replayed as a mutation log into one row per message and part.

    Rewinds and updates keep the removed or earlier copies as rows of their own; the
    project comes from the project registry join.
    """
    replay = Replay()
    for item in read_jsonl(ctx):
        if isinstance(item, Line):
            replay.add_record(item.value, item.number, decode_cost(item.raw))
        else:
            replay.add_draft(item, int(item.locator.split(":", 1)[1]))
    if replay.over_at:
        replay.note(over_limit("chat replay", f"about {replay.limit} bytes of objects held",
                               f"{replay.skipped} lines from line {replay.over_at} on were counted, not read: the "
                               "conversation is shown as the lines before them left it", f"line:{replay.over_at}"),
                    replay.over_at)
    base = {"session_id": replay.session_id(), "project_path": project_path(ctx, replay.metadata.get("projectHash"))}
    yield from _set_aside_note(ctx, base)
    ordered = replay.ordered()
    subagent = replay.metadata.get("kind") == "subagent"
    renderer = SessionRenderer([_message(item) for _, kind, item in ordered if kind == MESSAGE], base, subagent)
    for _, kind, item in ordered:
        if kind == EVENT:
            yield from _event_rows(ctx, item, base)
        elif kind == MESSAGE:
            yield from renderer.rows(_message(item))
        else:  # an earlier copy of a message
            yield _superseded(*item, base)
    yield from renderer.finish()


def _message(entry: Entry) -> Message:
    first = entry.copies[0].record.get("timestamp")
    return Message(entry.final.record, entry.final.locator, entry.marker, first if isinstance(first, str) else None)


def _set_aside_note(ctx: ParseContext, base: dict) -> Iterator[Draft]:
    match = _UNREADABLE.search(ctx.source.name)
    if match:
        yield Draft("system", f"set aside: Gemini CLI could not load this chat file and renamed it "
                              f"{ctx.source.name}; its lines are read as they are", "file",
                    timestamp_ns=ns_from_ms(match.group(1)), **base)


def _event_rows(ctx: ParseContext, event: LineEvent, base: dict) -> Iterator[Draft]:
    line = event.position[0]
    locator = f"line:{line}"
    if event.kind == "draft":
        event.record.session_id, event.record.project_path = base["session_id"], base["project_path"]
        yield event.record
    elif event.kind == "metadata":
        text = "session metadata: " + fields_text(event.record, skip=("sessionId",))
        parent = _SUBAGENT.search(ctx.source.path)
        if parent and event.record.get("kind") == "subagent":
            text += f" (sub-agent chat of session {parent.group(1)})"
        yield Draft("system", text, locator, **moment(event.record.get("startTime")), **base)
    elif event.kind == "set":
        update = event.record["$set"]
        text = "session update: " + fields_text(update)
        if event.removed:
            text += (f"; the message list was replaced: {_count(len(event.removed))} no longer in it, kept here "
                     f"marked replaced@line:{line}")
        yield Draft("system", text, locator, **moment(update.get("lastUpdated")), **base)
    elif event.kind == "rewind":
        where = "" if event.found else f" ({event.record} is not in the conversation, so every message was removed)"
        yield Draft("system", f"rewind: $rewindTo {event.record}{where}; {_count(len(event.removed))} removed from "
                              f"the conversation, kept here marked rewound@line:{line}", locator,
                    timestamp_source="none", **base)
    else:
        yield Draft("system", f"unknown record ({_record_kind(event.record)}): {excerpt(compact(event.record))}",
                    locator, timestamp_source="none", **base)


def _count(number: int) -> str:
    return f"{number} message" if number == 1 else f"{number} messages"


def _record_kind(record: dict) -> str:
    operators = [key for key in record if key.startswith("$")]
    if operators:
        return "operator " + ", ".join(operators)
    if "type" in record:
        return f"type {compact(record['type'])}"
    return "keys " + (", ".join(list(record)[:8]) or "none")


def _superseded(entry: Entry, copy, base: dict) -> Draft:
    kind = copy.record.get("type")
    return Draft("system", f"superseded: an earlier copy of message {entry.message_id} ({kind}); its last copy, "
                           f"{entry.final.locator}, gives its rows", copy.locator,
                 **moment(copy.record.get("timestamp")), **base)


# -- legacy .json --------------------------------------------------------------------------------------


def parse_chat_legacy_json(ctx: ParseContext) -> Iterator[Draft]:
    """A legacy single-object session-*.json: metadata row, then one row per message.

    Messages already copied into a continuing JSONL session are left to that session.
    """
    document, problem = json_document(ctx.data, "legacy chat")
    if problem is not None:
        yield problem
        return
    base = {"session_id": str(document.get("sessionId") or ""),
            "project_path": project_path(ctx, document.get("projectHash"))}
    yield Draft("system", "session metadata: " + fields_text(document, skip=("sessionId", "messages")), "file",
                **moment(document.get("startTime")), **base)
    messages = document.get("messages")
    if not isinstance(messages, list):
        yield bad_record("json:/messages", "messages is not an array", compact(messages))
        return
    copied = _continued_in(ctx, {record["id"] for record in messages
                                 if isinstance(record, dict) and isinstance(record.get("id"), str)})
    kept: list[Message] = []
    for index, record in enumerate(messages):
        locator = f"json:/messages/{index}"
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            yield bad_record(locator, "message without a string id", compact(record))
        elif copied is None or record["id"] not in copied:
            kept.append(Message(record, locator))
    if copied is not None:
        yield Draft("system", f"session continued in {ctx.source.name}l: {len(messages) - len(kept)} of "
                              f"{len(messages)} messages were copied there when the session was resumed, and "
                              f"their rows come from that file", "file",
                    **moment(document.get("lastUpdated")), **base)
    renderer = SessionRenderer(kept, base, document.get("kind") == "subagent")
    for message in kept:
        yield from renderer.rows(message)
    yield from renderer.finish()


def _continued_in(ctx: ParseContext, wanted: set[str]) -> set[str] | None:
    """Which ``wanted`` message ids the ``.jsonl`` a resume wrote beside this file holds; None when there is none.

    Every message the replay of that file would hold counts, whatever became of
    it there (rewound, replaced). Only the ids asked for are kept and the file's
    lines are cut one at a time, so memory does not grow with the sibling.
    """
    sibling = ctx.sibling(ctx.source.name + "l", "chats")
    if sibling is None:
        return None
    try:
        data = ctx.read(sibling)
    except (MemberUnreadable, OSError):
        return None  # an unreadable sibling only means that nothing is skipped here
    found: set[str] = set()
    for raw in _lines(data):
        try:
            record = decode_json(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(record, dict):
            found.update(message_id for message_id in _message_ids(record) if message_id in wanted)
    return found


def _lines(data: bytes) -> Iterator[bytes]:
    """The lines of ``data``, one made at a time (a list of them all costs an object per line)."""
    start = 0
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        yield data[start:end]
        start = end + 1


def _message_ids(record: dict) -> list[str]:
    """The ids of the messages a chat line gives, classified in the order ``Replay.add_record`` uses."""
    if isinstance(record.get("$rewindTo"), str):
        return []
    if isinstance(record.get("id"), str):
        return [record["id"]]
    if isinstance(record.get("$set"), dict):
        messages = record["$set"].get("messages")
    elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
        messages = record.get("messages")
    else:
        return []
    return [message["id"] for message in messages if isinstance(message, dict) and isinstance(message.get("id"), str)
            ] if isinstance(messages, list) else []
