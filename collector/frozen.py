"""The frozen collector: whether this process is one, and which build it is.

``packaging/build_frozen_collector.py`` freezes the collector alone (no
analyzer, no PyYAML) with PyInstaller into one folder, run in place from
removable media: nothing is unpacked on the subject. The build writes
BUILD_MANIFEST into that folder: what it was built from and the SHA-256 of
every other file in it. At run time ``build_identity`` hashes every file of
the folder again, so collection.json names the build that ran and says
whether the folder is still the one the build made.

Standalone (it imports nothing of aitrail) so that the build script computes
the source and folder digests with this very code.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
from pathlib import Path

BUILD_MANIFEST = "aitrail-collector-build.json"
MANIFEST_FORMAT = 1
MAX_DIFFERENCES = 50  # paths named in collection.json when the folder is not as built (the count is always given)
COLLECTOR_ONLY = "this is the collector-only build; run it on the workstation with the full install"
_CHUNK = 1 << 20


def running_frozen() -> bool:
    """True in a PyInstaller build (it sets ``sys.frozen``); every such build of aitrail is collector-only."""
    return bool(getattr(sys, "frozen", False))


def source_digest(package: Path) -> str:
    """SHA-256 over (relative path, length, bytes) of every ``*.py`` file under ``package``, in path order.

    The collector's own digest (runinfo.collector_digest): over the checkout's
    or the wheel's files when they are what runs, and over the sources the
    build froze when written into BUILD_MANIFEST.
    """
    package = Path(package)
    hasher = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        data = path.read_bytes()
        hasher.update(f"{relative}\0{len(data)}\0".encode())
        hasher.update(data)
    return hasher.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of one file's bytes, read in chunks (a link put in its place is refused, not followed)."""
    hasher = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)),
                   "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def folder_files(folder: Path) -> dict[str, dict]:
    """Every entry of a build folder but its directories, by relative POSIX path, never following a link.

    A regular file is ``{"size", "sha256"}``; anything else is
    ``{"kind": "link", "target"}``, ``{"kind": "other"}``, or, where it
    could not be read or listed, ``{"kind": "unreadable", "error"}``. A build
    makes only regular files: the others are listed so that one added or
    damaged later shows, and none of them stops the collection.
    """
    folder = Path(folder)
    found: dict[str, dict] = {}

    def unlisted(error: OSError) -> None:
        where = Path(error.filename or folder)
        found[where.relative_to(folder).as_posix() if where != folder else "."] = _unreadable(error)

    for directory, subdirectories, names in os.walk(folder, onerror=unlisted):
        # os.walk puts a link to a directory among the directories: it is an entry here, never walked
        links = [name for name in subdirectories if os.path.islink(os.path.join(directory, name))]
        for name in (*names, *links):
            path = Path(directory, name)
            found[path.relative_to(folder).as_posix()] = _entry(path)
    return dict(sorted(found.items(), key=lambda item: os.fsencode(item[0])))


def _entry(path: Path) -> dict:
    """One entry of folder_files."""
    try:
        status = os.lstat(path)
        if stat.S_ISREG(status.st_mode):
            return {"size": status.st_size, "sha256": file_sha256(path)}
        if stat.S_ISLNK(status.st_mode):
            return {"kind": "link", "target": os.readlink(path)}
    except OSError as exc:
        return _unreadable(exc)
    return {"kind": "other"}


def _unreadable(error: OSError) -> dict:
    return {"kind": "unreadable", "error": error.strerror or str(error)}


def folder_digest(files: dict[str, dict]) -> str:
    r"""SHA-256 of the ``sha256sum`` listing of a folder's regular files, in byte order of their paths.

    The same as ``cd FOLDER && find . -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum``
    for paths without a newline or backslash (sha256sum escapes those). Links
    and other entries are not in it; ``build_identity`` names them.
    """
    listing = "".join(f"{entry['sha256']}  {relative}\n" for relative, entry in files.items() if "sha256" in entry)
    return hashlib.sha256(listing.encode("utf-8", "surrogateescape")).hexdigest()


def build_folder() -> Path:
    """The folder of the running frozen build (its executable's)."""
    return Path(os.path.abspath(sys.executable)).parent


def read_manifest(folder: Path) -> dict | None:
    """The build manifest in ``folder``, or None when it is missing or not a manifest of this format."""
    try:
        manifest = json.loads((Path(folder) / BUILD_MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        return None
    return manifest


def differences(manifest: dict | None, files: dict[str, dict]) -> list[str]:
    """What differs between a folder and its manifest: ``changed: P``, ``missing: P``, ``added: P``."""
    if manifest is None:
        return [f"missing: {BUILD_MANIFEST}"]
    built = manifest.get("files") if isinstance(manifest.get("files"), dict) else {}
    found = {relative: entry for relative, entry in files.items() if relative != BUILD_MANIFEST}
    lines = [f"changed: {path}" for path in found if path in built and built[path] != found[path]]
    lines += [f"missing: {path}" for path in built if path not in found]
    lines += [f"added: {path}" for path in found if path not in built]
    return lines


@functools.cache
def build_identity() -> dict:
    """What names the running frozen build, for collection.json's ``tool.build``.

    ``executable_sha256`` and ``folder_sha256`` (folder_digest over every
    regular file of the folder, BUILD_MANIFEST included) are computed now;
    ``manifest`` is what the build wrote about itself; ``as_built`` says
    whether every file is the one the manifest lists, with nothing missing or
    added (``differences`` names the first MAX_DIFFERENCES that are not).
    Computed once per process: it reads the whole folder (about 33 MB).
    """
    folder = build_folder()
    files = folder_files(folder)
    manifest = read_manifest(folder)
    changes = differences(manifest, files)
    executable = Path(os.path.abspath(sys.executable)).relative_to(folder).as_posix()
    own = {key: value for key, value in (manifest or {}).items() if key != "files"}
    return {
        "folder": str(folder),
        "executable": executable,
        "executable_sha256": files.get(executable, {}).get("sha256"),
        "folder_sha256": folder_digest(files),
        "folder_files": len(files),
        "folder_bytes": sum(entry.get("size", 0) for entry in files.values()),
        "not_regular_files": sorted(relative for relative, entry in files.items() if "sha256" not in entry),
        "manifest_sha256": files.get(BUILD_MANIFEST, {}).get("sha256"),
        "manifest": own or None,
        "as_built": not changes,
        "differences_count": len(changes),
        "differences": changes[:MAX_DIFFERENCES],
    }


def built_collector_digest() -> str | None:
    """The collector's source digest the build wrote into its manifest (None when the manifest is unreadable)."""
    manifest = build_identity()["manifest"] or {}
    value = manifest.get("collector_sha256")
    return value if isinstance(value, str) else None
