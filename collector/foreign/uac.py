"""UAC's collection archive as ``aitrail import uac`` reads it (docs/importing-uac.md).

UAC (``tclahr/uac@7376467``, version 3.3.0) writes
``uac-<hostname>-<os>-<YYYYmmddHHMMSS>.tar.gz`` (``-f tar``; ``.tar``
without gzip), ``.zip`` (``-f zip``) or a directory (``-f none``), and the
acquisition log ``<same name>.log`` beside it (``uac``,
``lib/create_acquisition_log.sh``). Inside, in this order (``uac``: the
list handed to ``tar -T`` / ``zip -@``):

* ``uac.log``, then ``hash_list.md5`` / ``.sha1`` / ``.sha256`` (only with
  ``-H``), then the artifacts' own outputs (``bodyfile/bodyfile.txt``,
  ``live_response/...``), then the collected files as
  ``[root]/<path on the subject>`` (``[root]`` stands for the mount point,
  ``/`` on a live system);
* only regular files and links are listed (``lib/remove_non_regular_files.sh``),
  so the archive has no directory members;
* normally ``[root]`` is a link to the mount point and tar reads the
  originals, so each tar header carries the subject's mtime (whole
  seconds), mode and numeric owner; ``zip`` follows links (no ``-y``) and
  writes Info-ZIP's ``UT`` (UTC mtime) and ``ux`` (uid, gid) extra fields;
* with ``-H``, with ``-f none``, or where the temporary directory cannot
  hold a link or ``tar`` has no ``-T``, UAC first copies the files with
  ``cp -r`` (``lib/copy_data.sh``): headers then describe the copy (owner
  root, the copy's time) and are not taken as the subject's.

dissect.target reads the same layout (``fox-it/dissect.target@28082eb``
``dissect/target/loaders/uac.py``: ``[root]`` and ``uac.log``). This reader
takes each file's times, mode, owner and inode from the bodyfile where the
bodyfile artifact ran, else from the archive's header, digests from the
hash lists, and names every disagreement between them as a problem.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import replace

from aitrail.collector.foreign.container import (
    ArchiveEntry,
    Container,
    ContainerError,
    ForeignFile,
    Recorded,
    subject_path,
)
from aitrail.collector.foreign.sidecar import (
    ZipDetail,
    container_stem,
    fact,
    file_digests,
    printable,
    read_sidecar,
    zip_details,
)
from aitrail.collector.foreign.uac_records import (
    BODYFILE,
    HASH_LISTS,
    BodyRecord,
    UacLog,
    parse_acquisition_log,
    parse_bodyfile,
    parse_hash_list,
    parse_uac_log,
)

ROOT = "[root]/"
LOG = "uac.log"
OWN_RECORDS = frozenset({LOG, BODYFILE, *HASH_LISTS})
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
FIRST_ERRORS = 10  # errors and stderr lines of uac.log quoted in the metadata; the rest counted


class UacContainer(Container):
    """A UAC 3 collection: ``[root]/`` members, with uac.log, the bodyfile and hash lists as UAC's own records."""

    tool = "uac"
    layout = "[root]/ tree (UAC 3: [root]/<subject path>; uac.log, bodyfile/bodyfile.txt, hash_list.* beside it)"
    windows = False

    def __init__(self, path: str):
        super().__init__(path)
        self.prefix = ""
        self.copied: str | None = None  # why the archive's headers are UAC's copy's, not the subject's
        self.zips: dict[str, ZipDetail] = {}
        self._by_path: dict[str, ForeignFile] = {}
        self._by_name: dict[str, ForeignFile] = {}  # member name below the prefix, as UAC wrote it
        self._headers: dict[str, tuple[Recorded, str]] = {}  # path -> what the archive's header says, and which
        self._counts: dict[str, int] = {}

    def read(self) -> None:
        """Scan the archive, read UAC's records and fill ``files`` (ContainerError: not a UAC collection)."""
        entries = self.archive.scan(self._is_own_record)
        self.prefix = self._find_prefix(entries)
        log = self._read_uac_log()
        acquisition = self._read_acquisition_log()
        self.copied = self._copy_reason(log)
        if self.archive.kind == "zip":
            self.zips = zip_details(self.path)
        for entry in entries:
            self._add_member(entry)
        self._apply_hash_lists()
        body = self._apply_bodyfile(self._mount_point(log, acquisition))
        self.files = list(self._by_path.values())
        self._describe(log, acquisition, body)

    # -- the archive's members ---------------------------------------------------------

    def _is_own_record(self, name: str) -> bool:
        return name.removeprefix("./") in OWN_RECORDS

    def _find_prefix(self, entries: list[ArchiveEntry]) -> str:
        names = [entry.name for entry in entries]
        for prefix in ("", "./"):  # "./": a UAC directory re-archived with tar -C dir .
            if any(name.startswith(prefix + ROOT) or name == prefix + LOG for name in names):
                return prefix
        raise ContainerError(f"{self.path}: no [root]/ member and no uac.log: not a UAC collection "
                             f"({len(names)} members read)" + (f"; {self.problems[0]}" if self.problems else ""))

    def _own(self, name: str) -> bytes | None:
        return self.archive.kept.get(self.prefix + name)

    def _display_name(self, entry: ArchiveEntry) -> str:
        detail = self.zips.get(entry.name)
        return detail.name if detail is not None else entry.name

    def _add_member(self, entry: ArchiveEntry) -> None:
        name = self._display_name(entry)
        if name.startswith("/"):
            self.problems.add(f"member {printable(name)}: an absolute name, which UAC never writes; left out")
            return
        if name.rstrip("/") == self.prefix + ROOT.rstrip("/"):
            return  # [root] itself, a directory in a directory container
        if not name.startswith(self.prefix + ROOT):
            top = name[len(self.prefix):].split("/", 1)[0] if name.startswith(self.prefix) else name.split("/", 1)[0]
            if name[len(self.prefix):] not in OWN_RECORDS and entry.kind != "dir":
                self._counts[f"other:{top}"] = self._counts.get(f"other:{top}", 0) + 1
            return
        path = subject_path(name, self.prefix + ROOT)
        if path is None:
            self.problems.add(f"member {printable(name)}: its name could leave the subject's tree "
                              "('..', '.', a backslash, or nothing after [root]/); left out")
            return
        if path in self._by_path:
            self.problems.add(f"member {printable(name)}: {printable(path)} is in the archive twice; the first is "
                              "kept, as recorded, and this one left out (tar would extract this one over it)")
            return
        header, source = self._header_record(entry)
        foreign = ForeignFile(path=path, kind=entry.kind, size=entry.size, member=entry.name,
                              recorded=_copy(header), link_target=entry.linkname)
        self._by_path[path] = foreign
        self._by_name[name[len(self.prefix):]] = foreign
        if source:
            self._headers[path] = (header, source)

    def _header_record(self, entry: ArchiveEntry) -> tuple[Recorded, str]:
        """What the archive's own header says of the subject's file (nothing when it describes UAC's copy)."""
        if self.copied or self.archive.kind == "dir":
            return Recorded(), ""
        if self.archive.kind == "tar":
            fields = ("mtime", "mode", "owner")
            record = Recorded(mtime_ns=entry.mtime_ns, mode=entry.mode, uid=entry.uid, gid=entry.gid)
            return _with_sources(record, fields, "tar header"), "tar header"
        detail = self.zips.get(entry.name)
        record = Recorded()
        if detail is None:
            return record, ""
        if detail.mtime_utc is not None:
            record.mtime_ns = detail.mtime_utc * 1_000_000_000
            record.sources["mtime"] = "zip UT extra field (UTC)"
        if detail.create_system == 3 and entry.mode:
            record.mode = entry.mode
            record.sources["mode"] = "zip external attributes"
        if detail.uid is not None and detail.gid is not None:
            record.uid, record.gid = detail.uid, detail.gid
            record.sources["owner"] = "zip ux extra field"
        return record, "zip entry"

    # -- UAC's own records -----------------------------------------------------------

    def _read_uac_log(self) -> UacLog:
        data = self._own(LOG)
        if data is None:
            self.problems.add("no uac.log in the container: UAC writes it first; how and where it ran is unknown")
            return UacLog()
        return parse_uac_log(data)

    def _acquisition_log_path(self) -> str:
        return container_stem(self.path, ARCHIVE_SUFFIXES) + ".log"

    def _read_acquisition_log(self) -> dict[str, tuple[str, int]]:
        data, why = read_sidecar(self._acquisition_log_path(), limit=1024 * 1024)
        if why:
            self.problems.add(f"the acquisition log beside the container: {why}")
        return parse_acquisition_log(data) if data is not None else {}

    def _copy_reason(self, log: UacLog) -> str | None:
        facts = log.facts
        command = facts.get("command_line", ("", 0))[0].split()
        if any(self.prefix + name in self.archive.kept for name in HASH_LISTS) or {"-H", "--hash-collected"} & set(
                command):
            return "UAC ran with -H (--hash-collected): it copied the files with cp -r before archiving them"
        if self.archive.kind == "dir" or facts.get("output_format", ("", 0))[0] == "none":
            return "a directory (UAC's -f none, or an extracted archive): its files are copies"
        if facts.get("temp_dir_symlink_support", ("", 0))[0] == "false":
            return "uac.log: the temporary directory could not hold a link, so UAC copied the files first"
        if self.archive.kind == "tar" and facts.get("tar_from_file_support", ("", 0))[0] == "false":
            return "uac.log: tar had no -T, so UAC copied the files first"
        return None

    def _mount_point(self, log: UacLog, acquisition: dict) -> str:
        for facts in (log.facts, acquisition):
            if "mount_point" in facts:
                return facts["mount_point"][0]
        return "/"

    def _apply_hash_lists(self) -> None:
        for list_name in sorted(HASH_LISTS):
            data = self._own(list_name)
            if data is not None:
                self._apply_hash_list(list_name, data)

    def _apply_hash_list(self, list_name: str, data: bytes) -> None:
        algorithm = HASH_LISTS[list_name]
        for line, name, digest in parse_hash_list(list_name, data, self.problems):
            where = f"{list_name} line {line}"
            if name in OWN_RECORDS:
                self._check_own_record(name, algorithm, digest, where)
                continue
            foreign = self._by_name.get(name)
            if foreign is None:
                self.problems.add(f"{where}: names {printable(name)}, which is not in the container")
                continue
            if foreign.kind != "file":
                self._count("hash_list_lines_for_links")  # md5sum follows a link: the digest is its target's
                continue
            if foreign.recorded.digests.get(algorithm, digest) != digest:
                self.problems.add(f"{where}: a second {algorithm} for {printable(name)}, differing; the first is kept")
                continue
            foreign.recorded.digests[algorithm] = digest
            foreign.recorded.sources[algorithm] = where
            self._count(f"{algorithm}_applied")

    def _check_own_record(self, name: str, algorithm: str, digest: str, where: str) -> None:
        data = self._own(name)
        if data is None:
            return
        same = hashlib.new(algorithm, data, usedforsecurity=False).hexdigest() == digest
        checks = self.metadata.setdefault("own_record_digests", fact({}, "hash_list.*"))
        checks["value"][f"{name} {algorithm}"] = f"{'matches' if same else 'differs'} ({where})"
        if not same:
            self.problems.add(f"{where}: {name} in the container does not match the {algorithm} UAC recorded for it")

    def _apply_bodyfile(self, mount_point: str) -> dict[str, int]:
        data = self._own(BODYFILE)
        stats: dict[str, int] = {}
        if data is None:
            return stats
        ancestors = {parent for path in self._by_path for parent in _parents(path)} - set(self._by_path)
        for record in parse_bodyfile(data, mount_point, self.problems, stats):
            self._apply_body_record(record, ancestors, stats)
        return stats

    def _apply_body_record(self, record: BodyRecord, ancestors: set[str], stats: dict[str, int]) -> None:
        path = next((path for path in record.paths if path in self._by_path or path in ancestors), None)
        if path is None:
            stats["not_in_container"] = stats.get("not_in_container", 0) + 1
            return
        where = f"{BODYFILE} line {record.line}"
        foreign = self._by_path.get(path)
        if foreign is None:
            if record.kind != "dir":
                self.problems.add(f"{where}: {printable(path)} is a {record.kind} there, but the container holds "
                                  "files below it; not used")
                return
            foreign = ForeignFile(path=path, kind="dir", size=0, member=None, recorded=Recorded())
            self._by_path[path] = foreign
            stats["directories_added"] = stats.get("directories_added", 0) + 1
        elif "bodyfile" in foreign.recorded.sources.get("inode", ""):
            stats["repeated_lines"] = stats.get("repeated_lines", 0) + 1
            return
        if self._reconcile_kind(foreign, record, where):
            self._compare_with_header(foreign, record, where)
            _take_body_record(foreign.recorded, record, where)
            stats["applied"] = stats.get("applied", 0) + 1

    def _reconcile_kind(self, foreign: ForeignFile, record: BodyRecord, where: str) -> bool:
        if record.kind == foreign.kind:
            return True
        if record.kind == "symlink" and foreign.kind == "file" and self.archive.kind == "zip":
            self.problems.add(f"{printable(foreign.path)}: a link to {printable(record.link_target or '?')} ({where}); "
                              "UAC's zip followed it and holds the target's bytes under its name, which are not read")
            foreign.kind, foreign.member, foreign.size, foreign.link_target = "symlink", None, 0, record.link_target
            foreign.recorded = Recorded()
            self._headers.pop(foreign.path, None)
            return True
        self.problems.add(f"{printable(foreign.path)}: {where} records a {record.kind}, the container holds a "
                          f"{foreign.kind}; the container's kind is kept and the bodyfile line not used")
        return False

    def _compare_with_header(self, foreign: ForeignFile, record: BodyRecord, where: str) -> None:
        header, source = self._headers.get(foreign.path, (Recorded(), ""))
        differences = []
        if header.mtime_ns is not None and header.mtime_ns // 1_000_000_000 != record.mtime:
            differences.append(f"mtime {record.mtime} vs {header.mtime_ns // 1_000_000_000}")
        if header.mode is not None and record.mode is not None and header.mode & 0o7777 != record.mode & 0o7777:
            differences.append(f"mode {record.mode & 0o7777:o} vs {header.mode & 0o7777:o}")
        if header.uid is not None and (header.uid, header.gid) != (record.uid, record.gid):
            differences.append(f"owner {record.uid}:{record.gid} vs {header.uid}:{header.gid}")
        if foreign.kind == "file" and foreign.size != record.size:
            differences.append(f"size {record.size} vs {foreign.size}")
            source = source or "archive"
        if foreign.kind == "symlink" and record.link_target is not None and foreign.link_target is not None \
                and record.link_target != foreign.link_target:
            differences.append(f"target {printable(record.link_target)} vs {printable(foreign.link_target)}")
        if differences:
            self.problems.add(f"{printable(foreign.path)}: {where} and the {source} differ ({', '.join(differences)}: "
                              "bodyfile vs archive); the file changed between UAC's stat and its archiving: times, "
                              "mode and owner are the bodyfile's, the bytes the archive's")

    def _count(self, key: str) -> None:
        self._counts[key] = self._counts.get(key, 0) + 1

    # -- custody facts -----------------------------------------------------------------

    def _describe(self, log: UacLog, acquisition: dict, body: dict[str, int]) -> None:
        self._describe_log(log)
        self._describe_acquisition(acquisition)
        self._describe_host(log, acquisition)
        has_body = self._own(BODYFILE) is not None
        if has_body:
            self.metadata["bodyfile"] = fact(dict(sorted(body.items())), BODYFILE)
        self.metadata["copied_before_archiving"] = fact(self.copied or "no: the archive read the originals",
                                                        "uac.log and the container's members")
        others = {key.split(":", 1)[1]: count for key, count in sorted(self._counts.items())
                  if key.startswith("other:")}
        if others:
            self.metadata["artifact_outputs"] = fact(others, "members outside [root]/ (UAC's artifact outputs)")
        applied = {key: count for key, count in self._counts.items() if not key.startswith("other:")}
        if applied:
            self.metadata["hash_lists"] = fact(dict(sorted(applied.items())), "hash_list.*")
        self.recorded_fields = self._recorded_fields(has_body)

    def _describe_log(self, log: UacLog) -> None:
        for key, (value, line) in sorted(log.facts.items()):
            self.metadata[key] = fact(printable(value, 2000), f"uac.log line {line}")
        if log.first and log.last:
            self.metadata["log_first_line_time"] = fact(log.first[0], f"uac.log line {log.first[1]}")
            self.metadata["log_last_line_time"] = fact(log.last[0], f"uac.log line {log.last[1]}")
        if log.artifacts:
            self.metadata["artifacts_run"] = fact([printable(name) for name in log.artifacts[:200]],
                                                  "uac.log 'Parsing' lines")
        for key, items in (("errors", log.errors), ("command_stderr", log.stderr)):
            if items:
                self.metadata[key] = fact({"count": len(items), "first": [
                    f"line {line}: {printable(text, 300)}" for line, text in items[:FIRST_ERRORS]]},
                    "uac.log ERR lines" if key == "errors" else "uac.log CMD lines (after ' 2> ')")
        if "version" in log.facts:
            self.tool_version = printable(log.facts["version"][0], 40)

    def _describe_acquisition(self, acquisition: dict[str, tuple[str, int]]) -> None:
        log_name = os.path.basename(self._acquisition_log_path())
        if not acquisition:
            self.metadata["acquisition_log"] = fact(None, f"no {log_name} beside the container (UAC writes it there, "
                                                          "with the archive's MD5 and SHA-1)")
            return
        self.metadata["acquisition_log"] = fact(
            {key: printable(value, 2000) for key, (value, _) in sorted(acquisition.items())},
            f"{log_name} beside the container (lines " + ", ".join(
                f"{key} {line}" for key, (_, line) in sorted(acquisition.items())) + ")")
        self.tool_version = self.tool_version or (printable(acquisition["version"][0], 40)
                                                  if "version" in acquisition else None)
        named = acquisition.get("file", acquisition.get("directory", ("", 0)))[0]
        if named and named != os.path.basename(self.path.rstrip("/")):
            self.problems.add(f"{log_name} line {acquisition.get('file', acquisition.get('directory'))[1]}: it "
                              f"describes {printable(named)}, not {printable(os.path.basename(self.path))}")
        self._check_container_digests(acquisition, log_name)

    def _check_container_digests(self, acquisition: dict[str, tuple[str, int]], log_name: str) -> None:
        wanted = {name: acquisition[name] for name in ("md5", "sha1", "sha256") if name in acquisition}
        if not wanted or not os.path.isfile(self.path):
            return
        computed = file_digests(self.path, wanted)
        checks = {}
        for name, (value, line) in wanted.items():
            checks[name] = "matches" if value.lower() == computed[name] else "differs"
            if checks[name] == "differs":
                self.problems.add(f"{log_name} line {line}: the container's {name} is {computed[name]}, not the "
                                  f"{printable(value, 80)} UAC recorded: it changed since UAC wrote it")
        self.metadata["container_digest_check"] = fact(checks, f"{log_name}, against this container's bytes")

    def _describe_host(self, log: UacLog, acquisition: dict[str, tuple[str, int]]) -> None:
        command = log.facts.get("command_line", ("", 0))[0]
        for facts, where in ((log.facts, "uac.log"), (acquisition, os.path.basename(self._acquisition_log_path()))):
            value, line = facts.get("hostname", ("", 0))
            if value and value != "unknown":
                self.hostname = printable(value, 255)
                how = ("given to UAC by its operator with --hostname" if "--hostname" in command.split() else
                       "UAC's own reading: the hostname command on a live system, the mount point's /etc/hostname "
                       "(or rc.conf, myname, nodename) otherwise")
                self.hostname_source = f"{where} line {line} ({how})"
                return

    def _recorded_fields(self, has_body: bool) -> dict[str, str]:
        header = ("" if self.copied or self.archive.kind == "dir" else
                  "tar header" if self.archive.kind == "tar" else "zip entry")
        body = f"{BODYFILE} (UAC's stat collector)" if has_body else ""
        also = f"; the {header} where the bodyfile has no line for the file" if header and body else ""
        none = ("not recorded (no bodyfile in this container: UAC's bodyfile artifact did not run"
                + (f"; {self.copied}" if self.copied else "") + ")")
        header_mtime = {"tar header": "tar header (whole seconds)", "zip entry": "zip UT extra field (UTC)"}
        fields = {
            "mtime": (body and f"{body}, whole seconds{also}") or header_mtime.get(header) or none,
            "atime": body and f"{body}, whole seconds" or none, "ctime": body and f"{body}, whole seconds" or none,
            "btime": f"{BODYFILE} crtime where the system gave one (0: none)" if has_body else none,
            "mode": (body + also) or (header and f"{header} (mode bits)") or none,
            "owner": (body + also) or (header and f"{header} (numeric uid and gid)") or none,
            "inode": body or none,
        }
        for list_name, algorithm in HASH_LISTS.items():
            fields[algorithm] = (f"{list_name} (-H: UAC's digest of its copy of each collected file)"
                                 if self._own(list_name) is not None else
                                 "not recorded" + (" (UAC was run without -H)" if algorithm != "sha256" else
                                                   " (UAC writes it only with -H and sha256 in hash_algorithm)"))
        return fields


