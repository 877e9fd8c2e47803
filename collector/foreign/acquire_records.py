"""acquire's own records, parsed: its report, its log and ``$metadata$/file-hashes.csv.gz`` (acquire.py reads them).

Formats, from ``fox-it/acquire@f4b0fa4`` and the PyPI release 3.22 (run here):

* ``<name>.report.json`` beside the container (``acquire/acquire.py``
  ``acquire_target``, ``acquire/collector.py`` ``CollectionReport``):
  ``target``, ``name`` (dissect's target name: the host name it read, else
  the target path's last part, as a slug), ``timestamp`` (UTC, ISO 8601),
  ``modules-successful``, ``modules-failed``, ``acquire-version`` (after
  3.22), and per module ``{outcome: [{artifact_type, artifact_value,
  details, module_name, outcome}]}`` with outcome ``success``,
  ``failure``, ``missing`` or ``empty``. A path's ``artifact_value`` is the
  target's path with a leading ``/``, lower-cased on a case-insensitive
  (Windows) target.
* ``<name>.log`` (beside the container unless ``-l`` put it elsewhere):
  ``[YYYY-mm-dd HH:MM:SS,mmm] [LEVEL] message``; the banner ends ``v3.22``,
  then ``User: <name> | Admin: <bool>`` and ``Arguments: ...``.
* ``fs/$rootfs$/$metadata$/file-hashes.csv.gz`` (``fs/$metadata$/...`` on
  Windows), written by the ``--hashes`` module (``acquire/hashes.py``):
  gzip CSV with the header ``path,file-size,md5,sha1,sha256``, ``path``
  being the target's path (``/home/...``, ``sysvol/...``, ``C:/...``);
  a link is hashed through to its target.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.collector.foreign.container import MAX_KEPT_BYTES, Problems
from aitrail.collector.foreign.sidecar import printable

HASH_COLUMNS = ("path", "file-size", "md5", "sha1", "sha256")
HEX_LENGTHS = {"md5": 32, "sha1": 40, "sha256": 64}
REPORT_FACTS = ("name", "target", "timestamp", "acquire-version", "modules-successful", "modules-failed")
OUTCOMES = ("success", "failure", "missing", "empty")
LOG_LINE = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\] \[(\w+) *\] ?(.*)$")
FIRST_ITEMS = 10


# -- the report -------------------------------------------------------------------------

@dataclass
class Report:
    """What acquire's report says: its facts, the count per outcome, the paths per type it collected."""

    facts: dict[str, object] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    collected: list[tuple[str, str, str]] = field(default_factory=list)  # (module, artifact_type, path)
    not_collected: list[str] = field(default_factory=list)  # "module outcome type value: details"


def parse_report(data: bytes, report_name: str, problems: Problems) -> Report | None:
    """The report's facts and outcomes; None (a problem named) when it is not acquire's JSON report."""
    try:
        document = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        problems.add(f"{report_name}: not JSON ({printable(str(exc), 120)}); not used")
        return None
    if not isinstance(document, dict):
        problems.add(f"{report_name}: not a JSON object; not used")
        return None
    report = Report(facts={key: document[key] for key in REPORT_FACTS if key in document})
    for module, outcomes in document.items():
        if key_is_fact(module) or not isinstance(outcomes, dict):
            continue
        for outcome, records in outcomes.items():
            if outcome in OUTCOMES and isinstance(records, list):
                _take_records(report, str(module), outcome, records)
    return report


def key_is_fact(key: object) -> bool:
    """A top-level key of the report that is a fact of the run, not a module's outcomes."""
    return key in REPORT_FACTS


def _take_records(report: Report, module: str, outcome: str, records: list) -> None:
    report.counts[outcome] = report.counts.get(outcome, 0) + len(records)
    for record in records:
        if not isinstance(record, dict):
            continue
        kind, value = str(record.get("artifact_type", "")), record.get("artifact_value")
        if outcome == "success" and kind in ("file", "symlink", "dir") and isinstance(value, str):
            report.collected.append((module, kind, value))
        elif outcome != "success" and len(report.not_collected) < FIRST_ITEMS:
            details = str(record.get("details") or "").strip().splitlines()
            report.not_collected.append(printable(f"{module} {outcome} {kind} {value}"
                                                  + (f": {details[-1]}" if details else ""), 400))


