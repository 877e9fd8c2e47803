"""A Windows image's host name and time zone from its SYSTEM hive: a small, bounded, read-only regf reader.

The SYSTEM hive is never bundled (it holds the boot key that decrypts the SAM's password hashes): the
collector reads these few values from it and records them and where they came from.

Format: Maxim Suhanov, "Windows registry file format specification", github.com/msuhanov/regf, file
"Windows registry file format specification.md" (base block, hive bin, cell, index leaf, fast leaf,
hash leaf, index root, key node, key values list, key value, big data). Field offsets were checked
against regipy's `regipy/structs.py` (github.com/mkorman90/regipy); no code was taken from either.
The checksum's special cases (0 -> 1, 0xFFFFFFFF -> 0xFFFFFFFE) are those of Windows' HvpHeaderCheckSum.

The hive comes from the subject and is treated as hostile: it is read with `os.pread` only, at most two
bounded reads per cell (never the whole file; hives are 10-200 MB), and one hive's reads stop at MAX_CELLS
cells and MAX_READ_BYTES bytes in all; every offset and length is checked against the end of the hive
bins data and of the file; lookups follow fixed paths a few keys deep, and an index root may not point
to another (the specification forbids it), so no list can loop. Damage raises HiveError naming what was
wrong; read_system_identity turns damage below the root key into a problem entry for the value concerned.

Not done: transaction logs (.LOG1/.LOG2) are not applied to a dirty hive (a problem entry says it is
dirty); big data (`db`) records are refused as not supported; hive bins after the first are not walked
(cells are reached by offset, and walking every bin would read the whole file).
"""

import functools
import operator
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

BASE_BLOCK_SIZE = 4096
HBIN_HEADER_SIZE = 32
NIL_OFFSET = 0xFFFFFFFF
KEY_COMP_NAME = 0x0020  # key node flag: the name is ASCII (Latin-1), else UTF-16LE
VALUE_COMP_NAME = 0x0001  # key value flag: the same for value names
INLINE_DATA = 0x80000000  # key value data size: up to 4 bytes of data sit in the data offset field
KEY_NODE_FIXED = 76  # bytes of a key node before its name
KEY_VALUE_FIXED = 20  # bytes of a key value before its name
REG_SZ, REG_EXPAND_SZ, REG_BINARY, REG_DWORD = 1, 2, 3, 4

MAX_NAME_BYTES = 512  # a key name is at most 255 characters (510 bytes as UTF-16LE); no name we look for is longer
MAX_DATA_BYTES = 16_344  # larger value data is split into big data records (hive version 1.4 and later)
MAX_SUBKEYS_PER_KEY = 8_192  # Services, the largest key on our paths: 258-737 subkeys in real hives (Windows 7, 10)
MAX_VALUES_PER_KEY = 4_096
MAX_CELLS = 100_000  # per hive: 330-730 cells were read from real SYSTEM hives
MAX_READ_BYTES = 8 * 1024 * 1024  # per hive: 0.2-0.45 MB were read from real SYSTEM hives of 3-15 MB
FIRST_READ = 1024  # bytes read with a cell's size field; the rest of a larger cell, if wanted, in a second read


class HiveError(ValueError):
    """The hive, or the part of it on the way to a value, is damaged or not a hive."""


class _BudgetExhausted(HiveError):
    """The reads of one hive reached MAX_CELLS or MAX_READ_BYTES."""


@dataclass(frozen=True)
class WindowsIdentity:
    """What a SYSTEM hive says of its machine; each value is None when it could not be read (see problems)."""

    computer_name: str | None  # ControlSetNNN\Control\ComputerName\ComputerName : ComputerName
    hostname: str | None  # ControlSetNNN\Services\Tcpip\Parameters : Hostname
    domain: str | None  # ControlSetNNN\Services\Tcpip\Parameters : Domain (may be "")
    time_zone_key_name: str | None  # ControlSetNNN\Control\TimeZoneInformation : TimeZoneKeyName
    standard_name: str | None  # ... : StandardName, kept as written (may be "@tzres.dll,-112")
    bias_minutes: int | None  # ... : Bias, signed: UTC = local time + bias
    control_set: str  # "ControlSet001": from Select : Current, 1 when that is absent or unreadable
    problems: tuple[str, ...]  # each value missing or unreadable, named; and the hive's own state (dirty, truncated)


class _Key(NamedTuple):
    name: str
    subkey_count: int
    subkeys_offset: int
    value_count: int
    values_offset: int


class _ValueRecord(NamedTuple):
    name: str | None  # None: longer than any name we look for, not decoded
    data_size: int
    data_offset: int
    data_type: int


_Record = TypeVar("_Record", _Key, _ValueRecord)
_Kind = TypeVar("_Kind", str, int)


