"""Build an acquire collection from a fake subject root, as acquire 3.22 lays one out (for the acquire reader's tests).

The layout follows ``fox-it/acquire@f4b0fa4`` and the PyPI release 3.22:
``acquire/acquire.py`` (``dir_base`` ``fs/$rootfs$`` for a non-Windows
target, the report's keys, ``format_output_name``: ``<name>_<UTC time>``),
``acquire/collector.py`` (``Collector.collect_path``: a link is written,
then its target under its own path; only files and links get members;
``METADATA_BASE``), ``acquire/outputs/tar.py`` (PAX tar, mode 0644,
``root`` owner, ``mtime`` the lstat's float), ``acquire/outputs/zip.py``
(the UTC mtime, years before 1980 as 1980, mode 0777 with the type, a link
as empty content), ``acquire/outputs/dir.py`` (no times, a link as an empty
file), ``acquire/hashes.py`` (``file-hashes.csv.gz``), and was compared with
``acquire`` 3.22 run against a fake root (test_import_acquire.py
``test_real_acquire_*``).

Every regular file and link under the root is taken, credentials included,
with its real lstat; a FIFO or other special file is reported as a failure
and not written, as acquire does ("Don't know how to collect").
"""

from __future__ import annotations

import csv
import datetime
import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import time
import zipfile
from pathlib import Path

VERSION = "3.22"
DEFAULT_TIME = 1_767_322_800  # 2026-01-02 03:00:00 UTC: when the fake collection "ran"
BASE = "fs/$rootfs$"


def build(fake_root: Path, dest: Path, *, output_type: str = "tar", compress: bool = False,
          hostname: str = "fakehost", hashes: bool = False, report: bool = True, log: bool = True,
          when: int = DEFAULT_TIME) -> Path:
    """Turn ``fake_root`` into ``dest/<hostname>_<UTC time>.tar`` (``.tar.gz``, ``.zip``, or a directory).

    ``output_type`` is acquire's ``-ot`` (``tar``, ``zip``, ``dir``),
    ``compress`` its ``--compress`` and ``hashes`` its ``--hashes`` module
    with a glob over the whole root; the report and log are written beside.
    """
    stem = f"{hostname}_{time.strftime('%Y%m%d%H%M%S', time.gmtime(when))}"
    walk = list(_walk(fake_root))
    # Measured with acquire 3.22: a name that is not UTF-8 fails the whole --hashes module (its CSV writer
    # cannot encode it), and a zip cannot name it (reported "missing"); a tar names it with hdrcharset=BINARY.
    unnamed = {relative for relative, _, _ in walk if not _utf8(relative)}
    missing = unnamed if output_type == "zip" else set()
    members = [(f"{BASE}/{relative}", path, result) for relative, path, result in walk
               if _collectable(result) and relative not in missing]
    hashed = hashes and not unnamed
    metadata = [(f"{BASE}/$metadata$/file-hashes.csv.gz", _hash_csv(walk))] if hashed else []
    writer = {"tar": _write_tar, "zip": _write_zip, "dir": _write_dir}[output_type]
    output = writer(dest, stem, compress, members, metadata)
    if report:
        _write_report(dest / f"{stem}.report.json", fake_root, hostname, walk, (hashes, hashed), missing, when)
    if log:
        _write_log(dest / f"{stem}.log", fake_root, dest, output, hostname, walk, when)
    return output


def _walk(root: Path):
    """(relative path, absolute path, lstat) of everything below root."""
    for directory, names, files in os.walk(root):
        for name in sorted(names + files):
            path = Path(directory) / name
            yield path.relative_to(root).as_posix(), path, os.lstat(path)
        names.sort()


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _collectable(result: os.stat_result) -> bool:
    return stat.S_ISREG(result.st_mode) or stat.S_ISLNK(result.st_mode)


def _write_tar(dest: Path, stem: str, compress: bool, members, metadata) -> Path:
    path = dest / (f"{stem}.tar.gz" if compress else f"{stem}.tar")
    with tarfile.open(path, "w:gz" if compress else "w:", format=tarfile.PAX_FORMAT) as archive:
        for name, source, result in members:
            info = tarfile.TarInfo(name)  # mode 0644, uid 0: acquire sets neither
            info.uname = info.gname = "root"
            info.mtime = result.st_mtime
            if stat.S_ISLNK(result.st_mode):
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(source)
                archive.addfile(info, io.BytesIO(b""))
            else:
                info.size = result.st_size
                with open(source, "rb") as handle:
                    archive.addfile(info, handle)
        for name, content in metadata:
            info = tarfile.TarInfo(name)
            info.uname = info.gname = "root"
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return path


