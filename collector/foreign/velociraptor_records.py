r"""Velociraptor's own records, parsed: path escaping, upload metadata, result rows, client info, the flow's log.

Formats, from ``Velocidex/velociraptor@cd02ac6`` (read, not copied):

* member names (``utils/sanitize.go`` ``SanitizeStringForZip``, applied per
  component by ``accessors/manipulators.go`` ``ZipFileManipulator`` for an
  offline collector and by ``paths/notebooks.go`` ``ZipPathFromFSPathSpec``
  for a server's flow export): ``?"*:|<>%/\`` and bytes that are not UTF-8
  become ``%XX``, as do a leading ``.`` or space and a trailing ``.`` or
  space; everything else (UTF-8 included) is kept. ``UnsanitizeComponentForZip``
  turns every ``%XX`` back into its byte and drops a lone trailing ``%``.
* ``uploads.json`` (``reporting/container.go`` ``Close``; ``flows/client_flow_runner.go``
  for a server's flow, rewritten by ``vql/server/downloads/downloads.go``
  ``copyUploadFiles``): one JSON object a line, ``vfs_path``,
  ``_Components`` (``uploads``, the accessor, then the client's path
  components, unescaped), ``file_size`` (the size expected),
  ``uploaded_size`` (the bytes stored), ``Type`` (``idx`` for a sparse
  file's index, stored as ``<member>.idx``) and, from a server,
  ``_accessor`` and ``_client_components``.
* result rows (``results/<Artifact>%2F<Source>.json``, one JSON object a
  line): ``Generic.Collectors.File`` (``artifacts/definitions/Generic/Collectors/File.yaml``)
  writes ``SourceFile`` with ``Created`` (Btime), ``Changed`` (Ctime),
  ``Modified`` (Mtime), ``LastAccessed`` (Atime) and ``Size`` (source ``All
  Matches Metadata``) or ``FileSize`` and ``SourceFileSha256`` (source
  ``Uploads``); times are Go's RFC 3339 with up to nine fraction digits,
  the zero time ``0001-01-01T00:00:00Z`` where the system gave none (Linux
  without statx birth time, ``accessors/file/accessor_linux.go``). The
  triage artifacts (``Velocidex/velociraptor-triage-collector@cd5eaba``
  ``templates/CommonSources.yaml``) add an ``Upload`` object (``sha256``,
  ``md5``, ``Error``) and ``Details.Hash``.
* ``client_info.json``: the ``info()`` row (``vql/info.go``: ``Hostname``,
  ``Fqdn``, ``OS``, ...) from an offline collector
  (``vql/tools/collector/collector_manager.go`` ``storeHostInfo``), the
  client record (``actions/proto/vql.proto`` ``ClientInfo``: ``hostname``,
  ``fqdn``, ``system``, ``client_version``, ...) from a server's export;
  Velociraptor's importer reads its keys case-insensitively
  (``vql/tools/collector/import.go``).
* ``log.json``: ``{"_ts", "client_time", "level", "message"}`` a line.
"""

from __future__ import annotations

import calendar
import datetime
import json
import re
from dataclasses import dataclass, field

from aitrail.collector.foreign.container import MAX_SIZE, Problems, Recorded, subject_path
from aitrail.collector.foreign.sidecar import printable

ZIP_ESCAPED = frozenset('?"*:|<>%/\\')
DRIVE = re.compile(r"^(?:\\\\[.?]\\)?([A-Za-z]):$")  # C:, \\.\C: (the ntfs accessor's device), \\?\C:
WINDOWS_SOURCE = re.compile(r"^(?:\\\\[.?]\\)?([A-Za-z]):(?:\\(.*))?$", re.DOTALL)
RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$")
FILE_ACCESSORS = ("auto", "file")
NTFS_ACCESSORS = ("ntfs", "lazy_ntfs", "ntfs_vss")
TIME_COLUMNS = (("Modified", "mtime_ns"), ("LastAccessed", "atime_ns"), ("Changed", "ctime_ns"),
                ("Created", "btime_ns"))
