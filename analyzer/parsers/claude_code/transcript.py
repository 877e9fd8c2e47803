"""Claude Code transcripts: projects/<sanitized cwd>/<sessionId>.jsonl and the sub-agent files.

One JSON object per line, appended. Chain entries (user, assistant, system,
attachment, progress) carry ``uuid`` and ``parentUuid``; metadata entries
(permission-mode, titles, summary, file-history-snapshot, queue-operation,
...) carry neither and usually no time. Every line gives at least one row.

The walk keeps, per file:

* open tool calls by ``tool_use.id``, so each ``tool_result`` is joined by
  ``tool_use_id`` (never by position) and calls left without a result are
  reported at the end;
* the ``message.id`` of each API response: Claude Code writes one response
  over several lines (one content block per line in 2.x); a block already
  given by an earlier line of the same response is not given again, and a
  line that adds nothing gives one ``repeated:`` row instead;
* the ``parentUuid`` tree: a line whose parent is not the line before it in
  its track, and whose parent already had a child, starts a branch (a rewind
  or an edited prompt): a ``branch:`` row says where it continues from;
* the model per session, for ``model:`` rows.

Sample line::

    {"parentUuid":"a1…02","isSidechain":false,"cwd":"/home/dev/src/acme-api","sessionId":"4f9d2c1e-…",
     "version":"2.1.120","gitBranch":"fix/login-timeout","type":"assistant","uuid":"a1…03",
     "timestamp":"2026-07-02T09:14:09.201Z","message":{"id":"msg_01Hq…","model":"claude-sonnet-4-5-20250929",
     "content":[{"type":"tool_use","id":"toolu_01Ab…","name":"Grep","input":{"pattern":"pool_timeout"}}]}}

References: anthropics/claude-agent-sdk-python@e8bde60164 src/claude_agent_sdk/_internal/sessions.py:826-1020
(chain types, parentUuid walk, compact_boundary), :1199-1243 (sub-agent layout);
jeremedia/claude-code-log-format@a5892fe165 CLAUDE_CODE_LOG_FORMAT.md:457-566 (tool joins, one block
per line sharing message.id), source-docs/JSONL_LOGGING.md (appendEntry: parentUuid is the previous
message of the in-memory chain, a uuid already in the file is not written again, legacy agent-<id>.jsonl).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.bundle import MemberUnreadable
from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.calls import ROW_COLUMNS, CallLedger
from aitrail.analyzer.formats.decode import canonical_json
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, bad_record
from aitrail.analyzer.rows import Draft, ns_from_iso

from . import content, entries
from .entries import CALL_BLOCKS

SYNTHETIC_MODEL = "<synthetic>"  # replies Claude Code writes itself (API errors, "No response requested.")
MAX_PENDING = 1000  # rows held back while the file has not yet said its cwd
WHOLE_FILE_BYTES = 32 * 1024 * 1024  # a transcript up to this is held whole while it is read
# json.dumps(value, ensure_ascii=False) with its encoder made once, not per call: a tool call's input
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode


@dataclass
class _Response:
    """What one API response (``message.id``) has already given in this file."""

    first_line: int
    keys: set = field(default_factory=set)  # digests of the blocks given
    texts: dict = field(default_factory=dict)  # kind -> texts given, for a block that grows


@dataclass
class _Node:
    line: int
    track: str
    bytes_at: bytes | tuple[int, int]  # the line's digest, or (offset, length) in a file held whole
    response: str | None  # message.id of an assistant line


def _line_digest(line: Line) -> bytes:
    # SHA-256 (16 bytes of it): twice as fast as BLAKE2b here where the CPU has SHA instructions
    return hashlib.sha256(line.raw.strip()).digest()[:16]


def _whole_file(ctx: ParseContext) -> bytes | None:
    """The transcript's bytes when it is small enough to hold (the lines are then read from them).

    A line is then compared with the earlier line of its uuid byte for byte,
    when one comes, instead of every line being hashed for the case. A
    member that cannot be read whole is read line by line, as before: its
    rows up to the damage, then the damage.
    """
    if ctx.source.format == "jsonl_zst" or ctx.source.size > WHOLE_FILE_BYTES:  # offsets: of the member's bytes
        return None
    try:
        return ctx.data
    except MemberUnreadable:
        return None


def _digest(*parts) -> bytes:
    """A digest of JSON values that is equal exactly when the values are (key order aside)."""
    return hashlib.sha256(canonical_json(parts)).digest()[:16]


SHORT_CALL_ID = 128  # characters: a tool call id this short is kept as it is, not digested


def _block_identity(block) -> tuple | bytes:
    """What a response's later lines are compared by: a call's id (a digest when long), any other block's digest.

    Held for every response of the file: a few hundred bytes a block at most, whatever its text or id.
    """
    key = entries.block_key(block)
    if key[0] == "call" and len(key[1]) <= SHORT_CALL_ID:
        return key  # a tuple of two strings: never equal to a digest (bytes)
    return _digest(key)


class TranscriptWalk:
    """The rows of one transcript file, in file order."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        name = ctx.source.name
        self.agent_file = name[len("agent-"):-len(".jsonl")] if name.startswith("agent-") else None
        self.file_session = entries.file_session(ctx.source.path, self.agent_file is not None)
        # tool_use ids open and answered; the orphan row has never carried the call's model
        self.calls = CallLedger(columns=[name for name in ROW_COLUMNS if name != "model"])
        self.responses: dict[str, _Response] = {}
        self.models: dict[str, str] = {}  # session_id -> model in use
        self.nodes: dict[str, _Node] = {}  # uuid -> where it is
        self.first_child: dict[str, int] = {}  # parent uuid -> line of its first non-progress child
        self.last_uuid: dict[str, str] = {}  # track -> last chain entry
        self.calls_on: dict[str, set] = {}  # uuid -> tool_use ids that line holds
        self.cwd = ""
        self.pending: list[Draft] | None = []  # None once the file's cwd is known
        self.data = _whole_file(ctx)

    # -- driving ---------------------------------------------------------------------------

    def rows(self) -> Iterator[Draft]:
        """Every row of the transcript, in file order, then the rows for calls never answered."""
        for line in read_jsonl(self.ctx):
            if not isinstance(line, Line):
                yield from self._emit([line])
                continue
            drafts = list(self._line(line))
            if not drafts:  # every line is accounted for, even one with nothing to show
                drafts = [Draft("system", f"entry {content.safe_label(line.value.get('type'))}: no content",
                                line.locator, **self._base(line.value))]
            yield from self._emit(drafts)
        yield from self._emit(list(self.calls.orphans()))
        if self.pending:
            yield from self.pending

    def _emit(self, drafts: list[Draft]) -> list[Draft]:
        """The rows that may leave now, in order; the rows before the first cwd wait for it (metadata lines have none).

        A list, not a generator: it is called once per line, and once the cwd
        is known it hands the line's rows straight back.
        """
        if self.pending is None:
            return drafts
        self.pending.extend(drafts)
        if not self.cwd and len(self.pending) <= MAX_PENDING:
            return []
        released, self.pending = self.pending, None
        for draft in released:
            draft.project_path = draft.project_path or self.cwd
        return released

    def _base(self, entry: dict) -> dict:
        """session, project, branch and time of an entry (what every row of the line carries)."""
        cwd = entry.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
        branch = entry.get("gitBranch")
        time = ns_from_iso(entry.get("timestamp"))
        return {
            "session_id": self._session(entry), "project_path": self.cwd,
            "git_branch": branch if isinstance(branch, str) else "",
            "timestamp_ns": time, "timestamp_source": "record" if time is not None else "none",
        }

    def _session(self, entry: dict) -> str:
        """The line's session; sub-agent and sidechain rows get a ``/agent-<id>`` or ``/sidechain`` suffix."""
        session = entry.get("sessionId")
        session = session if isinstance(session, str) and session else self.file_session
        agent = entry.get("agentId") if isinstance(entry.get("agentId"), str) and entry.get("agentId") else None
        if self.agent_file is not None:
            return entries.suffixed(session, f"agent-{agent or self.agent_file}")
        if entry.get("isSidechain") is True:
            return entries.suffixed(session, f"agent-{agent}" if agent else "sidechain")
        return session

    # -- one line ----------------------------------------------------------------------------

    def _line(self, line: Line) -> Iterator[Draft]:
        entry = line.value
        kind = entry.get("type")
        if not isinstance(kind, str) or not kind:
            yield bad_line(line.number, "no entry type", line.raw)
            return
        base = self._base(entry)
        # an assistant line's message, blocks and response id, read once for the tree and the rows
        message = entry.get("message") if kind == "assistant" else None
        blocks = entries.blocks(message)  # None without a message
        response = entries.message_id(message)
        uuid = entry.get("uuid")
        if isinstance(uuid, str) and uuid:
            repeated = self._repeated(uuid, line)
            if repeated is not None:
                yield Draft("system", f"repeated: line repeats line:{repeated} (entry {uuid}); its content is "
                                      "given there", line.locator, **base)
                return
            branch = self._tree(entry, uuid, kind, line, base, response, entries.block_call_ids(blocks))
            if branch is not None:
                yield branch
        if kind == "assistant":
            yield from self._assistant(message, blocks, response, line, base, entry.get("isApiErrorMessage") is True)
        elif kind == "user":
            yield from self._user(entry, line, base)
        elif kind == "system":
            logical = self._line_of(entry.get("logicalParentUuid"))
            yield Draft("system", content.system_text(entry, logical), line.locator, **base)
        elif kind == "attachment":
            yield from self._attachment(entry, line, base)
        elif kind == "permission-mode":
            mode = json.dumps(entry.get("permissionMode"), ensure_ascii=False)
            yield Draft("system", f"permission setting: permissionMode={mode} (from transcript permission-mode "
                                  "entry)", line.locator, **base)
        else:
            time = ns_from_iso(content.metadata_time(kind, entry))
            if time is not None:
                base.update(timestamp_ns=time, timestamp_source="record")
            yield Draft("system", content.metadata_text(kind, entry, self._line_of), line.locator, **base)

    def _line_of(self, uuid) -> int | None:
        node = self.nodes.get(uuid) if isinstance(uuid, str) else None
        return node.line if node else None

    # -- the parentUuid tree ------------------------------------------------------------------

    def _repeated(self, uuid: str, line: Line) -> int | None:
        """The line an identical entry (same uuid, same bytes) was already written on."""
        node = self.nodes.get(uuid)
        if node is None:
            return None
        if self.data is None:
            return node.line if node.bytes_at == _line_digest(line) else None
        offset, length = node.bytes_at
        return node.line if self.data[offset:offset + length].strip() == line.raw.strip() else None

    def _bytes_at(self, line: Line) -> bytes | tuple[int, int]:
        return (line.offset, len(line.raw)) if self.data is not None else _line_digest(line)

    def _tree(self, entry: dict, uuid: str, kind: str, line: Line, base: dict, response: str | None,
              calls: set) -> Draft | None:
        """Place the line in the chain; a row where it does not continue from the line before it (a branch).

        ``response``: an assistant line's ``message.id`` (``entries.message_id``); ``calls``: its tool_use ids.
        """
        track = base["session_id"]
        parent = entry.get("parentUuid")
        previous = self.last_uuid.get(track)
        branch = None
        if isinstance(parent, str) and parent and parent != previous:
            text = self._branch_text(entry, parent, previous, track, response)
            if text:
                branch = Draft("system", text, line.locator, **base)
        if uuid not in self.nodes:
            self.nodes[uuid] = _Node(line.number, track, self._bytes_at(line), response)
        if isinstance(parent, str) and parent and kind != "progress":
            self.first_child.setdefault(parent, line.number)
        self.last_uuid[track] = uuid
        if calls:
            self.calls_on[uuid] = calls
        return branch

    def _branch_text(self, entry: dict, parent: str, previous: str | None, track: str,
                     response: str | None) -> str | None:
        node = self.nodes.get(parent)
        if node is None:
            return f"branch: continues from entry {parent}, which is not in this file"
        if node.track != track:
            return f"branch: {track} starts from line:{node.line} ({parent}) of {node.track}"
        earlier = self.first_child.get(parent)
        same_response = node.response is not None and node.response == response
        if earlier is None or same_response or self._answers_call_on(entry, parent):
            return None  # a chain through a skipped line, the rest of one response, a result on its call's line
        before = self._line_of(previous)
        after = f", not from the entry before it (line:{before})" if before else ""
        return (f"branch: continues from line:{node.line} ({parent}){after}; line:{node.line}'s earlier "
                f"continuation at line:{earlier} is another branch (rewound, edited or retried)")

    def _answers_call_on(self, entry: dict, parent: str) -> bool:
        if entry.get("sourceToolAssistantUUID") == parent:
            return True
        return bool(entries.result_ids(entry) & self.calls_on.get(parent, set()))

    # -- assistant ------------------------------------------------------------------------------

    def _assistant(self, message, blocks: list | None, message_id: str | None, line: Line, base: dict,
                   api_error: bool) -> Iterator[Draft]:
        if blocks is None:
            yield bad_line(line.number, "assistant entry without a message whose content is text or blocks", line.raw)
            return
        model = message.get("model")
        model = model if isinstance(model, str) else ""
        synthetic = model == SYNTHETIC_MODEL or api_error
        fresh = self._fresh(message_id, blocks, line.number)
        if blocks and not fresh and message_id is not None:  # (no id: every block is fresh)
            first = self.responses[message_id].first_line
            yield Draft("system", f"repeated: line repeats assistant message {message_id} given from "
                                  f"line:{first}; it adds no new content", line.locator, model=model, **base)
            return
        if model and not synthetic:
            yield from self._model_row(model, line, base)
        where, columns = f"{line.locator}/message/content", {"model": model, **base}  # one dict for the line's blocks
        for position, block, text in fresh:
            yield from self._assistant_block(block, text, f"{where}/{position}", synthetic, columns)

    def _fresh(self, message_id: str | None, blocks: list, number: int) -> list[tuple[int, object, str | None]]:
        """The blocks of a line not already given by an earlier line of the same response.

        Handles both ways a response can be split: each line carrying only its
        new block (what 2.x writes), and lines repeating the earlier blocks
        (a block already given is skipped; a text that grew gives its new tail).
        """
        if message_id is None:
            return [(position, block, None) for position, block in enumerate(blocks)]
        response = self.responses.setdefault(message_id, _Response(number))
        fresh = []
        for position, block in enumerate(blocks):
            key = _block_identity(block)
            if key in response.keys:
                continue
            response.keys.add(key)
            fresh.append((position, block, _grown_tail(response, block)))
        return fresh

    def _model_row(self, model: str, line: Line, base: dict) -> Iterator[Draft]:
        session = base["session_id"]
        old = self.models.get(session)
        if old == model:
            return
        self.models[session] = model
        text = f"model: {model}" if old is None else f"model: {old} -> {model}"
        yield Draft("system", text, f"{line.locator}/message/model", model=model, **base)

    def _assistant_block(self, block, tail: str | None, where: str, synthetic: bool, base: dict) -> Iterator[Draft]:
        if not isinstance(block, dict):
            yield bad_record(where, "content block is not an object", json.dumps(block, ensure_ascii=False))
            return
        kind = block.get("type")
        if kind == "text":
            text = tail if tail is not None else str(block.get("text", ""))
            # a reply Claude Code wrote in the model's place is not the model's turn
            yield Draft("system", f"synthetic: {text}", where, **base) if synthetic else Draft(
                "assistant", text, where, **base)
        elif kind == "thinking":
            yield Draft("thinking", tail if tail is not None else str(block.get("thinking", "")), where, **base)
        elif kind == "redacted_thinking":
            yield Draft("thinking", "[redacted thinking]", where, **base)
        elif kind in CALL_BLOCKS:
            yield self._call(block, where, base)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):  # server tools answer in the same reply
            yield from self._result(block, where, base)
        else:
            yield Draft("system", entries.unknown_block(block, kind), where, **base)

    def _call(self, block: dict, where: str, base: dict) -> Draft:
        call_id, name = block.get("id"), block.get("name")
        call_id = call_id if isinstance(call_id, str) else ""
        name = name if isinstance(name, str) else ""
        text = _JSON_TEXT(block.get("input"))
        call = Draft("tool_use", text, where, tool_name=name, tool_use_id=call_id, **base)
        self.calls.called(call)
        return call

    # -- user -----------------------------------------------------------------------------------

    def _user(self, entry: dict, line: Line, base: dict) -> Iterator[Draft]:
        message = entry.get("message")
        blocks = entries.blocks(message)
        if blocks is None:
            yield bad_line(line.number, "user entry without a message whose content is text or blocks", line.raw)
            return
        flags = {"is_meta": entry.get("isMeta") is True, "is_compact_summary": entry.get("isCompactSummary") is True}
        single = isinstance(message, dict) and isinstance(message.get("content"), str)  # (blocks: a dict)
        # in a sub-agent's chain the "user" is the agent that delegated the task, not the person
        delegated = self.agent_file is not None or entry.get("isSidechain") is True
        typed = _Typed(base, delegated)  # consecutive parts typed together: one row
        results: list[str] = []
        for position, block in enumerate(blocks):
            where = f"{line.locator}/message/content" + ("" if single else f"/{position}")
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_result":
                yield from typed.flush()
                results.append(block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else "")
                yield from self._result(block, where, base)
            elif kind in ("text", "image", "document"):
                turn, text = (content.classify_user_text(str(block.get("text", "")), **flags) if kind == "text"
                              else ("user", content.block_text(block)))  # a picture's type and size, never its bytes
                if turn == "user":
                    typed.add(where, text)
                else:
                    yield from typed.flush()
                    yield Draft(turn, text, where, **base)
            elif not isinstance(block, dict):
                yield from typed.flush()
                yield bad_record(where, "content block is not an object", json.dumps(block, ensure_ascii=False))
            else:
                yield from typed.flush()
                yield Draft("system", entries.unknown_block(block, kind), where, **base)
        yield from typed.flush()
        yield from self._subagent_link(entry, results, line, base)

    def _result(self, block: dict, where: str, base: dict) -> Iterator[Draft]:
        call_id = block.get("tool_use_id")
        call_id = call_id if isinstance(call_id, str) else ""
        call = self.calls.take(call_id)
        name = call.tool_name if call else self.calls.answered_name(call_id)
        text = content.result_text(block.get("content"))
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **base)
        if call is None and not self.calls.is_answered(call_id):
            what = f"tool_use_id {call_id}" if call_id else "no tool_use_id"
            yield Draft("system", f"parser: tool result for an unknown tool ({what}) with no tool call before it",
                        where, **base)
        self.calls.answered(call_id, name)
        decision = content.permission_decision(text, block.get("is_error"))
        if decision:
            yield Draft("system", f"permission decision: {decision}", where, tool_name=name, tool_use_id=call_id,
                        **base)

    def _subagent_link(self, entry: dict, results: list[str], line: Line, base: dict) -> Iterator[Draft]:
        """The result of an Agent/Task call names the sub-agent whose rows carry ``<session>/agent-<id>``."""
        outcome = entry.get("toolUseResult")
        agent = outcome.get("agentId") if isinstance(outcome, dict) else None
        if not isinstance(agent, str) or not agent or len(results) != 1:
            return
        session = entry.get("sessionId") if isinstance(entry.get("sessionId"), str) else self.file_session
        yield Draft("system", f"subagent: agent-{agent} ran tool call {results[0]}; its rows carry session "
                              f"{session}/agent-{agent}", f"{line.locator}/toolUseResult/agentId",
                    tool_name=self.calls.answered_name(results[0]), tool_use_id=results[0], **base)

    # -- attachments and the end of the file ------------------------------------------------------

    def _attachment(self, entry: dict, line: Line, base: dict) -> Iterator[Draft]:
        attachment = entry.get("attachment")
        if not isinstance(attachment, dict):
            text = f"entry attachment: {content.compact_json(content.rest_of(entry))}"
            yield Draft("system", text, line.locator, **base)
            return
        prompt = content.queued_prompt(attachment)
        if prompt is not None:
            yield Draft("user", prompt, f"{line.locator}/attachment/prompt", **base)
        else:
            yield Draft("system", content.attachment_text(attachment), f"{line.locator}/attachment", **base)


