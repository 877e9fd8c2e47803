"""Continue-style chat sessions: the sessions.json index, session files, prompt logs.

Used by Continue and by forks that kept its layout (PearAI's pearai.pearai).
``sessions/sessions.json`` is an array of ``{sessionId, title, dateCreated
(ms epoch as a string), workspaceDirectory, ...}``; each ``sessions/<id>.json``
holds the conversation with no per-message time, so the index supplies the only
time a session has. Prompts logged as text render each message as
``<role>\\n<content>\\n\\n``.

References: continuedev/continue@d0a3c0b6 core/util/history.ts:111-192,
core/index.d.ts:292-298; trypear/pearai-submodule@51eceef core/util/history.ts:7-135,
core/llm/index.ts:373-384 (research/formats-vscode-family.md 4.2, 4.3, 4.6).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from aitrail.analyzer.bundle import Source
from aitrail.analyzer.context import FileTooLarge, ParseContext
from aitrail.analyzer.formats.decode import decode_json
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.rows import Draft, ns_from_ms

_ROLE_TAG = re.compile(r"(?m)^<(system|user|assistant)>[ \t]*\n?")


@dataclass
class IndexEntry:
    session_id: str
    title: str
    created_ns: int | None
    workspace: str
    locator: str


def read_index(ctx: ParseContext, source: Source) -> tuple[dict[str, IndexEntry], list[Draft]]:
    """Entries by session id, and a parser: row for everything the index loses."""
    try:
        document = decode_json(ctx.read(source))
    except (ValueError, UnicodeDecodeError, FileTooLarge) as exc:  # a huge index must not hide the sessions
        return {}, [bad_file(f"unreadable session index, sessions keep no time: {exc}")]
    if not isinstance(document, list):
        return {}, [bad_file(f"unreadable session index: a JSON {type(document).__name__}, not an array")]
    entries: dict[str, IndexEntry] = {}
    problems: list[Draft] = []
    for position, item in enumerate(document):
        locator = f"json:/{position}"
        session_id = item.get("sessionId", item.get("session_id")) if isinstance(item, dict) else None
        if not isinstance(session_id, str) or not session_id:
            problems.append(bad_record(locator, "index entry without a sessionId", json.dumps(item)[:1000]))
            continue
        created = ns_from_ms(item.get("dateCreated"))
        if item.get("dateCreated") is not None and created is None:
            problems.append(bad_record(locator, f"dateCreated {item.get('dateCreated')!r} is not a time"))
        entries[session_id] = IndexEntry(
            session_id=session_id, title=str(item.get("title") or ""), created_ns=created,
            workspace=str(item.get("workspaceDirectory") or ""), locator=locator,
        )
    return entries, problems


def session_index(ctx: ParseContext, index_store: str) -> dict[str, IndexEntry]:
    """The index entries of the same location as the current source (read once per worker)."""
    def load() -> dict[str, IndexEntry]:
        merged: dict[str, IndexEntry] = {}
        for source in ctx.related(index_store):
            if source.location == ctx.source.location:
                merged.update(read_index(ctx, source)[0])
        return merged

    return ctx.cached(("continue-index", index_store, ctx.source.location), load)


def message_text(content) -> str:
    """A ChatMessage content as text: a string, or text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") == "imageUrl":
                parts.append("[image]")
            else:
                parts.append(json.dumps(part, sort_keys=True))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, sort_keys=True)


def role_blocks(prompt: str) -> list[tuple[str, str]] | None:
    """Split a prompt written as ``<role>`` blocks; None when it is not in that form."""
    pieces = _ROLE_TAG.split(prompt)
    if len(pieces) < 3 or pieces[0].strip():
        return None
    return [(pieces[index], pieces[index + 1].strip("\n")) for index in range(1, len(pieces) - 1, 2)]


def last_user_block(prompt: str) -> str | None:
    blocks = role_blocks(prompt)
    if not blocks:
        return None
    users = [text for role, text in blocks if role == "user"]
    return users[-1].strip() if users else None
