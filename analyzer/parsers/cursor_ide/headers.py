"""The composerHeaders table of newer builds: one row per composer, with its name and workspace.

``composerHeaders(composerId, workspaceId, createdAt, lastUpdatedAt, isArchived,
isSubagent, recency, checkpointAt, value, subagentTypeName)``; ``value`` is JSON
with ``name`` and ``workspaceIdentifier.uri{scheme, authority, path}`` (third-party:
tony/agentgrep@0ec73f2 src/agentgrep/store_catalog/cursor_ide.py, cursor-ide.composer_headers).
It lists composers that have no composerData row, and gives a composer's folder
where no workspace database lists it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Container, Generator, Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

HEADERS_TABLE = "composerHeaders"
# Headers held while the composers are read (each costs its name, folder and locator plus HEADER_COST
# for its objects): 64 MiB holds 100,000 real ones, where a heavy user has a few thousand composers.
# Past it the later rows are counted, not read, and one parser: row says so.
HEADERS_BUDGET = 64 * 1024 * 1024
HEADER_COST = 512


@dataclass(frozen=True)
class Header:
    """What a composerHeaders row says of one composer."""

    name: str
    created_ms: object
    project: str
    locator: str


def _lossless(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _text(value) -> str:
    """Text of a column read with ``_lossless``: bytes that are not UTF-8 replaced, integers as digits."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else ""


def _project(value: object) -> str:
    identifier = value.get("workspaceIdentifier") if isinstance(value, dict) else None
    uri = identifier.get("uri") if isinstance(identifier, dict) else None
    path = uri.get("path") if isinstance(uri, dict) else None
    if not isinstance(path, str):
        return ""
    if len(path) > 2 and path[0] == "/" and path[2] == ":":  # /c:/Users/...: a Windows drive
        return path[1:]
    return path


def read_headers(connection: sqlite3.Connection) -> Generator[Draft, None, dict[str, Header]]:
    """Map composerId to its Header for every row of the table (none when absent); yields rows for bad entries.

    Use as ``headers = yield from read_headers(connection)``. Headers are held within
    HEADERS_BUDGET; the rows after it are counted, and one ``parser:`` row names the first.

    Raises:
        sqlite3.Error: the table cannot be read.
    """
    if not sqlite_safe.is_real_table(connection, HEADERS_TABLE):
        return {}
    if "composerId" not in sqlite_safe.stored_columns(connection, HEADERS_TABLE):
        return {}
    headers: dict[str, Header] = {}
    held, over, over_at = 0, 0, ""
    previous = connection.text_factory
    connection.text_factory = _lossless  # a value that is not UTF-8 must not stop the query
    try:
        for row in sqlite_safe.table_rows(connection, HEADERS_TABLE, "composerHeaders rows",
                                          ("composerId", "createdAt", "value")):
            locator = f"sqlite:{HEADERS_TABLE}:{row['_rowid']}"
            if over:
                over += 1
                continue
            composer = _text(row.get("composerId"))
            if not composer:
                yield bad_record(locator, "composerHeaders row without a composerId")
                continue
            header, problem = _header(row, locator)
            if problem is not None:
                yield problem
            created = header.created_ms if isinstance(header.created_ms, (str, bytes)) else ""
            cost = len(composer) + len(header.name) + len(header.project) + len(created) + len(locator) + HEADER_COST
            if held + cost > HEADERS_BUDGET:
                over, over_at = 1, locator
                continue
            held += cost
            headers[composer] = header
    finally:
        connection.text_factory = previous
    if over:
        yield over_limit("composerHeaders", f"{HEADERS_BUDGET} bytes of headers held, each costing {HEADER_COST} more "
                         "than its text", f"{over} rows from this one on were counted, not read: their names and "
                         "folders are not shown", over_at)
    return headers


def _header(row: dict, locator: str) -> tuple[Header, Draft | None]:
    """One row's Header, and the row for a value that is not JSON (the header then has no name or folder)."""
    problem = None
    try:
        value = decode_json(_text(row.get("value"))) if row.get("value") is not None else {}
    except ValueError as exc:
        problem = bad_record(f"{locator}/value", f"composerHeaders value is not JSON: {exc}")
        value = {}
    name = value.get("name") if isinstance(value, dict) and isinstance(value.get("name"), str) else ""
    return Header(name, row.get("createdAt"), _project(value), locator), problem


def unlisted_rows(headers: dict[str, Header], seen: Container[str]) -> Iterator[Draft]:
    """A ``session:`` row for each header whose composer has no composerData row."""
    for composer, header in headers.items():
        if composer not in seen:
            yield Draft("system", f"session: {header.name or '(untitled)'} (listed in composerHeaders; its "
                                  "composerData is not in the bundle)", header.locator,
                        timestamp_ns=ns_from_ms(header.created_ms), session_id=composer,
                        project_path=header.project)