HEX_LENGTHS = {"md5": 32, "sha1": 40, "sha256": 64}
MAX_LOG_MESSAGES = 20


def zip_escape(component: str) -> str:
    """One path component as Velociraptor names it in a zip (SanitizeStringForZip's rules)."""
    out: list[str] = []
    for index, char in enumerate(component):
        if "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8: kept as its escape
            out.append(f"%{ord(char) - 0xDC00:02X}")
        elif char in ZIP_ESCAPED or (index == 0 and char in ". "):
            out.append(f"%{ord(char):02X}")
        else:
            out.append(char)
    if out and out[-1] in (".", " "):
        out[-1] = f"%{ord(out[-1]):02X}"
    return "".join(out)


def zip_unescape(component: str) -> str | None:
    """A zip member's component as the client named it; None when an escape is malformed."""
    raw = component.encode("utf-8", "surrogateescape")
    out = bytearray()
    index = 0
    while index < len(raw):
        byte = raw[index]
        if byte != 0x25:  # '%'
            out.append(byte)
            index += 1
            continue
        if index == len(raw) - 1:  # a lone trailing '%': Velociraptor drops it
            break
        pair = raw[index + 1:index + 3]
        if len(pair) != 2 or not all(chr(b) in "0123456789abcdefABCDEF" for b in pair):
            return None
        out.append(int(pair, 16))
        index += 3
    return out.decode("utf-8", "surrogateescape")


def drive_of(device: str) -> str | None:
    r"""``C:`` for a drive or the ntfs accessor's ``\\.\C:`` device; None for anything else (a shadow copy)."""
    match = DRIVE.match(device)
    return match.group(1).upper() + ":" if match else None


def client_path(components: list[str], windows: bool) -> tuple[str | None, str]:
    """(the subject's path, why not) for a client path's components (a drive or device first on Windows)."""
    if not components:
        return None, "no path"
    if any("\0" in part or "/" in part for part in components):
        return None, "a component holds NUL or '/'"
    if windows:
        drive = drive_of(components[0])
        if drive is None:
            return None, f"device {printable(components[0])!r} is not a drive (a shadow copy or raw device)"
        components = [drive, *components[1:]]
    path = subject_path("/".join(components), "", windows)
    return (path, "") if path else (None, "the path could leave the subject's tree or holds a backslash")


def source_components(text: str, windows: bool) -> list[str] | None:
    r"""A ``SourceFile`` as components: ``C:\Users\x`` (or ``\\.\C:\...``) on Windows, ``/home/x`` elsewhere."""
    if windows:
        match = WINDOWS_SOURCE.match(text)
        if not match:
            return None
        rest = match.group(2) or ""
        return [match.group(1) + ":", *[part for part in rest.split("\\") if part]]
    if not text.startswith("/"):
        return None
    return [part for part in text.split("/") if part]


def parse_time(value) -> tuple[int | None, bool]:
    """(ns since the epoch UTC, understood) of an RFC 3339 string; Go's zero time is (None, True): none recorded."""
    if not isinstance(value, str):
        return None, value is None
    match = RFC3339.match(value)
    if not match:
        return None, False
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if year == "0001" and month == "01" and day == "01":
        return None, True  # time.Time{}: the system gave no such time
    try:
        moment = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
        seconds = calendar.timegm(moment.timetuple())
    except (ValueError, OverflowError):
        return None, False
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds * 1_000_000_000 + int((fraction or "").ljust(9, "0")), True


def json_lines(data: bytes, name: str, problems: Problems) -> list[tuple[int, dict]]:
    """(line number, object) of a JSONL member; a line that does not parse is a problem, the rest are read."""
    rows = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            problems.add(f"{name} line {number}: not JSON; skipped")
            continue
        if not isinstance(row, dict):
            problems.add(f"{name} line {number}: not a JSON object; skipped")
            continue
        rows.append((number, row))
    return rows


