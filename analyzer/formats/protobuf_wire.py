"""Protocol Buffers wire format, read without a schema, within bounds, never raising on hostile bytes.

A message is a run of fields, each a varint key (``field number << 3 | wire
type``) and a value: wire type 0 a varint, 1 eight little-endian bytes, 2 a
varint length then that many bytes (a string, bytes, or an embedded message:
the wire does not say which), 5 four little-endian bytes. Types 3 and 4
(groups, deprecated since proto2) are not read: a message that uses them
stops there, with the reason. Field number 0 is invalid.

What the bounds are, and why:

* a varint is at most 10 bytes (a 64-bit value); a longer one is damage;
* a length may not run past the end of its message (no read beyond the
  buffer, no allocation from a length);
* ``Budget`` is shared by every message read for one document: at most
  ``fields`` fields in all and ``depth`` levels of embedded messages, so a
  crafted value of a few kilobytes (a field nested 10,000 deep, or a million
  one-byte fields) costs what the budget allows and no more;
* bytes are sliced from a ``memoryview`` of the caller's buffer, never copied
  until a value is asked for as ``bytes`` or text.

``read_message`` gives the fields it could read and, where it stopped early,
why (a ``Stop``); the caller decides whether that is a ``parser:`` row.
Nothing here knows any agent or schema: the field numbers a store uses are
the caller's data tables.

References: https://protobuf.dev/programming-guides/encoding/ (wire types, varints, length-delimited
records, field numbers); google/protobuf src/google/protobuf/timestamp.proto (``Timestamp``: 1 seconds,
2 nanos, years 0001-9999).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass, field

VARINT, FIXED64, LENGTH, GROUP_START, GROUP_END, FIXED32 = 0, 1, 2, 3, 4, 5
MAX_VARINT_BYTES = 10
DEFAULT_FIELDS = 100_000
DEFAULT_DEPTH = 32
# google.protobuf.Timestamp: seconds from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z
MIN_SECONDS, MAX_SECONDS = -62_135_596_800, 253_402_300_799
MAX_NANOS = 999_999_999


@dataclass
class Budget:
    """What one document may cost: fields read in all its messages, and embedded-message depth."""

    fields: int = DEFAULT_FIELDS
    depth: int = DEFAULT_DEPTH
    exhausted: str = ""  # set once the field budget is spent: nothing more is read
    too_deep: bool = False  # an embedded message past ``depth`` was left unread (the rest is still read)

    def spend(self) -> bool:
        """Take one field from the budget; False (and ``exhausted`` said) when none is left."""
        if self.fields <= 0:
            self.exhausted = self.exhausted or "field budget spent"
            return False
        self.fields -= 1
        return True


@dataclass(frozen=True)
class Stop:
    """Where and why a message could not be read to its end (the fields before it were given)."""

    offset: int
    reason: str

    def describe(self) -> str:
        """``<reason> at byte <offset>``, for a ``parser:`` row."""
        return f"{self.reason} at byte {self.offset}"


class Field:
    """One field: its number, wire type and value (an int, or a view of the bytes for wire type 2).

    A plain slotted class, not a frozen dataclass: one is made per field read,
    and a frozen dataclass's __init__ costs several times as much.
    """

    __slots__ = ("number", "wire_type", "value")

    def __init__(self, number: int, wire_type: int, value: int | memoryview):
        self.number, self.wire_type, self.value = number, wire_type, value

    @property
    def is_bytes(self) -> bool:
        """True for a length-delimited field (a string, bytes or an embedded message)."""
        return self.wire_type == LENGTH

    def raw(self) -> bytes:
        """The length-delimited value as bytes (empty for a number)."""
        return bytes(self.value) if isinstance(self.value, memoryview) else b""

    def text(self) -> str | None:
        """The value as UTF-8 text, or None when it is not a length-delimited field of valid UTF-8."""
        if not isinstance(self.value, memoryview):
            return None
        try:
            return bytes(self.value).decode("utf-8")
        except UnicodeDecodeError:
            return None

    def number_value(self) -> int | None:
        """The value of a varint or fixed field (unsigned, as on the wire), else None."""
        return self.value if isinstance(self.value, int) else None


@dataclass
class Message:
    """The fields read from one message, in wire order, and where reading stopped early (if it did)."""

    fields: list[Field] = field(default_factory=list)
    stop: Stop | None = None

    def first(self, number: int, wire_type: int | None = None) -> Field | None:
        """The first field with this number (and wire type, when given), or None."""
        return next((item for item in self.fields
                     if item.number == number and (wire_type is None or item.wire_type == wire_type)), None)

    def all(self, number: int, wire_type: int | None = None) -> list[Field]:
        """Every field with this number (a repeated field), in wire order."""
        return [item for item in self.fields
                if item.number == number and (wire_type is None or item.wire_type == wire_type)]


def read_varint(data: memoryview, offset: int) -> tuple[int, int] | None:
    """(value, offset after it) of the varint at ``offset``; None when it is cut short or over 10 bytes."""
    end = len(data)
    if offset < end and data[offset] < 0x80:  # one byte: most keys and small numbers
        return data[offset], offset + 1
    value, shift, position = 0, 0, offset
    while position < end and position - offset < MAX_VARINT_BYTES:
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return value & 0xFFFF_FFFF_FFFF_FFFF, position
        shift += 7
    return None


def _field_at(data: memoryview, offset: int) -> tuple[Field, int] | Stop:
    """The field whose key starts at ``offset`` and the offset after it, or why it cannot be read."""
    key = read_varint(data, offset)
    if key is None:
        return Stop(offset, "field key is not a complete varint")
    number, wire_type, position = key[0] >> 3, key[0] & 7, key[1]
    if number == 0:
        return Stop(offset, "field number 0")
    if wire_type == VARINT:
        value = read_varint(data, position)
        if value is None:
            return Stop(position, f"field {number}: varint cut short or over {MAX_VARINT_BYTES} bytes")
        return Field(number, wire_type, value[0]), value[1]
    if wire_type in (FIXED64, FIXED32):
        size = 8 if wire_type == FIXED64 else 4
        if position + size > len(data):
            return Stop(position, f"field {number}: {size}-byte value cut short")
        return Field(number, wire_type, int.from_bytes(data[position:position + size], "little")), position + size
    if wire_type == LENGTH:
        length = read_varint(data, position)
        if length is None:
            return Stop(position, f"field {number}: length is not a complete varint")
        start = length[1]
        if length[0] > len(data) - start:
            return Stop(position, f"field {number}: length {length[0]} runs past the end ({len(data) - start} "
                                  "bytes left)")
        return Field(number, wire_type, data[start:start + length[0]]), start + length[0]
    return Stop(offset, f"field {number}: wire type {wire_type} is not read (groups, or not protobuf)")


def read_message(data: bytes | memoryview, budget: Budget | None = None) -> Message:
    """Every field of one message, in order, until its end, damage, or the budget; never raises."""
    view = data if isinstance(data, memoryview) else memoryview(data)
    budget = budget if budget is not None else Budget()
    message, offset = Message(), 0
    while offset < len(view):
        if not budget.spend():
            message.stop = Stop(offset, budget.exhausted)
            break
        found = _field_at(view, offset)
        if isinstance(found, Stop):
            message.stop = found
            break
        message.fields.append(found[0])
        offset = found[1]
    return message


def embedded(item: Field, budget: Budget) -> Message | None:
    """A length-delimited field read as an embedded message one level deeper; None past the depth budget.

    The wire does not say whether the bytes are a message: the caller decides
    what to make of a result with a ``stop`` (often, that it was a string).
    """
    if not isinstance(item.value, memoryview):
        return None
    if budget.depth <= 0:
        budget.too_deep = True
        return None
    budget.depth -= 1
    try:
        return read_message(item.value, budget)
    finally:
        budget.depth += 1


def is_whole_message(item: Field, budget: Budget) -> Message | None:
    """The field read as an embedded message when every byte of it parses (no stop), else None."""
    message = embedded(item, budget)
    return message if message is not None and message.stop is None and message.fields else None


def timestamp_ns(message: Message) -> int | None:
    """A ``google.protobuf.Timestamp`` (1: seconds, 2: nanos, varints) as ns since the epoch; None if not one.

    Seconds are read as the signed int64 the wire carries; a value outside
    years 0001-9999, nanos over 999,999,999, a field of another wire type, or
    a message with other fields or none is not a Timestamp.
    """
    if message.stop is not None or not message.fields:
        return None
    seconds, nanos = 0, 0
    for item in message.fields:
        if item.wire_type != VARINT or item.number not in (1, 2):
            return None
        if item.number == 1:
            seconds = _signed64(int(item.value))  # type: ignore[arg-type]
        else:
            nanos = int(item.value)  # type: ignore[arg-type]
    if not MIN_SECONDS <= seconds <= MAX_SECONDS or nanos > MAX_NANOS or seconds == 0:
        return None  # seconds 0 is the message's default: no time was set
    return seconds * 1_000_000_000 + nanos


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def nested_strings(message: Message, budget: Budget, limit: int = 10_000) -> Iterator[str]:
    """Every length-delimited value that is UTF-8 text, depth first, in wire order, at most ``limit``.

    Each value is given as text when it decodes, and is also read as an
    embedded message (a string that happens to parse is harmless: the caller
    matches what it looks for). The depth and field budget bound the walk.
    """
    given = 0
    stack: list[Iterator[Field]] = [iter(message.fields)]
    while stack and given < limit:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        if not item.is_bytes:
            continue
        text = item.text()
        if text is not None:
            given += 1
            yield text
        if len(stack) >= budget.depth:
            budget.too_deep = True
            continue
        inner = read_message(item.value, budget)  # type: ignore[arg-type]
        if inner.fields:
            stack.append(iter(inner.fields))


def base64_bytes(text: str | bytes, limit: int) -> bytes | None:
    """Standard base64 (padding optional, white space ignored) to bytes; None if not base64 or over ``limit``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError:
            return None
    compact = "".join(text.split())
    if len(compact) * 3 // 4 > limit:
        return None
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
