"""Grok Build's sessions/session_search.sqlite: the search index of sessions (secondary).

[obs] Two layouts are described. At 1.0.25 ``session_docs`` (session_id, cwd,
updated_at Unix s, title, content, content_hash, last_indexed_offset) is an
ordinary table, indexed by the FTS5 table ``session_docs_fts(title, content)``
(external content: it keeps no text of its own); it is read as it is. The
research describes ``session_docs`` itself as the FTS5 table; its columns
then sit in the shadow table ``session_docs_content`` (``id``, ``c0`` ...
``cN`` in declared order), an ordinary table that is read instead. A virtual
table is never opened: a subject's database could name any module, and
Python's sqlite3 may be built without FTS5. An FTS5 ``session_docs`` without
a content table (contentless or external content) is one ``parser:`` row.

Rows: ``session: <title> (cwd=<cwd>)`` per indexed session (summary.json writes
the same text, so a repeat is dropped); the indexed content only for a session
whose chat_history.jsonl is not in the bundle (a deleted session), so the
index never doubles a transcript; ``session index meta:`` per meta row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_seconds

from .paths import session_key
from .sessions import session_row_text
from .values import as_text

FTS_TABLE = "session_docs"
SHADOW = "session_docs_content"
OBSERVED_COLUMNS = ("session_id", "cwd", "updated_at", "title", "content", "content_hash", "last_indexed_offset")
MAX_DECLARED_COLUMNS = 64  # FTS5 allows 2000; the observed table has 7


def declared_columns(create_sql: str) -> list[str]:
    """Column names of ``CREATE VIRTUAL TABLE x USING fts5(a UNINDEXED, b, tokenize=...)``, options left out."""
    start, end = create_sql.find("("), create_sql.rfind(")")
    if start < 0 or end <= start:
        return []
    names = []
    for item in create_sql[start + 1:end].split(",")[:MAX_DECLARED_COLUMNS]:
        words = item.strip().split()
        if words and "=" not in item:
            names.append(words[0].strip("\"'`[]"))
    return names


def chat_sessions(ctx: ParseContext) -> frozenset[str]:
    """Session ids whose chat_history.jsonl is in the bundle (from paths; nothing is read)."""
    return ctx.cached(("grok-chat-sessions",),
                      lambda: frozenset(session_key(source.path) for source in ctx.related("chat_history")))


def parse_session_search(ctx: ParseContext) -> Iterator[Draft]:
    """session_search.sqlite: a ``session:`` row per indexed session, its text when the session is gone."""
    yield from each_database_row(ctx, lambda connection: _index_rows(ctx, connection))


def _documents(connection: sqlite3.Connection) -> tuple[Iterator[dict] | None, str, str]:
    """(rows as dicts with the declared names, table read, why nothing can be read)."""
    if sqlite_safe.is_real_table(connection, FTS_TABLE):  # a plain table of that name: read it as it is
        return sqlite_safe.table_rows(connection, FTS_TABLE, "session_docs rows"), FTS_TABLE, ""
    found = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (FTS_TABLE,)).fetchone()
    if found is None:
        return None, "", "no session_docs table"
    if not sqlite_safe.is_real_table(connection, SHADOW):
        return None, "", ("session_docs keeps no content table (a contentless or external-content FTS5 "
                          "index); its titles and text cannot be read")
    names = declared_columns(str(found[0] or "")) or list(OBSERVED_COLUMNS)
    rows = sqlite_safe.table_rows(connection, SHADOW, "session_docs_content rows")
    return (_named(row, names) for row in rows), SHADOW, ""


def _named(row: dict, names: list[str]) -> dict:
    """A shadow-table row (id, c0, c1, ...) with the declared column names."""
    named = {"_rowid": row.get("_rowid")}
    for position, name in enumerate(names):
        named[name] = row.get(f"c{position}")
    return named


def _index_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    documents, table, problem = _documents(connection)
    if documents is None:
        yield bad_file(f"{ctx.source.name}: {problem}")
    else:
        present = chat_sessions(ctx)
        for document in documents:
            yield from _document_rows(document, f"sqlite:{table}:{as_text(document.get('_rowid'))}", present)
    if sqlite_safe.is_real_table(connection, "meta"):
        for row in sqlite_safe.table_rows(connection, "meta", "meta rows", ("key", "value")):
            yield Draft("system", f"session index meta: {as_text(row.get('key'))}={as_text(row.get('value'))}",
                        f"sqlite:meta:{as_text(row.get('_rowid'))}", timestamp_source="none")


def _document_rows(document: dict, locator: str, present: frozenset[str]) -> Iterator[Draft]:
    for column, value in list(document.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
            document[column] = None
    session, cwd = as_text(document.get("session_id")), as_text(document.get("cwd"))
    columns = {"timestamp_ns": ns_from_seconds(document.get("updated_at")), "timestamp_source": "index",
               "session_id": session, "project_path": cwd}
    yield Draft("system", session_row_text(as_text(document.get("title")), cwd), f"{locator}/title", **columns)
    content = as_text(document.get("content"))
    if content and session not in present:
        yield Draft("system", "session content (from session_search.sqlite; the session's chat_history.jsonl is "
                              f"not in the bundle): {content}", f"{locator}/content", **columns)
