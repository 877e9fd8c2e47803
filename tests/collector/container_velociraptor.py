r"""Build a Velociraptor collection from a fake subject root, laid out as Velociraptor lays one out.

``build(fake_root, dest)`` writes what an offline collector running
``Generic.Collectors.File`` leaves (``Collection-<host>-<time>.zip``), or
with ``flavour="server"`` a server's export of such a flow. ``fake_root``
stands for ``/`` of a Linux or macOS client (``home/alice/...``) or, with
``windows=True``, for drive C: (``Users/alice/...``). Velociraptor cannot
run here (no registry packages it, and it cannot be built: research
A6), so the layout follows its source, ``Velocidex/velociraptor@cd02ac6``:

* ``artifacts/definitions/Generic/Collectors/File.yaml``: the sources
  ``All Matches Metadata`` (``Created``=Btime, ``Changed``=Ctime,
  ``LastAccessed``=Atime, ``Modified``=Mtime, ``Size``, ``SourceFile``)
  and ``Uploads`` (``CopiedOnTimestamp``, ``SourceFile``,
  ``DestinationFile``=``Upload.Path``, the client path, ``FileSize``,
  ``SourceFileSha256``, the four times), ``upload(..., mtime=Modified)``;
* ``reporting/container.go``: each upload stored at
  ``uploads/<accessor>/<components>`` with the zip header's time the
  upload's mtime, ``uploads.json`` rows (``Timestamp``, ``started``,
  ``vfs_path``, ``_Components``, ``file_size``, ``uploaded_size``,
  ``Type``), results at ``results/<Artifact>%2F<Source>.json``;
  ``Velocidex/zip@1a0ec0e`` ``writer.go`` writes that time as the UT extra
  field (flags 1, seconds UTC) too;
* ``utils/sanitize.go`` ``SanitizeStringForZip`` for the components (its
  rules written out again here, independently of the reader's);
* ``vql/tools/collector/collector_manager.go``: ``log.json``,
  ``collection_context.json``, ``requests.json`` and ``client_info.json``
  (the ``info()`` row, ``vql/info.go``);
* ``vql/server/downloads/downloads.go`` and ``flows/client_flow_runner.go``
  for the server's export: ``client_info.json`` the client record
  (``actions/proto/vql.proto`` ``ClientInfo``), uploads.json rows with
  ``_accessor`` and ``_client_components``, every member's time the export's.

On Windows the ``auto`` accessor's ``Changed`` is the last-write time
(``accessors/file/os_windows.go``), so the builder writes the mtime there;
with ``ntfs`` it writes the inode change time. ``Created`` is Go's zero
time on Linux (Python's lstat has no birth time, as statx without
STATX_BTIME gives Velociraptor none), the inode change time standing in
for the creation time on Windows.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
import zipfile
from pathlib import Path

from tests.collector.container_kape import subject_files

ESCAPED = set('?"*:|<>%/\\')
ZERO_TIME = "0001-01-01T00:00:00Z"
ARTIFACT = "Generic.Collectors.File"


def escape(component: str) -> str:
    r"""SanitizeStringForZip: escape ?"*:|<>%/\, bytes not UTF-8, and a leading or trailing '.' or ' '."""
    raw = component.encode("utf-8", "surrogateescape")
    pieces: list[str] = []
    index = 0
    while index < len(raw):
        width = _utf8_width(raw, index)
        if width == 0:
            pieces.append(_hex(raw[index]))
            index += 1
            continue
        char = raw[index:index + width].decode("utf-8")
        first = not pieces
        pieces.append(_hex(ord(char)) if char in ESCAPED or (first and char in ". ") else char)
        index += width
    if pieces and pieces[-1] in (".", " "):
        pieces[-1] = _hex(ord(pieces[-1]))
    return "".join(pieces)


def _hex(value: int) -> str:
    return "%" + format(value, "02X")


def _utf8_width(raw: bytes, index: int) -> int:
    for width in (1, 2, 3, 4):
        try:
            raw[index:index + width].decode("utf-8")
            return width
        except UnicodeDecodeError:
            continue
    return 0


