r"""KAPE's target collections as ``aitrail import kape`` reads them (docs/importing-kape.md).

The container is KAPE's ``--tdest`` directory, or the zip ``--zip`` made of
it (``EricZimmerman/KapeDocs@6fbfee8`` ``Pages/3.-Using-KAPE.md``, container
switches): one folder per drive letter holding the copies at their paths
(``C/Users/alice/...`` for ``C:\Users\alice\...``), and at the top KAPE's
logs of each run (kape_records.py): ``<run>_CopyLog.csv`` (source path,
destination, size, SHA-1, created/modified/accessed times in UTC),
``<run>_SkipLog.csv`` and ``<run>_ConsoleLog.txt``. dissect.target maps the
same tree (``fox-it/dissect.target@28082eb`` ``dissect/target/loaders/kape.py``
and ``loaders/dir.py``: a folder named as a drive letter is that drive).
A VHDX or VHD container (``--vhdx``/``--vhd``) is refused: mount it and pass
the mounted directory, which holds the same tree.

Each copied file's path is the CopyLog's ``SourceFile`` (the copy's own
name can differ: ``$UsnJrnl:$J`` is stored as ``$J``, a long name under
``LongFileNames``, KapeDocs ``Pages/0.-Changelog.md`` 0.8.3.3), its member
the ``DestinationFile`` below ``--tdest``, its times and SHA-1 the row's. A
file in the tree no row names keeps its tree path and no record; the
copies' own times (lstat, zip headers) are KAPE's copy, never the
subject's, and are not taken. The SkipLog's files are recorded too: a
``Deduped`` one with the bytes of the copied file of the same SHA-1, the
others with none. Rows of several runs in one ``--tdest``: within a run the
first row of a path is kept; a later run's row replaces an earlier run's
(it wrote over the same destination), said as a problem either way.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from collections import Counter
from dataclasses import dataclass

from aitrail.collector.foreign import kape_records as kr
from aitrail.collector.foreign import zipcheck
from aitrail.collector.foreign.container import (
    ArchiveEntry,
    Container,
    ContainerError,
    ForeignFile,
    Recorded,
    subject_path,
)
from aitrail.collector.foreign.sidecar import fact, printable, zip_details

DRIVE_FOLDER = re.compile(r"^[A-Za-z]$")
DISK_IMAGES = (".vhdx", ".vhd")
KAPE_ZIP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{6}_.*\.zip$", re.IGNORECASE)  # yyyy-MM-ddTHHmmss_<name>.zip
DISK_MAGICS = (b"vhdxfile", b"conectix")
REFUSE_DISK = ("a VHDX/VHD container (KAPE --vhdx/--vhd) is not read: mount it (Windows: Mount-DiskImage; Linux: "
               "qemu-nbd --read-only, then mount the partition read-only) and pass the mounted directory, whose "
               "root holds the drive-letter folders and KAPE's logs")


@dataclass
class Copied:
    """A subject file a CopyLog row names: its path, the row and the member holding its bytes."""

    path: str
    row: kr.CopyRow
    member: str | None


class KapeContainer(Container):
    """A KAPE ``--tdest`` directory or its ``--zip``."""

    tool = "kape"
    windows = True
    layout = ("KAPE --tdest: <drive letter>/<path> for each copied file, with <run>_CopyLog.csv, "
              "<run>_SkipLog.csv and <run>_ConsoleLog.txt at the top")

    def __init__(self, path: str):
        _refuse_disk_image(path)
        super().__init__(path)
        self.members: dict[str, ArchiveEntry] = {}  # name with '/' separators -> entry
        self.folded: dict[str, str] = {}  # casefolded name -> name (Windows names are case-insensitive)
        self.tdest: list[str] | None = None  # --tdest's components, learnt from the DestinationFile column

    def read(self) -> None:
        """Scan the container, read KAPE's logs, and list the subject's files it holds or records."""
        if self.archive.kind == "zip":
            self._zip_look(zipcheck.look(self.path))
        entries = self.archive.scan(keep=lambda name: "/" not in name and kr.log_kind(name) is not None)
        self._index(entries)
        logs = self._logs()
        self._console(logs)
        copied = self._copy_logs(logs)
        self._files_of(copied)
        self._tree_files(claimed={item.member for item in copied.values() if item.member},
                         logged=any(kind == "copy" for _run, kind, _name in logs))
        self._skip_logs(logs, copied)
        self._record_fields()

    # -- the container -----------------------------------------------------------------

    def _zip_look(self, look: zipcheck.ZipLook) -> None:
        if look.encrypted:
            raise ContainerError(f"{len(look.encrypted)} encrypted members: a password-protected KAPE zip (--zpw); "
                                 "decrypt it with its password and pass the result")
        tops = {name.replace("\\", "/").split("/", 1)[0] for name in look.names if "/" in name.replace("\\", "/")}
        images = [name for name in look.names if name.lower().endswith(DISK_IMAGES)]
        if images and not any(DRIVE_FOLDER.match(top) for top in tops):
            raise ContainerError(f"this zip holds {printable(images[0])}, KAPE's VHDX/VHD zipped by --zv: unzip it; "
                                 + REFUSE_DISK)
        match = kr.ZIP_COMMENT.search(look.comment)
        if match:
            self.tool_version = printable(match.group(1), 40)
            self.metadata["zip_created"] = fact(printable(match.group(2), 60), "the zip's comment")
        if look.comment:
            self.metadata["zip_comment"] = fact(printable(look.comment, 300), "the zip's comment")

    def _index(self, entries: list[ArchiveEntry]) -> None:
        """Members by their names with '/' separators (a Windows zip may write backslashes); duplicates left out."""
        details = zip_details(self.path) if self.archive.kind == "zip" else {}
        names = [((details[entry.name].name if entry.name in details else entry.name).replace("\\", "/")
                  .rstrip("/"), entry) for entry in entries]
        counts = Counter(name for name, _entry in names)
        for name, entry in names:
            if any(part in ("", ".", "..") for part in name.split("/")):
                self.problems.add(f"{printable(name)!r}: an absolute name, or one with an empty, '.' or '..' "
                                  "component; left out")
                continue
            if counts[name] > 1:
                self.problems.add(f"{name}: in the container {counts[name]} times; which copy is KAPE's cannot be "
                                  "told, so it is left out")
                continue
            self.members[name] = entry
            self.folded.setdefault(name.casefold(), name)
        tops = {name.split("/", 1)[0] for name in self.members}
        copy_logs = [top for top in tops if (kind := kr.log_kind(top)) is not None and kind[1] == "copy"]
        if not any(DRIVE_FOLDER.match(top) for top in tops) and not copy_logs:
            images = [top for top in tops if top.lower().endswith(DISK_IMAGES)]
            if images:
                raise ContainerError(f"{printable(images[0])}: " + REFUSE_DISK)
            zips = [top for top in tops if KAPE_ZIP.match(top)]
            if zips:
                raise ContainerError(f"{printable(zips[0])} is KAPE's --zip of this --tdest: pass the zip itself")
            raise ContainerError("not a KAPE --tdest: no drive-letter folder (C, D, ...) and no *_CopyLog.csv at "
                                 "its top")

    def _logs(self) -> list[tuple[str, str, str]]:
        """(run, kind, member) of KAPE's logs at the top, oldest run first."""
        found = []
        for name in self.members:
            if "/" not in name and (kind := kr.log_kind(name)) is not None:
                found.append((kind[0], kind[1], name))
        return sorted(found)

    def _kept(self, name: str) -> bytes | None:
        entry = self.members.get(name)
        return self.archive.kept.get(entry.name) if entry else None

    # -- the logs ----------------------------------------------------------------------

    def _console(self, logs: list[tuple[str, str, str]]) -> None:
        consoles = [name for _run, kind, name in logs if kind == "console"]
        if not consoles:
            self.metadata["console_log"] = fact(None, "no *_ConsoleLog.txt at the top (a --zip container holds "
                                                      "none: KAPE writes it beside the zip)")
            return
        for name in consoles:
            data = self._kept(name)
            if data is None:
                continue
            found = kr.console_facts(data)
            for key, (value, line) in found.facts.items():
                self.metadata.setdefault(key, fact(value, f"{name} line {line}"))
            if found.error_count:
                self.metadata.setdefault("console_errors", fact({"count": found.error_count, "first": found.errors},
                                                                name))
        version = self.metadata.get("kape_version")
        if version and not self.tool_version:
            self.tool_version = version["value"]
        self._hostname()

    def _hostname(self) -> None:
        """The machine KAPE ran on is the subject only when --tsource was that machine's own C: drive."""
        machine, tsource = self.metadata.get("kape_machine_name"), self.metadata.get("tsource")
        if not machine or not machine["value"]:
            return
        if tsource and kr.is_system_drive(tsource["value"]):
            self.hostname = printable(machine["value"], 255)
            self.hostname_source = (f"{machine['source']}, 'Machine name': the machine KAPE ran on, taken as the "
                                    f"subject because --tsource was {tsource['value']} (its own system drive)")
        else:
            machine["note"] = ("the machine KAPE ran on; --tsource was not its C: drive (a mounted image or another "
                               "volume), so it is not taken as the subject's host name: give --hostname")

    def _copy_logs(self, logs: list[tuple[str, str, str]]) -> dict[str, Copied]:
        """The copied files by their subject path (casefolded), oldest run first, a later run's row winning."""
        copied: dict[str, Copied] = {}
        runs: dict[str, dict] = {}
        for run, kind, name in logs:
            runs.setdefault(run, {})[f"{kind}_log"] = name
            if kind != "copy" or (data := self._kept(name)) is None:
                continue
            rows = kr.copy_rows(data, name, run, self.problems)
            runs[run]["copied_rows"] = len(rows)
            for row in rows:
                self._add_copied(row, copied)
        if runs:
            self.metadata["runs"] = fact(runs, "KAPE's log names at the top of --tdest (<run>_<log>)")
        if self.tdest is not None:
            self.metadata["tdest"] = fact(printable("\\".join(self.tdest), 500),
                                          "the DestinationFile column, less the member's own path")
        return copied

    def _add_copied(self, row: kr.CopyRow, copied: dict[str, Copied]) -> None:
        path, why = kr.source_path(row.source)
        if path is None or subject_path(path, "", True) != path:
            self.problems.add(f"{row.where()}: SourceFile {printable(row.source)!r} not used "
                              f"({why or 'the path could leave the subject tree'})")
            return
        key = path.casefold()
        earlier = copied.get(key)
        if earlier is not None and earlier.row.run == row.run:
            self.problems.add(f"{row.where()}: {printable(row.source)} again (line {earlier.row.line}); the first "
                              "is kept")
            return
        if earlier is not None:
            self.problems.add(f"{row.where()}: {printable(row.source)} copied again by run {row.run}; its record "
                              f"replaces {earlier.row.where()}'s (the later run wrote the same destination)")
        copied[key] = Copied(path, row, self._destination_member(row.destination))

    def _destination_member(self, destination: str) -> str | None:
        """The member a DestinationFile names: --tdest learnt from the first row found, then taken off each."""
        parts = [part for part in re.split(r"[\\/]", destination) if part]
        if self.tdest is not None and [part.casefold() for part in parts[:len(self.tdest)]] == [
                part.casefold() for part in self.tdest]:
            found = self._member("/".join(parts[len(self.tdest):]))
            if found is not None:
                return found
        for start in range(len(parts)):  # the longest tail that is a member: --tdest is what comes before it
            found = self._member("/".join(parts[start:]))
            if found is not None:
                if self.tdest is None:
                    self.tdest = parts[:start]
                return found
        return None

    def _member(self, name: str) -> str | None:
        if name in self.members:
            return name
        return self.folded.get(name.casefold())

    # -- the files ---------------------------------------------------------------------

    def _files_of(self, copied: dict[str, Copied]) -> None:
        holders: dict[str, str] = {}
        for item in copied.values():
            row, member = item.row, item.member
            if member is not None and member in holders:
                self.problems.add(f"{row.where()}: its DestinationFile {member} also holds {holders[member]}; "
                                  "not taken")
                member = item.member = None
            entry = self.members.get(member) if member else None
            if entry is not None and entry.kind != "file":
                self.problems.add(f"{row.where()}: its DestinationFile {member} is a {entry.kind}; not taken")
                member = item.member = None
                entry = None
            if member is None:
                self.problems.add(f"{row.where()}: DestinationFile {printable(row.destination)} is not in the "
                                  "container")
            else:
                holders[member] = item.path
                self._compare(item, entry)
            size = row.size if row.size is not None else entry.size if entry else 0
            self.files.append(ForeignFile(item.path, "file", size, entry.name if entry else None, _recorded(row)))

    def _compare(self, item: Copied, entry: ArchiveEntry | None) -> None:
        if entry is None or item.member is None:
            return
        row = item.row
        if row.size is not None and row.size != entry.size:
            self.problems.add(f"{row.where()}: FileSize {row.size}; the member {item.member} holds {entry.size} bytes")
        tree = subject_path(item.member, "", True)
        if tree is None or tree.casefold() != item.path.casefold():
            self.problems.add(f"{row.where()}: {printable(item.path)} is held as {item.member} (KAPE named the copy "
                              "otherwise: an alternate data stream or a long name)")

    def _tree_files(self, claimed: set[str], logged: bool) -> None:
        """Members below a drive folder no CopyLog row names: their tree path, no record."""
        known = {item.path.casefold() for item in self.files}
        unlogged, others = 0, Counter()
        for name, entry in sorted(self.members.items()):
            top = name.split("/", 1)[0]
            if not DRIVE_FOLDER.match(top):
                if "/" in name or kr.log_kind(name) is None:
                    others[top] += 1
                continue
            if name in claimed or "/" not in name:
                continue
            path = subject_path(name, "", True)
            if path is None:
                self.problems.add(f"{name}: not a path of the subject; left out")
            elif entry.kind not in ("file", "dir"):
                self.problems.add(f"{name}: a {entry.kind}, where KAPE copies files; left out")
            elif path.casefold() in known:
                if entry.kind == "file":
                    self.problems.add(f"{name}: the same path as a file a CopyLog row names; left out")
            else:
                known.add(path.casefold())
                unlogged += entry.kind == "file"
                if entry.kind == "file" and logged:
                    self.problems.add(f"{name}: no CopyLog row names it; no times or SHA-1 recorded for it")
                self.files.append(ForeignFile(path, entry.kind, entry.size if entry.kind == "file" else 0,
                                              entry.name, Recorded()))
        if unlogged and not logged:
            self.problems.add(f"no *_CopyLog.csv: the {unlogged} files in the tree have no times or SHA-1 recorded")
        self._others(others)

    def _others(self, others: Counter) -> None:
        for top, count in sorted(others.items()):
            if top.lower() != "longfilenames":
                self.problems.add(f"{top}: {count} members outside the drive-letter folders (not KAPE's logs, not a "
                                  "drive: a shadow copy or not KAPE's); left out")
        if others:
            self.metadata["members_outside_drives"] = fact(dict(sorted(others.items())), "the container's member list")

    def _skip_logs(self, logs: list[tuple[str, str, str]], copied: dict[str, Copied]) -> None:
        by_sha1 = {}
        for item in copied.values():
            if item.row.sha1 and item.member:
                by_sha1.setdefault(item.row.sha1, item)
        known = {item.path.casefold() for item in self.files}
        reasons: Counter = Counter()
        for _run, kind, name in logs:
            if kind != "skip" or (data := self._kept(name)) is None:
                continue
            for row in kr.skip_rows(data, name, self.problems):
                reasons[row.reason] += 1
                self._skipped(row, by_sha1, known)
        if reasons:
            self.metadata["skipped"] = fact(dict(sorted(reasons.items())), "the SkipLog's Reason column")

    def _skipped(self, row: kr.SkipRow, by_sha1: dict[str, Copied], known: set[str]) -> None:
        where = f"{row.log} line {row.line}"
        path, why = kr.source_path(row.source)
        if path is None or subject_path(path, "", True) != path:
            self.problems.add(f"{where}: SourceFile {printable(row.source)!r} not used ({why or 'not a path'})")
            return
        if path.casefold() in known:
            self.problems.add(f"{where}: {printable(path)} is skipped here but copied or held elsewhere; the copy "
                              "is kept")
            return
        known.add(path.casefold())
        recorded = Recorded()
        if row.sha1:
            recorded.digests["sha1"] = row.sha1
            recorded.sources["sha1"] = f"SourceFileSha1 of {where} (skipped: {row.reason})"
        same = by_sha1.get(row.sha1) if row.sha1 and row.reason.lower() == "deduped" else None
        if same is None:
            self.files.append(ForeignFile(path, "file", 0, None, recorded))
            return
        recorded.sources["sha1"] += f"; its bytes are those of {printable(same.path)} ({same.row.where()}), same SHA-1"
        entry = self.members[same.member] if same.member else None
        size = same.row.size if same.row.size is not None else entry.size if entry else 0
        self.files.append(ForeignFile(path, "file", size, entry.name if entry else None, recorded))

    def _record_fields(self) -> None:
        self.recorded_fields = {
            "mtime": "ModifiedOnUtc of the CopyLog (UTC, 100 ns)",
            "atime": "LastAccessedOnUtc of the CopyLog (UTC, 100 ns)",
            "ctime": "not recorded (the CopyLog has no MFT change time)",
            "btime": "CreatedOnUtc of the CopyLog (UTC, 100 ns)",
            "mode": "not recorded (Windows; the CopyLog has no attributes)",
            "owner": "not recorded (the CopyLog has no owner or SID)",
            "inode": "not recorded (the CopyLog has no MFT entry number)",
            "md5": "not recorded",
            "sha1": "SourceFileSha1 of the CopyLog (and of the SkipLog for skipped files)",
            "sha256": "not recorded",
        }


