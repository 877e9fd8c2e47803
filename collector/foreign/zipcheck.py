"""A zip looked at before its members are read: encrypted members and the comment (KAPE and Velociraptor readers).

``Archive`` (container.py) reads a zip's members with ``zipfile``, which
raises for an encrypted member; a password-protected KAPE zip (``--zpw``)
or Velociraptor collection (``data.zip`` inside, ``reporting/container.go``
``NewContainerFromWriter`` at ``Velocidex/velociraptor@cd02ac6``) is named
here and refused before any member is opened.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field

from aitrail.collector.foreign.container import MAX_MEMBERS, ContainerError

ENCRYPTED_FLAG = 0x1


@dataclass
class ZipLook:
    """What the central directory says before any member is read."""

    comment: str = ""
    encrypted: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


def look(path: str) -> ZipLook:
    """The zip's comment, its member names and those encrypted (ContainerError: not a zip, or too many members)."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ContainerError(f"{path}: more than {MAX_MEMBERS} members; refused")
            comment = archive.comment.decode("utf-8", "replace")
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ContainerError(f"{path}: not a readable zip ({exc})") from None
    return ZipLook(comment=comment, names=[info.filename for info in infos],
                   encrypted=[info.filename for info in infos if info.flag_bits & ENCRYPTED_FLAG])
