"""Cursor CLI chat stores: chats/<md5(cwd)>/<session>/store.db, read best-effort (WAL applied).

``meta`` holds one row, key ``'0'``, whose value is hex-encoded UTF-8 JSON
``{agentId, latestRootBlobId, name, mode, createdAt (ms), lastUsedModel}``.
``blobs(id, data)`` is content-addressed (``id`` = SHA-256 hex of ``data``): a blob is
a JSON message (``{role, content}``) or a protobuf tree node whose field 1 holds the
32-byte ids of its children. The conversation is the walk from ``latestRootBlobId``,
children in order. Nothing is dropped unsaid: a referenced blob that is missing, a
blob that is neither JSON nor a tree node, and a blob no walk reached are rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import setting_value
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, format_timestamp, ns_from_ms, over_limit

from .content import Conversation
from .places import chat_place, project_for

MAX_NODES = 200_000  # blobs walked per store: a bound on hostile trees (every blob is visited once anyway)
# Blob ids held per store (id -> rowid, for the walk's random access): each costs its characters
# plus ID_COST (its string, its int and its dict slot: 180 bytes in all for a 64-digit id). 96 MiB
# holds 500,000 real ids, two and a half times the blobs a walk may visit, where a real session has
# thousands; a table of tens of millions of tiny blobs (or of ids megabytes long) held them all.
# Past it the rest of the table is counted, not read, and one parser: row says from which blob on.
BLOB_ID_BUDGET = 96 * 1024 * 1024
ID_COST = 120
# Children waiting on the walk's stack: a walk visits at most MAX_NODES blobs, so more waiting than
# that can never all be visited (nodes listing one child a million times filled it without bound).
MAX_WAITING = MAX_NODES
META_KEYS = ("mode", "createdAt", "lastUsedModel")
MODEL_PLACEHOLDER = "default"  # written before a model is chosen ([obs]): it names no model
# message blobs hold tool-result blocks beside the calls: a call with none there was never answered
STORE_RECORDS_RESULTS = True


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position += 1
        shift += 7
        if not byte & 0x80:
            return value, position


def tree_children(data: bytes) -> list[str] | None:
    """The child ids (hex) of a protobuf tree node: every 32-byte field 1; None when ``data`` is no protobuf.

    Only the wire types of proto3 are accepted (varint, 64-bit, length-delimited, 32-bit),
    and every field must end inside the data.
    """
    children: list[str] = []
    position = 0
    try:
        while position < len(data):
            key, position = _varint(data, position)
            number, wire = key >> 3, key & 7
            if number == 0:
                return None
            if wire == 0:
                _, position = _varint(data, position)
            elif wire in (1, 5):
                position += 8 if wire == 1 else 4
            elif wire == 2:
                length, position = _varint(data, position)
                if number == 1 and length == 32:
                    children.append(data[position:position + 32].hex())
                position += length
            else:
                return None
            if position > len(data):
                return None
    except ValueError:
        return None
    return children


def _meta(connection: sqlite3.Connection) -> tuple[dict, Draft | None]:
    """The decoded meta row, or a row saying why it could not be read."""
    if not sqlite_safe.is_real_table(connection, "meta"):
        return {}, bad_file("store.db has no meta table: the session's name, time and model are unknown")
    for row in sqlite_safe.table_rows(connection, "meta", "meta rows", ("key", "value")):
        if str(row.get("key")) != "0":
            continue
        locator = f"sqlite:meta:{row.get('_rowid')}/value"
        value = row.get("value")
        if isinstance(value, bytes):
            value = value.decode("ascii", "replace")
        try:
            document = decode_json(bytes.fromhex(str(value)).decode("utf-8"))
        except (ValueError, TypeError) as exc:
            return {}, bad_record(locator, f"meta value is not hex-encoded JSON: {exc}", str(value))
        if not isinstance(document, dict):
            return {}, bad_record(locator, f"meta value is a JSON {type(document).__name__}, not an object")
        return {**document, "_locator": locator}, None
    return {}, bad_file("store.db meta has no row '0': the session's name, time and model are unknown")


class _Blobs:
    """The blobs table: id to rowid held (the walk needs random access), data fetched one blob at a time.

    Ids are held in table order (the dict keeps it) within BLOB_ID_BUDGET; the
    ids after them are counted (``over``), from the row ``over_at`` on.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.by_id: dict[str, int] = {}
        self.held = 0  # BLOB_ID_BUDGET spent
        self.over = 0  # ids past the budget, counted, not held
        self.over_at: object = None  # the rowid of the first of them
        for row in sqlite_safe.table_rows(connection, "blobs", "blob ids", ("id",)):
            blob_id = _blob_id(row.get("id"))
            if blob_id in self.by_id:
                continue
            cost = len(blob_id) + ID_COST
            if self.over or self.held + cost > BLOB_ID_BUDGET:
                self.over_at = self.over_at if self.over else row.get("_rowid")
                self.over += 1
                continue
            self.held += cost
            self.by_id[blob_id] = row.get("_rowid")

    def over_limit_row(self) -> Draft | None:
        """The ``parser:`` row of a table over BLOB_ID_BUDGET (None within it)."""
        if not self.over:
            return None
        return over_limit("blob ids", f"{BLOB_ID_BUDGET} bytes held, each id costing {ID_COST} more than its length",
                          f"{self.over} blobs from this row on were counted, not read: a blob among them that the "
                          "tree names is reported missing", f"sqlite:blobs:{self.over_at}")

    def data(self, blob_id: str) -> object:
        """The blob's data (an Oversize when it is too long to read)."""
        for row in sqlite_safe.table_rows(self.connection, "blobs", "blob data", ("data",), "rowid = ?",
                                          (self.by_id[blob_id],)):
            return row.get("data")
        return None


