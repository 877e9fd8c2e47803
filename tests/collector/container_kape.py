r"""Build a KAPE target collection from a fake subject root, laid out as KAPE lays one out.

``build(fake_root, dest)`` stands ``fake_root`` for drive C: (``Users/alice/...``
is ``C:\Users\alice\...``) and writes what ``kape.exe --tsource C: --tdest
<tdest> --target ...`` leaves in ``--tdest`` (``dest``), or with ``zip=True``
what ``--zip`` leaves: the zip in ``dest`` and the console log beside it.
KAPE itself is a Windows .NET program that cannot run here, so the layout
follows its documentation and published collections:

* ``EricZimmerman/KapeDocs@6fbfee8`` ``Pages/3.-Using-KAPE.md`` (--tdest holds
  one folder per drive letter; --tdd deduplicates by SHA-1, the first file
  found wins; --zip zips --tdest), ``Pages/4.-Log-files.md`` (log names
  ``yyyy-MM-ddTHH_mm_ss_fffffff_CopyLog.csv`` / ``_SkipLog.csv`` /
  ``_ConsoleLog.txt``; the CopyLog's and SkipLog's columns; the console log
  goes to --tdest), ``Pages/0.-Changelog.md`` (0.8.2.0: the console log shows
  the first letter of the level; 0.8.8.0: empty skip logs deleted).
* KAPE 1.3.0.2 collections published in incident-response write-ups: the
  skip log named ``_SkipLog.csv.csv``; a --zip named
  ``yyyy-MM-ddTHHmmss_<name>.zip`` holding the logs and ``C/``, with the
  comment ``Created by KAPE version 1.3.0.2 on <time>Z``; CopyLog rows
  ``2025-09-02 08:32:16.9881736,C:\...,<tdest>\C\...,60146904,3FE9...,True,...``
  (UTF-8 with a BOM, CRLF, capital SHA-1, seven fraction digits).

Every regular file under the root is taken (credentials too: KAPE takes
what its targets name); links are not followed and not copied (KAPE's
targets have no link option since 0.9.0.0); a directory is made only where
a copy needs it. The records come from each file's real lstat:
ModifiedOnUtc the mtime, LastAccessedOnUtc the atime, and CreatedOnUtc the
inode change time standing in for NTFS's creation time (Python's lstat on
Linux has no birth time), each cut to 100 ns as KAPE writes them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
import zipfile
from pathlib import Path

BOM = "\ufeff"
COPY_HEADER = ("CopiedTimestamp,SourceFile,DestinationFile,FileSize,SourceFileSha1,DeferredCopy,CreatedOnUtc,"
               "ModifiedOnUtc,LastAccessedOnUtc,CopyDuration")
SKIP_HEADER = "SourceFile,SourceFileSha1,Reason"


def kape_time(ns: int) -> str:
    """A time as KAPE's logs write it: UTC, seven fraction digits."""
    seconds, rest = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds)) + f".{rest // 100:07d}"


def csv_field(value: str) -> str:
    """A CSV field quoted as CsvHelper quotes one (only when it holds a comma, quote or line break)."""
    return '"' + value.replace('"', '""') + '"' if any(char in value for char in ',"\r\n') else value


def subject_files(fake_root: Path) -> list[tuple[str, Path]]:
    """(relative path with '/', real path) of every regular file under the root, in a stable order."""
    found = []
    for directory, dirnames, filenames in os.walk(fake_root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(directory) / name
            if stat.S_ISREG(path.lstat().st_mode):
                found.append((path.relative_to(fake_root).as_posix(), path))
    return found


def build(fake_root: Path, dest: Path, *, zip: bool = False, run: str = "2026-03-01T10_20_30_1234567",
          tdest: str = r"D:\kape\tout", drive: str = "C", machine: str = "WS-ALICE", tsource: str = "C:",
          version: str = "1.3.0.2", dedupe: bool = True, skip_suffix: str = "_SkipLog.csv.csv",
          console: bool = True, zip_name: str = "ws-alice") -> Path:
    """Write KAPE's --tdest for ``fake_root`` (drive ``drive``) into ``dest``; the --tdest, or the zip made of it."""
    dest.mkdir(parents=True, exist_ok=True)
    tree = dest / "tdest-tree" if zip else dest
    copies, skips = [], []
    seen: dict[str, str] = {}
    for relative, path in subject_files(fake_root):
        data = path.read_bytes()
        sha1 = hashlib.sha1(data).hexdigest().upper()
        source = drive + ":\\" + relative.replace("/", "\\")
        if dedupe and sha1 in seen:
            skips.append(f"{csv_field(source)},{sha1},Deduped")
            continue
        seen[sha1] = source
        target = tree / drive / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        info = path.lstat()
        destination = tdest + "\\" + drive + "\\" + relative.replace("/", "\\")
        copies.append(",".join([
            kape_time(time.time_ns()), csv_field(source), csv_field(destination), str(len(data)), sha1, "False",
            kape_time(info.st_ctime_ns), kape_time(info.st_mtime_ns), kape_time(info.st_atime_ns),
            "00:00:00.0012345"]))
    _write_log(tree / f"{run}_CopyLog.csv", [COPY_HEADER, *copies])
    if skips:  # KAPE deletes an empty skip log
        _write_log(tree / f"{run}{skip_suffix}", [SKIP_HEADER, *skips])
    console_lines = _console(run, tdest, tsource, machine, version, len(copies) + len(skips), len(copies))
    if not zip:
        if console:
            _write_log(tree / f"{run}_ConsoleLog.txt", console_lines, bom=False)
        return dest
    stamp = run[:10] + "T" + run[11:19].replace("_", "")
    archive = dest / f"{stamp}_{zip_name}.zip"
    _zip_tree(tree, archive, f"Created by KAPE version {version} on {run[:10]}T{run[11:19].replace('_', ':')}."
                             f"{run[20:]}Z")
    shutil.rmtree(tree)
    if console:
        _write_log(dest / f"{run}_ConsoleLog.txt", console_lines, bom=False)
    return archive


def _write_log(path: Path, lines: list[str], bom: bool = True) -> None:
    path.write_bytes(((BOM if bom else "") + "".join(line + "\r\n" for line in lines)).encode("utf-8"))


def _console(run: str, tdest: str, tsource: str, machine: str, version: str, found: int, copied: int) -> list[str]:
    stamp = run[:10] + " " + run[11:19].replace("_", ":") + "." + run[20:]
    messages = [
        f"KAPE version {version}, Author: Eric Zimmerman, Contact: https://www.kroll.com/kape (kape@kroll.com)",
        r"KAPE directory: C:\Tools\KAPE",
        f"Command line:   --tsource {tsource} --tdest {tdest} --target AITrail --gui",
        f"System info: Machine name: {machine}, 64-bit: True, User: examiner OS: Windows10 (10.0.19045)",
        "Using Target operations",
        f"Found {found} files in 0.173 seconds. Beginning copy...",
        f"Copied {copied} out of {found} files in 0.5936 seconds. See {tdest}\\{run}_CopyLog.csv for copy details",
    ]
    return [f"{stamp} | I | {message}" for message in messages]


def _zip_tree(tree: Path, archive: Path, comment: str) -> None:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.comment = comment.encode("utf-8")
        for directory, dirnames, filenames in os.walk(tree):
            dirnames.sort()
            relative = Path(directory).relative_to(tree).as_posix()
            if relative != ".":
                out.writestr(relative + "/", b"")
            for name in sorted(filenames):
                path = Path(directory) / name
                out.write(path, path.relative_to(tree).as_posix())
