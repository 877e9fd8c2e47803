"""Trajectory summaries: base64 protobuf maps of conversation id to summary, kept in an editor's state.vscdb.

Two Code-OSS forks whose agent runs in a Codeium-derived language server cache
one summary per conversation ("trajectory", "cascade") in their state
database, so the conversation list survives when the conversation itself is
encrypted or gone. No schema is published; every field number below is
reverse-engineered by third parties and is read as observed, not confirmed:

* the value is base64 of a message whose length-delimited top-level fields
  are map entries: entry field 1 the conversation id (UTF-8), entry field 2
  the summary, either directly (``wrapped=False``) or as a message whose
  field 1 is *another* base64 text that decodes to the summary
  (``wrapped=True``);
* summary field 1: the title (text); fields 2 and 16: step counts (varints;
  the larger is taken, as the reader that found them does); fields 3, 7, 10
  and 15: ``google.protobuf.Timestamp`` messages, field 15 holding its
  Timestamp one or two levels deeper; the earliest and the latest are given
  (which field is "created" is not established);
* a ``file://`` workspace URI somewhere in the nested strings; a model id
  such as ``MODEL_SWE_1_5_SLOW`` as a nested string of its own.

Everything else in a summary is left unread. A value that is not base64, an
entry without an id, or a summary that stops early is a ``parser:`` row;
the entries before and after it are still read. Bounded: one ``Budget`` per
value (MAP_FIELDS fields, 32 levels), a cap on the decoded size and on the entries.

References: yigitkonur/cli-continues@0a5088e7 src/parsers/antigravity.ts (``parseStateSummaryMap``,
``extractStateSummaryFromProto``, ``parseTimestampMessage``, ``findTimestampInProto``,
``extractFolderFromSummaryProto``); research/formats-more-desktop-agents.md 3.3 and 4.5 (Pilan-AI/mnemo#10:
MODEL_* ids, file:// URI); a Windsurf "Trajectory Extractor" (``list_summaries``: entry field 1 id,
field 2 summary; index copy, repository unresolved).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats import protobuf_wire as wire
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.formats.vscode_workspace import uri_target
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp

MAX_DECODED_BYTES = 32 * 1024 * 1024  # one state value; real maps are a few hundred kilobytes
MAX_ENTRIES = 20_000  # conversations in one map
# protobuf fields read for one map value, nested strings re-read included: a real map of 500
# conversations costs some tens of thousands; a crafted value stops here (a second or two), not after minutes
MAP_FIELDS = 300_000
TITLE_FIELD = 1
COUNT_FIELDS = (2, 16)
TIMESTAMP_FIELDS = {3: 1, 7: 1, 10: 1, 15: 2}  # field -> levels below it where its Timestamp may sit
_FILE_URI = re.compile(r"#?(file://[^\s\"]+)")
_MODEL_ID = re.compile(r"MODEL_[A-Z0-9_]{1,80}")


@dataclass
class Summary:
    """What one map entry says about a conversation (every field as observed, not confirmed)."""

    position: int
    conversation_id: str = ""
    title: str = ""
    steps: int | None = None
    times_ns: list[int] = field(default_factory=list)
    workspace_uri: str = ""
    model: str = ""
    problem: str = ""  # why the entry (or part of it) could not be read

    @property
    def first_ns(self) -> int | None:
        """The earliest Timestamp of the summary."""
        return min(self.times_ns) if self.times_ns else None

    @property
    def last_ns(self) -> int | None:
        """The latest Timestamp of the summary."""
        return max(self.times_ns) if self.times_ns else None

    def workspace_path(self) -> str:
        """The local (or remote) path of the workspace URI, '' when there is none."""
        if not self.workspace_uri:
            return ""
        try:
            return uri_target(self.workspace_uri)[0]
        except ValueError:
            return ""

    def facts(self) -> str:
        """``12 steps; timestamps A to B; workspace URI; model M``: what the summary holds, in that order."""
        parts = []
        if self.steps is not None:
            parts.append(f"{self.steps} steps")
        if self.times_ns:
            first, last = format_timestamp(self.first_ns), format_timestamp(self.last_ns)
            parts.append(f"timestamps {first} to {last}" if first != last else f"timestamp {first}")
        if self.workspace_uri:
            parts.append(f"workspace {self.workspace_uri}")
        if self.model:
            parts.append(f"model {self.model}")
        return "; ".join(parts)


@dataclass
class SummaryMap:
    """The entries of one map value, and why the value as a whole could not be read to its end."""

    summaries: list[Summary] = field(default_factory=list)
    problem: str = ""


def read_map(value: str | bytes, wrapped: bool) -> SummaryMap:
    """Every entry of a base64 summary map (see the module docstring); never raises."""
    decoded = wire.base64_bytes(value, MAX_DECODED_BYTES)
    if decoded is None:
        return SummaryMap(problem=f"not base64, or over {MAX_DECODED_BYTES} bytes decoded")
    budget = wire.Budget(fields=MAP_FIELDS)
    outer = wire.read_message(decoded, budget)
    found = SummaryMap(problem=f"map stops early: {outer.stop.describe()}" if outer.stop else "")
    entries = [item for item in outer.fields if item.is_bytes]
    if len(entries) > MAX_ENTRIES:
        found.problem = f"more than {MAX_ENTRIES} entries; the rest were not read"
        entries = entries[:MAX_ENTRIES]
    for position, entry in enumerate(entries):
        if budget.exhausted:
            found.problem = (f"{MAP_FIELDS} protobuf fields read ({budget.exhausted}); entries from {position} on "
                             f"of {len(entries)} were not read")
            break
        found.summaries.append(_entry(position, entry, wrapped, budget))
    return found


def _entry(position: int, entry: wire.Field, wrapped: bool, budget: wire.Budget) -> Summary:
    summary = Summary(position)
    message = wire.embedded(entry, budget)
    if message is None or not message.fields:
        summary.problem = "map entry is not a message"
        return summary
    key = message.first(1, wire.LENGTH)
    summary.conversation_id = (key.text() or "") if key is not None else ""
    if not summary.conversation_id:
        summary.problem = "map entry has no conversation id (field 1)"
        return summary
    value = message.first(2, wire.LENGTH)
    body = _summary_bytes(value, wrapped, budget) if value is not None else None
    if body is None:
        summary.problem = "map entry has no readable summary (field 2)"
        return summary
    _read_summary(summary, wire.read_message(body, budget), budget)
    return summary


def _summary_bytes(value: wire.Field, wrapped: bool, budget: wire.Budget) -> bytes | None:
    if not wrapped:
        return value.raw()
    holder = wire.embedded(value, budget)
    inner = holder.first(1, wire.LENGTH) if holder is not None else None
    text = inner.text() if inner is not None else None
    return wire.base64_bytes(text, MAX_DECODED_BYTES) if text else None


def _read_summary(summary: Summary, message: wire.Message, budget: wire.Budget) -> None:
    if message.stop is not None:
        summary.problem = f"summary stops early: {message.stop.describe()}"
    title = message.first(TITLE_FIELD, wire.LENGTH)
    summary.title = ((title.text() or "") if title is not None else "").strip()
    counts = [int(item.value) for item in message.fields  # type: ignore[arg-type]
              if item.number in COUNT_FIELDS and item.wire_type == wire.VARINT]
    summary.steps = max(counts) if counts else None
    for item in message.fields:
        levels = TIMESTAMP_FIELDS.get(item.number)
        if levels is not None and item.is_bytes:
            found = _timestamp_within(item, budget, levels)
            if found is not None and found not in summary.times_ns:
                summary.times_ns.append(found)
    for text in wire.nested_strings(message, budget):
        if not summary.workspace_uri:
            uri = _FILE_URI.search(text)
            if uri:
                summary.workspace_uri = _until_control(uri.group(1))
        if not summary.model and _MODEL_ID.fullmatch(text):
            summary.model = text
        if summary.workspace_uri and summary.model:
            break


def _timestamp_within(item: wire.Field, budget: wire.Budget, levels: int) -> int | None:
    """The Timestamp this field is, or the first one in its embedded messages up to ``levels`` deeper."""
    message = wire.embedded(item, budget)
    if message is None:
        return None
    direct = wire.timestamp_ns(message)
    if direct is not None or levels <= 0:
        return direct
    for inner in message.fields:
        if inner.is_bytes:
            found = _timestamp_within(inner, budget, levels - 1)
            if found is not None:
                return found
    return None


def _until_control(text: str) -> str:
    for index, character in enumerate(text):
        if ord(character) < 32:
            return text[:index]
    return text


def conversation_files(ctx: ParseContext, stores: tuple[str, ...]) -> dict[str, str]:
    """Conversation id (a file's name without its extension) -> its path, for the files of ``stores``, once.

    The opaque conversation files are named by the id the summaries carry,
    so a summary row can say whether its conversation is in the bundle.
    """
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        for store in stores:
            for source in ctx.related(store):
                found.setdefault(source.name.rsplit(".", 1)[0], source.path)
        return found

    return ctx.cached(("trajectory_summaries.files", stores), load)  # type: ignore[return-value]


def file_note(files: dict[str, str], conversation_id: str, unreadable: str) -> str:
    """``its conversation file <path> is in the bundle (<unreadable>)``, or that none is."""
    path = files.get(conversation_id)
    if path is None:
        return "no conversation file for it is in the bundle"
    return f"its conversation file {path} is in the bundle ({unreadable})"


def summary_rows(summary: Summary, locator: str, project_path: str, note: str) -> Iterator[Draft]:
    """The ``session:`` row of one summary (at its earliest time), its ``model:`` row, its ``parser:`` row.

    ``session: <title> (trajectory summary: <facts>; <note>)``: the title or
    ``(untitled)``, what the summary holds (``Summary.facts``), and the
    caller's note on the conversation file. The ``model:`` row is at the
    summary's latest time (the model is observed as the *last* generator's).
    A map entry without an id gives only its ``parser:`` row.
    """
    if not summary.conversation_id:
        yield bad_record(locator, summary.problem or "map entry has no conversation id")
        return
    facts = summary.facts()
    text = f"session: {summary.title or '(untitled)'} (trajectory summary{': ' + facts if facts else ''}; {note})"
    columns = {"session_id": summary.conversation_id, "project_path": project_path, "model": summary.model}
    first, last = summary.first_ns, summary.last_ns
    yield Draft("system", text, locator, timestamp_ns=first, timestamp_source="record" if first else "none",
                **columns)
    if summary.model:
        yield Draft("system", f"model: {summary.model} (trajectory summary)", locator, timestamp_ns=last,
                    timestamp_source="record" if last else "none", **columns)
    if summary.problem:
        yield Draft("system", f"parser: unparseable record ({summary.problem})", locator, timestamp_source="none",
                    session_id=summary.conversation_id, project_path=project_path)


MAX_SEEN = 200_000  # rows remembered to leave out of the earlier versions; past it they may repeat


def _seen_key(draft: Draft) -> tuple[str, str, str]:
    return draft.turn_type, draft.tool_use_id, " ".join(draft.text.split())


def with_earlier_versions(live: Iterator[Draft],
                          earlier: Iterator[Draft | tuple[Iterator[Draft], Callable[[str], str]]]) -> Iterator[Draft]:
    """The live rows, then each earlier version's rows that no row before it had, as secondary rows.

    ``earlier`` yields ``parser:`` Drafts (passed through) or ``(rows, relocate)``
    pairs: the rows of one earlier version of the map and the function that
    gives their locators (``wal:<commit>/...``). A row equal to a live row or
    to one of an earlier version already given (same turn type, tool_use_id
    and whitespace-normalized text, as the run's own deduplication) is left
    out, so a summary unchanged across commits is given once.
    """
    seen: set[tuple[str, str, str]] = set()
    for draft in live:
        if len(seen) < MAX_SEEN:
            seen.add(_seen_key(draft))
        yield draft
    for item in earlier:
        if isinstance(item, Draft):
            yield item
            continue
        rows, relocate = item
        for draft in rows:
            key = _seen_key(draft)
            if key in seen:
                continue
            if len(seen) < MAX_SEEN:
                seen.add(key)
            draft.origin, draft.locator = "secondary", relocate(draft.locator)
            yield draft
