"""What the UAC and acquire readers share: files a tool writes beside its container, zip details, printing names.

UAC writes ``<name>.log`` (the acquisition log, with the archive's digests)
beside its archive, acquire ``<name>.report.json`` and ``<name>.log``; those
are the tool's records too, so the readers read them (bounded, never
through a link) when they are there, and say so when they are not.

Python's zipfile decodes a member name without the UTF-8 flag (bit 11) as
CP437, as the zip specification says; Info-ZIP's ``zip`` on Unix (UAC runs
it under ``LC_ALL=C``, ``tclahr/uac@7376467 uac`` and ``lib/zip_data.sh``)
writes the name's raw bytes with no flag, so a UTF-8 name reads as
``caf├⌐``. ``zip_details`` gives each member's name as its raw bytes
decoded as UTF-8 (surrogateescape, as tarfile decodes), and the extra
fields Info-ZIP writes (APPNOTE.TXT 4.5; Info-ZIP ``proginfo/extrafld.txt``):
``UT`` (0x5455, the UTC mtime) and ``ux`` (0x7875, uid and gid).
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAX_SIDECAR_BYTES = 64 * 1024 * 1024  # a report or log beside the container larger than this is not read
UTF8_FLAG = 0x800
UT_EXTRA = 0x5455
UX_EXTRA = 0x7875


def printable(text: str, limit: int = 300) -> str:
    r"""``text`` safe to print and to encode as UTF-8 (undecodable bytes as ``\xNN``), cut at ``limit``."""
    safe = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    safe = "".join(char if char.isprintable() else repr(char)[1:-1] for char in safe)
    return safe if len(safe) <= limit else safe[:limit] + "..."


def fact(value, source: str) -> dict:
    """One statement of the container's metadata: the value and where it was read."""
    return {"value": value, "source": source}


def read_sidecar(path: str, limit: int = MAX_SIDECAR_BYTES) -> tuple[bytes | None, str | None]:
    """The bytes of the regular file ``path`` (never through a link); (None, why) when it is absent or refused."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{os.path.basename(path)}: not read ({exc.strerror})"
    with os.fdopen(fd, "rb") as handle:
        if not stat_module.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None, f"{os.path.basename(path)}: not a regular file; not read"
        data = handle.read(limit + 1)
    if len(data) > limit:
        return None, f"{os.path.basename(path)}: larger than {limit} bytes; not read"
    return data, None


def container_stem(path: str, suffixes: Iterable[str]) -> str:
    """The container's path without the archive suffix the tool gave it (``x.tar.gz`` -> ``x``)."""
    trimmed = path.rstrip("/")
    for suffix in suffixes:
        if trimmed.endswith(suffix):
            return trimmed[: -len(suffix)]
    return trimmed


def file_digests(path: str, algorithms: Iterable[str]) -> dict[str, str]:
    """The container file's digests in the named algorithms (md5, sha1, sha256), in one pass."""
    hashers = {name: hashlib.new(name, usedforsecurity=False) for name in algorithms}
    if not hashers:
        return {}
    with open(path, "rb") as handle:
        while chunk := handle.read(1024 * 1024):
            for hasher in hashers.values():
                hasher.update(chunk)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


READ_ERRORS = (OSError, EOFError, zlib.error, tarfile.TarError, zipfile.BadZipFile, NotImplementedError, ValueError,
               RuntimeError)  # RuntimeError: zipfile on an encrypted member


@dataclass
class ZipDetail:
    """What a zip's central directory says of one member beyond what zipfile gives by default."""

    name: str  # the member name as the tool meant it (raw bytes as UTF-8 where the flag is not set)
    mtime_utc: int | None = None  # seconds, from the UT extra field
    uid: int | None = None
    gid: int | None = None
    create_system: int = 0
    utf8_flag: bool = False


def zip_details(path: str) -> dict[str, ZipDetail]:
    """Member name (as zipfile gives it) -> its details; empty when the zip cannot be read (the scan said why)."""
    details: dict[str, ZipDetail] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                details.setdefault(info.filename, _zip_detail(info))
    except READ_ERRORS:
        return {}
    return details


def _zip_detail(info: zipfile.ZipInfo) -> ZipDetail:
    utf8 = bool(info.flag_bits & UTF8_FLAG)
    name = info.filename
    if not utf8:
        try:
            name = info.filename.encode("cp437").decode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            name = info.filename
    detail = ZipDetail(name=name, create_system=info.create_system, utf8_flag=utf8)
    for tag, body in _extra_fields(info.extra):
        if tag == UT_EXTRA and len(body) >= 5 and body[0] & 1:
            detail.mtime_utc = struct.unpack("<i", body[1:5])[0]
        elif tag == UX_EXTRA and len(body) >= 3 and body[0] == 1:
            detail.uid, detail.gid = _ux_ids(body)
    return detail


def _extra_fields(extra: bytes) -> Iterator[tuple[int, bytes]]:
    offset = 0
    while offset + 4 <= len(extra):
        tag, size = struct.unpack("<HH", extra[offset:offset + 4])
        body = extra[offset + 4:offset + 4 + size]
        if len(body) < size:
            return
        yield tag, body
        offset += 4 + size


def _ux_ids(body: bytes) -> tuple[int | None, int | None]:
    """The uid and gid of an Info-ZIP ``ux`` field: version 1, then size-prefixed little-endian numbers."""
    values: list[int | None] = []
    offset = 1
    for _ in range(2):
        if offset >= len(body):
            values.append(None)
            continue
        size = body[offset]
        raw = body[offset + 1:offset + 1 + size]
        values.append(int.from_bytes(raw, "little") if len(raw) == size and 0 < size <= 8 else None)
        offset += 1 + size
    return values[0], values[1]
