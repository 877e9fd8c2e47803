r"""The ConversationState JSON of the Q CLI lineage: one walk for every store that keeps it.

Amazon Q Developer CLI keeps one conversation per directory in ``data.sqlite3``
table ``conversations`` (key = absolute directory, value = this JSON), rewritten
whole after every assistant turn; Kiro CLI's legacy engine keeps the same JSON in
``conversations_v2``. All field names below are read in source at
aws/amazon-q-developer-cli@15cc8f3cd1 (``crates/chat-cli/src/cli/chat/``):

* ``ConversationState`` (conversation.rs:105-152): ``conversation_id``,
  ``next_message``, ``history`` (``HistoryEntry {user, assistant,
  request_metadata}``, conversation.rs:91-97), ``transcript`` (human-readable
  lines, user lines ``> ``-prefixed, assistant lines ending ``\n[Tool uses: ...]``,
  conversation.rs:892-908), ``tools`` (origin -> tool specs; ``native___`` for
  built-ins, else the MCP server's name: tools/mod.rs:267-324), ``latest_summary``
  (``[summary, RequestMetadata]`` after ``/compact``), ``model_info.model_id``
  (legacy ``model``);
* ``UserMessage`` (message.rs:53-76): ``content`` one of ``{"Prompt": {prompt}}``,
  ``{"ToolUseResults": {tool_use_results}}``, ``{"CancelledToolUses": {prompt,
  tool_use_results}}``; ``timestamp`` RFC 3339 with its UTC offset (chrono
  ``DateTime<FixedOffset>``; null on tool results); ``env_context.env_state
  .current_working_directory``; ``images`` ``[{format, source: {Bytes: [..]}}]``;
* ``ToolUseResult`` (message.rs:332-340, 387-391): ``tool_use_id``, ``content``
  ``[{"Text": ..} | {"Json": ..}]``, ``status`` ``Success`` | ``Error``
  (api_client/model.rs:491-495);
* ``AssistantMessage`` (message.rs:435-448): ``{"Response": {message_id,
  content}}`` or ``{"ToolUse": {message_id, content, tool_uses: [{id, name,
  orig_name, args, orig_args}]}}``;
* ``RequestMetadata`` (parser.rs:686-713): ``request_start_timestamp_ms`` and
  ``stream_end_timestamp_ms`` (epoch ms), ``model_id``.

Rows (the pages docs/agents/amazon-q.md and kiro.md): the prompt a ``user`` row at
its own RFC 3339 time (else the request's start, ms); the reply an ``assistant``
row and each call a ``tool_use`` row at the stream's end (ms); a result a
``tool_result`` row joined by ``tool_use_id`` (``[tool error] `` first when its
status is Error). A call the user refused (``CancelledToolUses``, written by
``abandon_tool_use``, conversation.rs:496-502) gives ``permission decision:
denied`` when the user answered ``n`` (the prompt Q CLI substitutes, mod.rs:2330-2336),
``denied with feedback`` when the user typed something else, and ``interrupted:``
when Ctrl-C stopped it (mod.rs:941-966). ``latest_summary`` is a ``compaction:``
row; the transcript's lines are secondary rows (they repeat the history, and keep
turns ``/compact`` and ``/clear`` removed from it). A row with no time of its own
takes the last time before it in the conversation (``timestamp_source`` index).

``VersionSeen`` lets a parser read the earlier versions of a rewritten row (WAL
commits, backups) with this same walk and give only the rows the newer versions
lack, once each.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.json_values import as_text, compact, label, mapping
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms, over_limit

NATIVE_ORIGIN = "native___"  # the key of the built-in tools in ``tools`` (tools/mod.rs:309-316)
DENIAL_PROMPT = "I deny this tool request. Ask a follow up question clarifying the expected action"
INTERRUPT_PROMPT = "The user interrupted the tool execution."
ERROR_PREFIX = "[tool error] "
_TOOL_USES_LINE = re.compile(r"\n\[Tool uses: [^\n]*\]\Z")
# Distinct rows an earlier version is compared against (each key 16 bytes plus its dict slot, ~120
# bytes): a user's whole database holds tens of thousands of turns.
MAX_SEEN_ROWS = 1_000_000


@dataclass(frozen=True)
class Place:
    """Where one ConversationState sits: its locator, its row key (the directory), the row's own creation time."""

    locator: str  # e.g. ``sqlite:conversations:7`` or ``wal:2/sqlite:conversations:7``
    key: str = ""  # the row key: the absolute directory the conversation was held for
    origin: str | None = None  # ``secondary`` for an earlier version of the row
    created_ns: int | None = None  # a creation time the row itself records (epoch ms column)