def go_time(ns: int, offset_minutes: int = 0) -> str:
    """Go's RFC3339Nano (trailing zeros of the fraction dropped), in UTC or at a fixed offset."""
    local = ns + offset_minutes * 60 * 1_000_000_000
    seconds, rest = divmod(local, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    fraction = f"{rest:09d}".rstrip("0")
    text += "." + fraction if fraction else ""
    if offset_minutes == 0:
        return text + "Z"
    sign = "+" if offset_minutes > 0 else "-"
    return text + f"{sign}{abs(offset_minutes) // 60:02d}:{abs(offset_minutes) % 60:02d}"


def build(fake_root: Path, dest: Path, *, windows: bool = False, flavour: str = "offline", accessor: str = "auto",
          hostname: str = "alice-laptop", offset_minutes: int = 0, stamp: str = "20260301102030Z",
          client_id: str = "C.1a2b3c4d5e6f7a8b", flow_id: str = "F.D1ABC234EF", artifact: str = ARTIFACT,
          sources: tuple[str, ...] = ("All Matches Metadata", "Uploads")) -> Path:
    """Write the collection of every regular file under ``fake_root`` into ``dest``; the zip's path.

    ``artifact`` and ``sources`` name the result sets (an artifact with Generic.Collectors.File's columns,
    such as Linux.Collection.AITrailFiles, writes the same rows under its own name).
    """
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest / (f"Collection-{hostname}-{stamp}.zip" if flavour == "offline" else
                      f"{client_id}-{flow_id}-export.zip")
    export_time = time.time()
    metadata, uploaded, uploads_json = [], [], []
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for relative, path in subject_files(fake_root):
            data = path.read_bytes()
            info = path.lstat()  # after the read, which may move the atime: the record is the file as it is left
            components = _client_components(relative, windows, accessor)
            member = "/".join(["uploads", accessor, *map(escape, components)])
            source = _source_file(components, windows)
            mtime = info.st_mtime_ns if flavour == "offline" else int(export_time * 1e9)
            _write(out, member, data, mtime)
            times = _times(info, windows, accessor, offset_minutes)
            metadata.append({**times, "Size": len(data), "SourceFile": source})
            uploaded.append({"CopiedOnTimestamp": go_time(time.time_ns()), "SourceFile": source,
                             "DestinationFile": source, "FileSize": len(data),
                             "SourceFileSha256": hashlib.sha256(data).hexdigest(), **times})
            uploads_json.append(_uploads_row(components, accessor, len(data), flavour, client_id, flow_id))
        stamp_ns = int(export_time * 1e9)
        for source, rows in (("All Matches Metadata", metadata), ("Uploads", uploaded)):
            if source in sources:
                _write(out, f"results/{escape(artifact + '/' + source)}.json", _jsonl(rows), stamp_ns)
        _write(out, "log.json", _jsonl(_log(artifact, len(uploaded))), stamp_ns)
        _write(out, "collection_context.json", _context(flavour, len(uploaded), client_id, flow_id, windows, artifact),
               stamp_ns)
        _write(out, "requests.json", json.dumps({"items": [{"session_id": flow_id, "request_id": 1}]},
                                                indent=1).encode(), stamp_ns)
        _write(out, "client_info.json", _client_info(flavour, hostname, windows, client_id), stamp_ns)
        _write(out, "uploads.json", _jsonl(uploads_json), stamp_ns)
    return archive


def _client_components(relative: str, windows: bool, accessor: str) -> list[str]:
    parts = relative.split("/")
    if not windows:
        return parts
    return ["\\\\.\\C:" if accessor.endswith("ntfs") else "C:", *parts]


def _source_file(components: list[str], windows: bool) -> str:
    return components[0] + "\\" + "\\".join(components[1:]) if windows else "/" + "/".join(components)


def _times(info: os.stat_result, windows: bool, accessor: str, offset: int) -> dict:
    changed = info.st_mtime_ns if windows and not accessor.endswith("ntfs") else info.st_ctime_ns
    return {"Created": go_time(info.st_ctime_ns, offset) if windows else ZERO_TIME,
            "Changed": go_time(changed, offset), "Modified": go_time(info.st_mtime_ns, offset),
            "LastAccessed": go_time(info.st_atime_ns, offset)}


def _uploads_row(components: list[str], accessor: str, size: int, flavour: str, client_id: str, flow_id: str) -> dict:
    now = time.time()
    row = {"Timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
           "started": time.strftime("%Y-%m-%d %H:%M:%S +0000 UTC", time.gmtime(now)),
           "vfs_path": _source_file(components, components[0].endswith(":")),
           "_Components": ["uploads", accessor, *components], "file_size": size, "uploaded_size": size, "Type": ""}
    if flavour == "server":
        row.update({"Timestamp": int(now), "_accessor": accessor, "_client_components": components,
                    "vfs_path": f"/clients/{client_id}/collections/{flow_id}/uploads/{accessor}/"
                                + "/".join(components)})
    return row


def _write(out: zipfile.ZipFile, name: str, data: bytes, mtime_ns: int) -> None:
    """One member, its DOS time and its UT extra field (flags 1: mtime, seconds UTC) set as Velocidex/zip does."""
    seconds = mtime_ns // 1_000_000_000
    info = zipfile.ZipInfo(name, date_time=time.localtime(max(seconds, 315532800))[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.extra = struct.pack("<HHBi", 0x5455, 5, 1, seconds)
    out.writestr(info, data)


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _log(artifact: str, count: int) -> list[dict]:
    now = int(time.time())
    lines = [f"Starting collection of {artifact}/All Matches Metadata", f"Collected {count} rows for {artifact}"]
    return [{"_ts": now, "client_time": now, "level": "DEFAULT", "message": line + "\n"} for line in lines]


def _context(flavour: str, count: int, client_id: str, flow_id: str, windows: bool, artifact: str) -> bytes:
    now = time.time_ns()
    context = {
        "session_id": flow_id,
        "request": {"artifacts": [artifact], "creator": "examiner" if flavour == "server" else "",
                    "specs": [{"artifact": artifact, "parameters": {"env": [
                        {"key": "collectionSpec", "value": "Glob\nUsers\\*\\.claude\\**\n" if windows else
                         "Glob\nhome/*/.claude/**\n"},
                        {"key": "Root", "value": "C:" if windows else "/"}]}}]},
        "create_time": now, "start_time": now, "total_uploaded_files": count, "total_collected_rows": 2 * count,
        "state": 2, "artifacts_with_results": [f"{artifact}/All Matches Metadata", f"{artifact}/Uploads"],
    }
    if flavour == "server":
        context["client_id"] = client_id
    return json.dumps(context, indent=1).encode()


def _client_info(flavour: str, hostname: str, windows: bool, client_id: str) -> bytes:
    system = "windows" if windows else "linux"
    if flavour == "server":
        return json.dumps({"client_id": client_id, "hostname": hostname, "fqdn": hostname + ".corp.example",
                           "system": system, "release": "Ubuntu24.04" if not windows else "Windows 11",
                           "architecture": "amd64", "client_version": "0.76.6", "client_name": "velociraptor"},
                          indent=1).encode()
    return json.dumps({"Hostname": hostname, "Uptime": 1000, "BootTime": 1760000000, "OS": system,
                       "Platform": "ubuntu" if not windows else "Microsoft Windows 11 Pro",
                       "PlatformFamily": "debian" if not windows else "Standalone Workstation",
                       "PlatformVersion": "24.04" if not windows else "10.0.22631",
                       "KernelVersion": "6.8.0", "HostID": "4c4c4544-0042-4d10-8050-b1c04f4a4d32",
                       "Exe": "/tmp/collector" if not windows else "C:\\Users\\alice\\Collector.exe",
                       "IsAdmin": True, "Fqdn": hostname + ".corp.example", "Architecture": "amd64",
                       "Name": "velociraptor", "BuildTime": "2026-02-01T00:00:00Z", "build_url": ""},
                      indent=1).encode()
