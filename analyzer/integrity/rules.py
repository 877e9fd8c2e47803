"""The integrity rules: names, thresholds, and what each proves and does not (docs/report.md says the same).

The texts are data the report shows beside each finding; ``tests/analyzer/test_integrity.py``
checks that docs/report.md names every rule.
"""

from __future__ import annotations

from typing import NamedTuple

PREFIX = "integrity: "


class Rule(NamedTuple):
    """What a finding of one rule proves, and what it does not."""

    proves: str
    does_not_prove: str


RULES: dict[str, Rule] = {
    "clock jump": Rule(
        "a line of an append-only log carries a time more than a minute earlier than a line written before it: the "
        "clock of the machine (or of the agent) went back between the two writes, or the line was inserted later",
        "which of the two times is wrong, or that anyone tampered with the file"),
    "gap": Rule(
        "an append-only transcript has no record for more than a day between two consecutive lines",
        "that anything was deleted: a session resumed days later leaves the same gap"),
    "written after last record": Rule(
        "the file's modification time is more than ten minutes after its last line, which is a timed record: "
        "something wrote the file (or set its time) after the agent's last record",
        "what was written: a copy without preserved times, an editor, touch, or a rewrite of the whole file "
        "look alike"),
    "record after file time": Rule(
        "a record carries a time more than five seconds after the file's modification time: the file's time was "
        "set back, or the clock was moved back before a later write, or the record's time is wrong",
        "which one of these happened"),
    "chain break": Rule(
        "an entry names a parent entry that is not in its file: the conversation before it was removed, or "
        "the file was cut or assembled from parts",
        "deletion by a person: an agent that starts a file from another session's entry leaves the same mark"),
    "session missing": Rule(
        "an index or prompt history names a session of which no transcript in the bundle holds a row: the "
        "transcript was deleted, expired, moved, or never collected",
        "who removed it or when; the agent's own clean-up (retention periods) removes transcripts too"),
    "deletion marker": Rule(
        "the agent or the desktop recorded that a session was deleted (trash info, deletion records)",
        "what the deleted session held, unless a secondary store kept it"),
    "compaction": Rule(
        "the conversation before this point was summarised or condensed by the agent: the earlier turns are no "
        "longer in the model's context (they may still be in the file)",
        "that anything was removed from the file"),
    "not parsed": Rule(
        "the file is in the bundle and no parser read it (documentary store, no parser for its format, or a "
        "SQLite companion without its database): its content is not in the timeline",
        "that the file is damaged or irrelevant: extract it by its member name and read it"),
}

CLOCK_BACK_NS = 60 * 1_000_000_000  # a line this much earlier than the latest before it is a jump
GAP_NS = 24 * 3600 * 1_000_000_000  # no record for this long between two lines of a transcript
AFTER_LAST_NS = 10 * 60 * 1_000_000_000  # the file's time this much after its last record
RECORD_AFTER_NS = 5 * 1_000_000_000  # a record this much after the file's time (file systems keep 1-2 s at worst)
PER_FILE = 20  # findings of one rule from one file; then one row counts the rest
NAMED_MAX = 200_000  # sessions one bundle's indexes may name; past this the rest are not checked (said in a row)

# Row prefixes the agents' parsers write for the markers the agents keep themselves (docs/timeline.md).
MARKERS: tuple[tuple[str, str], ...] = (
    ("session deleted: ", "deletion marker"),
    ("system compact_boundary: ", "compaction"),
    ("compact summary: ", "compaction"),
    ("compaction: ", "compaction"),
    ("condense summary: ", "compaction"),
)
# Append-only stores whose line order is write order: the file-time and clock rules apply to them.
APPEND_FORMATS = frozenset({"jsonl"})
# Of those, the conversations: the gap rule applies only to them (a prompt log is idle for days at a time).
TRANSCRIPT_ROLES = frozenset({"transcript", "subagent_transcript"})


def text(rule: str, detail: str) -> str:
    """The row text of one finding."""
    return f"{PREFIX}{rule}: {detail}"


def duration(ns: int) -> str:
    """A span as an examiner reads it: ``2 d 3 h``, ``4 h 12 min``, ``7 min 3 s``, ``12.5 s``."""
    seconds = abs(ns) / 1_000_000_000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, second = divmod(int(seconds), 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    if days:
        return f"{days} d {hour} h"
    if hours:
        return f"{hours} h {minute} min"
    return f"{minutes} min {second} s"