def conversation_rows(value: str | bytes, place: Place, transcript: bool = False) -> Iterator[Draft]:
    """The rows of one ConversationState value (a JSON text); a value that is not one is one ``parser:`` row.

    ``transcript`` False gives the rows of the history and what is kept beside it;
    True gives the transcript's secondary rows alone. A reader of several versions
    reads every version's history first, then the transcripts, so that a turn an
    earlier version's history holds is given from it (timed), not from a newer
    transcript line (untimed).
    """
    try:
        state = decode_json(value)
    except (ValueError, UnicodeDecodeError) as exc:
        yield _origin(bad_record(place.locator, f"conversation value is not JSON: {exc}", value), place)
        return
    if not isinstance(state, dict):
        yield _origin(bad_record(place.locator, f"conversation value is a JSON {type(state).__name__}, not an object",
                                 value), place)
        return
    walk = _Walk(state, place)
    yield from walk.transcript() if transcript else walk.rows()


def _origin(draft: Draft, place: Place) -> Draft:
    return replace(draft, origin=place.origin) if place.origin else draft


def _servers(tools) -> dict[str, str]:
    """Model-facing tool name -> its MCP server, from ``tools`` (origin -> ``[{"ToolSpecification": {name}}]``)."""
    found: dict[str, str] = {}
    for origin, specs in mapping(tools).items():
        if origin == NATIVE_ORIGIN or not isinstance(specs, list):
            continue
        for spec in specs:
            name = label(mapping(mapping(spec).get("ToolSpecification")).get("name"))
            if name:
                found.setdefault(name, origin)
    return found


def _variant(value) -> tuple[str, dict]:
    """An externally tagged enum ``{"Variant": {...}}``: its variant and fields ('' when it is not one)."""
    if isinstance(value, dict) and len(value) == 1:
        (variant, fields), = value.items()
        return str(variant), mapping(fields)
    return "", {}


def result_text(result: dict) -> str:
    """A ToolUseResult's text: Text blocks as written, Json blocks as compact JSON; ``[tool error] `` on Error."""
    blocks = result.get("content")
    parts = []
    for block in blocks if isinstance(blocks, list) else [blocks]:
        kind, _ = _variant(block)
        if kind == "Text":
            parts.append(as_text(block["Text"]))
        elif kind == "Json":
            parts.append(compact(block["Json"]))
        elif block is not None:
            parts.append(as_text(block))
    text = "\n".join(parts)
    return ERROR_PREFIX + text if label(result.get("status")).lower() == "error" else text


def image_placeholder(image) -> str:
    """``[image Png, N bytes]`` for an ImageBlock ``{format, source: {Bytes: [..]}}``; the bytes are never copied."""
    block = mapping(image)
    data = mapping(block.get("source")).get("Bytes")
    facts = [label(block.get("format"))] if label(block.get("format")) else []
    if isinstance(data, list):
        facts.append(f"{len(data)} bytes")
    return f"[image {', '.join(facts)}]" if facts else "[image]"