def _blob_id(value) -> str:
    """A blob id as lower-case hex text (a BLOB id as its hex)."""
    return value.hex() if isinstance(value, bytes) else str(value or "").lower()


class _Walk:
    """One store's walk: the rows of each blob reached, then of each blob never reached."""

    def __init__(self, blobs: _Blobs, conversation: Conversation) -> None:
        self.blobs = blobs
        self.conversation = conversation
        # blobs outside the latest tree are read apart: their calls and results must not
        # answer, or be left open against, the calls of the conversation itself
        self.earlier = Conversation(conversation.base, untagged_is_prompt=True, fragment=True)
        self.seen: set[str] = set()

    def from_root(self, root: str, where: str) -> Iterator[Draft]:
        """The rows of the tree under ``root``, depth first, each blob once (``seen`` stays within MAX_NODES)."""
        stack = [(root, where)]
        while stack and len(self.seen) < MAX_NODES:
            blob_id, parent = stack.pop()
            if blob_id in self.seen:
                continue
            self.seen.add(blob_id)
            if blob_id not in self.blobs.by_id:
                where_read = "among the blobs read" if self.blobs.over else "in the blobs table"
                missing = bad_record(parent, f"blob {blob_id} referenced here is not {where_read}")
                missing.session_id = self.conversation.base["session_id"]
                yield missing
                continue
            children, rows = self.blob(blob_id, reached=True)
            yield from rows
            if len(stack) + len(children) > MAX_WAITING:
                yield bad_record(self.locator(blob_id), f"tree walk stopped: more than {MAX_WAITING} blobs waiting "
                                                        "to be walked; the blobs not reached follow")
                return
            locator = self.locator(blob_id)
            stack.extend((child, locator) for child in reversed(children))
        if stack:
            yield bad_record(where, f"tree walk stopped after {MAX_NODES} blobs")

    def locator(self, blob_id: str) -> str:
        return f"sqlite:blobs:{self.blobs.by_id[blob_id]}"

    def blob(self, blob_id: str, reached: bool) -> tuple[list[str], list[Draft]]:
        """(children, rows) of one blob: a message's rows, a node's children, or the row saying what it is."""
        children, rows = self._read(blob_id, reached)
        for row in rows:  # parser rows too belong to the session
            row.session_id = self.conversation.base["session_id"]
        return children, rows

    def _read(self, blob_id: str, reached: bool) -> tuple[list[str], list[Draft]]:
        rowid, data = self.blobs.by_id[blob_id], self.blobs.data(blob_id)
        where = f"sqlite:blobs:{rowid}/data"
        if isinstance(data, sqlite_safe.Oversize):
            return [], [bad_record(where, f"value too long to read ({data.describe()})")]
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        if not isinstance(raw, bytes):
            return [], [bad_record(where, f"blob {blob_id} holds a {type(data).__name__}, not bytes")]
        if raw.lstrip()[:1] == b"{":
            return [], self.message(raw, where, f"blob{rowid}", reached)
        children = tree_children(raw)
        if children is not None and (children or not raw):
            return children, []
        return [], [bad_record(where, f"blob {blob_id} is neither a JSON message nor a tree node "
                                      f"({len(raw)} bytes, not decoded)", raw.hex()[:64])]

    def message(self, raw: bytes, where: str, position: str, reached: bool) -> list[Draft]:
        """The rows of a JSON message blob; ``position`` names it in positional call ids."""
        try:
            value = decode_json(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return [bad_record(where, f"blob is not valid JSON: {exc}", raw)]
        if not isinstance(value, dict) or not isinstance(value.get("role"), str):
            return [bad_record(where, "blob is JSON without a role", raw)]
        conversation = self.conversation if reached else self.earlier
        rows = list(conversation.message(value["role"], value.get("content"), where, position))
        if not reached:  # an earlier version of the conversation (rewound, edited), kept in the store
            rows = [Draft("system", f"not in the latest tree ({row.turn_type}): {row.text}", row.locator,
                          **self.conversation.base) if not row.text.startswith("parser:") else row for row in rows]
        return rows or [Draft("system", f"empty {value['role']} message", where, **self.conversation.base)]

    def unreached(self, as_latest: bool) -> Iterator[Draft]:
        """The blobs no walk reached, in table order; ``as_latest`` when there was no root to walk from.

        Each held id comes once from the dict, so ``seen`` need not grow past the walk's MAX_NODES.
        """
        for blob_id in self.blobs.by_id:
            if blob_id not in self.seen:
                yield from self.blob(blob_id, reached=as_latest)[1]


def _session_rows(meta: dict, base: dict) -> Iterator[Draft]:
    facts = []
    for key in META_KEYS:
        if key in meta:
            value = meta[key]
            if key == "createdAt" and ns_from_ms(value) is not None:
                value = format_timestamp(ns_from_ms(value))
            facts.append(f"{key}={value if isinstance(value, str) else setting_value(value)}")
    locator = meta.get("_locator", "file")
    yield Draft("system", f"session: {meta.get('name', '')} (from store.db meta; {', '.join(facts)})", locator, **base)
    if base.get("model"):
        yield Draft("system", f"model: {base['model']} (the session's last model, from store.db meta)", locator,
                    **base)


def parse_chat_store(ctx: ParseContext) -> Iterator[Draft]:
    """A session's store.db: its ``session:`` and ``model:`` rows, then the messages of the latest tree.

    Every row takes ``createdAt`` (``index`` time: the store records no per-message time);
    messages as in the transcripts, but a user text without ``<user_query>`` is the prompt.
    Blobs not reached from the latest root give ``not in the latest tree (<type>):`` rows;
    with no root to walk from (meta unreadable), every blob is read in table order.
    """
    yield from each_database_row(ctx, lambda connection: _store_rows(ctx, connection))


def _store_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    meta, problem = _meta(connection)
    if problem is not None:
        yield problem
    session, bucket = chat_place(ctx.source.path)
    session = str(meta.get("agentId") or session)
    model = meta.get("lastUsedModel")
    created = ns_from_ms(meta.get("createdAt"))
    base = {"timestamp_ns": created, "timestamp_source": "index" if created is not None else "none",
            "session_id": session, "project_path": project_for(ctx, session, bucket=bucket),
            "model": model if isinstance(model, str) and model != MODEL_PLACEHOLDER else ""}
    if meta:
        yield from _session_rows(meta, base)
    if not sqlite_safe.is_real_table(connection, "blobs"):
        yield bad_file("store.db has no blobs table: no message can be read")
        return
    conversation = Conversation(base, untagged_is_prompt=True, results_recorded=STORE_RECORDS_RESULTS)
    blobs = _Blobs(connection)
    over = blobs.over_limit_row()
    if over is not None:
        over.session_id = session
        yield over
    walk = _Walk(blobs, conversation)
    root = meta.get("latestRootBlobId")
    has_root = isinstance(root, str) and bool(root)
    if has_root:
        yield from walk.from_root(root.lower(), meta.get("_locator", "file"))
    elif meta:
        yield bad_record(meta.get("_locator", "file"), "meta names no latestRootBlobId: blobs read in table order",
                         json.dumps(sorted(key for key in meta if key != "_locator")))
    yield from walk.unreached(as_latest=not has_root)
    yield from conversation.finish()
    yield from walk.earlier.ledger.over_limit_rows()  # its open calls are fragments: no orphan rows
