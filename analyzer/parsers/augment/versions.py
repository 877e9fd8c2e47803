"""What the whole ``augment-kv-store/`` directory says of each key: its newest version, and the tool calls answered.

LevelDB writes a new version of a key (or a deletion marker) with a higher
sequence number and leaves older ones in place until a compaction merges
them away; a file that a compaction made obsolete can linger too. So the
question "which version is current" has one answer per directory, not per
file: every ``.log`` and table file of the directory is read once per worker
(leveldb.file_entries) and, per key, the version with the highest sequence
number wins. The same version in two files (a table a compaction made
obsolete, a log already flushed to a table) gives its rows once, from the
file with the greatest name (LevelDB numbers its files in creation order).
The same pass collects, from every exchange version, which tool calls were
made and which were answered, so a call in one file is joined to its result
in another.

Bounded: the keys and call ids held cost their length plus KEY_COST bytes
each, within HELD_BUDGET; past it, a key not held is read as current and the
call book is no longer whole (no ``no result recorded`` row is claimed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aitrail.analyzer.formats import leveldb
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json

from .exchange import PREFIX, calls_of, conversation_of, results_of

HELD_BUDGET = 64 * 1024 * 1024
KEY_COST = 120


@dataclass
class Directory:
    """The newest version of every key of one kv-store directory, where each version is held, and the call book."""

    newest: dict[bytes, int] = field(default_factory=dict)  # key -> highest sequence number
    holders: dict[tuple[bytes, int], str] = field(default_factory=dict)  # (key, sequence) -> file giving its rows
    tool_names: dict[tuple[str, str], str] = field(default_factory=dict)  # (conversation, call id) -> tool
    answered: set[tuple[str, str]] = field(default_factory=set)
    held: int = 0
    whole: bool = True

    def hold(self, cost: int) -> bool:
        """Spend ``cost`` bytes of the budget; False (and the book no longer whole) past it."""
        if self.held + cost > HELD_BUDGET:
            self.whole = False
            return False
        self.held += cost
        return True

    def origin_of(self, entry: leveldb.Entry, path: str) -> str | None:
        """``primary`` for a key's newest version, ``secondary`` for an older one, None for a copy held elsewhere.

        The same version (key and sequence) in two files (a table a compaction
        made obsolete, a log already flushed) gives its rows once, from the file
        the book chose; a key or version not held reads as primary.
        """
        holder = self.holders.get((entry.key, entry.sequence))
        if holder is not None and holder != path:
            return None
        newest = self.newest.get(entry.key)
        return "primary" if newest is None or newest == entry.sequence else "secondary"

    def see(self, entry: leveldb.Entry, path: str) -> None:
        """Count one version: the newest per key, its holder, and an exchange's calls and results."""
        version = (entry.key, entry.sequence)
        if version in self.holders:
            return  # the same version again, in a file read later: the first holder keeps it
        if self.hold(len(entry.key) + KEY_COST):
            self.holders[version] = path
        known = self.newest.get(entry.key)
        if known is None:
            if self.hold(len(entry.key) + KEY_COST):
                self.newest[entry.key] = entry.sequence
        elif entry.sequence > known:
            self.newest[entry.key] = entry.sequence
        if not entry.deleted and entry.key.startswith(PREFIX.encode()):
            self._book(entry)

    def _book(self, entry: leveldb.Entry) -> None:
        conversation = conversation_of(entry.key.decode("utf-8", "replace"))
        try:
            value = decode_json(entry.value.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return  # the file's own parse says so
        if not isinstance(value, dict):
            return
        for call_id, name in calls_of(value):
            if (conversation, call_id) not in self.tool_names and self.hold(len(call_id) + len(name) + KEY_COST):
                self.tool_names[(conversation, call_id)] = name
        for call_id in results_of(value):
            if (conversation, call_id) not in self.answered and self.hold(len(call_id) + KEY_COST):
                self.answered.add((conversation, call_id))


def directory_of(ctx: ParseContext) -> Directory:
    """The book of the context's kv-store directory, read once per worker.

    The files are those of the context's own store (``kv_store`` and
    ``kv_store_history`` collect the same files, so either gives the same book).
    """
    folder = ctx.source.directory

    def load() -> Directory:
        book = Directory()
        # newest file first: a version also left in an older file (compaction residue) is given by the newer one
        files = sorted((source for source in ctx.related(ctx.source.store) if source.directory == folder),
                       key=lambda source: source.path, reverse=True)
        for source in files:
            try:
                data = ctx.read(source)
            except MemberUnreadable:
                continue  # that file's own parse gives the row
            for item in leveldb.file_entries(source.name, data):
                if isinstance(item, leveldb.Entry):
                    book.see(item, source.path)
        return book

    return ctx.cached(("augment.directory", folder), load)  # type: ignore[return-value]
