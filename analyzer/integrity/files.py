"""The per-file integrity rules, applied while a file's rows stream out of its parser.

A ``FileWatch`` sees every Draft of one source (after the parser made it,
before it is stamped) and holds a few numbers, never the rows: the latest
record time and the line it came from, the last line seen, the findings so
far (at most ``rules.PER_FILE`` of each rule). ``tail()`` gives the finding
rows once the parser is done; the engine stamps them after the file's own rows.

Lines are taken from ``line:<n>`` locators. A parser may give a line's rows
after later lines' (an orphaned call, rows that waited for a session's
working directory): only rows of a line after the last line seen count for
the clock rules, so the order compared is always the file's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from aitrail.analyzer.integrity import rules
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.rows import Draft, format_timestamp

_MARKER_PREFIXES = tuple(prefix for prefix, _ in rules.MARKERS)


def line_number(locator: str) -> int | None:
    """The line of a ``line:<n>`` locator (anything after the digits ignored); None for any other locator."""
    if not locator.startswith("line:"):
        return None
    end = 5
    while end < len(locator) and locator[end].isdigit():
        end += 1
    return int(locator[5:end]) if end > 5 else None


class FileWatch:
    """The integrity rules of one source; ``observe`` every draft, then ``tail()``."""

    def __init__(self, source: Source, clock_rules: bool, gap_rule: bool):
        self.source = source
        self.clock_rules = clock_rules  # an append-only log: line order is write order
        self.gap_rule = gap_rule
        self.found: list[Draft] = []
        self.count: Counter = Counter()  # findings per rule, kept or not
        self.last_line = 0  # the last line whose first row was seen
        self.line_timed = False  # that line's first row carried a record time
        self.latest_ns: int | None = None  # the latest record time so far, and its line
        self.latest_line = 0
        self.previous_ns: int | None = None  # the record time of the line before (for gaps)
        self.previous_line = 0
        self.session = ""

    def observe(self, draft: Draft) -> None:
        """Look at one row of the file."""
        if draft.turn_type == "system" and draft.text.startswith(_MARKER_PREFIXES):
            self._marker(draft)
        if self.clock_rules:
            self._clock(draft)

    def _marker(self, draft: Draft) -> None:
        for prefix, rule in rules.MARKERS:
            if draft.text.startswith(prefix):
                detail = draft.text if len(draft.text) <= 300 else draft.text[:300] + " …"
                self._add(rule, Draft("system", rules.text(rule, detail), draft.locator, draft.timestamp_ns,
                                      draft.timestamp_source, draft.session_id, draft.project_path))
                return

    def _clock(self, draft: Draft) -> None:
        line = line_number(draft.locator)
        if line is None or line <= self.last_line:
            return  # a later row of a line already seen, or rows given out of file order
        self.last_line = line
        self.session = draft.session_id or self.session
        timed = draft.timestamp_ns is not None and draft.timestamp_source == "record"
        self.line_timed = timed
        if not timed:
            return
        ns = draft.timestamp_ns
        assert ns is not None
        if self.latest_ns is not None and self.latest_ns - ns > rules.CLOCK_BACK_NS:
            self._add("clock jump", Draft(
                "system", rules.text("clock jump", f"line:{line} ({format_timestamp(ns)}) is "
                                                   f"{rules.duration(self.latest_ns - ns)} earlier than "
                                                   f"line:{self.latest_line} ({format_timestamp(self.latest_ns)}) "
                                                   "written before it"),
                f"line:{line}", ns, "record", draft.session_id, draft.project_path))
        if self.gap_rule and self.previous_ns is not None and ns - self.previous_ns > rules.GAP_NS:
            self._add("gap", Draft(
                "system", rules.text("gap", f"no record in this file for {rules.duration(ns - self.previous_ns)}, "
                                            f"between line:{self.previous_line} ({format_timestamp(self.previous_ns)})"
                                            f" and line:{line} ({format_timestamp(ns)})"),
                f"line:{self.previous_line}", self.previous_ns, "record", draft.session_id, draft.project_path))
        self.previous_ns, self.previous_line = ns, line
        if self.latest_ns is None or ns >= self.latest_ns:
            self.latest_ns, self.latest_line = ns, line

    def _add(self, rule: str, draft: Draft) -> None:
        self.count[rule] += 1
        if self.count[rule] <= rules.PER_FILE:
            self.found.append(draft)

    def tail(self, complete: bool = True) -> Iterator[Draft]:
        """The findings, the file-time rules, then the counts past PER_FILE.

        ``complete``: the parser read the file to its end (else its last record is not known).
        """
        yield from self.found
        if self.clock_rules and complete:
            yield from self._file_time()
        for rule, count in sorted(self.count.items()):
            if count > rules.PER_FILE:
                yield Draft("system", rules.text(rule, f"{count - rules.PER_FILE} more findings of this rule in "
                                                       f"this file (the first {rules.PER_FILE} are rows)"),
                            "file", timestamp_source="none", session_id=self.session)

    def _file_time(self) -> Iterator[Draft]:
        mtime = self.source.mtime_ns
        if mtime is None or self.latest_ns is None or self.source.changed_during_read:
            return  # no file time recorded, no timed record, or a file written while it was read
        mtime_text = format_timestamp(mtime)
        if self.latest_ns - mtime > rules.RECORD_AFTER_NS:
            yield Draft("system", rules.text("record after file time", (
                f"line:{self.latest_line}'s time {format_timestamp(self.latest_ns)} is "
                f"{rules.duration(self.latest_ns - mtime)} after the file's modification time {mtime_text}")),
                f"line:{self.latest_line}", self.latest_ns, "record", self.session)
        elif self.line_timed and self.last_line == self.latest_line and mtime - self.latest_ns > rules.AFTER_LAST_NS:
            yield Draft("system", rules.text("written after last record", (
                f"the file's modification time {mtime_text} is {rules.duration(mtime - self.latest_ns)} after its "
                f"last record (line:{self.latest_line}, {format_timestamp(self.latest_ns)})")),
                "file", mtime, "file-mtime", self.session)


def watch_for(source: Source) -> FileWatch:
    """The watch of one source: the clock and file-time rules only for the append-only logs (rules.APPEND_FORMATS)."""
    append_only = source.format in rules.APPEND_FORMATS
    return FileWatch(source, append_only, append_only and source.role in rules.TRANSCRIPT_ROLES)
