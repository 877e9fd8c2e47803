r"""Velociraptor's collections as ``aitrail import velociraptor`` reads them (docs/importing-velociraptor.md).

Two containers, one layout (``Velocidex/velociraptor@cd02ac6``; read, never copied):

* an **offline collector's zip** (``Collection-<host>-<time>.zip``,
  ``vql/tools/collector/collector_manager.go``, written by
  ``reporting/container.go``): each upload at ``uploads/<accessor>/<path>``
  (the client's path components escaped for a zip, velociraptor_records.py),
  its zip header's modification time the upload's ``mtime`` (a UT extra
  field, whole seconds UTC: ``Velocidex/zip@1a0ec0e`` ``writer.go``),
  ``uploads.json`` listing the uploads, ``results/<Artifact>%2F<Source>.json``
  the artifact's rows, ``log.json``, ``collection_context.json``,
  ``requests.json`` and ``client_info.json`` (the ``info()`` row: host name,
  OS) at the top;
* a **server's flow export** (``vql/server/downloads/downloads.go``
  ``downloadFlowToZip``): the same names, the members' zip times the time
  of the export, ``client_info.json`` the server's client record.

dissect.target reads the same layout (``fox-it/dissect.target@28082eb``
``dissect/target/loaders/velociraptor.py``: ``uploads/{file,auto}`` for
Unix, ``uploads/{mft,ntfs,lazy_ntfs,ntfs_vss,auto}/<drive>`` for Windows,
names URL-unquoted). A directory the zip was extracted into, or one folder
holding it, is read the same way; a password-protected collection
(``data.zip`` inside) is refused: decrypt it first.

Per-file records are the result rows' (``SourceFile`` with ``Created``,
``Changed``, ``Modified``, ``LastAccessed``, ``Size``/``FileSize``,
``SourceFileSha256``: ``Generic.Collectors.File`` and any artifact using
its columns, such as aitrail's ``Linux.Collection.AITrailFiles``), joined
to the uploads by the subject's path; uploads.json gives the sizes
expected and stored. What disagrees (the rows among themselves, the rows
and the zip header, the recorded and the stored sizes) is a named problem.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from aitrail.collector.foreign import velociraptor_records as vr
from aitrail.collector.foreign import zipcheck
from aitrail.collector.foreign.container import ArchiveEntry, Container, ContainerError, ForeignFile, Recorded
from aitrail.collector.foreign.sidecar import fact, printable, zip_details

MARKERS = ("uploads.json", "collection_context.json", "client_info.json")
RECORD_NAMES = frozenset(("uploads.json", "client_info.json", "collection_context.json", "log.json", "logs.json",
                          "metadata.json"))
SUBJECT_ACCESSORS = vr.FILE_ACCESSORS + vr.NTFS_ACCESSORS
UNIX_SYSTEMS = ("linux", "darwin", "freebsd")
MAX_LISTED = 200


def _is_record_name(name: str) -> bool:
    """A member whose bytes the reader reads: the collection's records at the top or one folder down."""
    parts = name.split("/")
    for rest in (parts, parts[1:]):
        if len(rest) == 1 and rest[0] in RECORD_NAMES:
            return True
        if len(rest) == 2 and rest[0] == "results" and rest[1].endswith(".json"):
            return True
    return False


@dataclass
class Upload:
    """One member under uploads/: where it is, what it stands for."""

    entry: ArchiveEntry
    accessor: str
    path: str
    key: str
    zip_mtime: int | None  # seconds, the zip's UT field
    ambiguous: bool = False  # the archive holds the name more than once


