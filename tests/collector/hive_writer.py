r"""Build small but valid Windows registry hive files (regf) for tests, from nested dicts.

Layout as the format specification describes it (msuhanov/regf, "Windows registry file format
specification.md"): a 4096-byte base block with its XOR-32 checksum, then hive bins whose cells
(8-byte aligned, negative size = allocated) fill each bin exactly, the root key node first (regipy
takes the first cell of the first bin as the root). Each key has one security cell shared by all.

A tree maps names to subtrees (dict or Key) or to values (Value: see sz, expand_sz, dword, binary).
`BuiltHive.cells` names the offset (relative to the hive bins data) of every cell written, so tests
can damage exactly the cell they mean:
    "A\B"                 key node of A\B ("" is the root)
    "A\B:subkeys"         its subkey list (or index root); "A\B:leaf0", "A\B:leaf1"... under an index root
    "A\B:values"          its value list
    "A\B:value:Name"      the key value cell of value Name; "A\B:data:Name" its data cell when not inline
"""

import struct
from dataclasses import dataclass, field

BASE_BLOCK_SIZE = 4096
HBIN_SIZE_UNIT = 4096
REG_SZ, REG_EXPAND_SZ, REG_BINARY, REG_DWORD = 1, 2, 3, 4
FILETIME = 133_500_000_000_000_000  # 2024-01-20, a fixed last-written time for every key


@dataclass(frozen=True)
class Value:
    """A value: its type number and the data bytes as stored."""

    type: int
    data: bytes


def sz(text: str, *, after_nul: bytes = b"", kind: int = REG_SZ) -> Value:
    """A NUL-terminated UTF-16LE string, optionally followed by garbage after the NUL."""
    return Value(kind, text.encode("utf-16-le") + b"\0\0" + after_nul)


def expand_sz(text: str) -> Value:
    return sz(text, kind=REG_EXPAND_SZ)


def dword(number: int) -> Value:
    """A REG_DWORD; a negative number is stored as its 32-bit two's complement (as Bias is)."""
    return Value(REG_DWORD, struct.pack("<I", number & 0xFFFFFFFF))


def binary(data: bytes) -> Value:
    return Value(REG_BINARY, data)


@dataclass
class Key:
    """A key with options; a plain dict in a tree is Key(that dict).

    Attributes:
        children: name -> subkey (dict or Key) or Value.
        utf16_name: store this key's name as UTF-16LE (compressed-name flag clear).
        utf16_value_names: store the names of this key's values as UTF-16LE.
        subkey_list: "lf", "lh", "li", or "ri" (an index root over lh leaves of ri_chunk entries).
        ri_chunk: subkeys per leaf under an index root.
    """

    children: dict = field(default_factory=dict)
    utf16_name: bool = False
    utf16_value_names: bool = False
    subkey_list: str = "lh"
    ri_chunk: int = 2


@dataclass
class BuiltHive:
    data: bytes
    cells: dict[str, int]

    def patched(self, offset: int, new: bytes) -> bytes:
        """A copy of the hive with new written at offset (relative to the hive bins data)."""
        position = BASE_BLOCK_SIZE + offset
        return self.data[:position] + new + self.data[position + len(new):]


def lh_hash(name: str) -> int:
    """The hash leaf hash: over the upper-cased name, hash = hash * 37 + character code (32 bits)."""
    value = 0
    for character in name.upper():
        value = (value * 37 + ord(character)) & 0xFFFFFFFF
    return value


def checksum(base: bytes) -> int:
    """XOR-32 of the first 508 bytes, 0 and 0xFFFFFFFF replaced as Windows does."""
    value = 0
    for (word,) in struct.iter_unpack("<I", base[:508]):
        value ^= word
    return {0: 1, 0xFFFFFFFF: 0xFFFFFFFE}.get(value, value)


def _name_bytes(name: str, utf16: bool) -> bytes:
    return name.encode("utf-16-le") if utf16 else name.encode("ascii")


