"""Build a UAC 3 collection from a fake subject root, as UAC 3.3.0 lays one out (for the uac reader's tests).

The layout follows ``tclahr/uac@7376467`` (3.3.0), read in ``uac`` (the
member list: ``uac.log``, ``hash_list.*``, the artifacts' outputs, then
``[root]/...``; ``[root]`` a link to the mount point unless files are copied
first), ``lib/tar_gz_data.sh`` / ``lib/tar_data.sh`` (GNU ``tar -T``),
``lib/zip_data.sh`` (``zip -6 -r -@``: Info-ZIP follows links, writes raw
name bytes, ``UT`` and ``ux`` extra fields), ``lib/copy_data.sh``
(``cp -r`` with ``-H`` and ``-f none``), ``lib/log_msg.sh`` (uac.log lines),
``lib/create_acquisition_log.sh`` (``<name>.log`` beside the archive),
``lib/find_based_collector.sh`` and ``artifacts/bodyfile/bodyfile.yaml``
(``bodyfile/bodyfile.txt`` by ``statx``), and compared with real UAC runs
against a fake root (test_import_uac.py ``test_real_uac_*``).

Every regular file and link under the root is taken, credentials included,
with its real lstat; FIFOs and other special files are left out, as
``lib/remove_non_regular_files.sh`` leaves them out. Names are taken as
bytes, so a name that is not UTF-8 is written as UAC writes it.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
import subprocess
import tarfile
import time
import zlib
from pathlib import Path

VERSION = "3.3.0"
DEFAULT_TIME = 1_767_322_800  # 2026-01-02 03:00:00 UTC: when the fake collection "ran"


def build(fake_root: Path, dest: Path, *, output_format: str = "tar.gz", hostname: str = "fakehost",
          mount_point: str | None = None, bodyfile: bool = True, hash_collected: bool = False,
          acquisition_log: bool = True, when: int = DEFAULT_TIME) -> Path:
    """Turn ``fake_root`` into ``dest/uac-<hostname>-linux-<time>.<ext>`` (or a directory for ``none``).

    ``output_format`` is ``tar.gz`` (UAC's ``-f tar`` with gzip), ``tar``,
    ``zip`` or ``none``; ``mount_point`` the path UAC was given with ``-m``
    (default: the fake root's own path); ``hash_collected`` is ``-H``.
    """
    mount = mount_point or str(fake_root)
    copied = hash_collected or output_format == "none"
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(when))
    base = f"uac-{hostname}-linux-{stamp}"
    walk = list(_walk(fake_root))
    records: list[tuple[str, bytes]] = []
    log = _uac_log(fake_root, dest, base, mount, hostname, output_format, hash_collected, bodyfile, when)
    if bodyfile:
        records.append(("bodyfile/bodyfile.txt", _bodyfile(fake_root, walk, mount)))
    if hash_collected:
        listed = [name for name, _ in records] + [f"[root]/{relative}" for relative, _ in _collected(walk)]
        contents = dict(records)
        for algorithm in ("sha1", "md5"):  # inserted in front: md5 ends first, as UAC lists them
            lines = [_hash_line(algorithm, name, contents.get(name), fake_root) for name in listed]
            records.insert(0, (f"hash_list.{algorithm}", b"".join(line for line in lines if line)))
    records.insert(0, ("uac.log", log))
    writer = {"tar.gz": _write_tar, "tar": _write_tar, "zip": _write_zip, "none": _write_dir}[output_format]
    output = writer(dest, base, output_format, records, fake_root, walk, copied, when)
    if acquisition_log:
        _write_acquisition_log(dest, base, output, output_format, hostname, mount, when)
    return output


# -- the subject's tree ------------------------------------------------------------------

def _walk(root: Path):
    """(relative path as bytes, lstat) of everything below root, as find lists it (root itself first)."""
    yield b"", os.lstat(root)
    stack = [b""]
    while stack:
        relative = stack.pop()
        directory = os.path.join(os.fsencode(root), relative) if relative else os.fsencode(root)
        for name in sorted(os.listdir(directory)):
            child = relative + b"/" + name if relative else name
            result = os.lstat(os.path.join(os.fsencode(root), child))
            yield child, result
            if stat.S_ISDIR(result.st_mode):
                stack.append(child)


def _collected(walk):
    """What UAC's file collector keeps: regular files and links (tclahr/uac lib/remove_non_regular_files.sh)."""
    return [(os.fsdecode(relative), result) for relative, result in walk
            if relative and (stat.S_ISREG(result.st_mode) or stat.S_ISLNK(result.st_mode))]


def _mode_string(mode: int) -> str:
    return stat.filemode(mode)


def _bodyfile(root: Path, walk, mount: str) -> bytes:
    """The bodyfile statx makes of the root: ``0|<mount>/path|inode|mode|uid|gid|size|atime|mtime|ctime|btime``."""
    lines = []
    births = _birth_times(root, walk)
    for relative, result in walk:
        name = os.fsencode(mount.rstrip("/")) + (b"/" + relative if relative else b"")
        if not relative and mount == "/":
            name = b"/"
        if stat.S_ISLNK(result.st_mode):
            name += b" -> " + os.readlink(os.path.join(os.fsencode(root), relative))
        birth = births.get(relative, 0)
        fields = [b"0", name, *(str(value).encode() for value in (
            result.st_ino, _mode_string(result.st_mode), result.st_uid, result.st_gid, result.st_size,
            int(result.st_atime), int(result.st_mtime), int(result.st_ctime), birth))]
        lines.append(b"|".join(fields) + b"\n")
    return b"".join(lines)


def _birth_times(root: Path, walk) -> dict[bytes, int]:
    """Each path's birth time as statx gives it (GNU ``stat -c %W``; 0 where none), as UAC's statx writes it."""
    paths = [os.path.join(os.fsencode(root), relative) if relative else os.fsencode(root) for relative, _ in walk]
    try:
        output = subprocess.run(["stat", "-c", "%W", "--", *paths], capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    values = output.split()
    if len(values) != len(paths):
        return {}
    return {relative: int(value) if value.isdigit() else 0 for (relative, _), value in zip(walk, values, strict=True)}


def _hash_line(algorithm: str, name: str, content: bytes | None, root: Path) -> bytes:
    """``md5sum`` of one collected file (through a link, as md5sum reads); nothing for a dangling link."""
    if content is None:
        try:
            content = (root / name.removeprefix("[root]/")).read_bytes()
        except OSError:
            return b""
    return f"{hashlib.new(algorithm, content).hexdigest()}  ".encode() + os.fsencode(name) + b"\n"


def _uac_log(root: Path, dest: Path, base: str, mount: str, hostname: str, output_format: str, hashed: bool,
             bodyfile: bool, when: int) -> bytes:
    """uac.log as the uac script writes it (its header lines, then one Parsing line per artifact)."""
    artifacts = "files/applications/ai_tools" + (",bodyfile/bodyfile.yaml" if bodyfile else "")
    command = (f"./uac -a {artifacts} -m {mount} -s linux --hostname {hostname}"
               + (" -H" if hashed else "") + (f" -f {output_format}" if output_format in ("zip", "none") else "")
               + f" {dest}")
    messages = [
        ("INF", f"Unix-like Artifacts Collector {VERSION}"), ("INF", "UAC directory: /opt/uac"),
        ("INF", f"Command line: {command}"), ("INF", "Operating system: linux"),
        ("INF", "System architecture: x86_64"), ("INF", "CPU: Test CPU (Cores: 2)"), ("INF", "Memory size: 2048 MB"),
        ("INF", f"Hostname: {hostname}"), ("INF", "Time zone: UTC"), ("INF", f"Mount point: {mount}"),
        ("INF", "Running as: root"), ("INF", f"Temp directory: {dest}/uac-data.tmp"),
        ("INF", f"Output format: {'tar' if output_format.startswith('tar') else output_format}"),
        ("INF", "Current PID: 4242"), ("INF", "Hash algorithm: md5|sha1"), ("INF", "tar command exists: true"),
        ("INF", "tar load from file support: true"), ("INF", "MD5 hashing tool: md5sum"),
        ("INF", "stat tool: statx"), ("INF", "Temp directory symlink creation support: true"),
        ("INF", "2 artifact(s) selected"), ("INF", "Parsing files/applications/ai_tools/claude_code.yaml"),
        ("CMD", f'find /"{mount.strip("/")}"/"/root"/.claude -print 2> find: \'{mount}//root/.claude\': '
                "No such file or directory"),
    ]
    if bodyfile:
        messages += [("INF", "Parsing bodyfile/bodyfile.yaml"),
                     ("CMD", f'find /"{mount.strip("/")}" \\( -path "/proc" \\) -prune -o -print0 | xargs -0 statx')]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S +0000", time.gmtime(when))
    return "".join(f"{stamp} {level} {message}\n" for level, message in messages).encode()


# -- writers -----------------------------------------------------------------------------

def _write_tar(dest: Path, base: str, output_format: str, records, root: Path, walk, copied: bool, when: int) -> Path:
    """GNU tar of the records then ``[root]/...``: headers from lstat (the copy's when UAC copied first)."""
    path = dest / f"{base}.{output_format}"
    mode = "w:gz" if output_format == "tar.gz" else "w"
    with tarfile.open(path, mode, format=tarfile.GNU_FORMAT) as archive:
        for name, content in records:
            info = _tar_info(name, len(content), 0o644, 0, 0, when)
            archive.addfile(info, io.BytesIO(content))
        for relative, result in _collected(walk):
            info = _tar_info(f"[root]/{relative}", result.st_size, stat.S_IMODE(result.st_mode), result.st_uid,
                             result.st_gid, int(result.st_mtime))
            if copied:  # cp -r: owner root, the copy's time, mode less the umask
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                info.mtime, info.mode = when, stat.S_IMODE(result.st_mode) & ~0o022
            if stat.S_ISLNK(result.st_mode):
                info.type, info.size = tarfile.SYMTYPE, 0
                info.linkname = os.readlink(root / relative)
                archive.addfile(info)
            else:
                with open(root / relative, "rb") as handle:
                    archive.addfile(info, handle)
    return path


def _tar_info(name: str, size: int, mode: int, uid: int, gid: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.uid, info.gid, info.mtime = size, mode, uid, gid, mtime
    info.uname = info.gname = "root" if uid == 0 else ""
    return info


def _write_zip(dest: Path, base: str, output_format: str, records, root: Path, walk, copied: bool, when: int) -> Path:
    """Info-ZIP's zip: raw name bytes, links followed, UT and ux extra fields, DOS time in local time."""
    path = dest / f"{base}.zip"
    members = [(os.fsencode(name), content, 0o100644, when, when, 0, 0) for name, content in records]
    for relative, _ in _collected(walk):
        try:
            followed = os.stat(root / relative)  # zip without -y follows a link; a dangling one is skipped
            content = (root / relative).read_bytes()
        except OSError:
            continue
        members.append((os.fsencode(f"[root]/{relative}"), content, followed.st_mode, int(followed.st_mtime),
                        int(followed.st_atime), followed.st_uid, followed.st_gid))
    path.write_bytes(_zip_bytes(members))
    return path


def _zip_bytes(members) -> bytes:
    """A zip of deflated members, written from APPNOTE.TXT (local headers, central directory, end record)."""
    out, central = bytearray(), bytearray()
    for name, content, mode, mtime, atime, uid, gid in members:
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        packed = compressor.compress(content) + compressor.flush()
        crc = zlib.crc32(content)
        dos_time, dos_date = _dos_time(mtime)
        ux = struct.pack("<BBIBI", 1, 4, uid, 4, gid)
        local_extra = struct.pack("<HHBii", 0x5455, 9, 3, mtime, atime) + struct.pack("<HH", 0x7875, len(ux)) + ux
        central_extra = struct.pack("<HHBi", 0x5455, 5, 3, mtime) + struct.pack("<HH", 0x7875, len(ux)) + ux
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, dos_time, dos_date, crc, len(packed), len(content),
                           len(name), len(local_extra)) + name + local_extra + packed
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (3 << 8) | 30, 20, 0, 8, dos_time, dos_date, crc,
                               len(packed), len(content), len(name), len(central_extra), 0, 0, 0,
                               (mode & 0xFFFF) << 16, offset) + name + central_extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    return bytes(out + central + end)


def _dos_time(seconds: int) -> tuple[int, int]:
    local = time.localtime(seconds)
    return ((local.tm_hour << 11) | (local.tm_min << 5) | (local.tm_sec // 2),
            ((max(local.tm_year, 1980) - 1980) << 9) | (local.tm_mon << 5) | local.tm_mday)


def _write_dir(dest: Path, base: str, output_format: str, records, root: Path, walk, copied: bool, when: int) -> Path:
    """``-f none``: the collected directory moved to the destination, files copied with ``cp -r``."""
    path = dest / base
    path.mkdir()
    for name, content in records:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(content)
    for relative, result in _collected(walk):
        target = path / "[root]" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if stat.S_ISLNK(result.st_mode):
            os.symlink(os.readlink(root / relative), target)
        else:
            target.write_bytes((root / relative).read_bytes())
    return path


def _write_acquisition_log(dest: Path, base: str, output: Path, output_format: str, hostname: str, mount: str,
                           when: int) -> None:
    """``<name>.log`` beside the output (tclahr/uac lib/create_acquisition_log.sh), with the archive's digests."""
    started = time.strftime("%a %b %d %H:%M:%S %Y +0000", time.gmtime(when))
    lines = [f"Created by UAC (Unix-like Artifacts Collector) {VERSION}", "", "[Case Information]",
             "Case Number: CASE-7", "Evidence Number: EV-1", "Description: test collection",
             "Examiner: Erin Examiner", "Notes: ", "", "[System Information]", "Operating System: linux",
             "System Architecture: x86_64", f"Hostname: {hostname}", "", "[Acquisition Information]",
             f"Mount Point: {mount}", f"Acquisition Started: {started}", f"Acquisition Finished: {started}", "",
             "[Output Information]"]
    if output_format == "none":
        lines += [f"Directory: {base}", "Format: none"]
    else:
        data = output.read_bytes()
        lines += [f"File: {output.name}", f"Format: {'zip' if output_format == 'zip' else 'tar'}", "",
                  "[Computed Hashes]", f"MD5 checksum: {hashlib.md5(data).hexdigest()}",
                  f"SHA1 checksum: {hashlib.sha1(data).hexdigest()}"]
    (dest / f"{base}.log").write_text("\n".join(lines) + "\n")