def _recorded(row: kr.CopyRow) -> Recorded:
    recorded = Recorded()
    columns = {"mtime": "ModifiedOnUtc", "atime": "LastAccessedOnUtc", "btime": "CreatedOnUtc"}
    for key, value in row.times.items():
        setattr(recorded, f"{key}_ns", value)
        recorded.sources[key] = f"{columns[key]} of {row.where()}"
    if row.sha1:
        recorded.digests["sha1"] = row.sha1
        recorded.sources["sha1"] = f"SourceFileSha1 of {row.where()}"
    return recorded


def _refuse_disk_image(path: str) -> None:
    """A VHDX or VHD (by name, or by its signature at the start or in the last sector) is refused with directions."""
    if path.lower().endswith(DISK_IMAGES):
        raise ContainerError(f"{path}: {REFUSE_DISK}")
    try:
        if not stat_module.S_ISREG(os.stat(path).st_mode):
            return  # a directory (a --tdest), or not a file: the archive says why
        with open(path, "rb") as handle:
            head = handle.read(8)
            size = os.fstat(handle.fileno()).st_size
            tail = b""
            if size >= 512:
                handle.seek(size - 512)
                tail = handle.read(8)
    except OSError:
        return  # nothing to read: the archive says why
    if head in DISK_MAGICS or tail == b"conectix":
        raise ContainerError(f"{path}: {REFUSE_DISK}")