class _Writer:
    def __init__(self) -> None:
        self.bins = bytearray(32)  # the first hive bin's header, filled in at the end
        self.cells: dict[str, int] = {}
        self.security = 0

    def alloc(self, payload: bytes) -> int:
        offset = len(self.bins)
        size = (4 + len(payload) + 7) // 8 * 8
        self.bins += struct.pack("<i", -size) + payload + bytes(size - 4 - len(payload))
        return offset

    def put(self, offset: int, payload: bytes) -> None:
        self.bins[offset + 4:offset + 4 + len(payload)] = payload

    def key(self, path: str, name: str, key: Key, parent: int) -> int:
        raw_name = _name_bytes(name, key.utf16_name)
        node = self.alloc(bytes(76 + len(raw_name)))  # filled in below, once its lists exist
        self.cells[path] = node
        if not self.security:
            self.security = self.alloc(bytes(40))  # one security cell for every key, filled in by finish()
        subkeys = {child: tree for child, tree in key.children.items() if not isinstance(tree, Value)}
        values = {child: tree for child, tree in key.children.items() if isinstance(tree, Value)}
        offsets = {}
        for child in sorted(subkeys, key=str.upper):
            tree = subkeys[child]
            offsets[child] = self.key(f"{path}\\{child}" if path else child, child, _as_key(tree), node)
        list_offset = self.subkey_list(path, key, offsets) if offsets else 0xFFFFFFFF
        values_offset = self.value_list(path, key, values) if values else 0xFFFFFFFF
        flags = (0x0C if not path else 0) | (0 if key.utf16_name else 0x20)  # root: HIVE_ENTRY | NO_DELETE
        self.put(node, b"nk" + struct.pack(
            "<HQ15IHH", flags, FILETIME, 0, parent if path else 0xFFFFFFFF, len(offsets), 0,
            list_offset, 0xFFFFFFFF, len(values), values_offset, self.security, 0xFFFFFFFF,
            max((len(_name_bytes(c, _as_key(t).utf16_name)) for c, t in subkeys.items()), default=0), 0,
            max((len(_name_bytes(v, key.utf16_value_names)) for v in values), default=0),
            max((len(v.data) for v in values.values()), default=0), 0, len(raw_name), 0) + raw_name)
        return node

    def leaf(self, kind: str, entries: list[tuple[str, int]]) -> int:
        body = b"".join(
            struct.pack("<I", offset) if kind == "li"
            else struct.pack("<II", offset, lh_hash(name) if kind == "lh" else _hint(name))
            for name, offset in entries)
        return self.alloc(kind.encode() + struct.pack("<H", len(entries)) + body)

    def subkey_list(self, path: str, key: Key, offsets: dict[str, int]) -> int:
        entries = sorted(offsets.items(), key=lambda item: item[0].upper())
        if key.subkey_list != "ri":
            self.cells[f"{path}:subkeys"] = offset = self.leaf(key.subkey_list, entries)
            return offset
        chunks = [entries[at:at + key.ri_chunk] for at in range(0, len(entries), key.ri_chunk)]
        leaves = []
        for number, chunk in enumerate(chunks):
            leaves.append(self.leaf("lh", chunk))
            self.cells[f"{path}:leaf{number}"] = leaves[-1]
        self.cells[f"{path}:subkeys"] = offset = self.alloc(
            b"ri" + struct.pack("<H", len(leaves)) + b"".join(struct.pack("<I", leaf) for leaf in leaves))
        return offset

    def value_list(self, path: str, key: Key, values: dict[str, Value]) -> int:
        records = []
        for name, value in values.items():
            raw_name = _name_bytes(name, key.utf16_value_names)
            if len(value.data) <= 4:
                size, data = 0x80000000 | len(value.data), int.from_bytes(value.data.ljust(4, b"\0"), "little")
            else:
                size, data = len(value.data), self.alloc(value.data)
                self.cells[f"{path}:data:{name}"] = data
            flags = 0 if key.utf16_value_names else 1
            records.append(self.alloc(b"vk" + struct.pack("<HIIIHH", len(raw_name), size, data, value.type,
                                                           flags, 0) + raw_name))
            self.cells[f"{path}:value:{name}"] = records[-1]
        self.cells[f"{path}:values"] = offset = self.alloc(b"".join(struct.pack("<I", r) for r in records))
        return offset

    def finish(self, root: int, key_count: int, pad_bin: int, dirty: bool) -> bytes:
        descriptor = struct.pack("<BBHIIII", 1, 0, 0x8000, 0, 0, 0, 0)  # self-relative, no owner, no ACLs
        # A lone security cell is its own list: flink and blink point to itself.
        self.put(self.security, b"sk" + struct.pack("<HIIII", 0, self.security, self.security, key_count,
                                                     len(descriptor)) + descriptor)
        bins = self._close_bin(self.bins, 0)
        if pad_bin:
            pad = bytearray(32)
            bins += self._close_bin(pad, len(bins), size=pad_bin)
        base = bytearray(BASE_BLOCK_SIZE)
        struct.pack_into("<4sIIQIIIIIII", base, 0, b"regf", 2 if dirty else 1, 1, FILETIME, 1, 5, 0, 1,
                         root, len(bins), 1)
        base[48:48 + 12] = "SYSTEM".encode("utf-16-le")
        struct.pack_into("<I", base, 508, checksum(bytes(base)))
        return bytes(base) + bytes(bins)

    @staticmethod
    def _close_bin(cells: bytearray, at: int, size: int = 0) -> bytearray:
        """Cells padded to a whole bin by one free cell, with the bin's header."""
        size = max(size, (len(cells) + HBIN_SIZE_UNIT - 1) // HBIN_SIZE_UNIT * HBIN_SIZE_UNIT)
        if size > len(cells):
            cells += struct.pack("<i", size - len(cells)) + bytes(size - len(cells) - 4)
        struct.pack_into("<4sIIIIQI", cells, 0, b"hbin", at, size, 0, 0, FILETIME if at == 0 else 0, 0)
        return cells


def _hint(name: str) -> int:
    """The fast leaf name hint: the first four characters of the name (ASCII names only)."""
    return int.from_bytes(name[:4].encode("latin-1", "replace").ljust(4, b"\0"), "little")


def _as_key(tree: "dict | Key") -> Key:
    return tree if isinstance(tree, Key) else Key(tree)


def _count_keys(key: Key) -> int:
    return 1 + sum(_count_keys(_as_key(t)) for t in key.children.values() if not isinstance(t, Value))


def build_hive(tree: "dict | Key", *, pad_bin: int = 0, dirty: bool = False) -> BuiltHive:
    """A hive holding tree under its root key.

    Args:
        tree: the root key's children (or a Key for the root itself).
        pad_bin: when not 0, append an unused hive bin of this many bytes (a multiple of 4096).
        dirty: write different primary and secondary sequence numbers, as a hive not cleanly written.
    """
    writer = _Writer()
    root = _as_key(tree)
    root_offset = writer.key("", "ROOT", root, 0)
    data = writer.finish(root_offset, _count_keys(root), pad_bin, dirty)
    return BuiltHive(data, writer.cells)