class VelociraptorContainer(Container):
    """An offline collector's zip or a server's flow export (or either extracted into a directory)."""

    tool = "velociraptor"

    def __init__(self, path: str):
        super().__init__(path)
        self.prefix = ""  # where the collection starts in the container: "" or one folder
        self.flavour = "Velociraptor collection"
        self.kept: dict[str, bytes] = {}  # the collection's records, by their name below the prefix
        self.results = vr.ResultRows(False, self.problems)

    def read(self) -> None:
        """Scan the container, read its records, and list the subject's files it holds or records."""
        if self.archive.kind == "zip":
            _refuse_encrypted(zipcheck.look(self.path))
        entries = self.archive.scan(keep=_is_record_name)
        self.prefix = _prefix(entries)
        self.kept = {name[len(self.prefix):]: data for name, data in self.archive.kept.items()
                     if name.startswith(self.prefix)}
        info = self._client_info()
        self._collection_context()
        self._log_and_metadata()
        uploads = self._upload_rows()
        self.windows = self._subject_os(info, uploads, entries)
        self.results = vr.ResultRows(self.windows, self.problems)
        self._read_results()
        members = self._upload_members(entries, uploads)
        self._files(members, uploads)
        self._records_fields()
        self.layout = (f"{self.flavour}: {self.prefix}uploads/<accessor>/<client path, %-escaped>, "
                       f"{self.prefix}results/<Artifact>%2F<Source>.json, uploads.json, client_info.json, "
                       "collection_context.json, log.json")

    # -- the collection's records ----------------------------------------------------

    def _client_info(self) -> dict:
        data = self.kept.get("client_info.json")
        if data is None:
            self.flavour = "Velociraptor collection (no client_info.json)"
            self.problems.add("client_info.json: not in the container; the host and its OS are not stated")
            return {}
        info = vr.json_object(data, "client_info.json", self.problems)
        server = "client_id" in info  # the server's client record; an offline collector writes the info() row
        self.flavour = "server flow export" if server else "offline collector"
        keys = (("hostname", "Hostname"), ("fqdn", "Fqdn"), ("os", "OS" if not server else "system"),
                ("platform", "Platform"), ("platform_version", "PlatformVersion"), ("release", "release"),
                ("architecture", "Architecture"), ("host_id", "HostID"), ("client_id", "client_id"),
                ("client_version", "client_version"), ("build_time", "BuildTime"), ("local_time_zone", "LocalTZ"),
                ("collector_exe", "Exe"), ("collector_is_admin", "IsAdmin"))
        for fact_name, key in keys:
            value = vr.get_folded(info, key)
            if value not in (None, ""):
                self.metadata[fact_name] = fact(value if isinstance(value, bool | int) else printable(str(value), 300),
                                                f"client_info.json {key}")
        hostname = vr.get_folded(info, "Hostname")
        if isinstance(hostname, str) and hostname.strip():
            self.hostname = printable(hostname.strip(), 255)
            self.hostname_source = (f"client_info.json hostname (the server's record of client "
                                    f"{printable(str(info.get('client_id')), 80)})" if server else
                                    "client_info.json Hostname (the info() row of the host the offline collector "
                                    "ran on)")
        version = vr.get_folded(info, "client_version")
        if isinstance(version, str) and version:
            self.tool_version = printable(version, 80)
        self.metadata["collection"] = fact(self.flavour, "client_info.json: " + (
            "the server's client record (client_id)" if server else "the info() row an offline collector writes"))
        return info

    def _collection_context(self) -> None:
        data = self.kept.get("collection_context.json")
        if data is None:
            self.problems.add("collection_context.json: not in the container; the flow's request is not stated")
            return
        context = vr.json_object(data, "collection_context.json", self.problems)
        request = context.get("request") if isinstance(context.get("request"), dict) else {}
        facts = {"flow_id": context.get("session_id"), "client_id_of_flow": context.get("client_id"),
                 "artifacts": request.get("artifacts"), "creator": request.get("creator"),
                 "create_time": vr.iso_ns(context.get("create_time")),
                 "start_time": vr.iso_ns(context.get("start_time")),
                 "state": context.get("state"), "status": context.get("status"),
                 "total_uploaded_files": context.get("total_uploaded_files"),
                 "total_uploaded_bytes": context.get("total_uploaded_bytes"),
                 "total_collected_rows": context.get("total_collected_rows"),
                 "artifacts_with_results": context.get("artifacts_with_results"),
                 "parameters": _parameters(request.get("specs"))}
        for name, value in facts.items():
            if value not in (None, "", [], {}):
                self.metadata[name] = fact(_bounded(value), f"collection_context.json {name}")

    def _log_and_metadata(self) -> None:
        for name in ("log.json", "logs.json"):
            if name in self.kept:
                self.metadata["log"] = fact(vr.log_summary(self.kept[name], name, self.problems), name)
                break
        else:
            self.problems.add("log.json: not in the container; the collection's log is not read")
        if "metadata.json" in self.kept:
            self.metadata["container_metadata"] = fact(
                _bounded(vr.json_object(self.kept["metadata.json"], "metadata.json", self.problems)), "metadata.json")

    def _upload_rows(self) -> dict[str, vr.UploadRow]:
        data = self.kept.get("uploads.json")
        if data is None:
            self.problems.add("uploads.json: not in the container; the uploads' expected and stored sizes are not "
                              "recorded")
            return {}
        rows: dict[str, vr.UploadRow] = {}
        for row in vr.upload_rows(data, "uploads.json", self.prefix, self.problems):
            if row.member in rows:
                self.problems.add(f"uploads.json line {row.line}: {row.member} listed again (line "
                                  f"{rows[row.member].line}); the first is kept")
                continue
            rows[row.member] = row
        return rows

    def _subject_os(self, info: dict, uploads: dict[str, vr.UploadRow], entries: list[ArchiveEntry]) -> bool:
        system = vr.get_folded(info, "OS") or vr.get_folded(info, "system")
        if isinstance(system, str) and system.lower() in ("windows", *UNIX_SYSTEMS):
            return system.lower() == "windows"
        firsts = {row.client_components[0] for row in uploads.values()}
        start = self.prefix + "uploads/"
        for entry in entries:
            parts = entry.name[len(start):].split("/") if entry.name.startswith(start) else []
            if len(parts) > 2 and parts[0] in SUBJECT_ACCESSORS:
                firsts.add(vr.zip_unescape(parts[1]) or "")
        windows = bool(firsts) and all(vr.drive_of(first) or first.startswith("\\\\") for first in firsts)
        self.metadata["subject_os"] = fact("windows" if windows else "unix (linux or macOS)",
                                           "guessed from the uploads' paths: client_info.json names no OS")
        return windows

    def _read_results(self) -> None:
        read, csv_only = {}, []
        for name, data in sorted(self.kept.items()):
            if name.startswith("results/") and name.endswith(".json"):
                before = self.results.rows_read
                self.results.add_member(name, data)
                read[name] = self.results.rows_read - before
        for entry in self.archive.entries:
            relative = entry.name[len(self.prefix):] if entry.name.startswith(self.prefix) else ""
            if relative.startswith("results/") and relative.endswith(".csv") and relative[:-4] + ".json" not in read:
                csv_only.append(relative)
        if csv_only:
            self.problems.add(f"{len(csv_only)} result sets only as CSV ({printable(csv_only[0])}, ...): the "
                              "collection was written with format csv_only; their per-file times are not read")
        self.metadata["results_read"] = fact({name: {"rows_naming_a_file": count} for name, count in read.items()},
                                             "results/*.json")

    # -- the uploads -----------------------------------------------------------------

    def _upload_members(self, entries: list[ArchiveEntry], uploads: dict[str, vr.UploadRow]) -> list[Upload]:
        details = zip_details(self.path) if self.archive.kind == "zip" else {}
        counts = Counter(entry.name.rstrip("/") for entry in entries)
        indexes = {row.member for row in uploads.values() if row.index}
        refused: Counter = Counter()
        members: list[Upload] = []
        own = 0
        start = self.prefix + "uploads/"
        for entry in sorted(entries, key=lambda item: item.name):
            name = entry.name.rstrip("/")
            if not name.startswith(start):
                own += 1
                continue
            if name in indexes:
                continue
            detail = details.get(entry.name)
            upload = self._upload(entry, (detail.name if detail else entry.name).rstrip("/")[len(start):], refused)
            if upload is None:
                continue
            upload.zip_mtime = detail.mtime_utc if detail and self.flavour == "offline collector" else None
            if counts[name] > 1 and entry.kind == "file":
                upload.ambiguous = True
                if members and members[-1].entry.name.rstrip("/") == name:
                    continue  # named once, below, for all its copies
                self.problems.add(f"{name}: in the archive {counts[name]} times; which copy is Velociraptor's "
                                  "cannot be told, so its bytes are not taken")
            members.append(upload)
        for accessor, count in sorted(refused.items()):
            self.problems.add(f"{count} member{'s' if count > 1 else ''} under uploads/{accessor}/: accessor "
                              f"{accessor!r} does not read the subject's filesystem; left out")
        self.metadata["records"] = fact({"members_outside_uploads": own, "upload_members": len(members)},
                                        "the container's member list")
        return members

    def _upload(self, entry: ArchiveEntry, rest: str, refused: Counter) -> Upload | None:
        accessor, _, escaped = rest.partition("/")
        if not escaped:
            return None  # uploads/<accessor> itself
        if accessor not in SUBJECT_ACCESSORS:
            refused[accessor] += 1
            return None
        components = [vr.zip_unescape(part) for part in escaped.split("/")]
        if any(part is None for part in components):
            self.problems.add(f"{entry.name}: a malformed %-escape in its name; left out")
            return None
        path, why = vr.client_path([part for part in components if part is not None], self.windows)
        if path is None:
            self.problems.add(f"{entry.name}: not a path of the subject ({why}); left out")
            return None
        if entry.kind not in ("file", "dir"):
            self.problems.add(f"{entry.name}: a {entry.kind}, where Velociraptor stores files; left out")
            return None
        if self.windows and "/" not in path:
            return None  # the drive itself
        return Upload(entry, accessor, path, self.results.key(path), None)

    def _files(self, members: list[Upload], uploads: dict[str, vr.UploadRow]) -> None:
        sparse = {row.member.removesuffix(".idx") for row in uploads.values() if row.index}
        seen: dict[str, str] = {}
        for upload in members:
            if upload.key in seen:
                self.problems.add(f"{upload.entry.name}: the same file as {seen[upload.key]}; the first is kept")
                continue
            seen[upload.key] = upload.entry.name
            if upload.entry.kind == "file" and upload.entry.name in sparse:
                self.problems.add(f"{upload.entry.name}: stored sparse (its .idx lists the ranges); the member "
                                  "holds only the ranges with data, so its bytes are not taken")
                self.files.append(self._bytes_not_taken(upload))
                continue
            if upload.ambiguous:
                self.files.append(self._bytes_not_taken(upload))
                continue
            self.files.append(self._member_file(upload, uploads.get(upload.entry.name)))
        self._unstored(seen, uploads)

    def _member_file(self, upload: Upload, row: vr.UploadRow | None) -> ForeignFile:
        entry = upload.entry
        record = self.results.files.pop(upload.key, None)
        recorded = _copy(record.recorded) if record else Recorded()
        self._ctime_policy(recorded, upload.accessor)
        if entry.kind == "dir":
            return ForeignFile(upload.path, "dir", 0, entry.name, recorded)
        self._zip_time(upload, recorded)
        size, source = entry.size, "the member's size (no record of it)"
        if record and record.size is not None:
            size, source = record.size, record.size_source or ""
        elif row and row.file_size is not None:
            size, source = row.file_size, f"file_size of uploads.json line {row.line}"
        if size != entry.size:
            self.problems.add(f"{entry.name}: {source} records {size} bytes; the member holds {entry.size}")
        if row and row.file_size is not None and record and record.size is not None and row.file_size != record.size:
            self.problems.add(f"{entry.name}: uploads.json line {row.line} file_size {row.file_size} differs from "
                              f"{record.size} ({record.size_source})")
        if row and row.uploaded_size is not None and row.uploaded_size != entry.size:
            self.problems.add(f"{entry.name}: uploads.json line {row.line} uploaded_size {row.uploaded_size}; the "
                              f"member holds {entry.size}")
        if row is None and "uploads.json" in self.kept:
            self.problems.add(f"{entry.name}: no uploads.json row lists it")
        if record is None:
            self.problems.add(f"{entry.name}: no result row names {printable(upload.path)}; no times or digests "
                              "recorded for it")
        elif record.upload_error:
            self.problems.add(f"{entry.name}: its result row records an upload error: {record.upload_error}")
        return ForeignFile(upload.path, "file", size, entry.name, recorded)

    def _bytes_not_taken(self, upload: Upload) -> ForeignFile:
        record = self.results.files.pop(upload.key, None)
        recorded = _copy(record.recorded) if record else Recorded()
        self._ctime_policy(recorded, upload.accessor)
        size = record.size if record and record.size is not None else upload.entry.size
        return ForeignFile(upload.path, "file", size, None, recorded)

    def _zip_time(self, upload: Upload, recorded: Recorded) -> None:
        """The zip header's UT time (the upload's mtime, offline collector only), checked against the rows'."""
        if upload.zip_mtime is None:
            return
        where = f"the zip's UT extra field of {upload.entry.name}"
        if recorded.mtime_ns is None:
            recorded.mtime_ns = upload.zip_mtime * 1_000_000_000
            recorded.sources["mtime"] = f"{where} (upload(mtime=...), whole seconds)"
        elif recorded.mtime_ns // 1_000_000_000 != upload.zip_mtime:
            self.problems.add(f"{upload.entry.name}: {where} says mtime {upload.zip_mtime} s; "
                              f"{recorded.sources.get('mtime')} says {recorded.mtime_ns} ns; the row's is kept")

    def _ctime_policy(self, recorded: Recorded, accessor: str | None) -> None:
        """On Windows the file/auto accessor's Ctime is the last-write time: not a ctime, so not taken."""
        if self.windows and accessor not in vr.NTFS_ACCESSORS and recorded.ctime_ns is not None:
            recorded.ctime_ns = None
            recorded.sources.pop("ctime", None)

    def _unstored(self, seen: dict[str, str], uploads: dict[str, vr.UploadRow]) -> None:
        """Files the rows or uploads.json record that the container holds no bytes for (member None)."""
        present = {entry.name for entry in self.archive.entries}
        for key, record in sorted(self.results.files.items()):
            path = self.results.paths[key]
            if record.uploaded:
                self.problems.add(f"{printable(path)}: the result rows record it as uploaded, but the container "
                                  "holds no member for it")
            recorded = _copy(record.recorded)
            self._ctime_policy(recorded, None)
            self.files.append(ForeignFile(path, "file", record.size or 0, None, recorded))
            seen[key] = "a result row"
        for row in uploads.values():
            if row.index or row.member in present:
                continue
            self.problems.add(f"uploads.json line {row.line}: {row.member} is not in the container")
            path, _why = vr.client_path(row.client_components, self.windows)
            if path is not None and self.results.key(path) not in seen and row.accessor in SUBJECT_ACCESSORS:
                seen[self.results.key(path)] = f"uploads.json line {row.line}"
                self.files.append(ForeignFile(path, "file", row.file_size or 0, None, Recorded()))

    def _records_fields(self) -> None:
        rows = "the result rows (Generic.Collectors.File's columns)"
        self.recorded_fields = {
            "mtime": f"Modified of {rows}: the glob's Mtime, in nanoseconds; else, in an offline collector's zip, "
                     "the member's UT extra field (upload(mtime=...), whole seconds)",
            "atime": f"LastAccessed of {rows}",
            "ctime": ("not recorded for files read with the file/auto accessor: on Windows its Ctime is the "
                      "last-write time (accessors/file/os_windows.go), so Changed is not taken; Changed of "
                      f"{rows} for the ntfs accessors (the MFT entry's change time)") if self.windows else
                     f"Changed of {rows} (the inode change time)",
            "btime": f"Created of {rows} (Btime: creation time on Windows and macOS, statx birth time on Linux; "
                     "Go's zero time where the system gave none, taken as not recorded)",
            "mode": "not recorded (the rows carry no mode; zip members carry none)",
            "owner": "not recorded (the rows carry no owner)",
            "inode": "not recorded",
            "md5": "Upload.md5 of the triage artifacts' rows where present; Generic.Collectors.File records none",
            "sha1": "Details.Hash.SHA1 where a triage artifact hashed the file; otherwise not recorded",
            "sha256": "SourceFileSha256 of the rows (Upload.sha256, which the client computes as it uploads)",
        }


