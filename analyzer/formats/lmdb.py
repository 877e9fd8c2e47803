"""A bounded, read-only reader of an LMDB ``data.mdb`` file held in memory (no C library, nothing mapped).

Zed's first agent-thread store was an LMDB environment (``threads-db.1.mdb/``,
written through the heed crate); a forensic reader must not open a subject's
file with liblmdb, which trusts every page number it reads. This module reads
the on-disk layout of LMDB 0.9 (``libraries/liblmdb/mdb.c`` in the OpenLDAP
LMDB sources: ``MDB_page``, ``MDB_meta``, ``MDB_db``, ``MDB_node``), 64-bit
little-endian builds only (what x86-64 and arm64 write):

* every page starts with a 16-byte header: page number (8), pad (2), flags
  (2: 0x01 branch, 0x02 leaf, 0x04 overflow, 0x08 meta, 0x20 leaf2), then
  ``lower``/``upper`` (2+2; an overflow page has its page count, 4, there);
* pages 0 and 1 are meta pages: after the header ``magic`` 0xBEEFC0DE,
  ``version`` 1, the map address (8), the map size (8), two ``MDB_db``
  records (the free list's, whose ``pad`` is the page size, and the main
  database's), the last page (8) and the transaction id (8); the valid meta
  with the higher transaction id is the current one;
* ``MDB_db`` is 48 bytes: pad (4), flags (2), depth (2), branch, leaf and
  overflow page counts, entries, root page (8 each; all ones when empty);
* a branch or leaf page holds ``(lower - 16) / 2`` node offsets after its
  header; a node is ``lo`` (2), ``hi`` (2), ``flags`` (2), ``ksize`` (2),
  then its key and its data. On a leaf ``lo | hi << 16`` is the data size; on
  a branch ``lo | hi << 16 | flags << 32`` is the child page. Node flag 0x01
  (``F_BIGDATA``) puts the data on overflow pages (the data is their first
  page number), 0x02 (``F_SUBDATA``) makes it a named database's ``MDB_db``
  and 0x04 (``F_DUPDATA``) a sorted-duplicates sub-page (not read here).

Nothing is trusted: page numbers are checked against the file, every page is
visited at most once (a cycle cannot loop), the tree depth is bounded, and a
value is given only when it lies inside the file. A problem is a ``Problem``
naming where it was met; the walk goes on with the next node or page.
Freed pages (older copies of rewritten values) are not carved.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

PAGE_HEADER = 16
META_MAGIC = 0xBEEFC0DE
META_VERSION = 1
DB_RECORD = 48  # sizeof(MDB_db) on a 64-bit build
NODE_HEADER = 8
INVALID_PAGE = 0xFFFFFFFFFFFFFFFF
P_BRANCH, P_LEAF, P_OVERFLOW, P_META, P_LEAF2 = 0x01, 0x02, 0x04, 0x08, 0x20
F_BIGDATA, F_SUBDATA, F_DUPDATA = 0x01, 0x02, 0x04
MAX_DEPTH = 64  # LMDB's own cursor stack holds 32 levels (CURSOR_STACK)
MIN_PAGE, MAX_PAGE = 512, 65536


@dataclass(frozen=True)
class Problem:
    """Something the reader could not read, and where (``page N`` or ``page N/node I``)."""

    where: str
    reason: str


@dataclass(frozen=True)
class Entry:
    """One key and value of a database, with where it sits (``page N/node I``)."""

    key: bytes
    value: bytes
    where: str


class NotLmdb(ValueError):
    """The bytes hold no valid LMDB meta page (the message says why)."""


class LmdbFile:
    """An LMDB data file held in memory: its page size, current meta and trees.

    ``LmdbFile(data)`` raises NotLmdb when neither meta page is valid.
    """

    def __init__(self, data: bytes):
        self.data = data
        self.page_size = self._page_size()
        self.pages = len(data) // self.page_size
        self.main_root, self.txnid = self._current_meta()

    def _page_size(self) -> int:
        if len(self.data) < PAGE_HEADER + 48:
            raise NotLmdb(f"{len(self.data)} bytes: too short for a meta page")
        magic, version = struct.unpack_from("<II", self.data, PAGE_HEADER)
        if magic != META_MAGIC:
            raise NotLmdb(f"no LMDB magic at byte {PAGE_HEADER} (found {magic:#010x})")
        if version != META_VERSION:
            raise NotLmdb(f"LMDB data version {version}, not {META_VERSION}")
        size = struct.unpack_from("<I", self.data, PAGE_HEADER + 24)[0]  # mm_dbs[FREE_DBI].md_pad
        if size < MIN_PAGE or size > MAX_PAGE or size & (size - 1):
            raise NotLmdb(f"page size {size} is not a power of two from {MIN_PAGE} to {MAX_PAGE}")
        return size

    def _meta(self, page: int) -> tuple[int, int] | None:
        """(main root page, transaction id) of meta page ``page`` when it is valid."""
        start = page * self.page_size + PAGE_HEADER
        if start + 24 + 2 * DB_RECORD + 16 > len(self.data):
            return None
        magic, version = struct.unpack_from("<II", self.data, start)
        if magic != META_MAGIC or version != META_VERSION:
            return None
        main = start + 24 + DB_RECORD
        root = struct.unpack_from("<Q", self.data, main + 40)[0]
        txnid = struct.unpack_from("<Q", self.data, start + 24 + 2 * DB_RECORD + 8)[0]
        return root, txnid

    def _current_meta(self) -> tuple[int, int]:
        metas = [meta for meta in (self._meta(0), self._meta(1)) if meta is not None]
        if not metas:
            raise NotLmdb("neither meta page is valid")
        return max(metas, key=lambda meta: meta[1])

    def named_root(self, name: bytes) -> int | None:
        """The root page of the named database ``name`` (None when the main database names none)."""
        for item in self.walk(self.main_root, with_subdata=True):
            if isinstance(item, Entry) and item.key == name:
                if len(item.value) != DB_RECORD:
                    return None
                return struct.unpack_from("<Q", item.value, 40)[0]
        return None

    def walk(self, root: int, with_subdata: bool = False) -> Iterator[Entry | Problem]:
        """Every key and value of the tree at ``root`` in key order, and a Problem for each part not readable.

        ``with_subdata`` also gives named databases' records (the main database's entries).
        """
        if root == INVALID_PAGE:
            return
        seen: set[int] = set()
        stack: list[tuple[int, int]] = [(root, 0)]  # (page, depth)
        while stack:
            page, depth = stack.pop()
            problem = self._refuse(page, depth, seen)
            if problem is not None:
                yield problem
                continue
            seen.add(page)
            flags = struct.unpack_from("<H", self.data, page * self.page_size + 10)[0]
            if flags & P_BRANCH:
                children = list(self._children(page))
                for child in reversed(children):  # popped in key order
                    if isinstance(child, Problem):
                        yield child
                    else:
                        stack.append((child, depth + 1))
            elif flags & P_LEAF and not flags & P_LEAF2:
                yield from self._leaf(page, with_subdata)
            else:
                yield Problem(f"page {page}", f"flags {flags:#06x}: not a branch or leaf page")

    def _refuse(self, page: int, depth: int, seen: set[int]) -> Problem | None:
        if page in seen:
            return Problem(f"page {page}", "page reached twice (a cycle); not read again")
        if depth > MAX_DEPTH:
            return Problem(f"page {page}", f"tree deeper than {MAX_DEPTH} levels")
        if page < 2 or page >= self.pages:
            return Problem(f"page {page}", f"page number outside the file's {self.pages} pages")
        return None

    def _node_offsets(self, page: int) -> Iterator[tuple[int, int] | Problem]:
        """(index, absolute offset) of each node of ``page``, or a Problem."""
        base = page * self.page_size
        lower = struct.unpack_from("<H", self.data, base + 12)[0]
        if lower < PAGE_HEADER or lower > self.page_size:
            yield Problem(f"page {page}", f"lower bound {lower} outside the page")
            return
        for index in range((lower - PAGE_HEADER) // 2):
            offset = struct.unpack_from("<H", self.data, base + PAGE_HEADER + 2 * index)[0]
            if offset < PAGE_HEADER or offset + NODE_HEADER > self.page_size:
                yield Problem(f"page {page}/node {index}", f"node offset {offset} outside the page")
                continue
            yield index, base + offset

    def _children(self, page: int) -> Iterator[int | Problem]:
        for item in self._node_offsets(page):
            if isinstance(item, Problem):
                yield item
                continue
            _, offset = item
            low, high, flags = struct.unpack_from("<HHH", self.data, offset)
            yield low | high << 16 | flags << 32

    def _leaf(self, page: int, with_subdata: bool) -> Iterator[Entry | Problem]:
        end = (page + 1) * self.page_size
        for item in self._node_offsets(page):
            if isinstance(item, Problem):
                yield item
                continue
            index, offset = item
            where = f"page {page}/node {index}"
            low, high, flags, key_size = struct.unpack_from("<HHHH", self.data, offset)
            size = low | high << 16
            key_start = offset + NODE_HEADER
            if key_start + key_size > end:
                yield Problem(where, f"key of {key_size} bytes runs past the page")
                continue
            key = self.data[key_start:key_start + key_size]
            if flags & F_DUPDATA:
                yield Problem(where, "sorted duplicate values (F_DUPDATA) are not read")
                continue
            if flags & F_SUBDATA and not with_subdata:
                continue  # a named database's record in the main tree
            value = self._value(page, key_start + key_size, size, flags, end)
            yield value if isinstance(value, Problem) else Entry(key, value, where)

    def _value(self, page: int, start: int, size: int, flags: int, end: int) -> bytes | Problem:
        where = f"page {page}"
        if not flags & F_BIGDATA:
            if start + size > end:
                return Problem(where, f"value of {size} bytes runs past the page")
            return self.data[start:start + size]
        if start + 8 > end:
            return Problem(where, "overflow page number runs past the page")
        first = struct.unpack_from("<Q", self.data, start)[0]
        if first < 2 or first >= self.pages:
            return Problem(where, f"overflow page {first} outside the file's {self.pages} pages")
        base = first * self.page_size
        page_flags = struct.unpack_from("<H", self.data, base + 10)[0]
        if not page_flags & P_OVERFLOW:
            return Problem(where, f"page {first} named as overflow has flags {page_flags:#06x}")
        if base + PAGE_HEADER + size > len(self.data):
            return Problem(where, f"overflow value of {size} bytes runs past the end of the file")
        return self.data[base + PAGE_HEADER:base + PAGE_HEADER + size]
