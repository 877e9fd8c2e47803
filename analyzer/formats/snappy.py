"""A bounded, pure-Python decoder of Snappy's raw (block) format, as LevelDB compresses its table blocks.

The format (google/snappy ``format_description.txt``): a preamble, the
uncompressed length as a little-endian base-128 varint of at most five bytes
(below 2**32), then elements until the input ends. The low two bits of an
element's tag byte say its kind:

* ``00`` literal: the upper six bits hold length-1 (0-59), or 60-63 for a
  length-1 in the next 1-4 bytes (little-endian); the literal bytes follow;
* ``01`` copy with a 1-byte offset: length 4-11 in bits 2-4, offset bits 8-10
  in bits 5-7 and offset bits 0-7 in the next byte;
* ``10`` copy with a 2-byte offset: length-1 in the upper six bits, the offset
  in the next two bytes (little-endian);
* ``11`` copy with a 4-byte offset: as ``10``, the offset in four bytes.

A copy repeats ``length`` bytes starting ``offset`` bytes back in the output;
when the offset is shorter than the length the copy overlaps itself (a run).

Nothing is trusted: the declared length must be within the caller's limit
before anything is built, the output may never pass it, an offset of zero or
one reaching before the output's start is an error, and the output must end
exactly at the declared length. Every such fault is a ``SnappyError`` (a
ValueError) naming the input offset; nothing else is raised for any input.
"""

from __future__ import annotations

MAX_PREAMBLE_BYTES = 5
_LITERAL, _COPY1, _COPY2, _COPY4 = 0, 1, 2, 3


class SnappyError(ValueError):
    """The input is not a Snappy block within the limit; the message says where and why."""


def uncompressed_length(data: bytes) -> tuple[int, int]:
    """(the declared uncompressed length, the offset of the first element); SnappyError for a bad preamble."""
    value = shift = 0
    for position in range(min(len(data), MAX_PREAMBLE_BYTES)):
        byte = data[position]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if value >= 1 << 32:
                raise SnappyError(f"declared length {value} is not a 32-bit value")
            return value, position + 1
        shift += 7
    raise SnappyError("the length preamble is cut short or longer than five bytes")


def decompress(data: bytes, limit: int) -> bytes:
    """The uncompressed bytes of one Snappy block, at most ``limit`` of them.

    Raises:
        SnappyError: the block declares more than ``limit`` bytes, or is damaged (the message says where).
    """
    length, position = uncompressed_length(data)
    if length > limit:
        raise SnappyError(f"declared length {length} is over the limit of {limit} bytes")
    out = bytearray()
    end = len(data)
    while position < end:
        tag = data[position]
        kind = tag & 3
        if kind == _LITERAL:
            position = _literal(data, position, tag, out, length)
        else:
            position = _copy(data, position, tag, kind, out, length)
    if len(out) != length:
        raise SnappyError(f"the block ends after {len(out)} of its {length} declared bytes")
    return bytes(out)


def _literal(data: bytes, position: int, tag: int, out: bytearray, length: int) -> int:
    """Append the literal at ``position``; the offset after it."""
    size = tag >> 2
    start = position + 1
    if size >= 60:
        extra = size - 59
        if start + extra > len(data):
            raise SnappyError(f"literal length at offset {position} is cut short")
        size = int.from_bytes(data[start:start + extra], "little")
        start += extra
    size += 1
    if start + size > len(data):
        raise SnappyError(f"literal at offset {position} runs past the input ({size} bytes)")
    if len(out) + size > length:
        raise SnappyError(f"literal at offset {position} runs past the declared length {length}")
    out += data[start:start + size]
    return start + size


def _copy(data: bytes, position: int, tag: int, kind: int, out: bytearray, length: int) -> int:
    """Append the copy at ``position``; the offset after it."""
    if kind == _COPY1:
        needed = 1
    else:
        needed = 2 if kind == _COPY2 else 4
    start = position + 1
    if start + needed > len(data):
        raise SnappyError(f"copy at offset {position} is cut short")
    if kind == _COPY1:
        size = ((tag >> 2) & 7) + 4
        offset = ((tag >> 5) << 8) | data[start]
    else:
        size = (tag >> 2) + 1
        offset = int.from_bytes(data[start:start + needed], "little")
    if offset == 0 or offset > len(out):
        raise SnappyError(f"copy at offset {position} reaches {offset} bytes back, before the output's start")
    if len(out) + size > length:
        raise SnappyError(f"copy at offset {position} runs past the declared length {length}")
    origin = len(out) - offset
    if offset >= size:
        out += out[origin:origin + size]
    else:  # an overlapping copy repeats the last ``offset`` bytes
        pattern = bytes(out[origin:])
        out += (pattern * (size // offset + 1))[:size]
    return start + needed