def _prefix(entries: list[ArchiveEntry]) -> str:
    """Where the collection starts: the top, or the one folder everything is in (an extracted zip)."""
    names = {entry.name.rstrip("/") for entry in entries}
    if any(marker in names for marker in MARKERS) or any(name.startswith("uploads/") for name in names):
        return ""
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) == 1:
        top = next(iter(tops))
        if any(f"{top}/{marker}" in names for marker in MARKERS) or any(
                name.startswith(f"{top}/uploads/") for name in names):
            return top + "/"
    if {"data.zip", "metadata.json"} <= names:
        raise ContainerError("a password-protected Velociraptor collection (data.zip inside): decrypt data.zip "
                             "(its password, or the one metadata.json holds encrypted for the server's key) and "
                             "pass the inner zip")
    raise ContainerError("not a Velociraptor collection: no uploads/, uploads.json, collection_context.json or "
                         "client_info.json at its top (nor in one folder there)")


def _refuse_encrypted(look: zipcheck.ZipLook) -> None:
    if look.encrypted:
        raise ContainerError(f"{len(look.encrypted)} encrypted members ({printable(look.encrypted[0])}, ...): a "
                             "password-protected collection; decrypt it (the password, or the one metadata.json "
                             "holds encrypted for the server's key) and pass the inner zip")