def _write_zip(dest: Path, stem: str, compress: bool, members, metadata) -> Path:
    path = dest / f"{stem}.zip"
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=method, allowZip64=True) as archive:
        for name, source, result in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            kind = stat.S_IFLNK if stat.S_ISLNK(result.st_mode) else stat.S_IFREG
            info.external_attr = (kind | 0o777) << 16
            moment = datetime.datetime.fromtimestamp(result.st_mtime, tz=datetime.UTC)
            info.date_time = (max(moment.year, 1980), moment.month, moment.day, moment.hour, moment.minute,
                              moment.second)
            content = b"" if kind == stat.S_IFLNK else Path(source).read_bytes()
            archive.writestr(info, content)
        for name, content in metadata:
            info = zipfile.ZipInfo(name)  # no entry: 1980-01-01, zipfile's default
            info.compress_type = method
            archive.writestr(info, content)
    return path


def _write_dir(dest: Path, stem: str, compress: bool, members, metadata) -> Path:
    path = dest / stem
    for name, source, result in members:
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if stat.S_ISLNK(result.st_mode):
            target.write_bytes(b"")  # acquire's directory output writes a link as an empty file
        else:
            shutil.copyfile(source, target)
    for name, content in metadata:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(content)
    return path


def _hash_csv(walk) -> bytes:
    """``file-hashes.csv.gz``: path, file-size, md5, sha1, sha256 of each file (a link hashed through)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\r\n")
    writer.writerow(["path", "file-size", "md5", "sha1", "sha256"])
    for relative, path, result in walk:
        if not _collectable(result):
            continue
        try:
            content = Path(path).read_bytes()
        except OSError:
            continue  # a dangling link: acquire's filter drops what is not a file
        writer.writerow([f"/{relative}", len(content), hashlib.md5(content).hexdigest(),
                         hashlib.sha1(content).hexdigest(), hashlib.sha256(content).hexdigest()])
    return gzip.compress(text.getvalue().encode(), mtime=0)


def _write_report(path: Path, root: Path, hostname: str, walk, hashes: tuple[bool, bool], missing: set[str],
                  when: int) -> None:
    records: dict[str, list] = {"success": [], "failure": [], "missing": []}
    for relative, _, result in walk:
        if stat.S_ISDIR(result.st_mode):
            continue
        kind = "file" if stat.S_ISREG(result.st_mode) else "symlink" if stat.S_ISLNK(result.st_mode) else "path"
        outcome = "missing" if relative in missing else "success" if _collectable(result) else "failure"
        records[outcome].append({"artifact_type": kind, "artifact_value": f"/{relative}", "details": None,
                                 "module_name": "cli-args", "outcome": outcome})
    report = {"target": f"<Target {root}>", "name": hostname,
              "timestamp": datetime.datetime.fromtimestamp(when, tz=datetime.UTC).isoformat(),
              "modules-successful": ["cli-args"] + (["FileHashes"] if hashes[1] else []),
              "modules-failed": {"FileHashes": "UnicodeEncodeError: surrogates not allowed"}
              if hashes[0] and not hashes[1] else {},
              "cli-args": {key: value for key, value in records.items() if value}}
    if hashes[1]:
        report["FileHashes"] = {"success": [{"artifact_type": "file", "details": None, "module_name": "FileHashes",
                                             "artifact_value": f"/{BASE}/$metadata$/file-hashes.csv.gz",
                                             "outcome": "success"}]}
    path.write_text(json.dumps(report, sort_keys=True, indent=4))


def _write_log(path: Path, root: Path, dest: Path, output: Path, hostname: str, walk, when: int) -> None:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S,000", time.gmtime(when))
    lines = [f"[{stamp}] [INFO ]                        _", f"  by Fox-IT   |_|             v{VERSION}",
             "  part of NCC Group", "", f"[{stamp}] [INFO ] User: root | Admin: True",
             f"[{stamp}] [INFO ] Arguments: {root} -o {dest} --profile none --path /",
             f"[{stamp}] [INFO ] Loading target {hostname}", f"[{stamp}] [INFO ] Writing output to {output}"]
    for relative, _, result in walk:
        if not stat.S_ISDIR(result.st_mode) and not _collectable(result):
            lines.append(f"[{stamp}] [ERROR] - Don't know how to collect /{relative} in module cli-args")
    lines += [f"[{stamp}] [INFO ] Output: {output}", f"[{stamp}] [INFO ] Acquiring artifacts succeeded",
              f"[{stamp}] [INFO ] Acquire finished successful"]
    path.write_text("\n".join(lines) + "\n")