class _Walk:
    """One ConversationState read into rows (a fresh walk per value: its calls join only within it)."""

    def __init__(self, state: dict, place: Place):
        self.state, self.place = state, place
        self.session = label(state.get("conversation_id"))
        self.servers = _servers(state.get("tools"))
        self.selected = label(mapping(state.get("model_info")).get("model_id")) or label(state.get("model"))
        self.turn_model = ""
        self.ledger = BoundedLedger()
        self.last_ns: int | None = None
        history = state.get("history")
        self.history = history if isinstance(history, list) else []
        # the model column: the first turn's until a turn names another; the selected one when no turn names any
        self.model = next((label(mapping(mapping(entry).get("request_metadata")).get("model_id"))
                           for entry in self.history if label(mapping(mapping(entry).get("request_metadata"))
                                                              .get("model_id"))), self.selected)
        self.project = place.key or self._first_directory()

    def _first_directory(self) -> str:
        """The working directory the first message recorded, for a row with no key."""
        for entry in self.history:
            env = mapping(mapping(mapping(mapping(entry).get("user")).get("env_context")).get("env_state"))
            directory = label(env.get("current_working_directory"), 4096)
            if directory:
                return directory
        return ""

    def draft(self, turn: str, text: str, locator: str, when: tuple, **columns) -> Draft:
        """A row of this conversation at ``when`` = (ns, timestamp_source)."""
        columns.setdefault("model", self.model)
        return Draft(turn, text, f"{self.place.locator}/{locator}", when[0], when[1], session_id=self.session,
                     project_path=self.project, origin=self.place.origin, **columns)

    def at(self, *candidates: int | None) -> tuple[int | None, str]:
        """The first time the record gives (``record``), else the last time before it (``index``), else none."""
        for moment in candidates:
            if moment is not None:
                self.last_ns = moment
                return moment, "record"
        return (self.last_ns, "index") if self.last_ns is not None else (None, "none")

    def rows(self) -> Iterator[Draft]:
        raw = self.state.get("history")
        if raw is not None and not isinstance(raw, list):
            yield self.draft("system", f"parser: unparseable record (history is a JSON {type(raw).__name__}, "
                             "not an array)", "history", (None, "none"))
        yield self._header()
        for index, entry in enumerate(self.history):
            if isinstance(entry, dict):
                yield from self._entry(entry, f"history/{index}")
            else:
                yield _origin(bad_record(f"{self.place.locator}/history/{index}", "history entry is not an object",
                                         compact(entry)), self.place)
        if isinstance(self.state.get("next_message"), dict):  # a message set, its reply never saved
            yield from self._user(self.state["next_message"], {}, "next_message")
        yield from self._summary()
        if self.selected and self.selected != self.turn_model:  # chosen with /model after the last turn, or no turn
            change = f"{self.turn_model} -> {self.selected}" if self.turn_model else self.selected
            yield self.draft("system", f"model: {change} (the conversation's selected model, model_info)",
                             "model_info", (self.last_ns, "index" if self.last_ns is not None else "none"),
                             model=self.selected)
        for row in (*self.ledger.orphans(), *self.ledger.over_limit_rows()):
            yield _origin(row, self.place)

    def _header(self) -> Draft:
        """``conversation: <id> (directory <key>)`` at the row's creation time, or the first turn's (index)."""
        when: tuple[int | None, str] = (self.place.created_ns, "record")
        if self.place.created_ns is None:
            first = next((moment for moment in map(self._entry_start, self.history) if moment is not None), None)
            when = (first, "index" if first is not None else "none")
        where = f"directory {self.place.key}" if self.place.key else "no directory key"
        return self.draft("system", f"conversation: {self.session} ({where})", "conversation_id", when)

    @staticmethod
    def _entry_start(entry) -> int | None:
        entry = mapping(entry)
        meta = mapping(entry.get("request_metadata"))
        return ns_from_iso(mapping(entry.get("user")).get("timestamp")) or ns_from_ms(
            meta.get("request_start_timestamp_ms"))

    def _entry(self, entry: dict, locator: str) -> Iterator[Draft]:
        meta = mapping(entry.get("request_metadata"))
        used = label(meta.get("model_id"))
        start = ns_from_ms(meta.get("request_start_timestamp_ms"))
        if used and used != self.turn_model:
            text = f"model: {self.turn_model} -> {used}" if self.turn_model else f"model: {used}"
            yield self.draft("system", text, f"{locator}/request_metadata/model_id", self.at(start), model=used)
            self.turn_model = self.model = used
        yield from self._user(mapping(entry.get("user")), meta, f"{locator}/user")
        yield from self._assistant(entry.get("assistant"), meta, f"{locator}/assistant")

    # -- the user side ---------------------------------------------------------------------------------------

    def _user(self, user: dict, meta: dict, locator: str) -> Iterator[Draft]:
        when = self.at(ns_from_iso(user.get("timestamp")), ns_from_ms(meta.get("request_start_timestamp_ms")))
        variant, fields = _variant(user.get("content"))
        if variant == "Prompt":
            yield self.draft("user", as_text(fields.get("prompt")), f"{locator}/content", when)
        elif variant == "ToolUseResults":
            yield from self._results(fields.get("tool_use_results"), f"{locator}/content", when)
        elif variant == "CancelledToolUses":
            yield from self._cancelled(fields, user.get("timestamp") is not None, f"{locator}/content", when)
        elif user.get("content") is not None:
            yield self.draft("system", f"user message ({variant or 'unknown shape'}): {compact(user['content'])}",
                             f"{locator}/content", when)
        context = user.get("additional_context")
        if isinstance(context, str) and context.strip():
            yield self.draft("system", f"injected context (additional_context): {context}",
                             f"{locator}/additional_context", when)
        images = user.get("images")
        for position, image in enumerate(images if isinstance(images, list) else []):
            yield self.draft("system", f"attachment: {image_placeholder(image)}", f"{locator}/images/{position}", when)

    def _results(self, results, locator: str, when: tuple) -> Iterator[Draft]:
        if not isinstance(results, list):
            yield self.draft("system", f"parser: unparseable record (tool_use_results is a JSON "
                             f"{type(results).__name__}, not an array)", f"{locator}/tool_use_results", (None, "none"))
            return
        for position, result in enumerate(results):
            result = mapping(result)
            call_id = label(result.get("tool_use_id"))
            call = self.ledger.take(call_id)
            name = call.tool_name if call is not None else ""
            yield self.draft("tool_result", result_text(result), f"{locator}/tool_use_results/{position}", when,
                             tool_name=name, tool_use_id=call_id)
            if call is None:
                yield self.draft("system", f"parser: tool result for {call_id or 'a call'} with no tool call before it",
                                 f"{locator}/tool_use_results/{position}", when, tool_use_id=call_id)

    def _cancelled(self, fields: dict, answered: bool, locator: str, when: tuple) -> Iterator[Draft]:
        """Results of calls that did not run, and what stopped them: the user's answer, or an interrupt."""
        listed = fields.get("tool_use_results")
        results = [mapping(result) for result in (listed if isinstance(listed, list) else [])]
        calls = [(label(result.get("tool_use_id")), self.ledger.called_name(label(result.get("tool_use_id"))))
                 for result in results]
        yield from self._results(results, locator, when)
        prompt = fields.get("prompt")
        if prompt == INTERRUPT_PROMPT:
            yield self.draft("system", f"interrupted: {INTERRUPT_PROMPT}", f"{locator}/prompt", when)
            return
        if answered and isinstance(prompt, str):  # abandon_tool_use: the user's answer at the confirmation
            decision = "denied" if prompt == DENIAL_PROMPT else "denied with feedback"
            for call_id, name in calls:
                yield self.draft("system", f"permission decision: {decision}", f"{locator}/prompt", when,
                                 tool_name=name, tool_use_id=call_id)
        if prompt == DENIAL_PROMPT:
            yield self.draft("system", f"injected prompt (denial): {prompt}", f"{locator}/prompt", when)
        elif isinstance(prompt, str):
            yield self.draft("user", prompt, f"{locator}/prompt", when)

    # -- the assistant side ----------------------------------------------------------------------------------

    def _assistant(self, message, meta: dict, locator: str) -> Iterator[Draft]:
        if message is None:
            return
        when = self.at(ns_from_ms(meta.get("stream_end_timestamp_ms")))
        variant, fields = _variant(message)
        if variant not in ("Response", "ToolUse"):
            yield self.draft("system", f"assistant message ({variant or 'unknown shape'}): {compact(message)}",
                             locator, when)
            return
        content = as_text(fields.get("content"))
        if content.strip():
            yield self.draft("assistant", content, f"{locator}/{variant}/content", when)
        uses = fields.get("tool_uses")
        for position, use in enumerate(uses if variant == "ToolUse" and isinstance(uses, list) else []):
            use = mapping(use)
            call = self.draft("tool_use", compact(use.get("args", {})), f"{locator}/ToolUse/tool_uses/{position}",
                              when, tool_name=self._tool_name(use), tool_use_id=label(use.get("id")))
            self.ledger.called(call)
            yield call

    def _tool_name(self, use: dict) -> str:
        """A built-in tool's name; an MCP tool as ``@<server>/<its own name>``, the form agent files use."""
        name = label(use.get("name"))
        server = self.servers.get(name)
        return f"@{server}/{label(use.get('orig_name')) or name}" if server else name

    # -- what the conversation keeps beside its history ------------------------------------------------------

    def _summary(self) -> Iterator[Draft]:
        summary = self.state.get("latest_summary")
        if not isinstance(summary, list) or not summary:
            return
        meta = mapping(summary[1]) if len(summary) > 1 else {}
        # its own time, not the conversation's latest: the summary was made before the turns now in the history
        moment = ns_from_ms(meta.get("stream_end_timestamp_ms")) or ns_from_ms(meta.get("request_start_timestamp_ms"))
        when = (moment, "record") if moment is not None else (self.last_ns, "index" if self.last_ns else "none")
        yield self.draft("system", f"compaction: {as_text(summary[0])}", "latest_summary", when,
                         model=label(meta.get("model_id")) or self.model)

    def transcript(self) -> Iterator[Draft]:
        """The human-readable transcript as secondary, untimed rows: turns the history no longer holds remain."""
        lines = self.state.get("transcript")
        for position, line in enumerate(lines if isinstance(lines, list) else []):
            if not isinstance(line, str):
                yield replace(self.draft("system", f"parser: unparseable record (transcript line is a JSON "
                                         f"{type(line).__name__}, not a string)", f"transcript/{position}",
                                         (None, "none")), origin="secondary")
                continue
            turn, text = "system", f"transcript note: {line}"
            ending = _TOOL_USES_LINE.search(line)
            if line.startswith("> "):
                turn, text = "user", line[2:].replace("> \n", "\n")
            elif ending:
                turn, text = "assistant", line[:ending.start()]
            if text.strip():
                yield replace(self.draft(turn, text, f"transcript/{position}", (None, "none")), origin="secondary")


