"""A verified bundle's payload as the outputs that rebuild the subject's tree read it (extract, export dissect).

Each collected file and link of ``aitrail/files.jsonl`` with its path on the
subject (the ``source_path`` bytes, so the ``^XX`` escape of member names is
undone), checked the same way for every output: a path with an empty, ``.``
or ``..`` component, or a NUL byte, is refused (``UnsafePath``); a mode or a
time that is not one is refused (``ValueError``). Nothing here writes.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.collector.bundle import metadata
from aitrail.collector.bundle.reader import BundleReader

# a/m times a file system (utime) or a tar header can hold: nanoseconds within a signed 64-bit time_t of seconds
TIME_LIMIT_NS = (1 << 62)


class UnsafePath(ValueError):
    """A path that cannot be written below the output's root as it is."""


@dataclass(frozen=True)
class PayloadEntry:
    """One collected file or link: its files.jsonl record and its path on the subject (raw bytes)."""

    record: dict
    raw: bytes
    is_link: bool


def path_parts(raw: bytes) -> list[bytes]:
    """The components of a subject path, or UnsafePath saying why it cannot be written."""
    if b"\x00" in raw:
        raise UnsafePath("a NUL byte in the path")
    parts = raw.lstrip(b"/").split(b"/")
    if not raw.lstrip(b"/") or any(part in (b"", b".", b"..") for part in parts):
        raise UnsafePath("an empty, '.' or '..' component")
    return parts


def path_of(record: dict) -> bytes:
    """The subject path of a record: source_path_b64's bytes, else source_path's text as bytes."""
    try:
        raw = base64.b64decode(record.get("source_path_b64") or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        raw = b""
    return raw or str(record.get("source_path") or "").encode("utf-8", "surrogateescape")


def record_stat(record: dict) -> dict:
    """The record's stat object (empty when it has none)."""
    stat = record.get("stat")
    return stat if isinstance(stat, dict) else {}


def file_times(stat: dict) -> tuple[int, int]:
    """(atime_ns, mtime_ns) of a files.jsonl stat, each a whole number utime takes; ValueError otherwise.

    A time recorded null (an imported file whose tool kept no access time, or
    no time at all: collector/foreign/) is given the other one, else 0.
    """
    values = []
    for key, other in (("atime_ns", "mtime_ns"), ("mtime_ns", "atime_ns")):
        value = stat.get(key, 0)
        if value is None:
            value = stat.get(other) if stat.get(other) is not None else 0
        if isinstance(value, bool) or not isinstance(value, int) or not -TIME_LIMIT_NS < value < TIME_LIMIT_NS:
            raise ValueError(f"stat.{key} is not a time in nanoseconds: {str(value)[:40]}")
        values.append(value)
    return values[0], values[1]


def file_mode(stat: dict) -> int:
    """The permission bits of a files.jsonl stat (octal text or a number); ValueError otherwise.

    Set-id and sticky bits are not given to evidence copies.
    """
    value = stat.get("mode", "600")
    if isinstance(value, bool) or not isinstance(value, (int, str)) or len(str(value)) > 12:
        raise ValueError(f"stat.mode is not a file mode: {str(value)[:40]}")
    return int(str(value), 8) & 0o777


def iter_payload(reader: BundleReader) -> Iterator[PayloadEntry]:
    """Every collected file (a record with a member), in files.jsonl order, then every link.

    Links come last so that nothing is ever written below one. Lines that are
    not objects are skipped (verify named them); a path is not checked here
    (``path_parts`` is, by the writer, which names what it refuses).
    """
    links = []
    for _line, record, _problem in metadata.iter_records(reader):
        if not isinstance(record, dict):
            continue
        if record.get("type") == "symlink" and record.get("link_target_b64") is not None:
            links.append(record)
        elif record.get("member"):
            yield PayloadEntry(record, path_of(record), False)
    for record in links:
        yield PayloadEntry(record, path_of(record), True)
