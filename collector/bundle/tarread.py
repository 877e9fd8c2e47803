"""Reading a member's tar header blocks quickly, for the shapes aitrail writes; tarfile for anything else.

verify parses the header of every member. Opening a ``tarfile.TarFile`` over
each member's header blocks costs about 100 microseconds, which on a bundle
of many small files is the largest single part of verification (17% of a
run over 1,806 small homes). ``read_header`` reads the two shapes the
collector writes (a pax extended header then a ustar header, or a ustar
header alone; a regular file or a symbolic link) and checks every field
tarfile would check. Whatever is not exactly such a shape, or holds a value
tarfile reads in a way of its own (a byte-order or base-256 number, an
encoding note, a record it would frame differently, bytes that are not
UTF-8, a name prefix), returns None, and the caller asks tarfile, which
decides. tests/collector/test_tarread.py compares the two on every member
of collected bundles, on random headers from both writers, and on damaged
ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BLOCK = 512
_RECORD = re.compile(rb"([1-9][0-9]*) ")
# pax keywords read here; any other (hdrcharset, GNU.sparse.*, SCHILY.*, comments) goes to tarfile
_KNOWN = frozenset({"path", "linkpath", "size", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname"})
_NUMBERS = re.compile(r"[0-9]+")
_TYPES = {b"0": "file", b"2": "symlink"}


@dataclass
class Header:
    """What verify reads of a member's header (the TarInfo attributes of the same name)."""

    name: str
    mode: int
    uid: int
    gid: int
    size: int
    linkname: str
    type: bytes
    pax_headers: dict = field(default_factory=dict)

    def issym(self) -> bool:
        """A symbolic link."""
        return self.type == b"2"

    def isreg(self) -> bool:
        """A regular file."""
        return self.type == b"0"


# The ustar block as tarfile and this collector write it: seven- and eleven-digit octal fields ended by a
# NUL, the checksum's six digits, NUL and space, "ustar\0" "00", device numbers zero or empty (tarfile
# leaves them empty but for devices), no name prefix.
_USTAR = re.compile(rb"(.{100})([0-7]{7})\0([0-7]{7})\0([0-7]{7})\0([0-7]{11})\0[0-7]{11}\0([0-7]{6})\0 (.)"
                    rb"(.{100})ustar\x0000(.{32})(.{32})(?:0000000\x00|\x00{8}){2}\x00{155}.{12}", re.DOTALL)


def _checked(block: bytes) -> dict | None:
    """The fields of one ustar block of that shape whose checksum tarfile accepts (the unsigned sum)."""
    match = _USTAR.fullmatch(block)
    if match is None:
        return None
    name, mode, uid, gid, size, checksum, kind, linkname, uname, gname = match.groups()
    if int(checksum, 8) != sum(block) - sum(block[148:156]) + 256:
        return None
    try:
        texts = [field.split(b"\0", 1)[0].decode("utf-8") for field in (name, linkname, uname, gname)]
    except UnicodeDecodeError:
        return None
    return {"name": texts[0], "linkname": texts[1], "mode": int(mode, 8), "uid": int(uid, 8), "gid": int(gid, 8),
            "size": int(size, 8), "type": kind}


def _records(data: bytes) -> dict | None:
    """The pax records of an extended header, when each is framed exactly and holds UTF-8 text."""
    if b"hdrcharset" in data:
        return None
    records, position = {}, 0
    while position < len(data) and data[position] != 0:
        match = _RECORD.match(data, position)
        if match is None:
            return None
        end = position + int(match.group(1))
        if end > len(data) or data[end - 1] != 0x0A:
            return None
        keyword, equals, value = data[match.end():end - 1].partition(b"=")
        try:
            keyword_text, value_text = keyword.decode("utf-8"), value.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if not equals or keyword_text not in _KNOWN or "\n" in keyword_text or "=" in keyword_text:
            return None
        records[keyword_text] = value_text
        position = end
    if any(data[position:]):
        return None
    return records


def read_header(head: bytes) -> Header | None:
    """The header of a member from its header blocks; None where tarfile must decide."""
    if len(head) < BLOCK:
        return None
    first = _checked(head[:BLOCK])
    if first is None:
        return None
    pax: dict = {}
    if first["type"] == b"x":
        padded = -(-first["size"] // BLOCK) * BLOCK
        if len(head) != BLOCK + padded + BLOCK:
            return None
        records = _records(head[BLOCK:BLOCK + first["size"]])
        if records is None or any(head[BLOCK + first["size"]:BLOCK + padded]):
            return None
        pax, main = records, _checked(head[BLOCK + padded:])
    else:
        main = first if len(head) == BLOCK else None
    if main is None or main["type"] not in _TYPES:
        return None
    for key in ("size", "uid", "gid"):
        if key in pax and not _NUMBERS.fullmatch(pax[key]):
            return None
    name = pax["path"].rstrip("/") if "path" in pax else main["name"]
    return Header(name=name, mode=main["mode"], uid=int(pax.get("uid", main["uid"])),
                  gid=int(pax.get("gid", main["gid"])), size=int(pax.get("size", main["size"])),
                  linkname=pax.get("linkpath", main["linkname"]), type=main["type"], pax_headers=pax)
