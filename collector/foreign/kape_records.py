r"""KAPE's own records, parsed: the copy log, the skip log, the console log and the zip comment (kape.py reads them).

Formats, from ``EricZimmerman/KapeDocs@6fbfee8`` (read, not copied):

* log names (``Pages/4.-Log-files.md``): KAPE's start time as
  ``yyyy-MM-ddTHH_mm_ss_fffffff`` then ``_CopyLog.csv``, ``_SkipLog.csv``,
  ``_ConsoleLog.txt``; before 0.8.8.0 the target names came between
  (``..._EvidenceOfExecution_copylog.csv``, ``Pages/0.-Changelog.md``);
  KAPE 1.3 names the skip log ``_SkipLog.csv.csv`` (seen in published
  KAPE 1.3.0.2 collections). An empty skip log is deleted (0.8.8.0).
* ``*_CopyLog.csv``: ``CopiedTimestamp``, ``SourceFile`` (the full path;
  ``VSS<n>\...`` for a file from a shadow copy), ``DestinationFile``
  (``--tdest``, then the drive letter or the shadow copy, then the path),
  ``FileSize``, ``SourceFileSha1``, ``DeferredCopy`` (locked: read raw),
  ``CreatedOnUtc``, ``ModifiedOnUtc``, ``LastAccessedOnUtc``,
  ``CopyDuration``. Written by CsvHelper: UTF-8 with a BOM, CRLF, times as
  ``yyyy-MM-dd HH:mm:ss.fffffff``, SHA-1 in capitals.
* ``*_SkipLog.csv``: ``SourceFile``, ``SourceFileSha1``, ``Reason``
  (``Deduped``: a file with the same SHA-1 was copied; ``Excluded``: its
  SHA-1 is in the ``--hex`` list).
* ``*_ConsoleLog.txt``: what the console showed, one message a line after
  a time and level (``KAPE version``, ``KAPE directory:``, ``Command
  line:``, ``System info: Machine name: ..., User: ... OS: ...``, the
  copy's warnings and errors).
* a ``--zip`` container's comment: ``Created by KAPE version <v> on <time>Z``.
"""

from __future__ import annotations

import calendar
import csv
import datetime
import re
from dataclasses import dataclass, field

from aitrail.collector.foreign.container import MAX_SIZE, Problems
from aitrail.collector.foreign.sidecar import printable

LOG_NAME = re.compile(r"^(?P<run>\d{4}-\d{2}-\d{2}T\d{2}_?\d{2}_?\d{2}(?:_\d{1,7})?)(?:_[^/\\]*?)?"
                      r"_(?P<kind>copylog\.csv|skiplog\.csv(?:\.csv)?|consolelog\.txt)$", re.IGNORECASE)
TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?Z?$")
SOURCE = re.compile(r"^([A-Za-z]):(?:\\(.*))?$", re.DOTALL)
SHADOW = re.compile(r"^vss\d+(\\|$)", re.IGNORECASE)
ZIP_COMMENT = re.compile(r"Created by KAPE version (\S+) on (\S+)")
MACHINE = re.compile(r"Machine name: (?P<machine>[^,]*), 64-bit: (?P<bits>[^,]*), User: (?P<user>.*?) OS: (?P<os>.*)$")
TSOURCE = re.compile(r"--tsource\s+(\"[^\"]*\"|\S+)", re.IGNORECASE)
CONSOLE_FACTS = (("KAPE version ", "kape_version"), ("KAPE directory: ", "kape_directory"),
                 ("Command line: ", "command_line"), ("System info: ", "system_info"))
ERROR_MARKS = ("| ERR]", "| FTL]", "| E |", "| F |", "Could not copy")
MAX_MESSAGES = 20


def log_kind(name: str) -> tuple[str, str] | None:
    """(run, ``copy``/``skip``/``console``) of one of KAPE's log names at the top of --tdest; None otherwise."""
    match = LOG_NAME.match(name)
    if not match:
        return None
    kind = match.group("kind").lower()
    return match.group("run"), "copy" if kind.startswith("copy") else "skip" if kind.startswith("skip") else "console"


def parse_time(text: str) -> tuple[int | None, bool]:
    """(ns since the epoch, understood) of a CopyLog time (UTC, 100 ns); an empty field is (None, True)."""
    if not text.strip():
        return None, True
    match = TIME.match(text.strip())
    if not match:
        return None, False
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        moment = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
        seconds = calendar.timegm(moment.timetuple())
    except (ValueError, OverflowError):
        return None, False
    return seconds * 1_000_000_000 + int((fraction or "").ljust(9, "0")), True


def source_path(text: str) -> tuple[str | None, str]:
    r"""(``C:/Users/...``, why not) of a ``SourceFile``: a drive-letter path, not a shadow copy's or a share's."""
    if SHADOW.match(text):
        return None, "read from a volume shadow copy, not the live volume"
    match = SOURCE.match(text)
    if not match:
        return None, "not a drive-letter path (a share or device)"
    parts = [part for part in (match.group(2) or "").split("\\") if part]
    if any(part in (".", "..") or "/" in part or "\0" in part for part in parts):
        return None, "a component is '.', '..' or holds '/' or NUL"
    return "/".join([match.group(1).upper() + ":", *parts]), ""


@dataclass
class CopyRow:
    """One CopyLog row, its fields checked."""

    log: str
    line: int
    source: str
    destination: str
    size: int | None = None
    sha1: str | None = None
    times: dict[str, int] = field(default_factory=dict)  # mtime/atime/btime -> ns
    deferred: bool = False
    run: str = ""

    def where(self) -> str:
        """The row as a source to name."""
        return f"{self.log} line {self.line}"


