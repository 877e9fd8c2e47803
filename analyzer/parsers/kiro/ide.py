"""The Kiro IDE's chat sessions: ``globalStorage/kiro.kiroagent/workspace-sessions/<b64url(path)>/``.

Observed only ([obs]: cli-continues ``src/parsers/kiro.ts`` @8c23346d
``discoverSessionRefs``, ``parseSessionIndex``, ``extractMessages``,
``decodeWorkspaceFolderName``, ``parseDateValue``; research section 5.2/5.4):

* ``sessions.json``: the workspace's session index, an array or an object holding
  it under ``sessions`` / ``entries`` / ``items``; each entry names its session by
  ``sessionId`` / ``id`` / ``conversationId``, with a ``title`` and a time
  (``dateCreated`` / ``createdAt`` / ``timestamp``);
* ``<sessionId>.json``: ``history`` (or ``messages``) of ``{message: {role,
  content}, timestamp?}`` (or the message itself); ``role`` user / assistant
  (``human`` / ``ai`` too); ``content`` a string or blocks (``{type|kind: text,
  text|data}``).

The project path is the folder name decoded as base64url (``-``/``_`` for ``+``/``/``,
padding restored): no field of either file names it. Times are written as epoch
ms, epoch seconds or ISO text (values.kiro_time reads each by its form); a message
without its own time takes its session's index time (``timestamp_source`` index).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.json_values import as_text, compact, document_or_row, label, mapping
from aitrail.analyzer.formats.text import bad_file, excerpt, json_document
from aitrail.analyzer.view.context import FileTooLarge, ParseContext
from aitrail.analyzer.view.rows import Draft

from .values import kiro_time, time_unit

INDEX_NAME = "sessions.json"
ID_KEYS = ("sessionId", "id", "conversationId")
TIME_KEYS = ("dateCreated", "createdAt", "timestamp")
ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def workspace_path(folder: str) -> str:
    """The workspace a ``workspace-sessions/<folder>`` names: base64url-decoded, only when it reads as a path."""
    padded = folder + "=" * (-len(folder) % 4)
    try:
        decoded = base64.urlsafe_b64decode(padded.encode("ascii")).decode("utf-8").strip()
    except (binascii.Error, UnicodeError, ValueError):
        return ""
    if decoded.startswith(("/", "~", "file:")) or _DRIVE.match(decoded):
        return decoded
    return ""


def _folder(ctx: ParseContext) -> str:
    return ctx.source.directory.rsplit("/", 1)[-1]


def index_entries(document) -> list:
    """The entries of a sessions.json document (an array, or one under sessions / entries / items)."""
    if isinstance(document, list):
        return document
    for key in ("sessions", "entries", "items"):
        if isinstance(mapping(document).get(key), list):
            return document[key]
    return []


def _first(entry: dict, keys: tuple) -> tuple[str, object]:
    """(key, value) of the first of ``keys`` the entry holds (('', None) when none)."""
    return next(((key, entry[key]) for key in keys if entry.get(key) not in (None, "")), ("", None))


def parse_ide_sessions(ctx: ParseContext) -> Iterator[Draft]:
    """A workspace's sessions.json: one ``session:`` row per entry, in the folder's project."""
    document = yield from document_or_row(json_document(ctx.data, "session index", object))
    if document is None:
        return
    if not isinstance(document, (list, dict)):
        yield bad_file(f"session index is a JSON {type(document).__name__}, not an array or object")
        return
    project = workspace_path(_folder(ctx))
    for position, entry in enumerate(index_entries(document)):
        entry = mapping(entry)
        _, session = _first(entry, ID_KEYS)
        key, raw = _first(entry, TIME_KEYS)
        moment = kiro_time(raw)
        when = f", {key}={as_text(raw)} ({time_unit(raw)})" if moment is not None else ""
        text = (f"session: {as_text(entry.get('title'))} (sessionId={as_text(session)}{when}; workspace folder "
                f"{_folder(ctx)})")
        yield Draft("system", text, f"json:/{position}", moment, "record" if moment is not None else "none",
                    session_id=label(session), project_path=project)


def _index_time(ctx: ParseContext, session: str) -> int | None:
    """The time sessions.json beside this file gives the session, for messages with none of their own."""
    source = ctx.sibling(INDEX_NAME, "ide_session_index")
    if source is None:
        return None
    try:
        document, problem = json_document(ctx.read(source), "session index", object)
    except FileTooLarge:
        return None
    for entry in index_entries(document) if problem is None else []:
        entry = mapping(entry)
        if as_text(_first(entry, ID_KEYS)[1]) == session:
            return kiro_time(_first(entry, TIME_KEYS)[1])
    return None


def parse_ide_session(ctx: ParseContext) -> Iterator[Draft]:
    """One IDE chat session file: a row per message, a ``block <type>:`` row per block that is not text."""
    document = yield from document_or_row(json_document(ctx.data, "session file", object))
    if document is None:
        return
    if not isinstance(document, (list, dict)):
        yield bad_file(f"session file is a JSON {type(document).__name__}, not an object or array")
        return
    session = ctx.source.name.rsplit(".", 1)[0]
    columns = {"session_id": session, "project_path": workspace_path(_folder(ctx))}
    key = "history" if isinstance(mapping(document).get("history"), list) else "messages"
    entries = document if isinstance(document, list) else mapping(document).get(key)
    fallback = _index_time(ctx, session)
    for position, entry in enumerate(entries if isinstance(entries, list) else []):
        locator = f"json:/{key}/{position}" if isinstance(document, dict) else f"json:/{position}"
        entry = mapping(entry)
        message = mapping(entry.get("message")) or entry
        raw = _first(message, TIME_KEYS)[1] or _first(entry, TIME_KEYS)[1]
        moment = kiro_time(raw)
        if moment is not None:
            fallback = moment
        when = (moment, "record") if moment is not None else (fallback, "index" if fallback is not None else "none")
        yield from _message_rows(message, entry, locator, when, columns)
        if moment is None and isinstance(raw, str) and raw.strip():  # local time without a zone: kept as written
            yield Draft("system", f"time without zone: {raw}", f"{locator}/message", *when, **columns)


def _message_rows(message: dict, entry: dict, locator: str, when: tuple, columns: dict) -> Iterator[Draft]:
    role = as_text(message.get("role", entry.get("role")))
    content = message.get("content", message.get("text", entry.get("content")))
    blocks = content if isinstance(content, list) else [content]
    texts, others = [], []
    for index, block in enumerate(blocks):
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and "text" in (block.get("type"), block.get("kind")):
            texts.append(as_text(block.get("text", block.get("data"))))
        elif block is not None:
            others.append((index, block))
    text = "\n".join(texts)
    if role in ROLES and (text or not others):
        yield Draft(ROLES[role], text, f"{locator}/message", *when, **columns)
    elif text or not others:
        yield Draft("system", f"message ({role or 'no role'}): {text}", f"{locator}/message", *when, **columns)
    for index, block in others:
        kind = as_text(mapping(block).get("type") or mapping(block).get("kind")) or type(block).__name__
        yield Draft("system", f"block {kind}: {excerpt(compact(block))}", f"{locator}/message/content/{index}",
                    *when, **columns)
