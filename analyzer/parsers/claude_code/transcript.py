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

The tree, the sessions and the responses are windows with budgets
(bookkeeping.py): past one, its oldest entries are forgotten and a
``parser:`` row says so at that line.

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

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.calls import ROW_COLUMNS, CallLedger
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, bad_record
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from . import content, entries
from .bookkeeping import (
    Answers,
    EntryTree,
    Node,
    Responses,
    Track,
    held_calls,
    held_key,
    packed_span,
    unpacked_span,
)
from .entries import CALL_BLOCKS

SYNTHETIC_MODEL = "<synthetic>"  # replies Claude Code writes itself (API errors, "No response requested.")
# rows held back while the file has not yet said its cwd (metadata lines come first): in rows and in text
MAX_PENDING = 1000
PENDING_CHARS = 16 * 1024 * 1024
PENDING_OVER = ("parser: rows held for the file's cwd over the limit ({rows} rows or {chars} characters); the rows "
                "up to this line are given without a project path")
WHOLE_FILE_BYTES = 32 * 1024 * 1024  # a transcript up to this is held whole while it is read
# json.dumps(value, ensure_ascii=False) with its encoder made once, not per call: a tool call's input
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode


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


class TranscriptWalk:
    """The rows of one transcript file, in file order."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        name = ctx.source.name
        self.agent_file = name[len("agent-"):-len(".jsonl")] if name.startswith("agent-") else None
        self.file_session = entries.file_session(ctx.source.path, self.agent_file is not None)
        # tool_use ids open (the orphan row has never carried the call's model) and answered: each within a budget
        self.calls = BoundedLedger(CallLedger(columns=[name for name in ROW_COLUMNS if name != "model"]))
        self.answers = Answers()
        # the parentUuid tree, the sessions (each its last entry and model) and the responses: within budgets
        self.tree = EntryTree()
        self.responses = Responses()
        self.cwd = ""
        self.pending: list[Draft] | None = []  # None once the file's cwd is known
        self.pending_chars = 0
        self.data = _whole_file(ctx)

    # -- driving ---------------------------------------------------------------------------

    def rows(self) -> Iterator[Draft]:
        """Every row of the transcript, in file order, then the rows for calls never answered."""
        for line in read_jsonl(self.ctx):
            if not isinstance(line, Line):
                yield from self._emit([line], line.locator)
                continue
            drafts = list(self._line(line))
            if not drafts:  # every line is accounted for, even one with nothing to show
                drafts = [Draft("system", f"entry {content.safe_label(line.value.get('type'))}: no content",
                                line.locator, **self._base(line.value))]
            for notices in (self.tree.notices, self.responses.notices, self.answers.notices):
                if notices:  # a budget was reached on this line: said once, at this line
                    drafts.extend(Draft("system", text, line.locator, timestamp_source="none") for text in notices)
                    notices.clear()
            yield from self._emit(drafts, line.locator)
        yield from self._emit([*self.calls.orphans(), *self.calls.over_limit_rows()])
        if self.pending:
            yield from self.pending

    def _emit(self, drafts: list[Draft], locator: str = "") -> list[Draft]:
        """The rows that may leave now, in order; the rows before the first cwd wait for it (metadata lines have none).

        A list, not a generator: it is called once per line, and once the cwd
        is known it hands the line's rows straight back. Past MAX_PENDING rows
        or PENDING_CHARS characters of them the rows leave without the cwd,
        and a parser: row at ``locator`` (the line read) says so.
        """
        if self.pending is None:
            return drafts
        self.pending.extend(drafts)
        self.pending_chars += sum(len(draft.text) for draft in drafts)
        if not self.cwd and len(self.pending) <= MAX_PENDING and self.pending_chars <= PENDING_CHARS:
            return []
        released, self.pending = self.pending, None
        for draft in released:
            draft.project_path = draft.project_path or self.cwd
        if not self.cwd and locator:
            released.append(Draft("system", PENDING_OVER.format(rows=MAX_PENDING, chars=PENDING_CHARS),
                                  locator, timestamp_source="none"))
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
        return self.tree.line_of(uuid)

    # -- the parentUuid tree ------------------------------------------------------------------

    def _repeated(self, uuid: str, line: Line) -> int | None:
        """The line an identical entry (same uuid, same bytes) was already written on (among the uuids held)."""
        node = self.tree.node(uuid)
        if node is None:
            return None
        if self.data is None:
            return node.line if node.bytes_at == _line_digest(line) else None
        offset, length = unpacked_span(node.bytes_at) if isinstance(node.bytes_at, int) else (0, 0)
        return node.line if self.data[offset:offset + length].strip() == line.raw.strip() else None

    def _bytes_at(self, line: Line) -> bytes | int:
        return packed_span(line.offset, len(line.raw)) if self.data is not None else _line_digest(line)

    def _tree(self, entry: dict, uuid: str, kind: str, line: Line, base: dict, response: str | None,
              calls: set) -> Draft | None:
        """Place the line in the chain; a row where it does not continue from the line before it (a branch).

        ``response``: an assistant line's ``message.id`` (``entries.message_id``); ``calls``: its tool_use ids.
        """
        track = self.tree.track(base["session_id"])
        parent = entry.get("parentUuid")
        parent_key = held_key(parent) if isinstance(parent, str) and parent else None
        parent_node = self.tree.node(parent) if parent_key is not None else None
        response_key = held_key(response) if response is not None else None
        branch = None
        if parent_key is not None and parent_key != track.last:
            text = self._branch_text(entry, str(parent), parent_node, track, base["session_id"], response_key)
            if text:
                branch = Draft("system", text, line.locator, **base)
        key = held_key(uuid)
        self.tree.add(key, Node(line.number, track, self._bytes_at(line), response_key, held_calls(calls)))
        if parent_node is not None and kind != "progress" and parent_node.first_child is None:
            parent_node.first_child = line.number
        track.last = key
        return branch

    def _branch_text(self, entry: dict, parent: str, node: Node | None, track: Track, track_name: str,
                     response) -> str | None:
        if node is None:
            return self.tree.not_held(parent)
        if node.track.key != track.key:
            return f"branch: {track_name} starts from line:{node.line} ({parent}) of {node.track.name}"
        earlier = node.first_child
        same_response = node.response is not None and node.response == response
        if earlier is None or same_response or self._answers_call_on(entry, parent, node):
            return None  # a chain through a skipped line, the rest of one response, a result on its call's line
        before = self.tree.nodes.get(track.last) if track.last is not None else None
        after = f", not from the entry before it (line:{before.line})" if isinstance(before, Node) else ""
        return (f"branch: continues from line:{node.line} ({parent}){after}; line:{node.line}'s earlier "
                f"continuation at line:{earlier} is another branch (rewound, edited or retried)")

    @staticmethod
    def _answers_call_on(entry: dict, parent: str, node: Node) -> bool:
        if entry.get("sourceToolAssistantUUID") == parent:
            return True
        return bool(node.calls) and any(held_key(call) in node.calls for call in entries.result_ids(entry))

    # -- assistant ------------------------------------------------------------------------------

    def _assistant(self, message, blocks: list | None, message_id: str | None, line: Line, base: dict,
                   api_error: bool) -> Iterator[Draft]:
        if blocks is None:
            yield bad_line(line.number, "assistant entry without a message whose content is text or blocks", line.raw)
            return
        model = message.get("model")
        model = model if isinstance(model, str) else ""
        synthetic = model == SYNTHETIC_MODEL or api_error
        first, fresh = self.responses.fresh(message_id, blocks, line.number)
        if blocks and not fresh and message_id is not None:  # (no id: every block is fresh)
            yield Draft("system", f"repeated: line repeats assistant message {message_id} given from "
                                  f"line:{first}; it adds no new content", line.locator, model=model, **base)
            return
        if model and not synthetic:
            yield from self._model_row(model, line, base)
        where, columns = f"{line.locator}/message/content", {"model": model, **base}  # one dict for the line's blocks
        for position, block, text in fresh:
            yield from self._assistant_block(block, text, f"{where}/{position}", synthetic, columns)

    def _model_row(self, model: str, line: Line, base: dict) -> Iterator[Draft]:
        text = self.tree.model_change(self.tree.track(base["session_id"]), model)
        if text is None:
            return
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
        name = call.tool_name if call else self.answers.name(call_id)
        text = content.result_text(block.get("content"))
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **base)
        if call is None and not self.answers.known(call_id):
            what = f"tool_use_id {call_id}" if call_id else "no tool_use_id"
            yield Draft("system", f"parser: tool result for an unknown tool ({what}) with no tool call before it",
                        where, **base)
        self.answers.record(call_id, name)
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
                    tool_name=self.answers.name(results[0]), tool_use_id=results[0], **base)

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


def parse_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """claude_code.transcript.v1: a main session file or a sub-agent file (both layouts)."""
    yield from TranscriptWalk(ctx).rows()