@dataclass
class SkipRow:
    """One SkipLog row."""

    log: str
    line: int
    source: str
    sha1: str | None
    reason: str


TIME_COLUMNS = (("modifiedonutc", "mtime"), ("lastaccessedonutc", "atime"), ("createdonutc", "btime"))


def csv_rows(data: bytes, name: str, required: tuple[str, ...], problems: Problems) -> list[tuple[int, dict]]:
    """(line, {column (lower case): value}) of a KAPE CSV; a line that does not parse is a problem, the rest read."""
    lines = data.decode("utf-8-sig", "surrogateescape").split("\n")
    header = _fields(lines[0].rstrip("\r"), f"{name} line 1", problems) if lines else None
    columns = [column.strip().lower() for column in header or []]
    missing = [column for column in required if column not in columns]
    if missing:
        problems.add(f"{name}: no {', '.join(missing)} column in its header; its rows are not used")
        return []
    rows = []
    for number, line in enumerate(lines[1:], 2):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        fields = _fields(line, f"{name} line {number}", problems)
        if fields is None:
            continue
        if len(fields) != len(columns):
            problems.add(f"{name} line {number}: {len(fields)} fields where the header has {len(columns)}; skipped")
            continue
        rows.append((number, dict(zip(columns, fields, strict=True))))
    return rows


def _fields(line: str, where: str, problems: Problems) -> list[str] | None:
    if line.count('"') % 2:
        problems.add(f"{where}: an unclosed quote; skipped")
        return None
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration) as exc:
        problems.add(f"{where}: not CSV ({exc}); skipped")
        return None


def copy_rows(data: bytes, name: str, run: str, problems: Problems) -> list[CopyRow]:
    """The CopyLog's rows, each field checked (a field that does not parse is a problem and left empty)."""
    rows = []
    for number, values in csv_rows(data, name, ("sourcefile", "destinationfile"), problems):
        row = CopyRow(name, number, values["sourcefile"], values["destinationfile"], run=run)
        where = row.where()
        row.size = _size(values.get("filesize"), where, problems)
        row.sha1 = _sha1(values.get("sourcefilesha1"), where, problems)
        row.deferred = values.get("deferredcopy", "").strip().lower() == "true"
        for column, key in TIME_COLUMNS:
            if column not in values:
                continue
            value, understood = parse_time(values[column])
            if not understood:
                problems.add(f"{where}: {column} {printable(values[column], 60)!r} is not a KAPE time; not used")
            elif value is not None:
                row.times[key] = value
        rows.append(row)
    return rows


def skip_rows(data: bytes, name: str, problems: Problems) -> list[SkipRow]:
    """The SkipLog's rows."""
    return [SkipRow(name, number, values["sourcefile"],
                    _sha1(values.get("sourcefilesha1"), f"{name} line {number}", problems),
                    printable(values.get("reason", ""), 200))
            for number, values in csv_rows(data, name, ("sourcefile",), problems)]


def _size(text: str | None, where: str, problems: Problems) -> int | None:
    if text is None or not text.strip():
        return None
    value = text.strip()
    if value.isascii() and value.isdigit() and int(value) <= MAX_SIZE:
        return int(value)
    problems.add(f"{where}: FileSize {printable(text, 40)!r} is not a size; not used")
    return None


def _sha1(text: str | None, where: str, problems: Problems) -> str | None:
    if text is None or not text.strip():
        return None
    value = text.strip()
    if len(value) == 40 and all(char in "0123456789abcdefABCDEF" for char in value):
        return value.lower()
    problems.add(f"{where}: SourceFileSha1 {printable(value, 60)!r} is not a SHA-1; not used")
    return None


@dataclass
class ConsoleFacts:
    """What a ConsoleLog says: facts (value, line) and the first errors."""

    facts: dict[str, tuple[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    error_count: int = 0


def console_facts(data: bytes) -> ConsoleFacts:
    """The version, directory, command line and host facts, and the error lines, of a ConsoleLog."""
    found = ConsoleFacts()
    for number, line in enumerate(data.decode("utf-8-sig", "surrogateescape").split("\n"), 1):
        line = line.rstrip("\r")
        for marker, key in CONSOLE_FACTS:
            at = line.find(marker)
            if at >= 0 and key not in found.facts:
                found.facts[key] = (printable(line[at + len(marker):].strip().strip("'"), 2000), number)
        if any(mark in line for mark in ERROR_MARKS):
            found.error_count += 1
            if len(found.errors) < MAX_MESSAGES:
                found.errors.append(f"line {number}: {printable(line.strip(), 300)}")
    version = found.facts.get("kape_version")
    if version:
        found.facts["kape_version"] = (version[0].split()[0].rstrip(","), version[1])
    system = found.facts.pop("system_info", None)
    if system and (match := MACHINE.search(system[0])):
        for key in ("machine", "user", "os"):
            found.facts[f"kape_host_{key}" if key != "machine" else "kape_machine_name"] = (
                match.group(key).strip().strip('"'), system[1])
    command = found.facts.get("command_line")
    if command and (match := TSOURCE.search(command[0])):
        found.facts["tsource"] = (match.group(1).strip('"'), command[1])
    return found


def is_system_drive(tsource: str) -> bool:
    r"""Whether ``--tsource`` named drive C (``C``, ``C:``, ``C:\``): the running system's own volume."""
    return tsource.strip().rstrip("\\/").rstrip(":").upper() == "C"
