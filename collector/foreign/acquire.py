"""acquire's collection container as ``aitrail import acquire`` reads it (docs/importing-acquire.md).

acquire (``fox-it/acquire@f4b0fa4``; PyPI 3.22, run here against a fake
root) writes ``<target name>_<UTC YYYYmmddHHMMSS>.tar`` (``.tar.gz``,
``.bz2``, ``.xz`` with ``--compress``; ``.enc`` when encrypted), ``.zip``
(``-ot zip``) or a directory (``-ot dir``), and beside it
``<same>.report.json`` and, unless ``-l`` sends it elsewhere, ``<same>.log``.
Inside (``acquire/acquire.py``: ``dir_base``; ``acquire/collector.py``:
``Collector._output_path``, ``METADATA_BASE``):

* the subject's files as ``fs/$rootfs$/<path>`` for a POSIX target and
  ``fs/<drive>:/<path>`` for Windows (``fs/sysvol/`` or ``sysvol/`` in
  acquire before 3.12; ``fs/$fs$/fsN/`` for filesystems with no mount
  point); links as links, then their targets under the targets' own paths;
  no directory members except empty ones of volatile modules;
* its own records below ``$metadata$/`` of that base
  (``file-hashes.csv.gz`` with ``--hashes``, ``open_handles.csv.gz``,
  ``command-output/``), and a few outside ``fs/``.

What a member carries (``acquire/outputs/{tar,zip,dir}.py``): a tar header
with the file's lstat ``st_mtime`` (a float, as PAX ``mtime``), owner
forced to ``root`` (uid 0) and the default mode 0644; a zip entry with the
mtime as UTC (2-second steps, years before 1980 as 1980) and mode 0777
plus the type; a directory output keeps no times and writes each link as
an empty regular file. So mode, owner, inode, atime, ctime and birth time
are not recorded. dissect.target reads the same layout
(``fox-it/dissect.target@28082eb`` ``dissect/target/loaders/acquire.py``).
"""

from __future__ import annotations

import os
import re

from aitrail.collector.foreign.acquire_records import (
    FIRST_ITEMS,
    AcquireLog,
    Report,
    parse_hash_csv,
    parse_log,
    parse_report,
)
from aitrail.collector.foreign.container import (
    ArchiveEntry,
    Container,
    ContainerError,
    ForeignFile,
    Recorded,
    subject_path,
)
from aitrail.collector.foreign.sidecar import container_stem, fact, printable, read_sidecar

ENCRYPTED_MAGIC = b"ENCRYPTEDACQUIRE"  # acquire/crypt.py FILE_MAGIC
ROOTFS = "$rootfs$"
METADATA = "$metadata$"
HASH_CSV = "file-hashes.csv.gz"
SUFFIXES = (".tar.gz.enc", ".tar.bz2.enc", ".tar.xz.enc", ".tar.enc", ".zip.enc", ".tar.gz", ".tar.bz2", ".tar.xz",
            ".tar", ".zip")
DRIVE = re.compile(r"^[A-Za-z][:_]$")  # "C:"; "C_" in a directory output written on Windows


