r"""The bundle's file records as a bodyfile (The Sleuth Kit's mactime 3.x format).

One line per ``aitrail/files.jsonl`` record that has a stat (every matched
file whose ``lstat`` succeeded, collected or not, credentials included: their
times are metadata, their content stays uncollected)::

    MD5|name|inode|mode_as_string|UID|GID|size|atime|mtime|ctime|crtime

* MD5: ``0`` by default. The field is MD5 in TSK's format, and plaso checks
  it: a SHA-256 there is one "invalid MD5 value" warning per line. The
  bundle holds SHA-256 only (its manifests' digest), so ``hash="sha256"``
  (``--hash sha256``) writes it there for tools that only carry the field
  (mactime does not check it), where the file was collected.
* name: the path on the subject (``source_path``), ``name -> target`` for a
  link; bytes that are not printable UTF-8, and ``|`` and ``\``, are written
  ``\xNN`` so that every line has eleven fields.
* times: whole seconds since the epoch (the nanoseconds of files.jsonl cut
  off, as mactime reads integers); ``crtime`` is the statx birth time, ``0``
  where the filesystem gave none.

Lines follow files.jsonl's order (deterministic: the collector sorts it).
"""

from __future__ import annotations

import base64
import binascii
import stat as stat_module
from collections.abc import Iterator

from aitrail.collector.bundle import metadata
from aitrail.collector.bundle.reader import BundleReader

NS = 1_000_000_000


def escaped(raw: bytes) -> str:
    """Path bytes as bodyfile text: printable UTF-8 kept, anything else (and the bar, the backslash) as hex escapes."""
    text = raw.decode("utf-8", "surrogateescape")
    out = []
    for char in text:
        if char in "|\\" or not char.isprintable() or "\udc80" <= char <= "\udcff":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogateescape"))
        else:
            out.append(char)
    return "".join(out)


def _b64(value) -> bytes:
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return b""


def _seconds(value) -> int:
    return value // NS if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _mode_string(mode) -> str:
    try:
        return stat_module.filemode(int(str(mode), 8))
    except ValueError:
        return "----------"


def _number(value) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


HASHES = ("none", "sha256")  # what the MD5 field holds: 0, or the collected file's SHA-256


def bodyfile_line(record: dict, hash_field: str = "none") -> str | None:
    """The bodyfile line of one files.jsonl record, or None when it has no stat (``hash_field``: HASHES)."""
    stat = record.get("stat")
    if not isinstance(stat, dict):
        return None
    name = escaped(_b64(record.get("source_path_b64")) or str(record.get("source_path") or "").encode())
    if record.get("type") == "symlink":
        name += " -> " + escaped(metadata.link_target(record))
    digest = record.get("sha256") if hash_field == "sha256" else "0"
    if not (isinstance(digest, str) and len(digest) == 64 and digest.isascii()
            and all(char in "0123456789abcdef" for char in digest)):
        digest = "0"  # the hash field is a digest or 0, never text of the bundle's (a '|' or newline in it)
    fields = [digest, name, _number(stat.get("ino")), _mode_string(stat.get("mode")), _number(stat.get("uid")),
              _number(stat.get("gid")), _number(stat.get("size")), str(_seconds(stat.get("atime_ns"))),
              str(_seconds(stat.get("mtime_ns"))), str(_seconds(stat.get("ctime_ns"))),
              str(_seconds(stat.get("btime_ns")))]
    return "|".join(fields) + "\n"


def bodyfile_lines(reader: BundleReader, hash_field: str = "none") -> Iterator[str]:
    """Every bodyfile line of a (verified) bundle, in files.jsonl order."""
    for _number_of_line, record, _problem in metadata.iter_records(reader):
        line = bodyfile_line(record, hash_field) if isinstance(record, dict) else None
        if line is not None:
            yield line