class VersionSeen:
    """Rows already given by another version of the same store: an earlier version adds only what they lack.

    Each version (the live database, then each earlier one) is read with
    ``start``; ``admit`` says whether a row of it is new: its n-th copy of a row
    (conversation, turn type, tool_use_id, whitespace-normalized text) is new
    only when no version read before held n copies. So a turn that every WAL
    commit still holds is given once, and a turn only earlier versions hold
    once. Past MAX_SEEN_ROWS distinct rows, later rows are admitted unchecked
    and ``limit_row`` says so.
    """

    def __init__(self) -> None:
        self.counts: dict[bytes, int] = {}
        self.version: dict[bytes, int] = {}
        self.over_at = ""

    def start(self) -> None:
        """Begin a version: fold the last one's counts into what has been seen."""
        for key, count in self.version.items():
            if count > self.counts.get(key, 0):
                self.counts[key] = count
        self.version = {}

    def admit(self, draft: Draft) -> bool:
        """True when this copy of the row is not yet given by a version read before."""
        text = " ".join(draft.text.split())
        key = hashlib.blake2b(f"{draft.session_id}\0{draft.turn_type}\0{draft.tool_use_id}\0{text}".encode(),
                              digest_size=16).digest()
        if key not in self.version and key not in self.counts and len(self.counts) + len(self.version) >= MAX_SEEN_ROWS:
            self.over_at = self.over_at or draft.locator
            return True
        count = self.version.get(key, 0) + 1
        self.version[key] = count
        return count > self.counts.get(key, 0)

    def limit_row(self) -> Iterator[Draft]:
        """The ``parser:`` row of the budget passed (none within it)."""
        if self.over_at:
            yield over_limit("rows compared across versions", f"{MAX_SEEN_ROWS} distinct rows",
                             "later rows of earlier versions were given without comparing them, and may repeat",
                             self.over_at)