class AcquireContainer(Container):
    """An acquire collection: ``fs/`` members, with the report, log and ``$metadata$`` as acquire's own records."""

    tool = "acquire"
    layout = ("fs/ tree (acquire 3: fs/$rootfs$/<path> of a POSIX target, fs/<drive>:/<path> of Windows; "
              "$metadata$/ for its own records)")

    def __init__(self, path: str):
        _refuse_encrypted(path)
        super().__init__(path)
        self._by_key: dict[str, ForeignFile] = {}
        self._counts: dict[str, int] = {}

    def read(self) -> None:
        """Scan the container, read acquire's records and fill ``files`` (ContainerError: not acquire's)."""
        entries = self.archive.scan(lambda name: name.endswith(f"{METADATA}/{HASH_CSV}"))
        placed = [(entry, _place(entry.name)) for entry in entries]
        if not any(place[0] in ("posix", "drive", "legacy") for _, place in placed):
            raise ContainerError(f"{self.path}: no fs/$rootfs$/ or fs/<drive>:/ member: not an acquire collection "
                                 f"({len(entries)} members read)" + (f"; {self.problems[0]}" if self.problems else ""))
        self.windows = _windows(placed)
        for entry, place in placed:
            self._add_member(entry, place)
        report = self._read_report()
        self._read_log()
        self._apply_hash_csvs(entries)
        self.files = list(self._by_key.values())
        self._describe(report)

    # -- members -----------------------------------------------------------------------

    def _add_member(self, entry: ArchiveEntry, place: tuple[str, str | None]) -> None:
        where, path = place
        if entry.kind == "dir" and entry.name.rstrip("/").count("/") <= 1:
            return  # fs/, fs/$rootfs$, fs/C: themselves (a directory output, or a re-archived one)
        if where in ("own", "outside"):
            if entry.kind == "dir":
                return
            self._count(f"{where}:{entry.name.split('/')[0] if where == 'outside' else entry.name}")
            return
        if where == "absolute":
            self.problems.add(f"member {printable(entry.name)}: an absolute name, which acquire never writes; left out")
            return
        if where == "unmapped":
            self.problems.add(f"member {printable(entry.name)}: on a filesystem acquire found no mount point or "
                              "drive for (fs/$fs$/); not mapped to a subject path, left out")
            return
        if path is None or where == "unknown" or (where == "posix") == self.windows:
            self.problems.add(f"member {printable(entry.name)}: " + (
                "its name could leave the subject's tree ('..', '.', a backslash, or nothing after the base); "
                if path is None or where == "unknown" else
                f"a {'POSIX' if where == 'posix' else 'Windows'} path in a container of the other kind; ") + "left out")
            return
        key = path.lower() if self.windows else path
        if key in self._by_key:
            self.problems.add(f"member {printable(entry.name)}: {printable(path)} is in the container twice; the "
                              "first is kept, as recorded, and this one left out")
            return
        if where == "legacy":
            self._count("legacy_sysvol_members")
        self._by_key[key] = ForeignFile(path=path, kind=entry.kind, size=entry.size, member=entry.name,
                                        recorded=self._member_record(entry), link_target=entry.linkname)

    def _member_record(self, entry: ArchiveEntry) -> Recorded:
        """The mtime acquire copied from the file's lstat into the member (nothing in a directory output)."""
        if self.archive.kind == "dir" or entry.mtime_ns is None:
            return Recorded()
        if self.archive.kind == "tar":
            return Recorded(mtime_ns=entry.mtime_ns, sources={"mtime": "tar header (acquire: lstat st_mtime)"})
        if entry.mtime_ns < 315_619_200 * 1_000_000_000:  # before 1980-01-03: maybe an older time written as 1980
            self._count("zip_times_in_1980")
        return Recorded(mtime_ns=entry.mtime_ns, sources={"mtime": "zip entry time (acquire: lstat st_mtime as UTC, "
                                                                   "2-second steps)"})

    def _find(self, target_path: str) -> ForeignFile | None:
        path = _subject_of_target_path(target_path, self.windows)
        if path is None:
            return None
        return self._by_key.get(path.lower() if self.windows else path)

    # -- acquire's own records -----------------------------------------------------------

    def _sidecar(self, suffix: str) -> tuple[bytes | None, str]:
        path = container_stem(self.path, SUFFIXES) + suffix
        data, why = read_sidecar(path)
        if why:
            self.problems.add(f"beside the container: {why}")
        return data, os.path.basename(path)

    def _read_report(self) -> Report | None:
        data, name = self._sidecar(".report.json")
        if data is None:
            self.metadata["report"] = fact(None, f"no {name} beside the container (acquire writes it there)")
            return None
        report = parse_report(data, name, self.problems)
        if report is None:
            return None
        for module, kind, value in report.collected:
            self._apply_report_record(name, module, kind, value)
        self.metadata["report"] = fact({**{key: _plain(value) for key, value in report.facts.items()},
                                        "outcomes": dict(sorted(report.counts.items())),
                                        "not_collected_first": report.not_collected}, name)
        version = report.facts.get("acquire-version")
        if isinstance(version, str):
            self.tool_version = printable(version, 40)
        self._hostname_from_report(report, name)
        return report

    def _apply_report_record(self, report_name: str, module: str, kind: str, value: str) -> None:
        if value.startswith("/fs/") or kind == "dir":
            return  # acquire's own files (/fs/$rootfs$/$metadata$/...), and directories it walked
        foreign = self._find(value)
        if foreign is None:
            if _subject_of_target_path(value, self.windows) is not None:
                self.problems.add(f"{report_name}: {module} collected the {kind} {printable(value)}, but the "
                                  "container holds no member for it (a truncated archive?)")
            return
        if kind == "symlink" and foreign.kind == "file" and self.archive.kind == "dir":
            self.problems.add(f"{printable(foreign.path)}: a link ({report_name}, {module}); acquire's directory "
                              "output wrote it as an empty file, so its target is not recorded")
            foreign.kind, foreign.member, foreign.size, foreign.link_target = "symlink", None, 0, None
            self._count("links_from_report")

    def _hostname_from_report(self, report: Report, report_name: str) -> None:
        name, target = report.facts.get("name"), report.facts.get("target")
        if not isinstance(name, str) or not name or name == "Unknown":
            return
        target_path = str(target or "").removeprefix("<Target ").removesuffix(">")
        if name.lower() == os.path.basename(target_path.rstrip("/\\")).replace(" ", "_").lower():
            self.metadata["target_name"] = fact(name, f"{report_name} name (the target path's last part: dissect "
                                                      "found no host name)")
            return
        self.hostname = printable(name, 255)
        self.hostname_source = (f"{report_name} name (dissect's target name: the host name it read from the "
                                "subject, as a slug)")

    def _read_log(self) -> AcquireLog | None:
        data, name = self._sidecar(".log")
        if data is None:
            self.metadata["log"] = fact(None, f"no {name} beside the container (acquire writes it there unless -l "
                                              "or --no-log says otherwise)")
            return None
        log = parse_log(data)
        for key, (value, line) in sorted(log.facts.items()):
            self.metadata[f"log_{key}"] = fact(printable(value, 2000), f"{name} line {line}")
        if log.first and log.last:
            zone = " (the collecting host's local time; acquire's log names no zone)"
            self.metadata["log_first_line_time"] = fact(log.first[0], f"{name} line {log.first[1]}{zone}")
            self.metadata["log_last_line_time"] = fact(log.last[0], f"{name} line {log.last[1]}{zone}")
        if log.errors:
            self.metadata["log_errors"] = fact({"count": len(log.errors), "first": [
                f"line {line}: {printable(text, 300)}" for line, text in log.errors[:FIRST_ITEMS]]}, name)
        if "version" in log.facts and self.tool_version is None:
            self.tool_version = printable(log.facts["version"][0], 40)
        return log

    def _apply_hash_csvs(self, entries: list[ArchiveEntry]) -> None:
        for entry in entries:
            data = self.archive.kept.get(entry.name)
            if data is not None and entry.name.endswith(f"{METADATA}/{HASH_CSV}"):
                self._apply_hash_csv(entry.name, data)
                return

    def _apply_hash_csv(self, member: str, data: bytes) -> None:
        self.metadata["hash_csv"] = fact(member, "the container's member")
        for row in parse_hash_csv(member, data, self.problems):
            where = f"{member} line {row.line}"
            foreign = self._find(row.path)
            if foreign is None:
                self._count("hash_rows_not_in_container")  # --hashes hashes by its own globs, not what was taken
                continue
            if foreign.kind != "file":
                self._count("hash_rows_for_links")  # acquire hashed through the link: the digest is its target's
                continue
            if foreign.size != row.size:
                self.problems.add(f"{where}: {printable(row.path)} had {row.size} bytes when hashed; the container "
                                  f"holds {foreign.size}")
            for algorithm, digest in row.digests.items():
                foreign.recorded.digests[algorithm] = digest
                foreign.recorded.sources[algorithm] = where
            self._count("hash_rows_applied")

    def _count(self, key: str) -> None:
        self._counts[key] = self._counts.get(key, 0) + 1

    # -- custody facts -----------------------------------------------------------------

    def _describe(self, report: Report | None) -> None:
        stem = os.path.basename(container_stem(self.path, SUFFIXES))
        named = re.fullmatch(r"(.+)_(\d{14})", stem)
        if named:
            self.metadata["container_name"] = fact({"target_name": named.group(1), "utc_time": named.group(2)},
                                                   "the container's name (<target name>_<UTC time> when acquire "
                                                   "named it)")
        own = sorted(key.split(":", 1)[1] for key in self._counts if key.startswith("own:"))
        outside = {key.split(":", 1)[1]: count for key, count in self._counts.items() if key.startswith("outside:")}
        if own or outside:
            self.metadata["own_members"] = fact({"metadata": own[:50], "outside_fs": dict(sorted(outside.items()))},
                                                "the container's members")
        counts = {key: count for key, count in sorted(self._counts.items()) if ":" not in key}
        if counts:
            self.metadata["counts"] = fact(counts, "this reader, over the members and acquire's records")
        self.recorded_fields = self._recorded_fields()

    def _recorded_fields(self) -> dict[str, str]:
        mtime = {"tar": "tar header (acquire copies the file's lstat st_mtime, a float)",
                 "zip": "zip entry time (acquire writes lstat st_mtime as UTC; 2-second steps, before 1980 as 1980)",
                 "dir": "not recorded (acquire's directory output keeps no times)"}[self.archive.kind]
        header = {"tar": "tar header", "zip": "zip entry", "dir": "directory output"}[self.archive.kind]
        hashed = "hash_csv" in self.metadata
        digest = (f"{self.metadata['hash_csv']['value']} (--hashes: only the files its globs chose, read in a "
                  "separate pass)" if hashed else "not recorded (no $metadata$/file-hashes.csv.gz: --hashes did "
                                                  "not run)")
        return {
            "mtime": mtime, "atime": "not recorded", "ctime": "not recorded", "btime": "not recorded",
            "mode": "not recorded (acquire writes " + {"tar": "0644 in every tar header",
                                                       "zip": "0777 with the file type in every zip entry",
                                                       "dir": "files with the umask of its account"}[self.archive.kind]
                    + ")",
            "owner": f"not recorded (acquire writes root, uid 0, in every {header})" if self.archive.kind == "tar"
            else "not recorded",
            "inode": "not recorded", "md5": digest, "sha1": digest, "sha256": digest,
        }