def _parameters(specs) -> dict:
    """Each artifact's parameters as the request set them (collection_context.json request.specs)."""
    found: dict = {}
    for spec in specs if isinstance(specs, list) else []:
        if not isinstance(spec, dict) or not isinstance(spec.get("artifact"), str):
            continue
        env = spec.get("parameters", {}).get("env") if isinstance(spec.get("parameters"), dict) else None
        found[printable(spec["artifact"], 200)] = {
            printable(str(item.get("key")), 200): printable(str(item.get("value")), 2000)
            for item in (env if isinstance(env, list) else [])[:MAX_LISTED] if isinstance(item, dict)}
    return found


def _bounded(value, depth: int = 0):
    """A JSON value from the container, made safe to record: strings printable and cut, lists and nesting bounded."""
    if isinstance(value, str):
        return printable(value, 2000)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth > 4:
        return "..."
    if isinstance(value, list):
        return [_bounded(item, depth + 1) for item in value[:MAX_LISTED]]
    if isinstance(value, dict):
        return {printable(str(key), 200): _bounded(item, depth + 1) for key, item in list(value.items())[:MAX_LISTED]}
    return printable(str(value), 200)


def _copy(recorded: Recorded) -> Recorded:
    return Recorded(mtime_ns=recorded.mtime_ns, atime_ns=recorded.atime_ns, ctime_ns=recorded.ctime_ns,
                    btime_ns=recorded.btime_ns, digests=dict(recorded.digests), sources=dict(recorded.sources))
