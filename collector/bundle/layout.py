"""The bundle format in one place: member names, tag files, index framing.

See docs/bundle-format.md. A bundle is a POSIX (pax) tar archive in which every
member is compressed as its own zstd frame, followed by an index in a zstd
*skippable* frame that standard ``zstd`` ignores. ``tar --zstd -xf`` therefore
extracts it, and the index gives random access to any member.
"""

from __future__ import annotations

import dataclasses
import functools
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
ZSTD_FRAME_MAGIC = b"\x28\xb5\x2f\xfd"  # what every bundle's first frame starts with

# -- limits (docs/bundle-format.md, "Limits") ----------------------------------------
# An untrusted bundle is read by verify and analyze; every metadata member has a size
# limit far above what the collector writes for a very large home (measured: about
# 240 bytes of index JSON per member, 1.0-1.6 KB of files.jsonl per record), so that no
# bundle can make either command hold more than a bounded amount of metadata.
MIB = 1024 * 1024
MAX_MEMBERS = 250_000  # members in one bundle (payload files, links, tag files): 2.5x a very large home
INDEX_COMPRESSED_MAX = 32 * MIB
INDEX_MAX = 96 * MIB  # decompressed index JSON
INDEX_VALUES_PER_MEMBER = 12  # ',', '[' and '{' bytes per member the index may hold (a member uses 8)
FILES_JSONL_MAX = 1024 * MIB  # streamed line by line, never held whole
FILES_JSONL_LINE_MAX = 1 * MIB  # one record (two paths of PATH_MAX, escaped and in base64, use < 60 KB)
FILES_JSONL_RECORDS_MAX = 2 * MAX_MEMBERS  # matches include skipped and failed files
COLLECTION_JSON_MAX = 4 * MIB
CATALOG_MEMBER_MAX = 1 * MIB  # one aitrail/catalog/<agent>.yaml
CATALOG_MEMBERS_MAX = 1000
MANIFEST_MAX = 128 * MIB  # manifest-sha256.txt: streamed line by line
TAG_MANIFEST_MAX = 1 * MIB  # one line per tag file (at most CATALOG_MEMBERS_MAX + 6); read whole to check the signature
MANIFEST_LINE_MAX = 64 * 1024
BAG_INFO_MAX = 1 * MIB
BAGIT_TXT_MAX = 4096
SIGNATURE_SIZE = 64  # an Ed25519 signature, exactly
TAR_HEADER_MAX = 1 * MIB  # a member's pax + ustar header blocks (the collector writes at most a few KB)
TAIL_WINDOW = 1 * MIB  # how far before the end a displaced trailer is looked for


def metadata_limit(name: str) -> int | None:
    """The size limit of a tag member, or None for payload and link members."""
    if name.startswith((PAYLOAD_DIR, LINKS_DIR)):
        return None
    if name.startswith(CATALOG_DIR):
        return CATALOG_MEMBER_MAX
    return {BAGIT_TXT: BAGIT_TXT_MAX, BAG_INFO: BAG_INFO_MAX, PAYLOAD_MANIFEST: MANIFEST_MAX,
            TAG_MANIFEST: TAG_MANIFEST_MAX, COLLECTION_JSON: COLLECTION_JSON_MAX, FILES_JSONL: FILES_JSONL_MAX,
            SIGNATURE: SIGNATURE_SIZE}.get(name, BAG_INFO_MAX)

# Bytes that never appear raw in a member name: the escape character itself,
# '%' (BagIt percent-encodes it in manifests, sha256sum would not), '\' (GNU
# sha256sum escapes it), and control characters (CR and LF break manifest lines).
ESCAPE = "^"
_ESCAPED_ASCII = {ord(ESCAPE), ord("%"), ord("\\"), 0x7F, *range(0x20)}
_CONTROL = re.compile("[\x00-\x1f\x7f]")
# lower-case hex SHA-256 (index, files.jsonl); a manifest line may spell it in either case. A pattern,
# not a loop over characters: these run once per member, on every bundle opened or verified.
SHA256_HEX = re.compile("[0-9a-f]{64}")
SHA256_HEX_ANY_CASE = re.compile("[0-9a-fA-F]{64}")
OCTAL_MODE = re.compile("[0-7]{1,12}")  # a recorded st_mode, as octal digits
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
    """The payload member name of a file of a location (``data/<label>/<escaped path>``)."""
    return member_name(PAYLOAD_DIR, label, parts)


def link_name(label: str, parts: tuple[bytes, ...]) -> str:
    """The member name a symlink of a location is stored under (``links/<label>/<escaped path>``)."""
    return member_name(LINKS_DIR, label, parts)


def payload_and_link_names(label: str, parts: tuple[bytes, ...]) -> tuple[str, str]:
    """``(payload_name, link_name)`` of one path, escaping its components once for both."""
    if not parts:
        below = label + "/"
    else:  # the files of one directory share its escaped path
        below = _escaped_directory(label, parts[:-1]) + escape_component(parts[-1])
    return PAYLOAD_DIR + below, LINKS_DIR + below


@functools.lru_cache(maxsize=4096)
def _escaped_directory(label: str, parts: tuple[bytes, ...]) -> str:
    return label + "/" + "".join(escape_component(part) + "/" for part in parts)


def is_safe_member_name(name: str) -> bool:
    """No absolute paths, no '..', no empty or '.' segments, no control characters."""
    if not name or name.startswith("/") or "\\" in name or _CONTROL.search(name):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def manifest_line(digest: str, name: str) -> str:
    """A line both ``sha256sum -c`` and BagIt accept (names never need escaping)."""
    return f"{digest}  {name}\n"


@dataclass(slots=True)  # slots: a bundle of MAX_MEMBERS members holds this many entries
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
        """Where the member's data begins in its decompressed frame (after its tar header)."""
        return self.member_offset + self.header_length

    @property
    def span_end(self) -> int:
        """End of the member's tar blocks (header, data, padding) in the decompressed frame."""
        return self.data_offset + self.size + (-self.size % 512)

    def as_record(self) -> dict:
        """The entry as the index's JSON stores it."""
        return {name: getattr(self, name) for name in _INDEX_FIELDS}


_INDEX_FIELDS = tuple(item.name for item in dataclasses.fields(IndexEntry))  # once, not once per member