def _refuse_encrypted(path: str) -> None:
    if not os.path.isfile(path):
        return
    with open(path, "rb") as handle:
        if handle.read(len(ENCRYPTED_MAGIC)) == ENCRYPTED_MAGIC:
            raise ContainerError(f"{path}: encrypted by acquire (ENCRYPTEDACQUIRE); decrypt it first with "
                                 "acquire-decrypt and the private key, then import the decrypted archive")


def _place(name: str) -> tuple[str, str | None]:
    """Where a member lies: ``posix``/``drive``/``legacy`` with its subject path, or ``own``, ``outside``, ..."""
    if name.startswith("/"):
        return "absolute", None
    parts = name.rstrip("/").split("/")
    if parts[0] == "sysvol":  # acquire before the fs/ base: sysvol/ stands for the system drive
        return "legacy", subject_path("/".join(["C:", *parts[1:]]), "", windows=True)
    if parts[0] != "fs" or len(parts) < 2:
        return "outside", None
    base = parts[1]
    if base == ROOTFS:
        if len(parts) > 2 and parts[2] == METADATA:
            return "own", None
        return "posix", subject_path(name, f"fs/{ROOTFS}/")
    if base == METADATA:
        return "own", None
    if base == "$fs$":
        return "unmapped", None
    if base.lower() == "sysvol":
        return "legacy", subject_path("/".join(["C:", *parts[2:]]), "", windows=True)
    if DRIVE.match(base):
        return "drive", subject_path("/".join([base[0] + ":", *parts[2:]]), "", windows=True)
    return "unknown", None