def _copy(record: Recorded) -> Recorded:
    return replace(record, digests=dict(record.digests), sources=dict(record.sources))


def _with_sources(record: Recorded, fields: tuple[str, ...], source: str) -> Recorded:
    for name in fields:
        record.sources[name] = source
    return record


def _take_body_record(recorded: Recorded, record: BodyRecord, where: str) -> None:
    """The bodyfile's stat of the file, over what the archive's header said (the differences are named)."""
    recorded.mtime_ns, recorded.atime_ns, recorded.ctime_ns = (
        record.mtime * 1_000_000_000, record.atime * 1_000_000_000, record.ctime * 1_000_000_000)
    recorded.uid, recorded.gid, recorded.ino = record.uid, record.gid, record.ino
    names = ["mtime", "atime", "ctime", "owner", "inode"]
    if record.btime is not None:
        recorded.btime_ns = record.btime * 1_000_000_000
        names.append("btime")
    if record.mode is not None:
        recorded.mode = record.mode
        names.append("mode")
    if record.md5 is not None:
        recorded.digests["md5"] = record.md5
        names.append("md5")
    for name in names:
        recorded.sources[name] = where


def _parents(path: str) -> Iterator[str]:
    parts = path.strip("/").split("/")
    for index in range(1, len(parts)):  # not "/" itself: the subject's root is no file of it
        yield "/" + "/".join(parts[:index])
