"""A bounded, pure-Python reader of a LevelDB directory's ``.log`` and ``.ldb``/``.sst`` files, held in memory.

Some agents keep their conversations in a LevelDB (Augment's VS Code
extension: ``augment-kv-store/``). A forensic reader must not open a subject's
directory with the C library, which writes to it (a new log, a lock, a
compaction) and trusts every length it reads. This module reads the on-disk
formats as google/leveldb documents them (``doc/log_format.md``,
``doc/table_format.md``, ``db/dbformat.h``, ``db/write_batch.cc``,
``table/format.cc``, ``table/block.cc``, ``util/coding.h``, ``util/crc32c.h``):

* **log** (write-ahead log and MANIFEST): 32 KiB blocks of records, each
  ``checksum`` (4, masked CRC32C of the type byte and the data), ``length``
  (2, little-endian), ``type`` (1: FULL=1, FIRST=2, MIDDLE=3, LAST=4), data;
  a block's last six bytes or fewer are zero padding, and a zero-type
  zero-length record is preallocated space. A logical record split over blocks
  is FIRST, MIDDLE..., LAST. A write-ahead log's logical records are
  WriteBatches: ``sequence`` (8), ``count`` (4), then per record a tag
  (1 = put: key and value, 0 = delete: key), each a varint32 length and bytes;
  the i-th record has sequence ``sequence + i``;
* **table**: a 48-byte footer at the end (the metaindex and index block
  handles, two varint64 each, padded to 40 bytes, then the magic
  0xdb4775248b80fb57); every block is followed by a 5-byte trailer, the
  compression type (0 none, 1 Snappy, 2 zstd) and the masked CRC32C of the
  block and that byte; a block is prefix-compressed entries (``shared``,
  ``non_shared``, ``value_length`` varint32s, the key's new bytes, the value),
  then the restart offsets (4 each) and their count (4); the index block maps
  each data block's last key to its handle;
* **internal keys**: a table key is the user key and 8 bytes, little-endian
  ``sequence << 8 | type`` (type 1 a value, 0 a deletion).

Every version found is given, with its sequence number: which one is the
newest for a key, and whether older ones and deleted keys are still on disk,
is the caller's question (the whole directory answers it). Nothing is
trusted: every length is checked against the bytes that hold it, a block
handle is read once per table, a block expands to at most MAX_BLOCK_BYTES, a
table to at most MAX_EXPANDED_BYTES of blocks and keys, and a key to
MAX_KEY_BYTES. A fault is a ``Problem`` naming where it was met; reading goes
on with the next record or block. Checksums are checked unless asked not to
be: a record or block that fails is a Problem and is not read (its bytes are
not the ones the writer wrote). Nothing in this module raises for any input.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import zstandard

from aitrail.analyzer.formats import snappy
from aitrail.analyzer.formats.crc32c import crc32c

LOG_BLOCK = 32768
LOG_HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
BATCH_HEADER = 12
TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_BYTES = 48
BLOCK_TRAILER = 5
NO_COMPRESSION, SNAPPY, ZSTD = 0, 1, 2
TYPE_DELETION, TYPE_VALUE = 0, 1
MAX_BLOCK_BYTES = 64 * 1024 * 1024
MAX_EXPANDED_BYTES = 512 * 1024 * 1024
MAX_KEY_BYTES = 1024 * 1024
_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<IHB")


def masked(crc: int) -> int:
    """LevelDB's stored form of a CRC (rotated right by 15 bits plus a constant), so a CRC of CRCs is not trivial."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Entry:
    """One version of a key: its sequence number, kind (TYPE_VALUE or TYPE_DELETION) and value."""

    key: bytes
    sequence: int
    kind: int
    value: bytes
    position: str  # where in the file: ``record:<offset>`` (log) or ``block:<offset>/entry:<n>`` (table)

    @property
    def deleted(self) -> bool:
        """True for a deletion marker (a tombstone)."""
        return self.kind == TYPE_DELETION

    @property
    def locator(self) -> str:
        """``<position>/seq:<sequence>``: the version's place in its file."""
        return f"{self.position}/seq:{self.sequence}"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that could not be read, and where (``record:<offset>``, ``block:<offset>``, ``footer``)."""

    where: str
    reason: str


def varint(data: bytes, position: int, limit: int, bits: int = 32) -> tuple[int, int]:
    """A little-endian base-128 varint of at most ``bits`` bits at ``position`` (before ``limit``): (value, next).

    Raises:
        ValueError: cut short, or longer than ``bits`` allows.
    """
    value = shift = 0
    while position < limit and shift < bits:
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            if value >> bits:
                raise ValueError("varint is wider than its type")
            return value, position
        shift += 7
    raise ValueError("varint is cut short or too long")


def _length_prefixed(data: bytes, position: int, limit: int) -> tuple[bytes, int]:
    """A varint32 length and that many bytes: (bytes, next). ValueError when they run past ``limit``."""
    size, position = varint(data, position, limit)
    if position + size > limit:
        raise ValueError(f"a {size}-byte field runs past its record")
    return data[position:position + size], position + size


# -- log files -----------------------------------------------------------------------------------


def log_records(data: bytes, verify: bool = True) -> Iterator[tuple[int, bytes] | Problem]:
    """Every logical record of a log file as (offset of its first fragment, bytes), and a Problem per fault.

    A fragment with a bad checksum, a broken FIRST..LAST chain or a record
    running past its block is a Problem; what was gathered of a broken chain is
    dropped (as LevelDB's reader drops it). A chain still open at the end is a
    torn last write; bytes after the last record that are not zero padding, and
    a non-empty file with no record at all, are Problems too.
    """
    position, pieces, start, found = 0, [], -1, False
    size = len(data)
    while position + LOG_HEADER <= size:
        block_end = (position // LOG_BLOCK + 1) * LOG_BLOCK
        if block_end - position < LOG_HEADER:
            position = block_end  # a block's trailer: zero padding
            continue
        checksum, length, kind = _HEADER.unpack_from(data, position)
        if kind == 0 and length == 0:
            position = block_end  # preallocated space (mmap writers), not a record
            continue
        end = position + LOG_HEADER + length
        if end > min(block_end, size):
            reason = (f"the last record is cut short ({size - position - LOG_HEADER} of {length} bytes): a torn write"
                      if end > size and block_end >= size else f"a {length}-byte record runs past its block")
            yield Problem(f"record:{position}", reason)
            pieces, position = [], block_end
            continue
        payload = data[position + LOG_HEADER:end]
        if verify and masked(crc32c(payload, crc32c(bytes((kind,))))) != checksum:
            yield Problem(f"record:{position}", "checksum mismatch: the record is not read")
            pieces, position = [], end
            continue
        fault, pieces, start, whole = _chain(kind, payload, pieces, start, position)
        if fault:
            yield Problem(f"record:{position}", fault)
        if whole is not None:
            found = True
            yield whole
        position = end
    if pieces:
        yield Problem(f"record:{start}", "the last record is torn: its fragments end before a LAST fragment")
    elif position < size and data[position:].strip(b"\0"):
        yield Problem(f"record:{position}", f"{size - position} bytes after the last record are not a record")
    elif not found and size and not data.strip(b"\0"):
        yield Problem("file", f"no log record in the file's {size} bytes (all zero: preallocated space)")


def _chain(kind: int, payload: bytes, pieces: list[bytes], start: int,
           position: int) -> tuple[str, list[bytes], int, tuple[int, bytes] | None]:
    """One fragment added to the open chain: (fault, pieces, start, a finished record or None)."""
    if kind == FULL:
        fault = "a FIRST fragment was never finished" if pieces else ""
        return fault, [], -1, (position, payload)
    if kind == FIRST:
        fault = "a FIRST fragment was never finished" if pieces else ""
        return fault, [payload], position, None
    if kind in (MIDDLE, LAST):
        if not pieces:
            return f"a {'MIDDLE' if kind == MIDDLE else 'LAST'} fragment with no FIRST before it", [], -1, None
        pieces.append(payload)
        if kind == MIDDLE:
            return "", pieces, start, None
        return "", [], -1, (start, b"".join(pieces))
    return f"unknown record type {kind}", [], -1, None


def batch_entries(offset: int, record: bytes) -> Iterator[Entry | Problem]:
    """The puts and deletions of one WriteBatch record, each with its sequence number."""
    where = f"record:{offset}"
    if len(record) < BATCH_HEADER:
        yield Problem(where, f"a write batch of {len(record)} bytes is shorter than its 12-byte header")
        return
    sequence, count = struct.unpack_from("<QI", record)
    position, index, size = BATCH_HEADER, 0, len(record)
    while position < size:
        tag = record[position]
        try:
            if tag == TYPE_VALUE:
                key, position = _length_prefixed(record, position + 1, size)
                value, position = _length_prefixed(record, position, size)
            elif tag == TYPE_DELETION:
                key, position = _length_prefixed(record, position + 1, size)
                value = b""
            else:
                yield Problem(where, f"unknown write batch tag {tag} after {index} records")
                return
        except ValueError as exc:
            yield Problem(where, f"write batch record {index}: {exc}")
            return
        yield Entry(key, sequence + index, tag, value, where)
        index += 1
    if index != count:
        yield Problem(where, f"the write batch says {count} records and holds {index}")


def log_entries(data: bytes, verify: bool = True) -> Iterator[Entry | Problem]:
    """Every version in a write-ahead log file (``NNNNNN.log``), in the order written."""
    for item in log_records(data, verify):
        if isinstance(item, Problem):
            yield item
        else:
            yield from batch_entries(*item)


# -- table files ---------------------------------------------------------------------------------


class _Budget:
    """Bytes a table may expand to (decompressed blocks and rebuilt keys), and the handles already read."""

    def __init__(self) -> None:
        self.spent = 0
        self.read: set[tuple[int, int]] = set()

    def spend(self, amount: int) -> bool:
        self.spent += amount
        return self.spent <= MAX_EXPANDED_BYTES


def _handle(data: bytes, position: int, limit: int) -> tuple[int, int, int]:
    """A block handle (offset, size) at ``position``: (offset, size, next). ValueError when damaged."""
    offset, position = varint(data, position, limit, 64)
    size, position = varint(data, position, limit, 64)
    return offset, size, position


def read_block(data: bytes, offset: int, size: int, verify: bool = True) -> bytes | Problem:
    """The contents of the block at (offset, size), checked and decompressed, or the Problem that stops it."""
    where = f"block:{offset}"
    if offset < 0 or size < 0 or offset + size + BLOCK_TRAILER > len(data):
        return Problem(where, f"a {size}-byte block at offset {offset} runs past the file's end")
    raw = data[offset:offset + size]
    kind = data[offset + size]
    if verify:
        stored = int.from_bytes(data[offset + size + 1:offset + size + BLOCK_TRAILER], "little")
        if masked(crc32c(bytes((kind,)), crc32c(raw))) != stored:
            return Problem(where, "checksum mismatch: the block is not read")
    if kind == NO_COMPRESSION:
        return raw
    if kind == SNAPPY:
        try:
            return snappy.decompress(raw, MAX_BLOCK_BYTES)
        except snappy.SnappyError as exc:
            return Problem(where, f"snappy block: {exc}")
    if kind == ZSTD:
        return _zstd_block(raw, where)
    return Problem(where, f"unknown block compression type {kind}")


def _zstd_block(raw: bytes, where: str) -> bytes | Problem:
    """A zstd-compressed block (LevelDB 1.23's type 2), read through a stream so at most MAX_BLOCK_BYTES are made."""
    pieces, held = [], 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(raw) as reader:
            while held <= MAX_BLOCK_BYTES:
                piece = reader.read(MAX_BLOCK_BYTES + 1 - held)
                if not piece:
                    break
                pieces.append(piece)
                held += len(piece)
    except zstandard.ZstdError as exc:
        return Problem(where, f"zstd block: {exc}")
    if held > MAX_BLOCK_BYTES:
        return Problem(where, f"zstd block expands past {MAX_BLOCK_BYTES} bytes")
    return b"".join(pieces)


def block_entries(block: bytes, where: str, budget: _Budget) -> Iterator[tuple[int, bytes, bytes] | Problem]:
    """The (entry number, key, value) pairs of one block, keys rebuilt from their shared prefixes."""
    if len(block) < 4:
        yield Problem(where, "a block shorter than its restart count")
        return
    restarts = int.from_bytes(block[-4:], "little")
    if restarts > (len(block) - 4) // 4:
        yield Problem(where, f"{restarts} restart points do not fit in a {len(block)}-byte block")
        return
    limit = len(block) - 4 - 4 * restarts
    position, last, index = 0, b"", 0
    while position < limit:
        try:
            shared, position = varint(block, position, limit)
            fresh, position = varint(block, position, limit)
            length, position = varint(block, position, limit)
        except ValueError as exc:
            yield Problem(f"{where}/entry:{index}", f"entry header: {exc}")
            return
        if shared > len(last) or position + fresh + length > limit:
            yield Problem(f"{where}/entry:{index}", "the entry's key or value runs past the block")
            return
        if shared + fresh > MAX_KEY_BYTES or not budget.spend(shared + fresh):
            yield Problem(f"{where}/entry:{index}", f"a key over the limit ({MAX_KEY_BYTES} bytes per key, "
                                                    f"{MAX_EXPANDED_BYTES} per table); the block's rest is not read")
            return
        key = last[:shared] + block[position:position + fresh]
        position += fresh
        yield index, key, block[position:position + length]
        position += length
        last, index = key, index + 1


def _footer(data: bytes) -> tuple[int, int] | Problem:
    """The index block's handle from the footer, or the Problem that stops the table."""
    if len(data) < FOOTER_BYTES:
        return Problem("footer", f"a {len(data)}-byte file is too short for a table footer")
    footer = data[-FOOTER_BYTES:]
    if int.from_bytes(footer[40:], "little") != TABLE_MAGIC:
        return Problem("footer", "no table magic number at the end (not a table, or cut short)")
    try:
        _, _, position = _handle(footer, 0, 40)
        offset, size, _ = _handle(footer, position, 40)
    except ValueError as exc:
        return Problem("footer", f"block handle: {exc}")
    return offset, size


def table_entries(data: bytes, verify: bool = True) -> Iterator[Entry | Problem]:
    """Every version in a table file (``NNNNNN.ldb`` or ``.sst``), block by block as its index lists them."""
    found = _footer(data)
    if isinstance(found, Problem):
        yield found
        return
    budget = _Budget()
    index = _expanded(data, *found, verify, budget)
    if isinstance(index, Problem):
        yield index
        return
    for item in block_entries(index, f"block:{found[0]}", budget):
        if isinstance(item, Problem):
            yield item
            continue
        try:
            offset, size, _ = _handle(item[2], 0, len(item[2]))
        except ValueError as exc:
            yield Problem(f"block:{found[0]}/entry:{item[0]}", f"index entry's block handle: {exc}")
            continue
        if (offset, size) in budget.read:
            continue  # a crafted index naming one block twice: read once
        block = _expanded(data, offset, size, verify, budget)
        if isinstance(block, Problem):
            yield block
            if block.reason.startswith("table expands"):
                return
            continue
        yield from _data_entries(block, f"block:{offset}", budget)


def _expanded(data: bytes, offset: int, size: int, verify: bool, budget: _Budget) -> bytes | Problem:
    """A block read once, counted against the table's budget."""
    budget.read.add((offset, size))
    block = read_block(data, offset, size, verify)
    if isinstance(block, bytes) and not budget.spend(len(block)):
        return Problem(f"block:{offset}", f"table expands past {MAX_EXPANDED_BYTES} bytes; the rest is not read")
    return block


def _data_entries(block: bytes, where: str, budget: _Budget) -> Iterator[Entry | Problem]:
    """A data block's internal keys split into user key, sequence and kind."""
    for item in block_entries(block, where, budget):
        if isinstance(item, Problem):
            yield item
            continue
        index, internal, value = item
        position = f"{where}/entry:{index}"
        if len(internal) < 8:
            yield Problem(position, f"an internal key of {len(internal)} bytes has no sequence number")
            continue
        trailer = int.from_bytes(internal[-8:], "little")
        kind = trailer & 0xFF
        if kind not in (TYPE_VALUE, TYPE_DELETION):
            yield Problem(position, f"unknown value type {kind}")
            continue
        yield Entry(internal[:-8], trailer >> 8, kind, value if kind == TYPE_VALUE else b"", position)


def file_entries(name: str, data: bytes, verify: bool = True) -> Iterator[Entry | Problem]:
    """The versions in a LevelDB file by its name: ``*.log`` a write-ahead log, ``*.ldb``/``*.sst`` a table."""
    if name.endswith(".log"):
        yield from log_entries(data, verify)
    elif name.endswith((".ldb", ".sst")):
        yield from table_entries(data, verify)
    else:
        yield Problem("file", f"{name} is not a LevelDB log or table file")
