"""A minimal Protocol Buffers wire encoder for tests and fixture SQL (varints, length-delimited, fixed).

Written from https://protobuf.dev/programming-guides/encoding/; used to build the
base64 trajectory summaries of the windsurf and antigravity fixtures and tests.
"""

from __future__ import annotations

import base64


def varint(value: int) -> bytes:
    """``value`` (unsigned, up to 64 bits; a negative int as its two's complement) as a varint."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def key(number: int, wire_type: int) -> bytes:
    """A field key."""
    return varint(number << 3 | wire_type)


def number(field: int, value: int) -> bytes:
    """A varint field."""
    return key(field, 0) + varint(value)


def data(field: int, value: bytes | str) -> bytes:
    """A length-delimited field (text is UTF-8)."""
    raw = value.encode() if isinstance(value, str) else value
    return key(field, 2) + varint(len(raw)) + raw


def timestamp(seconds: int, nanos: int = 0) -> bytes:
    """A google.protobuf.Timestamp message body."""
    return number(1, seconds) + (number(2, nanos) if nanos else b"")


def b64(raw: bytes) -> str:
    """Standard base64 text."""
    return base64.b64encode(raw).decode()


def summary(title: str, steps: int, created: int, modified: int, workspace: str = "", model: str = "") -> bytes:
    """A trajectory summary body: 1 title, 2 and 16 counts, 3/7 Timestamps, 15 a nested Timestamp, 9 workspace."""
    body = data(1, title) + number(2, steps) + data(3, timestamp(created)) + data(7, timestamp(modified, 500_000_000))
    if workspace:
        body += data(9, data(1, workspace))
    if model:
        body += data(12, data(1, model))
    return body + number(16, steps) + data(15, data(1, timestamp(modified)))


def summary_map(entries: list[tuple[str, bytes]], wrapped: bool) -> str:
    """The base64 map value: entry field 1 the id, field 2 the summary (wrapped: a message holding base64)."""
    out = b""
    for conversation, body in entries:
        value = data(1, b64(body)) if wrapped else body
        out += data(1, data(1, conversation) + data(2, value))
    return b64(out)
