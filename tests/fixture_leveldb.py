"""Writes LevelDB directories for fixtures from the documented formats (never copied from an install).

The fixture generators (``fixtures/<agent>/<case>/generate.py``) describe the
versions a directory holds; this module writes them as google/leveldb lays them
out (``doc/log_format.md``, ``doc/table_format.md``, ``db/write_batch.cc``,
``db/version_edit.cc``, ``table/block_builder.cc``, ``util/crc32c``), with code
of its own, not the analyzer's reader, so a reader bug is not mirrored here:

* ``log_file``: WriteBatches in 32 KiB blocks, a batch longer than a block's
  room split into FIRST/MIDDLE/LAST fragments; ``torn`` cuts the last record;
* ``table_file``: internal keys sorted (user key ascending, then sequence
  descending), data blocks of about ``block_size`` bytes with a restart every
  16 keys, each Snappy-compressed when that saves an eighth (LevelDB's rule),
  an index block, an empty metaindex block and the footer;
* ``manifest_file``: one VersionEdit (comparator, log number, next file,
  last sequence, the tables), and ``current_file`` naming it.

``compress`` is a small greedy Snappy encoder: literals and copies with 1- and
2-byte offsets, enough to make real Snappy blocks, not to match Google's
output byte for byte. Everything is deterministic: the same description gives
the same bytes, and tests/parsers/test_augment.py checks that every committed
file is what its generator writes.
"""

from __future__ import annotations

import struct
from pathlib import Path

BLOCK = 32768
VALUE, DELETION = 1, 0
MAGIC = 0xDB4775248B80FB57