def _u16(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<H", data, at)[0])


def _u32(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<I", data, at)[0])


def _checksum(base: bytes) -> int:
    """XOR-32 of the base block's first 508 bytes, as Windows stores it."""
    value = functools.reduce(operator.xor, (word for (word,) in struct.iter_unpack("<I", base[:508])), 0)
    return {0: 1, 0xFFFFFFFF: 0xFFFFFFFE}.get(value, value)


def _decode_name(raw: bytes, compressed: bool) -> str:
    """A key or value name: Latin-1 when the compressed-name flag is set, else UTF-16LE."""
    if compressed:
        return raw.decode("latin-1")
    try:
        return raw.decode("utf-16-le")
    except UnicodeDecodeError as exc:
        raise HiveError(f"name is not valid UTF-16LE ({exc.reason})") from None


def _utf16_to_nul(data: bytes) -> str:
    """REG_SZ data up to its first NUL character; what follows it (garbage on some systems) is not read."""
    end = data.find(b"\0\0")
    while end != -1 and end % 2:
        end = data.find(b"\0\0", end + 1)
    if end == -1 and len(data) % 2:
        raise HiveError(f"string data of odd length {len(data)} with no NUL")
    try:
        return data[: len(data) if end == -1 else end].decode("utf-16-le")
    except UnicodeDecodeError as exc:
        raise HiveError(f"string data is not valid UTF-16LE ({exc.reason})") from None


def _decode_value(data_type: int, data: bytes) -> str | int | bytes:
    """REG_SZ and REG_EXPAND_SZ -> str, REG_DWORD -> unsigned int, REG_BINARY -> bytes."""
    if data_type in (REG_SZ, REG_EXPAND_SZ):
        return _utf16_to_nul(data)
    if data_type == REG_DWORD:
        if len(data) != 4:
            raise HiveError(f"REG_DWORD data of {len(data)} bytes, not 4")
        return int.from_bytes(data, "little")
    if data_type == REG_BINARY:
        return data
    raise HiveError(f"value type {data_type} is not supported")


class _Hive:
    """One hive open for lookups by path, with the budgets of all its reads."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._cells_left, self._bytes_left = MAX_CELLS, MAX_READ_BYTES
        self.notes: list[str] = []  # the hive's own state: dirty, truncated, bad checksum
        try:
            file_size = os.fstat(fd).st_size
        except OSError as exc:
            raise HiveError(f"cannot stat the hive: {exc.strerror or exc}") from None
        base = self._pread(0, BASE_BLOCK_SIZE)
        if len(base) < BASE_BLOCK_SIZE or base[:4] != b"regf":
            raise HiveError("not a registry hive: no 4096-byte base block with the signature 'regf'")
        self._end = self._bins_end(base, file_size)
        first_bin = self._pread(BASE_BLOCK_SIZE, HBIN_HEADER_SIZE)
        if len(first_bin) < HBIN_HEADER_SIZE or first_bin[:4] != b"hbin" or _u32(first_bin, 4) != 0:
            raise HiveError("no hive bin at the start of the hive bins data")
        self._keys: dict[str, _Key] = {"": self.key_at(_u32(base, 36))}

    def _bins_end(self, base: bytes, file_size: int) -> int:
        """Where the hive bins data ends in the file, never past the file; notes a dirty or truncated hive."""
        primary, secondary, bins_size = _u32(base, 4), _u32(base, 8), _u32(base, 40)
        if primary != secondary:
            self.notes.append(f"hive: dirty (sequence numbers {primary} and {secondary} differ); its transaction "
                              "logs were not applied, so values may be older than the system's last state")
        if _checksum(base) != _u32(base, 508):
            self.notes.append("hive: base block checksum does not match")
        if bins_size == 0 or bins_size % 4096:
            raise HiveError(f"hive bins data size {bins_size} is not a positive multiple of 4096")
        if BASE_BLOCK_SIZE + bins_size <= file_size:
            return BASE_BLOCK_SIZE + bins_size
        self.notes.append(f"hive: truncated: declares {bins_size} bytes of hive bins, the file holds "
                          f"{max(file_size - BASE_BLOCK_SIZE, 0)}; values were read from what is there")
        return file_size

    def _pread(self, position: int, length: int) -> bytes:
        if length > self._bytes_left:
            raise _BudgetExhausted(f"read budget of {MAX_READ_BYTES} bytes for this hive exhausted")
        self._bytes_left -= length
        try:
            return os.pread(self._fd, length, position)
        except OSError as exc:
            raise HiveError(f"reading {length} bytes at {position}: {exc.strerror or exc}") from None

    def _cell(self, offset: int, limit: int) -> tuple[int, bytes]:
        """An allocated cell's data length and its first min(length, limit) bytes."""
        if self._cells_left <= 0:
            raise _BudgetExhausted(f"cell budget of {MAX_CELLS} cells for this hive exhausted")
        self._cells_left -= 1
        position = BASE_BLOCK_SIZE + offset
        if offset == NIL_OFFSET or position + 8 > self._end:
            raise HiveError(f"cell offset {offset:#x} is past the end of the hive bins data")
        raw = self._pread(position, min(4 + limit, FIRST_READ, self._end - position))
        if len(raw) < 4:
            raise HiveError(f"cell at {offset:#x}: short read (the file changed?)")
        size = -int.from_bytes(raw[:4], "little", signed=True)
        if size <= 0:
            raise HiveError(f"cell at {offset:#x} is not allocated (size field {-size})")
        if size < 8:
            raise HiveError(f"cell at {offset:#x} has a size of {size} bytes, too small for a cell")
        if position + size > self._end:
            raise HiveError(f"cell at {offset:#x} has a size of {size} bytes, outside the hive bins data")
        wanted = min(size, 4 + limit)
        if wanted > len(raw):
            raw += self._pread(position + len(raw), wanted - len(raw))
        if len(raw) < wanted:
            raise HiveError(f"cell at {offset:#x}: short read (the file changed?)")
        return size - 4, raw[4:wanted]

    def key_at(self, offset: int) -> _Key:
        """The key node at offset."""
        size, data = self._cell(offset, KEY_NODE_FIXED + MAX_NAME_BYTES)
        if len(data) < KEY_NODE_FIXED or data[:2] != b"nk":
            raise HiveError(f"cell at {offset:#x} is not a key node")
        name_length = _u16(data, 72)
        if KEY_NODE_FIXED + name_length > size or name_length > MAX_NAME_BYTES:
            raise HiveError(f"key node at {offset:#x} has a name of {name_length} bytes that does not fit")
        name = _decode_name(data[KEY_NODE_FIXED:KEY_NODE_FIXED + name_length], bool(_u16(data, 2) & KEY_COMP_NAME))
        return _Key(name, _u32(data, 20), _u32(data, 28), _u32(data, 36), _u32(data, 40))

    def _list(self, offset: int) -> tuple[bytes, list[int]]:
        """A subkey list's signature and offsets (at most MAX_SUBKEYS_PER_KEY of them)."""
        size, data = self._cell(offset, 4 + 8 * MAX_SUBKEYS_PER_KEY)
        signature = data[:2]
        width = {b"lf": 8, b"lh": 8, b"li": 4, b"ri": 4}.get(signature)
        if width is None or len(data) < 4:
            raise HiveError(f"cell at {offset:#x} is not a subkey list (signature {signature!r})")
        count = _u16(data, 2)
        if 4 + count * width > size:
            raise HiveError(f"subkey list at {offset:#x} of {count} entries runs past its cell")
        count = min(count, (len(data) - 4) // width)
        return signature, [_u32(data, 4 + index * width) for index in range(count)]

    def _subkey_offsets(self, key: _Key) -> Iterator[int]:
        """The key node offsets of key's subkeys, through its index root if any, at most MAX_SUBKEYS_PER_KEY."""
        if key.subkey_count == 0:
            return
        signature, entries = self._list(key.subkeys_offset)
        leaves: Iterable[tuple[bytes, list[int]]] = [(signature, entries)]
        if signature == b"ri":
            leaves = (self._list(offset) for offset in entries)
        left = MAX_SUBKEYS_PER_KEY
        for leaf_signature, offsets in leaves:
            if leaf_signature == b"ri":
                raise HiveError(f"index root at {key.subkeys_offset:#x} points to another index root")
            yield from offsets[:left]
            if len(offsets) > left:
                raise HiveError(f"key {key.name!r} has more than {MAX_SUBKEYS_PER_KEY} subkeys; the rest were not read")
            left -= len(offsets)

    def _first_named(self, offsets: Iterable[int], read: Callable[[int], _Record], name: str, missing: str) -> _Record:
        """The first record read at offsets named name (case-insensitively, as Windows compares).

        A damaged record is skipped (one bad sibling must not hide the rest) and counted in the error if none matches.
        """
        damaged: list[str] = []
        for offset in offsets:
            try:
                record = read(offset)
            except _BudgetExhausted:
                raise
            except HiveError as exc:
                damaged.append(str(exc))
                continue
            if record.name is not None and record.name.upper() == name.upper():
                return record
        if damaged:
            missing += f"; {len(damaged)} damaged entries skipped, the first: {damaged[0]}"
        raise HiveError(missing)

    def key(self, path: str) -> _Key:
        """The key at a backslash-separated path from the root ("" is the root)."""
        if path not in self._keys:
            parent_path, _, name = path.rpartition("\\")
            parent = self.key(parent_path)
            self._keys[path] = self._first_named(self._subkey_offsets(parent), self.key_at, name,
                                                 f"no subkey {name!r} in key {parent.name!r}")
        return self._keys[path]

    def _value_record(self, offset: int) -> _ValueRecord:
        size, data = self._cell(offset, KEY_VALUE_FIXED + MAX_NAME_BYTES)
        if len(data) < KEY_VALUE_FIXED or data[:2] != b"vk":
            raise HiveError(f"cell at {offset:#x} is not a key value")
        name_length, data_size, data_offset, data_type, flags = struct.unpack_from("<HIIIH", data, 2)
        if KEY_VALUE_FIXED + name_length > size:
            raise HiveError(f"key value at {offset:#x} has a name of {name_length} bytes that does not fit")
        name = None
        if name_length <= MAX_NAME_BYTES:
            raw = data[KEY_VALUE_FIXED:KEY_VALUE_FIXED + name_length]
            name = _decode_name(raw, bool(flags & VALUE_COMP_NAME))
        return _ValueRecord(name, data_size, data_offset, data_type)

    def _value_data(self, record: _ValueRecord) -> bytes:
        if record.data_size & INLINE_DATA:
            length = record.data_size & ~INLINE_DATA
            if length > 4:
                raise HiveError(f"inline data of {length} bytes (at most 4 fit)")
            return record.data_offset.to_bytes(4, "little")[:length]
        if record.data_size > MAX_DATA_BYTES:
            raise HiveError(f"data of {record.data_size} bytes (big data) is not supported")
        if record.data_size == 0:
            return b""
        size, data = self._cell(record.data_offset, record.data_size)
        if record.data_size > size:
            raise HiveError(f"data of {record.data_size} bytes runs past its {size}-byte cell")
        return data

    def value(self, key: _Key, name: str) -> str | int | bytes:
        """The value of key called name (case-insensitive), decoded by its type."""
        count = min(key.value_count, MAX_VALUES_PER_KEY)
        data = b""
        if count:
            size, data = self._cell(key.values_offset, 4 * count)
            if 4 * count > size:
                raise HiveError(f"value list of {count} entries runs past its cell")
        unread = f" (only the first {count} of {key.value_count} read)" if key.value_count > count else ""
        offsets = (_u32(data, 4 * index) for index in range(count))
        record = self._first_named(offsets, self._value_record, name, f"no value {name!r} in key {key.name!r}{unread}")
        return _decode_value(record.data_type, self._value_data(record))


def _typed(hive: _Hive, path: str, name: str, kind: type[_Kind], problems: list[str]) -> _Kind | None:
    """The value path : name if it is a kind (str: REG_SZ or REG_EXPAND_SZ, int: REG_DWORD); else None and a problem."""
    try:
        found = hive.value(hive.key(path), name)
    except HiveError as exc:
        problems.append(f"{path} : {name}: {exc}")
        return None
    if isinstance(found, kind):
        return found
    problems.append(f"{path} : {name}: {type(found).__name__} data where {kind.__name__} was expected")
    return None


def _control_set(hive: _Hive, problems: list[str]) -> str:
    """The control set Select : Current names; ControlSet001 when it names none."""
    current = _typed(hive, "Select", "Current", int, problems)
    if current is None or not 1 <= current <= 999:
        if current is not None:
            problems.append(f"Select : Current: {current} is not a control set number")
        problems.append("Select : Current: ControlSet001 assumed")
        current = 1
    return f"ControlSet{current:03d}"


def read_system_identity(fd: int) -> WindowsIdentity:
    """Host name and time zone from the SYSTEM hive open at fd (read with os.pread only, never written).

    Raises:
        HiveError: the file is not a hive or its root key cannot be read. Any value that is missing or
            damaged is None in the result, with a problem entry naming it.
    """
    hive = _Hive(fd)
    problems = list(hive.notes)
    control_set = _control_set(hive, problems)
    computer = rf"{control_set}\Control\ComputerName\ComputerName"
    tcpip = rf"{control_set}\Services\Tcpip\Parameters"
    zone = rf"{control_set}\Control\TimeZoneInformation"
    computer_name = _typed(hive, computer, "ComputerName", str, problems)
    hostname = _typed(hive, tcpip, "Hostname", str, problems)
    domain = _typed(hive, tcpip, "Domain", str, problems)
    key_name = _typed(hive, zone, "TimeZoneKeyName", str, problems)
    standard_name = _typed(hive, zone, "StandardName", str, problems)
    bias = _typed(hive, zone, "Bias", int, problems)
    if bias is not None and bias >= 1 << 31:
        bias -= 1 << 32  # Bias is a signed 32-bit LONG stored as a REG_DWORD
    return WindowsIdentity(computer_name, hostname, domain, key_name, standard_name, bias, control_set,
                           tuple(problems))