# -- the log ----------------------------------------------------------------------------

@dataclass
class AcquireLog:
    """What acquire's log says: the version, user, arguments, the last outcome line, errors, times."""

    facts: dict[str, tuple[str, int]] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)
    first: tuple[str, int] | None = None
    last: tuple[str, int] | None = None


LOG_FACTS = (("User: ", "user"), ("Arguments: ", "arguments"), ("Loading target ", "target"),
             ("Writing output to ", "output"), ("Output: ", "output"))
OUTCOME_LINES = ("Acquire finished successful", "Acquiring artifacts succeeded", "Acquiring artifacts FAILED",
                 "Exiting with status code")


def parse_log(data: bytes) -> AcquireLog:
    """The facts of acquire's log (banner version, ``User:``, ``Arguments:``, outcome lines, ERROR lines)."""
    log = AcquireLog()
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        version = re.search(r"\bv(\d+\.\d+[\w.]*)\s*$", line)
        if version and "version" not in log.facts and number < 20:
            log.facts["version"] = (version.group(1), number)
        match = LOG_LINE.match(line)
        if not match:
            continue
        when, level, message = match.groups()
        log.first = log.first or (when, number)
        log.last = (when, number)
        if level in ("ERROR", "CRITICAL"):
            log.errors.append((number, message))
        for prefix, key in LOG_FACTS:
            if message.startswith(prefix) and key not in log.facts:
                log.facts[key] = (message[len(prefix):], number)
        if message.startswith(OUTCOME_LINES):
            log.facts["outcome"] = (message, number)
    return log


# -- file-hashes.csv.gz -----------------------------------------------------------------

@dataclass
class HashRow:
    """One row of file-hashes.csv.gz: the target's path, size and the digests it has."""

    line: int
    path: str
    size: int
    digests: dict[str, str]


def parse_hash_csv(member: str, data: bytes, problems: Problems) -> Iterator[HashRow]:
    """The rows of the gzip CSV; a damaged stream or a bad row is a problem (later rows still read)."""
    text = _gunzip(member, data, problems)
    if text is None:
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        problems.add(f"{member}: no CSV header; not used")
        return
    if tuple(header) != HASH_COLUMNS:
        problems.add(f"{member}: header {printable(','.join(header), 200)!r} is not {','.join(HASH_COLUMNS)}; "
                     "not used")
        return
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.add(f"{member} line {reader.line_num}: not CSV ({exc}); skipped")
            continue
        parsed = _hash_row(member, reader.line_num, row, problems)
        if parsed is not None:
            yield parsed


def _gunzip(member: str, data: bytes, problems: Problems) -> str | None:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            raw = stream.read(MAX_KEPT_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        problems.add(f"{member}: not a readable gzip stream ({printable(str(exc), 120)}); not used")
        return None
    if len(raw) > MAX_KEPT_BYTES:
        problems.add(f"{member}: more than {MAX_KEPT_BYTES} bytes once decompressed; not used")
        return None
    return raw.decode("utf-8", "surrogateescape")


def _hash_row(member: str, line: int, row: list[str], problems: Problems) -> HashRow | None:
    if len(row) != len(HASH_COLUMNS) or not row[0] or not re.fullmatch(r"\d{1,20}", row[1]):
        problems.add(f"{member} line {line}: not path,file-size,md5,sha1,sha256; skipped")
        return None
    digests = {}
    for algorithm, value in zip(("md5", "sha1", "sha256"), row[2:], strict=True):
        if not value:
            continue
        if not re.fullmatch(rf"[0-9a-fA-F]{{{HEX_LENGTHS[algorithm]}}}", value):
            problems.add(f"{member} line {line}: {algorithm} {printable(value, 80)!r} is not "
                         f"{HEX_LENGTHS[algorithm]} hex digits; that digest skipped")
            continue
        digests[algorithm] = value.lower()
    return HashRow(line=line, path=row[0], size=int(row[1]), digests=digests)