def _windows(placed: list[tuple[ArchiveEntry, tuple[str, str | None]]]) -> bool:
    """A Windows target's container: drive members and no $rootfs$ ones (a mixture keeps the larger kind)."""
    posix = sum(1 for _, (where, _path) in placed if where == "posix")
    drives = sum(1 for _, (where, _path) in placed if where in ("drive", "legacy"))
    return drives > posix


def _subject_of_target_path(value: str, windows: bool) -> str | None:
    """The subject path of a path acquire wrote in its report or hash CSV (``/home/..``, ``/c:/..``, ``sysvol/..``)."""
    parts = [part for part in value.replace("\\", "/").split("/") if part]
    if not parts:
        return None
    if not windows:
        return subject_path("/" + "/".join(parts), "") if value.startswith("/") else None
    first = parts[0]
    if first.lower() == "sysvol":
        first = "C:"
    if not (len(first) == 2 and first[1] == ":" and first[0].isalpha()):
        return None
    return subject_path("/".join([first, *parts[1:]]), "", windows=True)


def _plain(value: object) -> object:
    """A report value fit for collection.json: text made printable, lists and dicts bounded."""
    if isinstance(value, str):
        return printable(value, 2000)
    if isinstance(value, list):
        return [_plain(item) for item in value[:100]]
    if isinstance(value, dict):
        return {printable(str(key), 200): printable(str(item), 2000) for key, item in list(value.items())[:100]}
    return value