def crc32c(data: bytes) -> int:
    """CRC-32C, bit by bit (slow and plain: it must not share a table or a bug with the reader)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def mask(crc: int) -> int:
    """LevelDB's masked CRC."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(value: int) -> bytes:
    """Little-endian base-128."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def prefixed(data: bytes) -> bytes:
    """A varint32 length and the bytes."""
    return varint(len(data)) + data


# -- snappy ------------------------------------------------------------------------------------


def _literal(data: bytes) -> bytes:
    out = bytearray()
    for start in range(0, len(data), 65536):
        piece = data[start:start + 65536]
        size = len(piece) - 1
        if size < 60:
            out.append(size << 2)
        elif size < 256:
            out += bytes((60 << 2, size))
        else:
            out += bytes((61 << 2,)) + size.to_bytes(2, "little")
        out += piece
    return bytes(out)


def _copy(offset: int, length: int) -> bytes:
    out = bytearray()
    while length > 0:
        size = min(length, 64)
        if 4 <= size <= 11 and offset < 2048:
            out += bytes((1 | ((size - 4) << 2) | ((offset >> 8) << 5), offset & 0xFF))
        else:
            out += bytes((2 | ((size - 1) << 2),)) + offset.to_bytes(2, "little")
        length -= size
    return bytes(out)


def compress(data: bytes) -> bytes:
    """A valid Snappy block: greedy matches of 4 or more bytes within 65535 back, literals between."""
    out, seen, position, pending = bytearray(varint(len(data))), {}, 0, 0
    while position + 4 <= len(data):
        window = data[position:position + 4]
        candidate = seen.get(window)
        seen[window] = position
        if candidate is None or position - candidate > 65535:
            position += 1
            continue
        length = 4
        while position + length < len(data) and data[candidate + length] == data[position + length]:
            length += 1
        out += _literal(data[pending:position]) if position > pending else b""
        out += _copy(position - candidate, length)
        position += length
        pending = position
    if pending < len(data):
        out += _literal(data[pending:])
    return bytes(out)


# -- log files ---------------------------------------------------------------------------------


def batch(sequence: int, records: list[tuple[int, bytes, bytes]]) -> bytes:
    """A WriteBatch: sequence, count, then (VALUE, key, value) puts and (DELETION, key, b"") deletions."""
    body = b"".join(bytes((kind,)) + prefixed(key) + (prefixed(value) if kind == VALUE else b"")
                    for kind, key, value in records)
    return struct.pack("<QI", sequence, len(records)) + body


def _physical(kind: int, payload: bytes) -> bytes:
    checksum = mask(crc32c(bytes((kind,)) + payload))
    return struct.pack("<IHB", checksum, len(payload), kind) + payload


def log_file(batches: list[bytes], torn: bool = False, corrupt: int | None = None) -> bytes:
    """A log of logical records in 32 KiB blocks.

    ``torn`` drops the last fragment's tail; ``corrupt`` flips a byte of record
    number ``corrupt``'s first fragment after its checksum was taken.
    """
    out = bytearray()
    for number, record in enumerate(batches):
        first, rest = True, record
        while True:
            room = BLOCK - len(out) % BLOCK
            if room < 7:
                out += bytes(room)
                room = BLOCK
            piece, rest = rest[:room - 7], rest[room - 7:]
            kind = (1 if first else 4) if not rest else (2 if first else 3)
            physical = bytearray(_physical(kind, piece))
            if corrupt == number and first:
                physical[-1] ^= 0xFF
            out += physical
            first = False
            if not rest:
                break
    return bytes(out[:-9] if torn else out)


# -- table files -------------------------------------------------------------------------------


def _block(entries: list[tuple[bytes, bytes]], interval: int) -> bytes:
    out, restarts, last = bytearray(), [], b""
    for index, (key, value) in enumerate(entries):
        shared = 0
        if index % interval == 0:
            restarts.append(len(out))
        else:
            while shared < min(len(key), len(last)) and key[shared] == last[shared]:
                shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(len(value)) + key[shared:] + value
        last = key
    for offset in restarts or [0]:
        out += struct.pack("<I", offset)
    return bytes(out + struct.pack("<I", len(restarts) or 1))


def _written(out: bytearray, contents: bytes, compressed: bool, damage: bool = False) -> bytes:
    """Append a block with its trailer; the block handle (offset, size) as varints."""
    kind, body = 0, contents
    if compressed:
        packed = compress(contents)
        if len(packed) < len(contents) - len(contents) // 8:
            kind, body = 1, packed
    offset = len(out)
    trailer = bytes((kind,)) + struct.pack("<I", mask(crc32c(body + bytes((kind,)))))
    if damage:
        body = body[:len(body) // 2] + bytes((body[len(body) // 2] ^ 0x55,)) + body[len(body) // 2 + 1:]
    out += body + trailer
    return varint(offset) + varint(len(body))


def internal(key: bytes, sequence: int, kind: int) -> bytes:
    """A table key: the user key, then ``sequence << 8 | kind`` as 8 little-endian bytes."""
    return key + struct.pack("<Q", (sequence << 8) | kind)


def table_file(versions: list[tuple[bytes, int, int, bytes]], block_size: int = 1024,
               damaged_block: int | None = None) -> bytes:
    """A table of (key, sequence, kind, value) versions; ``damaged_block`` flips a byte of that data block."""
    ordered = sorted(versions, key=lambda item: (item[0], -item[1]))
    blocks, current, size = [], [], 0
    for key, sequence, kind, value in ordered:
        current.append((internal(key, sequence, kind), value))
        size += len(key) + len(value) + 16
        if size >= block_size:
            blocks.append(current)
            current, size = [], 0
    if current:
        blocks.append(current)
    out, index = bytearray(), []
    for number, entries in enumerate(blocks):
        handle = _written(out, _block(entries, 16), True, damage=number == damaged_block)
        index.append((entries[-1][0], handle))
    metaindex = _written(out, _block([], 16), False)
    index_handle = _written(out, _block(index, 1), True)
    footer = (metaindex + index_handle).ljust(40, b"\0") + struct.pack("<Q", MAGIC)
    return bytes(out + footer)


# -- MANIFEST and CURRENT ----------------------------------------------------------------------


def manifest_file(log_number: int, next_file: int, last_sequence: int,
                  tables: list[tuple[int, int, bytes, bytes]]) -> bytes:
    """One VersionEdit (tags 1 comparator, 2 log number, 3 next file, 4 last sequence, 7 new file at level 0)."""
    edit = (varint(1) + prefixed(b"leveldb.BytewiseComparator") + varint(2) + varint(log_number)
            + varint(3) + varint(next_file) + varint(4) + varint(last_sequence))
    for number, size, smallest, largest in tables:
        edit += varint(7) + varint(0) + varint(number) + varint(size) + prefixed(smallest) + prefixed(largest)
    return log_file([edit])


def write_directory(directory: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (name -> bytes) into ``directory``, replacing what was there under those names."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)