# -- small helpers ----------------------------------------------------------------------------------


class _Typed:
    """Parts of one user message typed together (a text, then an image): one row when flushed.

    A ``user`` row, or in a sub-agent's chain a ``subagent prompt:`` system row:
    there the text was written by the delegating agent, not typed by the person.
    """

    def __init__(self, base: dict, delegated: bool):
        self.base, self.delegated = base, delegated
        self.parts: list[tuple[str, str]] = []

    def add(self, where: str, text: str) -> None:
        self.parts.append((where, text))

    def flush(self) -> list[Draft]:
        """The parts added since the last flush as one row (none when there are none); called once per block."""
        if not self.parts:
            return []
        text, where = "\n".join(text for _, text in self.parts), self.parts[0][0]
        self.parts = []
        if self.delegated:
            return [Draft("system", f"subagent prompt: {text}", where, **self.base)]
        return [Draft("user", text, where, **self.base)]


def _grown_tail(response: _Response, block) -> str | None:
    """The new end of a text or thinking block that extends one an earlier line gave, else None."""
    if not isinstance(block, dict) or block.get("type") not in ("text", "thinking"):
        return None
    kind = block["type"]
    text = str(block.get(kind, ""))
    given = response.texts.setdefault(kind, [])
    for index, earlier in enumerate(given):
        if earlier and text.startswith(earlier) and len(text) > len(earlier):
            given[index] = text
            return text[len(earlier):]
    given.append(text)
    return None


def parse_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.transcript.v1: a main session file or a sub-agent file (both layouts)."""
    yield from TranscriptWalk(ctx).rows()
