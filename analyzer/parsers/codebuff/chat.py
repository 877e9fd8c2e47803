"""What every Codebuff chat file shares: where it sits, when its chat began, how calls meet results.

A chat lives in ``<config dir>/projects/<basename of the project root>/chats/<chatId>/``
(CodebuffAI/codebuff@da0d57111a npm-app/src/project-files.ts:64-90; the current
CLI's cli/src/project-files.ts, stored copy 0794d3f341), and the chat id is the
chat's start, ``new Date().toISOString()`` with ``:`` made ``-``
(``2025-09-04T10-22-31.120Z``): UTC, so it is a time. A row with no time of
its own takes the latest time before it in the chat (a message's own, else
the chat's start: ``timestamp_source=index``), a lower bound that keeps the
chat in order. The project is
known by its basename only: two projects named ``api`` share one folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.text import excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

_PLACE = re.compile(r"(?:^|/)projects/(?P<project>[^/]+)/chats/(?P<chat>[^/]+)/[^/]+$")
_CHAT_ID = re.compile(r"(?P<day>\d{4}-\d\d-\d\d)T(?P<h>\d\d)-(?P<m>\d\d)-(?P<s>\d\d(?:\.\d{1,9})?)Z")


def compact(value) -> str:
    """Compact JSON, keys in recorded order, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def as_text(value) -> str:
    """A string as is, None as '', anything else as compact JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else compact(value)


def label(value, limit: int = 400) -> str:
    """A short string for a column (a name, an id); anything else is ''."""
    return value if isinstance(value, str) and len(value) <= limit else ""


def chat_start_ns(chat_id: str) -> int | None:
    """The chat's start from its id (an ISO time in UTC with ``:`` made ``-``); None for any other id."""
    match = _CHAT_ID.fullmatch(chat_id)
    if match is None:
        return None
    return ns_from_iso(f"{match['day']}T{match['h']}:{match['m']}:{match['s']}Z")


class Chat:
    """One chat file: its session columns, its start, and its calls waiting for their results."""

    def __init__(self, ctx: ParseContext):
        place = _PLACE.search(ctx.source.path)
        self.project = place["project"] if place else ""
        self.chat_id = place["chat"] if place else ""
        self.start = chat_start_ns(self.chat_id)
        self.last = self.start  # the latest time seen so far: a message without one came no earlier
        self.calls = BoundedLedger()

    def when(self, own: int | None = None) -> dict:
        """The row's own time; else the last time before it in the chat, or the chat's start (``index``); else none."""
        if own is not None:
            self.last = own if self.last is None else max(self.last, own)
            return {"timestamp_ns": own, "timestamp_source": "record"}
        if self.last is not None:
            return {"timestamp_ns": self.last, "timestamp_source": "index"}
        return {"timestamp_ns": None, "timestamp_source": "none"}

    def row(self, turn_type: str, text: str, locator: str, own: int | None = None, **columns) -> Draft:
        """A row of this chat: its session, project and time (its own, else the chat's start)."""
        return Draft(turn_type, text, locator, session_id=self.chat_id, project_path=self.project,
                     **self.when(own), **columns)

    def call(self, name: str, call_id: str, arguments, locator: str, own: int | None = None, **columns) -> Draft:
        """A ``tool_use`` row, held for its result."""
        draft = self.row("tool_use", as_text(arguments), locator, own, tool_name=name, tool_use_id=call_id, **columns)
        self.calls.called(draft)
        return draft

    def result(self, name: str, call_id: str, text: str, locator: str, own: int | None = None) -> Iterator[Draft]:
        """A ``tool_result`` row joined to its call by id; a ``parser:`` row when no call came before it."""
        call = self.calls.take(call_id) if call_id else None
        name = call.tool_name if call is not None else name
        yield self.row("tool_result", text, locator, own, tool_name=name, tool_use_id=call_id)
        if call is None:
            yield self.row("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool "
                                     "call before it", locator, own, tool_name=name, tool_use_id=call_id)

    def end(self) -> Iterator[Draft]:
        """The ``no result recorded`` rows of the calls left open, and the ledger's limit row."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()


def media_text(part: dict) -> str:
    """A picture or file part as a placeholder: its type and size, never its bytes."""
    if is_image_block(part) or part.get("type") == "image":
        mime = part.get("mediaType") or part.get("mimeType")
        data = part.get("image", part.get("data"))
        return image_placeholder({"type": "image", "mimeType": mime, "data": data if isinstance(data, str) else None})
    mime = label(part.get("mediaType"), 120)
    name = label(part.get("filename"), 400)
    data = part.get("data")
    size = f", {len(data)} base64 characters" if isinstance(data, str) else ""
    return f"[file {name or '(unnamed)'}{' ' + mime if mime else ''}{size}]"


def output_text(output) -> str:
    """A tool result's output in any generation: a string, ``[{type: json|media|text, ...}]`` or one such object."""
    if isinstance(output, str):
        return output
    parts = output if isinstance(output, list) else [output]
    texts = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "media":
            texts.append(media_text({"type": "image", "mediaType": part.get("mediaType"), "data": part.get("data")}))
        elif isinstance(part, dict) and part.get("type") in ("text", "error-text") and isinstance(part.get("value"),
                                                                                                 str):
            texts.append(part["value"])
        elif isinstance(part, dict) and "value" in part and part.get("type") in ("json", "error-json"):
            texts.append(as_text(part["value"]))
        else:
            texts.append(as_text(part))
    return "\n".join(texts)


def title_of(prompt: str) -> str:
    """The chat list's name of a chat: its first prompt, trimmed, cut to 97 characters and ``...`` past 100."""
    text = prompt.strip()
    return text[:97] + "..." if len(text) > 100 else text


def short(value, limit: int = 300) -> str:
    """A value for a ``parser:`` row: compact, cut."""
    return excerpt(as_text(value), limit)
