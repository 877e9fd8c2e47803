"""Secondary rows on disk, and only their 8-byte dedup keys in memory.

A secondary store (a log, a backup, a side table) can hold millions of rows.
Its rows are rendered and spooled to a file in the analyzer's temporary
directory as they are parsed; what stays in memory is one 8-byte key per
distinct row (KeySet: a sorted ``array('Q')`` searched by bisection, 8 bytes
a key instead of a set entry of ~90), which the workers test their primary
rows against. Once the workers say which keys they matched, the spool is
read back once: matched rows are dropped, the others written as sorted runs
of at most RUN_BYTES, exactly as they would have been from memory.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.view.rows import COLUMNS

_HEAD = struct.Struct(">QIBII")  # dedup key, stats index, origin is secondary, sort key length, line length
RUN_BYTES = 16 * 1024 * 1024


_TEXT = COLUMNS.index("text")
_AGENT = COLUMNS.index("agent")
_TURN = COLUMNS.index("turn_type")
_CALL = COLUMNS.index("tool_use_id")


_SOURCE = COLUMNS.index("source")


def dedup_key(row: tuple) -> int:
    """Location, agent, turn type, tool_use_id and whitespace-normalized text: 'the same row' across sources.

    The tool_use_id is in it: the same words about two calls (``permission
    decision: denied``) are two rows, each joined to its own call.

    The location (the home or image, the ``<label>`` of ``data/<label>/...``)
    is part of it: a prompt one user typed is not a duplicate of the same
    words typed by another user of the bundle. 64 bits of SHA-256: 8 bytes a
    key in memory; two distinct rows among 3 million share one with
    probability about 2.4e-7.
    """
    text = " ".join(row[_TEXT].split())
    location = row[_SOURCE].split("/", 2)[1] if row[_SOURCE].count("/") >= 2 else ""
    return int.from_bytes(hashlib.sha256(
        f"{location}\0{row[_AGENT]}\0{row[_TURN]}\0{row[_CALL]}\0{text}".encode()).digest()[:8], "big")


SORT_CHUNK = 1 << 18  # keys sorted as Python ints at a time (about 10 MB of them)


class KeySet:
    """A sorted, duplicate-free set of 64-bit keys; ``key in keys`` by bisection.

    Built by sorting chunks and merging them, so that building it never holds
    more than SORT_CHUNK keys as Python objects (3M keys: 24 MB of array, not
    ~120 MB of ints in a list or ~180 MB in a set).
    """

    def __init__(self, keys: array, kinds: frozenset[tuple[str, str]] | None = None):
        # the (agent, turn type) of every keyed row, when known: a row of another kind cannot share its key
        # (both are part of what is hashed), so its key need not be computed; None: any kind may
        self.kinds = kinds
        chunks = [array("Q", sorted(keys[start:start + SORT_CHUNK])) for start in range(0, len(keys), SORT_CHUNK)]
        self._keys = array("Q")
        for key in heapq.merge(*chunks):
            if not self._keys or self._keys[-1] != key:
                self._keys.append(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int):
            return False
        position = bisect.bisect_left(self._keys, key)
        return position < len(self._keys) and self._keys[position] == key

    def __len__(self) -> int:
        return len(self._keys)


@dataclass
class Spooled:
    """One secondary row read back from the spool."""

    dedup: int
    stats: tuple[str, ...]
    secondary: bool
    key: bytes
    line: bytes


class Spool:
    """Rendered secondary rows in parse order, on disk, with their dedup keys kept in memory."""

    def __init__(self, path: str):
        self.path = path
        self._handle = open(path, "xb", buffering=1024 * 1024)
        self._keys = array("Q")
        self._stats: list[tuple[str, ...]] = []
        self._stats_index: dict[tuple[str, ...], int] = {}
        self._kinds: set[tuple[str, str]] = set()  # (agent, turn type) of the rows spooled: see KeySet

    def add(self, dedup: int, stats: tuple[str, ...], secondary: bool, key: bytes, line: bytes,
            kind: tuple[str, str]) -> None:
        """Spool one rendered row with its dedup key and what its statistics belong to (agent, store, session).

        ``kind``: the row's (agent, turn type), which KeySet hands the workers.
        """
        self._kinds.add(kind)
        index = self._stats_index.setdefault(stats, len(self._stats))
        if index == len(self._stats):
            self._stats.append(stats)
        self._handle.write(_HEAD.pack(dedup, index, secondary, len(key), len(line)))
        self._handle.write(key)
        self._handle.write(line)
        self._keys.append(dedup)

    def keys(self) -> KeySet:
        """The distinct dedup keys and the kinds of their rows, for the workers (the spool is closed for writing)."""
        self._handle.close()
        keys = KeySet(self._keys, frozenset(self._kinds))
        self._keys = array("Q")
        return keys

    def replay(self) -> Iterator[Spooled]:
        """The spooled rows, in the order they were added."""
        with open(self.path, "rb", buffering=1024 * 1024) as handle:
            while True:
                head = handle.read(_HEAD.size)
                if not head:
                    return
                dedup, index, secondary, key_length, line_length = _HEAD.unpack(head)
                key = handle.read(key_length)
                yield Spooled(dedup, self._stats[index], bool(secondary), key, handle.read(line_length))


def kept_runs(items: Iterator[tuple[bytes, bytes]], write_run, limit: int = RUN_BYTES) -> list:
    """(sort key, line) items as sorted runs of about ``limit`` bytes each (write_run(items, number))."""
    runs, pending, held = [], [], 0
    for key, line in items:
        pending.append((key, line))
        held += len(line)
        if held >= limit:
            runs.append(write_run(pending, len(runs)))
            pending, held = [], 0
    runs.append(write_run(pending, len(runs)))  # always one run, even empty, as before
    return runs


def kept_rows(spool: Spool, matched: set[int], stats: dict, tally=None) -> Iterator[tuple[bytes, bytes]]:
    """The spooled rows no primary row matched, as (sort key, line); each row counted kept or dropped.

    The spool's statistics key is (agent, store, session id). ``stats`` maps
    (agent, store) to an object with ``secondary_outcome(dropped, secondary)``;
    ``tally`` (analyzer/engine/tally.py), if given, counts the rows kept.
    """
    for item in spool.replay():
        dropped = item.dedup in matched
        agent, store, session = item.stats
        stats[(agent, store)].secondary_outcome(dropped, item.secondary)
        if not dropped:
            if tally is not None:
                tally.add(agent, session, item.key)
            yield item.key, item.line