def json_object(data: bytes, name: str, problems: Problems) -> dict:
    """The one JSON object of a member (client_info.json, collection_context.json); {} with a problem if not."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        problems.add(f"{name}: not JSON; not read")
        return {}
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        problems.add(f"{name}: not a JSON object; not read")
        return {}
    return value


def get_folded(row: dict, key: str):
    """``row[key]`` looked up without regard to case (Velociraptor reads client_info.json so)."""
    if key in row:
        return row[key]
    lowered = key.lower()
    for name, value in row.items():
        if isinstance(name, str) and name.lower() == lowered:
            return value
    return None


# -- uploads.json ---------------------------------------------------------------------

@dataclass
class UploadRow:
    """One uploads.json row: the member it names and the sizes Velociraptor recorded."""

    line: int
    member: str
    accessor: str
    client_components: list[str]
    file_size: int | None
    uploaded_size: int | None
    index: bool  # Type idx: a sparse file's index


def upload_rows(data: bytes, name: str, prefix: str, problems: Problems) -> list[UploadRow]:
    """The rows of uploads.json with the member each names (``prefix`` + the escaped ``_Components``)."""
    rows = []
    for number, row in json_lines(data, name, problems):
        components = row.get("_Components")
        if (not isinstance(components, list) or len(components) < 3 or components[0] != "uploads"
                or not all(isinstance(part, str) and part for part in components)):
            problems.add(f"{name} line {number}: no uploads/<accessor>/<path> in _Components; not used")
            continue
        index = row.get("Type") == "idx"
        member = prefix + "/".join(zip_escape(part) for part in components) + (".idx" if index else "")
        rows.append(UploadRow(number, member, components[1], components[2:], _size(row.get("file_size")),
                              _size(row.get("uploaded_size")), index))
    return rows


def _size(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SIZE else None


# -- result rows ----------------------------------------------------------------------

@dataclass
class FileRecord:
    """What the result rows say of one file: its record, size and whether a row claims it was uploaded."""

    source_file: str
    recorded: Recorded = field(default_factory=Recorded)
    size: int | None = None
    size_source: str | None = None
    uploaded: bool = False
    upload_error: str | None = None
    rows: int = 0


class ResultRows:
    """Per-file records merged from every result row naming a ``SourceFile`` (keyed by the subject's path)."""

    def __init__(self, windows: bool, problems: Problems):
        self.windows = windows
        self.problems = problems
        self.files: dict[str, FileRecord] = {}
        self.paths: dict[str, str] = {}  # key -> the subject's path
        self.rows_read = 0
        self.rows_refused = 0

    def key(self, path: str) -> str:
        """The identity of a subject path (Windows names are case-insensitive)."""
        return path.casefold() if self.windows else path

    def add_member(self, name: str, data: bytes) -> None:
        """Read one results member's rows."""
        for number, row in json_lines(data, name, self.problems):
            source_file = row.get("SourceFile")
            if not isinstance(source_file, str):
                continue
            self.rows_read += 1
            self._add_row(f"{name} line {number}", source_file, row)

    def _add_row(self, where: str, source_file: str, row: dict) -> None:
        components = source_components(source_file, self.windows)
        path, why = client_path(components, self.windows) if components is not None else (None, "not a path")
        if path is None:
            self.rows_refused += 1
            self.problems.add(f"{where}: SourceFile {printable(source_file)!r} not used ({why})")
            return
        key = self.key(path)
        record = self.files.get(key)
        if record is None:
            record = self.files[key] = FileRecord(source_file)
            self.paths[key] = path
        record.rows += 1
        self._times(where, row, record)
        self._size_of(where, row, record)
        self._digests(where, row, record)
        upload = row.get("Upload")
        if isinstance(upload, dict) or row.get("DestinationFile") or row.get("SourceFileSha256"):
            record.uploaded = True
        if isinstance(upload, dict) and isinstance(upload.get("Error"), str) and upload["Error"]:
            record.upload_error = printable(upload["Error"], 300)

    def _times(self, where: str, row: dict, record: FileRecord) -> None:
        for column, attribute in TIME_COLUMNS:
            if column not in row:
                continue
            value, understood = parse_time(row[column])
            if not understood:
                self.problems.add(f"{where}: {column} {printable(str(row[column]), 80)!r} is not an RFC 3339 time; "
                                  "not used")
                continue
            if value is not None:
                self._set(record, attribute, value, f"{column} of {where}")

    def _size_of(self, where: str, row: dict, record: FileRecord) -> None:
        for column in ("Size", "FileSize"):
            if column not in row:
                continue
            size = _size(row[column])
            if size is None:
                self.problems.add(f"{where}: {column} {printable(str(row[column]), 40)!r} is not a size; not used")
            elif record.size is None:
                record.size, record.size_source = size, f"{column} of {where}"
            elif record.size != size:
                self.problems.add(f"{where}: {column} {size} differs from {record.size} ({record.size_source}); "
                                  "the first is kept")

    def _digests(self, where: str, row: dict, record: FileRecord) -> None:
        found = [("sha256", "SourceFileSha256", row.get("SourceFileSha256"))]
        upload = row.get("Upload")
        if isinstance(upload, dict):
            found += [("sha256", "Upload.sha256", upload.get("sha256")), ("md5", "Upload.md5", upload.get("md5"))]
        details = row.get("Details")
        for holder, label in ((row.get("Hash"), "Hash"),
                              (details.get("Hash") if isinstance(details, dict) else None, "Details.Hash")):
            if isinstance(holder, dict):
                found += [(algorithm, f"{label}.{algorithm.upper()}", get_folded(holder, algorithm))
                          for algorithm in ("md5", "sha1", "sha256")]
        for algorithm, column, value in found:
            if value in (None, ""):
                continue
            if not isinstance(value, str) or len(value) != HEX_LENGTHS[algorithm] or not _is_hex(value):
                self.problems.add(f"{where}: {column} {printable(str(value), 80)!r} is not a {algorithm}; not used")
                continue
            self._set_digest(record, algorithm, value.lower(), f"{column} of {where}")

    def _set(self, record: FileRecord, attribute: str, value: int, source: str) -> None:
        recorded = record.recorded
        current = getattr(recorded, attribute)
        if current is None:
            setattr(recorded, attribute, value)
            recorded.sources[attribute.removesuffix("_ns")] = source
        elif current != value:
            self.problems.add(f"{source}: {value} differs from {current} "
                              f"({recorded.sources[attribute.removesuffix('_ns')]}); the first is kept")

    def _set_digest(self, record: FileRecord, algorithm: str, value: str, source: str) -> None:
        recorded = record.recorded
        current = recorded.digests.get(algorithm)
        if current is None:
            recorded.digests[algorithm] = value
            recorded.sources[algorithm] = source
        elif current != value:
            self.problems.add(f"{source}: {value} differs from {current} ({recorded.sources[algorithm]}); "
                              "the first is kept")


def _is_hex(value: str) -> bool:
    return all(char in "0123456789abcdefABCDEF" for char in value)


# -- log.json -------------------------------------------------------------------------

def log_summary(data: bytes, name: str, problems: Problems) -> dict:
    """Lines per level, the first and last client times, and the first error and warning messages."""
    levels: dict[str, int] = {}
    messages: list[str] = []
    times: list[int] = []
    for number, row in json_lines(data, name, problems):
        level = row.get("level") if isinstance(row.get("level"), str) else "?"
        levels[level] = levels.get(level, 0) + 1
        stamp = row.get("client_time", row.get("_ts"))
        if isinstance(stamp, int) and not isinstance(stamp, bool) and 0 <= stamp < (1 << 40):
            times.append(stamp)
        if level.upper() in ("ERROR", "WARN", "WARNING") and len(messages) < MAX_LOG_MESSAGES:
            messages.append(f"line {number}: {level} {printable(str(row.get('message', '')).strip(), 300)}")
    summary: dict = {"lines_by_level": dict(sorted(levels.items()))}
    if times:
        summary["first_client_time"] = _iso(min(times))
        summary["last_client_time"] = _iso(max(times))
    if messages:
        summary["errors_and_warnings"] = messages
    return summary


def _iso(seconds: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def iso_ns(value) -> str | None:
    """An integer of nanoseconds since the epoch as an ISO time (collection_context's times); None if not one."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < (1 << 63):
        return None
    return _iso(value // 1_000_000_000)
