"""``aitrail extract``: a verified bundle's payload written back under the subject's own paths.

Each collected file is written to ``DIR/<its path on the subject>`` (the
``source_path`` bytes of files.jsonl, so the ``^XX`` escape of member names
is undone), with its permission bits (``mode & 0o777``: set-id and sticky
bits are not given to evidence copies) and its atime and mtime in
nanoseconds; links are made last, as links, with their recorded target.
ctime and birth time cannot be set by any tool: ``aitrail export bodyfile``
keeps all four.

Safety: ``DIR`` must not exist. Every directory is created and entered one
component at a time with ``O_NOFOLLOW | O_DIRECTORY`` and every file created
with ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to its directory's
descriptor, so nothing is written through a link, not even one this command
made. A path with an empty, ``.`` or ``..`` component, or a NUL byte, is
refused and named; the other files are still written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from aitrail.analyzer.outputs.payload import (
    PayloadEntry,
    UnsafePath,
    file_mode,
    file_times,
    iter_payload,
    path_parts,
    record_stat,
)
from aitrail.analyzer.view.sparse import write_sparse
from aitrail.collector.bundle import metadata
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass
class ExtractReport:
    """What was written and what was refused, by subject path."""

    files: int = 0
    links: int = 0
    bytes: int = 0
    refused: list[str] = field(default_factory=list)


class Extractor:
    """Writes members below one root directory descriptor, never through a link."""

    def __init__(self, reader: BundleReader, root_fd: int):
        self.reader = reader
        self.root_fd = root_fd
        self.report = ExtractReport()
        self.written: set[bytes] = set()

    def directory(self, parts: list[bytes]) -> int:
        """A descriptor of the directory ``parts`` below the root, created as needed (caller closes it)."""
        fd = os.dup(self.root_fd)
        for part in parts:
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            finally:
                os.close(fd)
            fd = child
        return fd

    def write_file(self, record: dict, raw: bytes) -> None:
        """One collected file: its bytes (zeros as holes), permission bits and a/m times; never half a file.

        A file that cannot be written whole (the disk fills, the member cannot
        be read) is removed and named among the refused.
        """
        parts = path_parts(raw)
        member = self.reader.member(record["member"])
        stat = record_stat(record)
        mode, times = file_mode(stat), file_times(stat)  # checked before anything is written
        parent = self.directory(parts[:-1])
        try:
            fd = os.open(parts[-1], FILE_FLAGS, 0o600, dir_fd=parent)
            try:
                self.report.bytes += write_sparse(fd, self.reader.iter_data(member))
                os.fchmod(fd, mode)
                os.utime(fd, ns=times)
            except BaseException:
                os.close(fd)
                fd = -1
                os.unlink(parts[-1], dir_fd=parent)
                raise
            finally:
                if fd >= 0:
                    os.close(fd)
        finally:
            os.close(parent)
        self.report.files += 1

    def write_link(self, record: dict, raw: bytes) -> None:
        """One link, as a link (never followed), with its a/m times."""
        parts = path_parts(raw)
        parent = self.directory(parts[:-1])
        try:
            os.symlink(metadata.link_target(record), parts[-1], dir_fd=parent)
            os.utime(parts[-1], ns=file_times(record_stat(record)), dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)
        self.report.links += 1

    def take(self, entry: PayloadEntry, write: Callable[[dict, bytes], None]) -> None:
        """Write one record's file or link once; a refusal is named, never raised."""
        record, raw = entry.record, entry.raw
        if raw in self.written:
            return  # two stores matched the same file: it is in the bundle, and here, once
        try:
            write(record, raw)
            self.written.add(raw)
        except (UnsafePath, OSError, ValueError, KeyError, TypeError, OverflowError, BundleFormatError) as exc:
            shown = raw.decode("utf-8", "backslashreplace")
            self.report.refused.append(f"{shown}: {exc}")


def extract(reader: BundleReader, directory: str) -> ExtractReport:
    """Write the payload of a verified bundle below ``directory`` (which must not exist)."""
    os.mkdir(directory, 0o755)
    root_fd = os.open(directory, DIRECTORY_FLAGS)
    try:
        extractor = Extractor(reader, root_fd)
        for entry in iter_payload(reader):  # files, then links: no file is ever written below one
            extractor.take(entry, extractor.write_link if entry.is_link else extractor.write_file)
        return extractor.report
    finally:
        os.close(root_fd)
