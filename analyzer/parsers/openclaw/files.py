"""OpenClaw transcript files in ``agents/<agentId>/sessions/``: legacy sessions, copies, archives, cold archives.

Session files (``openclaw.session_file.v1``) are Pi session JSONL, read by
the OpenClaw walk (walk.py); the file name says which kind
(``dist/artifacts-*.mjs``, ``src/config/sessions/artifacts.ts``):

* ``<sessionId>.jsonl``: a legacy transcript (before the SQLite store; not
  read at runtime any more, imported by ``openclaw doctor --fix``);
* ``<sessionId>.jsonl.migrated[.N]``, ``<sessionId>.jsonl.pre-doctor-*-repair-<time>.bak``:
  the legacy file kept after its import, and Doctor's copy before a repair;
* ``<sessionId>.checkpoint.<uuid>.jsonl``: the transcript as it was before a
  compaction;
* ``<sessionId>.jsonl.<reason>.<UTC time>[.<generation>][.zst]`` with reason
  ``deleted``, ``reset`` or ``bak``: the transcript archived when the session
  was deleted, reset or compacted (zstd unless the runtime lacked it). A
  ``session deleted:`` (or ``session archive (<reason>):``) row comes first,
  timed by the UTC time in the name, the time the archive was written.

Cold archives (``openclaw.cold_archive.v1``, ``sessions/cold/<sha256>.jsonl.zst``)
are not session files: each line is a record ``{kind, ...}`` of the cold
storage codec (``dist/session-cold-storage-codec-*.mjs``): ``header``
``{version, sessionId, generation}``, then ``event`` ``{row: {seq, event_json,
created_at}}`` (the event's JSON as a string, created_at epoch ms), then the
derived projections ``identity``, ``active``, ``index`` and ``fts`` (the
search index's copy of the text). The events go through the walk; the
projections give no rows of their own, and one row at the end counts them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.pi_content import text_field
from aitrail.analyzer.formats.text import bad_file, bad_record, excerpt
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

from .walk import OpenClawWalk

# <id>.jsonl.<reason>.<YYYY-MM-DDTHH-MM-SS[.mmm]Z>[.<32 hex generation>][.zst] (artifacts.ts ARCHIVE_SUFFIX_RE)
_ARCHIVE = re.compile(r"^(?P<id>.+)\.jsonl\.(?P<reason>deleted|reset|bak)\.(?P<date>\d{4}-\d\d-\d\d)"
                      r"T(?P<time>\d\d-\d\d-\d\d(?:\.\d{3})?)Z(?:\.(?P<generation>[0-9a-f]{32}))?(?:\.zst)?$")
_CHECKPOINT = re.compile(r"^(?P<id>.+)\.checkpoint\.[0-9A-Fa-f-]{36}\.jsonl$")
_COPY = re.compile(r"^(?P<id>.+)\.jsonl(?:\.migrated(?:\.\d+)?|\.pre-doctor-.+\.bak)$")
PROJECTIONS = ("identity", "active", "index", "fts")


def archive_name(name: str) -> tuple[str, str, int | None, str] | None:
    """(session id, reason, time in ns, generation) of an archive file name; None for any other name."""
    found = _ARCHIVE.match(name)
    if not found:
        return None
    when = ns_from_iso(f"{found.group('date')}T{found.group('time').replace('-', ':')}Z")
    return found.group("id"), found.group("reason"), when, found.group("generation") or ""


def session_of(name: str) -> str:
    """The session id a transcript file's name carries ('' when the name is not one of OpenClaw's)."""
    archived = archive_name(name)
    if archived:
        return archived[0]
    for pattern in (_CHECKPOINT, _COPY):
        found = pattern.match(name)
        if found:
            return found.group("id")
    return name.removesuffix(".jsonl") if name.endswith(".jsonl") else ""


def archive_row(name: str, session_id: str, reason: str, when: int | None, generation: str, where: str) -> Draft:
    """``session deleted: <id> (...)`` or ``session archive (<reason>): <id> (...)`` for an archived transcript."""
    head = "session deleted" if reason == "deleted" else f"session archive ({reason})"
    extra = f", generation {generation}" if generation else ""
    times = {"timestamp_ns": when, "timestamp_source": "record"} if when is not None else {"timestamp_source": "none"}
    return Draft("system", f"{head}: {session_id} (transcript archived as {name}{extra})", where,
                 session_id=session_id, **times)


def each_line(ctx: ParseContext, rows: Callable[[Line], Iterator[Draft]],
              finish: Callable[[], Iterator[Draft]]) -> Iterator[Draft]:
    """``rows`` of every decoded line, then ``finish()``; a cut zstd stream ends the lines with one ``parser:`` row.

    The rows of the complete lines before the damage stay, and so do the end
    rows (calls never answered, branches) they make.
    """
    try:
        for item in read_jsonl(ctx):
            yield from rows(item) if isinstance(item, Line) else (item,)
    except MemberUnreadable as exc:
        if "zstd" not in str(exc):
            raise  # a member that fails its digest: dispatch says so for the whole file
        yield from finish()
        reason = str(exc).removeprefix(f"{ctx.source.member}: ")
        yield bad_file(f"{reason}; the rows before this one come from the complete lines ahead of the damage")
        return
    yield from finish()


def parse_session_file(ctx: ParseContext) -> Iterator[Draft]:
    """A session JSONL file (legacy, copy, checkpoint or archive): its archive row, then the walk's rows."""
    name = ctx.source.name
    archived = archive_name(name)
    if archived:
        yield archive_row(name, *archived, where="file")
    walk = OpenClawWalk(session_of(name))
    yield from each_line(ctx, walk.rows, walk.finish)


