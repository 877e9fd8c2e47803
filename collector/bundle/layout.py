"""The bundle format in one place: member names, tag files, index framing.

See docs/bundle-format.md. A bundle is a POSIX (pax) tar archive in which every
member is compressed as its own zstd frame, followed by an index in a zstd
*skippable* frame that standard ``zstd`` ignores. ``tar --zstd -xf`` therefore
extracts it, and the index gives random access to any member.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

FORMAT_NAME = "aitrail-bundle"
FORMAT_VERSION = 1

BAGIT_TXT = "bagit.txt"
BAG_INFO = "bag-info.txt"
PAYLOAD_MANIFEST = "manifest-sha256.txt"
TAG_MANIFEST = "tagmanifest-sha256.txt"
COLLECTION_JSON = "aitrail/collection.json"
FILES_JSONL = "aitrail/files.jsonl"
CATALOG_DIR = "aitrail/catalog/"
SIGNATURE = "aitrail/signature.ed25519"
PAYLOAD_DIR = "data/"
LINKS_DIR = "links/"

BAGIT_TEXT = b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"

# zstd skippable frame holding the index: magic, u32 size, payload.
SKIPPABLE_MAGIC = 0x184D2A5E
SKIPPABLE_HEADER = struct.Struct("<II")
# The index payload ends with a fixed trailer so a reader can find it from the end.
TRAILER = struct.Struct("<32sQ8s")  # sha256 of the compressed index, its length, magic
TRAILER_MAGIC = b"AITRIDX1"

# Bytes that never appear raw in a member name: the escape character itself,
# '%' (BagIt percent-encodes it in manifests, sha256sum would not), '\' (GNU
# sha256sum escapes it), and control characters (CR and LF break manifest lines).
ESCAPE = "^"
_ESCAPED_ASCII = {ord(ESCAPE), ord("%"), ord("\\"), 0x7F, *range(0x20)}
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_PLAIN = re.compile(rb"[\x20-\x24\x26-\x5b\x5d\x5f-\x7e]*\Z")  # printable ASCII except % \\ ^


def escape_component(raw: bytes) -> str:
    """Encode one raw path component as a member-name component.

    Valid UTF-8 passes through except the bytes in ``_ESCAPED_ASCII``; every
    other byte becomes ``^XX``. The mapping is injective, so two source names
    can never collide, and ``unescape_component`` restores the exact bytes.
    """
    if _PLAIN.match(raw):
        return raw.decode("ascii")
    out: list[str] = []
    text = raw.decode("utf-8", "surrogateescape")
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, carried by surrogateescape
            out.append(f"{ESCAPE}{code - 0xDC00:02X}")
        elif code in _ESCAPED_ASCII:
            out.append(f"{ESCAPE}{code:02X}")
        else:
            out.append(char)
    return "".join(out)


def unescape_component(name: str) -> bytes:
    """Inverse of ``escape_component``."""
    out = bytearray()
    index = 0
    while index < len(name):
        char = name[index]
        if char == ESCAPE:
            out.append(int(name[index + 1 : index + 3], 16))
            index += 3
        else:
            out.extend(char.encode("utf-8"))
            index += 1
    return bytes(out)


def member_name(prefix: str, label: str, parts: tuple[bytes, ...]) -> str:
    """``data/<label>/<escaped relative path>`` (or ``links/...`` for symlinks)."""
    return prefix + label + "/" + "/".join(escape_component(part) for part in parts)


def payload_name(label: str, parts: tuple[bytes, ...]) -> str:
    return member_name(PAYLOAD_DIR, label, parts)


def link_name(label: str, parts: tuple[bytes, ...]) -> str:
    return member_name(LINKS_DIR, label, parts)


def is_safe_member_name(name: str) -> bool:
    """No absolute paths, no '..', no empty or '.' segments, no control characters."""
    if not name or name.startswith("/") or "\\" in name or _CONTROL.search(name):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def manifest_line(digest: str, name: str) -> str:
    """A line both ``sha256sum -c`` and BagIt accept (names never need escaping)."""
    return f"{digest}  {name}\n"


@dataclass
class IndexEntry:
    """One member in the index: the frame that holds it and where it sits in that frame."""

    name: str
    type: str  # file | symlink
    frame_offset: int
    frame_length: int
    member_offset: int  # first header byte, in the decompressed frame
    header_length: int
    size: int
    sha256: str | None

    @property
    def data_offset(self) -> int:
        return self.member_offset + self.header_length

    @property
    def span_end(self) -> int:
        """End of the member's tar blocks (header, data, padding) in the decompressed frame."""
        return self.data_offset + self.size + (-self.size % 512)

    def as_record(self) -> dict:
        return self.__dict__.copy()
