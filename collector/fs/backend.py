"""What every platform backend offers the walk and the capture, and the refusals they raise.

A backend opens directories and files relative to a directory descriptor
without following links, takes lstat/fstat metadata (with birth time where
the platform gives it), lists and reads links, and says which access-time
protection each open had. The walk (finding/walk.py), the capture
(reading/capture.py) and the secret-inode listing (finding/secret_inodes.py)
call nothing platform-specific except through it. Two implement it:
linux.py (O_NOATIME, statx) and posix.py (macOS and the BSDs); platform.py
chooses one per run.
"""

from __future__ import annotations

import os

from aitrail.collector.fs.meta import Meta

# The values of files.jsonl's ``atime_protection``: what kept a read from moving the file's access time.
ATIME_O_NOATIME = "o_noatime"
ATIME_NONE = "none"

# <sys/stat.h> of macOS (and FreeBSD): the file's bytes are not on this disk; reading them makes the
# cloud provider (iCloud Drive, any File Provider) download them, a change the collection would cause.
SF_DATALESS = 0x40000000

PRIVACY_NOTE = (
    "macOS refused it with EPERM (Operation not permitted): most likely its privacy protection (TCC), "
    "which keeps ~/Library/Containers, ~/Documents, ~/Desktop, ~/Downloads, Mail, Messages and other folders "
    "from every program without Full Disk Access; give the program that runs aitrail (the terminal, or the "
    "agent or service that starts it) Full Disk Access in System Settings > Privacy & Security > Full Disk "
    "Access, and collect again"
)
DATALESS_REASON = (
    "a cloud placeholder (st_flags SF_DATALESS): its bytes are not on this disk and reading it would make the "
    "cloud provider download them, so it was never opened; its lstat is recorded"
)


class PrivacyRefused(PermissionError):
    """EPERM from macOS on an open, a listing or an lstat: most likely TCC (see PRIVACY_NOTE).

    A PermissionError, so every ``except PermissionError`` and errno test
    treats it as before (outcome ``permission_denied``); files.jsonl adds
    ``platform_note`` to the record's notes (bundle/records.py).
    """

    platform_note = PRIVACY_NOTE


class DatalessRefused(OSError):
    """A directory flagged SF_DATALESS: listing it would download it, so it is not listed (no errno)."""

    def __init__(self, name: str | bytes):
        super().__init__(f"a cloud placeholder directory (st_flags SF_DATALESS), not listed: listing it would make "
                         f"the cloud provider download it ({os.fsdecode(name)!r})")


class Backend:
    """The operations of the seam; see linux.py and posix.py for what each platform does.

    Attributes:
        name: ``linux`` or ``posix``.
        chosen_by: how this run chose it (``AITRAIL_PLATFORM=posix``, ``sys.platform linux``).
        atime_protection: the protection a read is opened with where the system allows it
            (``o_noatime``), or ``none``; each file records what it actually had.
        birth_time_source: where ``btime_ns`` comes from (``statx``, ``st_birthtime_ns``,
            ``st_birthtime``) or ``none``.
        birth_time_precision: ``ns``, ``float seconds`` or None when there is no birth time.
        dataless_check: how cloud placeholders are recognised before any open, or ``none``.
        privacy_refusals: EPERM is named as macOS privacy protection (TCC) in the records.
    """

    name = ""
    atime_protection = ATIME_NONE
    birth_time_source = "none"
    birth_time_precision: str | None = None
    dataless_check = "none"
    privacy_refusals = False

    def __init__(self, chosen_by: str):
        self.chosen_by = chosen_by

    def open_dir(self, name: str | bytes, parent_fd: int | None, follow: bool = False) -> tuple[int, bool]:
        """Open a directory relative to ``parent_fd`` (never through a link unless ``follow``); (fd, O_NOATIME used)."""
        raise NotImplementedError

    def open_file(self, name: str | bytes, parent_fd: int) -> tuple[int, str]:
        """Open a file to read relative to ``parent_fd``, never through a link, never blocking; (fd, protection)."""
        raise NotImplementedError

    def lstat_at(self, dir_fd: int | None, name: str | bytes) -> Meta:
        """Lstat ``name`` relative to ``dir_fd`` (a path when None), with birth time where the platform has it."""
        raise NotImplementedError

    def quick_lstat_at(self, dir_fd: int, name: str | bytes) -> Meta:
        """Lstat for comparisons and classification only: birth time may be left out where it costs more."""
        raise NotImplementedError

    def fstat_meta(self, fd: int) -> Meta:
        """The metadata of an open descriptor (birth time not needed: it never changes for an inode)."""
        raise NotImplementedError

    def readlink(self, name: str | bytes, dir_fd: int) -> str | bytes:
        """A link's target, relative to ``dir_fd`` (bytes for a bytes name)."""
        raise NotImplementedError

    def scandir(self, fd: int):
        """``os.scandir(fd)`` as a context manager whose iteration errors are the backend's."""
        raise NotImplementedError

    def record(self) -> dict:
        """The ``platform`` object of collection.json: what this backend protected and recorded."""
        return {
            "backend": self.name,
            "chosen_by": self.chosen_by,
            "atime_protection": self.atime_protection,
            "birth_time_source": self.birth_time_source,
            "birth_time_precision": self.birth_time_precision,
            "dataless_check": self.dataless_check,
            "privacy_refusals_named": self.privacy_refusals,
        }
