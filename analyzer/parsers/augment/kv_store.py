"""One file of Augment's ``augment-kv-store/`` LevelDB: every version of every key it holds, as rows.

Each ``.log`` or ``.ldb`` file is read on its own (its rows cite it), and
the directory's book (versions.py) says whether a version is its key's
newest. The catalog reads every file twice: ``kv_store`` (primary,
``parse_kv_store``) gives the newest version of each key; ``kv_store_history``
(secondary, ``parse_kv_history``) gives the older versions still on disk (not
yet compacted away, in an older table or a log) and the versions of keys
deleted since, with the same row rules: the run drops those equal to a
primary row, so what remains is what the store no longer shows, counted once.
A version also held by another file gives its rows there only. A deletion
marker is a ``key deleted:`` row (primary when it is the key's newest version).

Keys: ``exchange:<conversation>:<exchange>`` values are read as exchanges
(exchange.py); every other key (``metadata:``, ``tooluse:``, ``history:``
and whatever else a version writes) is one ``kv entry <key>:`` row with a
bounded excerpt of its value, untimed: their shapes are not established.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats import leveldb
from aitrail.analyzer.formats.text import bad_record, excerpt
from aitrail.analyzer.formats.workspace_storage import folder_project
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, over_limit

from .exchange import PREFIX, Exchange, conversation_of
from .versions import HELD_BUDGET, KEY_COST, Directory, directory_of

KEY_CHARS = 300


def _key_text(key: bytes) -> str:
    return key.decode("utf-8", "backslashreplace")


def version_rows(entry: leveldb.Entry, book: Directory, project: str,
                 answered: frozenset[tuple[str, str]] | None) -> Iterator[Draft]:
    """The rows of one version: a deletion marker, an exchange, or another key's excerpt.

    ``answered`` is the directory's answered calls (None when the book is not whole).
    """
    key = _key_text(entry.key)
    shown = excerpt(key, KEY_CHARS)
    if entry.deleted:
        yield Draft("system", f"key deleted: {shown} (sequence {entry.sequence})", entry.locator,
                    timestamp_source="none", session_id=conversation_of(key), project_path=project)
        return
    if not key.startswith(PREFIX):
        yield Draft("system", f"kv entry {shown}: {excerpt(entry.value)}", entry.locator, timestamp_source="none",
                    project_path=project)
        return
    try:
        value = decode_json(entry.value.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        yield bad_record(entry.locator, f"exchange value is not JSON: {exc}", entry.value)
        return
    if not isinstance(value, dict):
        yield bad_record(entry.locator, f"exchange value is a JSON {type(value).__name__}, not an object", entry.value)
        return
    yield from Exchange(value, entry.locator, conversation_of(key), project, book.tool_names, answered).rows()


def _file_rows(ctx: ParseContext, current: bool) -> Iterator[Draft]:
    """The rows of the file's current versions (``current``), or of its earlier ones."""
    book = directory_of(ctx)
    project = folder_project(ctx)
    if current and not book.whole:
        yield over_limit("keys and tool call ids of the kv-store directory", f"{HELD_BUDGET} bytes, each "
                         f"{KEY_COST} more", "a key not held is read as current, and no call is said to have no "
                         "result", "file", project_path=project)
    answered = frozenset(book.answered) if book.whole else None
    for item in leveldb.file_entries(ctx.source.name, ctx.data):
        if isinstance(item, leveldb.Problem):
            # both stores say it; the secondary store's row, equal to the primary's, is dropped by the run
            yield bad_record(item.where, item.reason)
            continue
        origin = book.origin_of(item, ctx.source.path)
        if origin is not None and (origin == "primary") == current:
            yield from version_rows(item, book, project, answered)


def parse_kv_store(ctx: ParseContext) -> Iterator[Draft]:
    """The versions of one kv-store file that are their key's newest (and every fault met reading the file)."""
    yield from _file_rows(ctx, current=True)


def parse_kv_history(ctx: ParseContext) -> Iterator[Draft]:
    """The versions of one kv-store file that a newer version or a deletion superseded (a secondary store)."""
    yield from _file_rows(ctx, current=False)
