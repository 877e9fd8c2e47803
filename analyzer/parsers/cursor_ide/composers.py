"""The global state.vscdb's cursorDiskKV: composerData documents and their bubbleId rows, composer by composer.

Memory follows one composer, not the database: composerData rows are streamed,
and for each composer its bubbles are read with one query on the key index and
held (up to HELD_BYTES; past it only keys, each bubble fetched again by key; past
held.KEYS_BUDGET not even keys, the rest of the range read again in order), then
rendered in the order ``fullConversationHeadersOnly`` gives (bubbles it does not
list follow in key order). Bubbles whose composer has no composerData row (a
deleted conversation) are found by one key-only pass and read the same way. The
composer ids and headers held across the walk have budgets of their own
(held.py, headers.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats import vscode_db
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.vscode_db import CURSOR_TABLE, KeyRow
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .bubbles import Conversation, bubble_rows, model_rows, moment
from .headers import read_headers, unlisted_rows
from .held import COMPOSER_PREFIX, ComposerBubbles, KnownComposers
from .workspace import composer_projects

BUBBLE_PREFIX = "bubbleId:"
HELD_BYTES = 32 * 1024 * 1024  # bubble values of one composer held at once; past it they are fetched one by one


def composer_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    """Every composer's rows, then the rows of bubbles left without a composer.

    Raises:
        sqlite3.Error: the table cannot be read (the caller writes the one ``parser:`` row).
    """
    headers = yield from read_headers(connection)
    projects = {composer: header.project for composer, header in headers.items() if header.project}
    projects.update(composer_projects(ctx))  # a workspace database's list wins over the header
    seen = KnownComposers(connection)
    for row in vscode_db.scan_prefix(connection, COMPOSER_PREFIX, CURSOR_TABLE):
        composer = row.key[len(COMPOSER_PREFIX):]
        seen.add(composer, row.locator())
        yield from _composer(connection, row, composer, projects)
    over = seen.colon_row()
    if over is not None:
        yield over
    yield from _orphan_bubbles(connection, seen, projects)
    yield from unlisted_rows(headers, seen)


def _document(row: KeyRow) -> tuple[dict | None, Draft | None]:
    try:
        value = row.json()
    except ValueError as exc:
        return None, bad_record(row.locator(), f"composerData is not JSON: {exc}", _head(row))
    if not isinstance(value, dict):
        return None, bad_record(row.locator(), f"composerData is a JSON {type(value).__name__}, not an object",
                                _head(row))
    return value, None


def _head(row: KeyRow) -> bytes:
    return row.value if isinstance(row.value, bytes) else b""


def _conversation(composer: str, document: dict, projects: dict[str, str]) -> Conversation:
    worktree = document.get("gitWorktree") if isinstance(document.get("gitWorktree"), dict) else {}
    project = projects.get(composer) or _string(worktree.get("worktreePath"))
    branch = _string(worktree.get("branchName")) or _string(document.get("createdOnBranch"))
    return Conversation(composer, project, branch, moment(document.get("createdAt")))


def _string(value) -> str:
    return value if isinstance(value, str) else ""


def composer_text(document: dict) -> str:
    """``composer: <name> | mode=<mode> status=<status>`` (``archived`` added when it is)."""
    name = _string(document.get("name")) or "(untitled)"
    mode = _string(document.get("unifiedMode") or document.get("forceMode")) or "-"
    status = _string(document.get("status")) or "-"
    archived = " archived" if document.get("isArchived") is True else ""
    return f"composer: {name} | mode={mode} status={status}{archived}"


def _composer(connection: sqlite3.Connection, row: KeyRow, composer: str,
              projects: dict[str, str]) -> Iterator[Draft]:
    document, problem = _document(row)
    conversation = _conversation(composer, document or {}, projects)
    if problem is not None:
        problem.session_id = composer
        yield problem
    else:
        when = {"timestamp_ns": conversation.index_ns, "timestamp_source": "record"}
        yield Draft("system", composer_text(document), row.locator(), **when, **conversation.columns())
        config = document.get("modelConfig")
        if isinstance(config, dict):
            yield from model_rows(conversation, config.get("modelName"), row.locator("modelConfig"), when)
        inline = document.get("conversation")
        for position, bubble in enumerate(inline if isinstance(inline, list) else ()):
            yield from bubble_rows(bubble, row.locator("conversation", position), conversation)
    bubbles = _bubbles_of(connection, composer)
    headers = (document or {}).get("fullConversationHeadersOnly")
    for position, header in enumerate(headers if isinstance(headers, list) else ()):
        bubble = header.get("bubbleId") if isinstance(header, dict) else None
        key = f"{BUBBLE_PREFIX}{composer}:{bubble}"
        found, held = bubbles.take(key) if isinstance(bubble, str) else (False, None)
        if not found:
            missing = bad_record(row.locator("fullConversationHeadersOnly", position),
                                 "a listed bubble has no bubbleId row", str(bubble))
            missing.session_id = composer
            yield missing
            continue
        yield from _stored_bubble(connection, key, held, conversation)
    for key, held in bubbles.unlisted():  # stored but not listed: still the conversation's, in key order
        yield from _stored_bubble(connection, key, held, conversation)
    yield from conversation.ledger.orphans()
    yield from conversation.ledger.over_limit_rows()


def _bubbles_of(connection: sqlite3.Connection, composer: str) -> ComposerBubbles:
    """One composer's bubbles, from one index range; past HELD_BYTES only the key is kept.

    One query per composer keeps a database of thousands of composers fast; the
    budget keeps a single huge composer from being held whole (those bubbles are
    fetched again one by one, by key; past held.KEYS_BUDGET the rest of the range
    is read again when it is rendered).
    """
    return ComposerBubbles(connection, f"{BUBBLE_PREFIX}{composer}:", HELD_BYTES)


def _stored_bubble(connection: sqlite3.Connection, key: str, row: KeyRow | None,
                   conversation: Conversation) -> Iterator[Draft]:
    """One ``bubbleId:`` row as rows (fetched again by key when not held); a damaged value is one row."""
    if row is None:  # one probe of the key index (a prefix scan read every longer key too)
        row = vscode_db.row_at_key(connection, key, CURSOR_TABLE)
    if row is None:
        return
    try:
        value = row.json()
    except ValueError as exc:
        problem = bad_record(row.locator(), f"bubble {key[len(BUBBLE_PREFIX):]} is not JSON: {exc}", _head(row))
        problem.session_id, problem.project_path = conversation.session_id, conversation.project_path
        yield problem
        return
    yield from bubble_rows(value, row.locator(), conversation)


def _orphan_bubbles(connection: sqlite3.Connection, seen: KnownComposers,
                    projects: dict[str, str]) -> Iterator[Draft]:
    """Bubbles whose composer has no composerData row, one conversation per composer id, in key order.

    One key-only pass finds them; each such composer's bubbles are then read with
    one range query, as a listed composer's are. A key whose composer id holds a
    ':' (which the key split below cannot give) was read with that composer
    (``seen.covers``).
    """
    done, last, known = "", None, False
    for item in vscode_db.scan_prefix(connection, BUBBLE_PREFIX, CURSOR_TABLE, keys_only=True):
        rest = item.key[len(BUBBLE_PREFIX):]
        composer = rest.split(":", 1)[0]
        if composer != last:  # keys are in order: asked once per run of one composer's keys (it may be a lookup)
            last, known = composer, composer in seen
        if composer == done or known or seen.covers(rest):
            continue
        done = composer  # keys are in order, so a composer's bubbles are contiguous
        conversation = Conversation(composer, projects.get(composer, ""))
        yield Draft("system", "composer: no composerData row; its bubbles remain", item.locator(),
                    timestamp_source="none", **conversation.columns())
        for key, held in _bubbles_of(connection, composer).unlisted():
            if not seen.covers(key[len(BUBBLE_PREFIX):]):
                yield from _stored_bubble(connection, key, held, conversation)
        yield from conversation.ledger.orphans()
        yield from conversation.ledger.over_limit_rows()