class ColdArchiveReader:
    """The records of one cold archive, in order; ``make_walk(session id)`` makes the walk its events go through."""

    def __init__(self, make_walk: Callable[[str], OpenClawWalk]) -> None:
        self.make_walk = make_walk
        self.walk: OpenClawWalk | None = None
        self.counts = dict.fromkeys(PROJECTIONS, 0)
        self.last_locator = "file"
        self.header_rows: list[tuple[str, str]] = []  # at most one a header record: a row each, at the end

    def rows(self, line: Line) -> Iterator[Draft]:
        """The rows of one record."""
        record = line.value
        kind = record.get("kind") if isinstance(record.get("kind"), str) else None
        self.last_locator = line.locator
        if kind == "header":
            session_id = text_field(record, "sessionId")
            self.walk = self.make_walk(session_id)
            # given at the end, timed by the archived session's header (the record has no time of its own)
            self.header_rows.append((f"cold archive: session {session_id}, generation "
                                     f"{text_field(record, 'generation')} (format version "
                                     f"{text_field(record, 'version')})", line.locator))
        elif kind == "event":
            yield from self.event(record.get("row"), line)
        elif kind in self.counts:
            self.counts[kind] += 1
        else:
            yield Draft("system", f"cold archive record {text_field(record, 'kind') or '(no kind)'}: "
                                  f"{excerpt(line.raw)}", line.locator, timestamp_source="none")

    def event(self, row, line: Line) -> Iterator[Draft]:
        """An ``event`` record: its event JSON (a string) is an entry of the walk, timed by created_at if untimed."""
        text = row.get("event_json") if isinstance(row, dict) else None
        if not isinstance(text, str):
            yield bad_record(line.locator, "an event record without its event_json string", line.raw)
            return
        try:
            entry = decode_json(text)
        except ValueError as exc:
            yield bad_record(line.locator, f"event_json is not JSON: {exc}", text)
            return
        if not isinstance(entry, dict):
            yield bad_record(line.locator, f"event_json is a JSON {type(entry).__name__}, not an object", text)
            return
        if self.walk is None:
            self.walk = self.make_walk("")
        event = Line(line.number, line.offset, text.encode("utf-8", "surrogatepass"), line.terminated)
        event.value, event.locator = entry, line.locator
        self.walk.row_ns = ns_from_ms(row.get("created_at"))
        yield from self.walk.rows(event)
        self.walk.row_ns = None

    def finish(self) -> Iterator[Draft]:
        """The walk's end rows, the header rows and one row counting the projection records.

        The archive's own records carry no time: they are timed by the archived
        session's header (``index``), untimed when it has none.
        """
        walk = self.walk
        if walk is not None:
            yield from walk.finish()
        session_id = walk.session_id if walk is not None else ""
        header_ns = walk.header_ns if walk is not None else None
        times = {"timestamp_ns": header_ns, "timestamp_source": "index"} if header_ns is not None \
            else {"timestamp_source": "none"}
        for text, locator in self.header_rows:
            yield Draft("system", text, locator, session_id=session_id, **times)
        if any(self.counts.values()):
            counted = ", ".join(f"{count} {kind}" for kind, count in self.counts.items() if count)
            yield Draft("system", f"cold archive: projection records not shown as rows ({counted}): derived from "
                                  "the events above (the fts records are the search index's copy of their text)",
                        self.last_locator, session_id=session_id, **times)


def parse_cold_archive(ctx: ParseContext) -> Iterator[Draft]:
    """``sessions/cold/<sha256>.jsonl.zst``: the archived session's events through the walk."""
    reader = ColdArchiveReader(OpenClawWalk)
    yield from each_line(ctx, reader.rows, reader.finish)
