"""Qoder transcripts: projects/<key>/<sessionId>.jsonl and <sessionId>/subagents/agent-<id>.jsonl.

One JSON entry per line in Claude Code's format, as @qoder-ai/qodercli 1.1.52
writes it (bundle/qodercli.js): chain entries (``user``, ``assistant``,
``system``, ``attachment``) carry the envelope of ``AWi`` (``uuid``,
``parentUuid``, ``isSidechain``, ``agentId``, ``cwd``, ``sessionId``,
``version``, ``gitBranch``, ``timestamp`` from ``new Date().toISOString()``,
UTC); an assistant message is split into one entry per content block sharing
``message.id``, with ``usage`` kept on the last one only (``bZc``); tool results
are user entries whose ``toolDenialKind`` and ``userFeedback`` (one value, or a
list with one per result) record a refusal (``jie``, ``L$c``). Metadata entries
are read by metadata.py.

This is a reader of its own, not Claude Code's: only what the bundle shows is
read (see docs/agents/qoder-cli.md, "Parser plan"). What it holds per file: the
open tool calls (a BoundedLedger), the last cwd, and the model of each session
seen in the file (MODELS_HELD at most).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, as_list
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .metadata import compact, metadata_text, metadata_time

SYNTHETIC_MODEL = "<synthetic>"  # replies the CLI writes itself (errors), `tM="<synthetic>"`
INTERRUPTIONS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
MODELS_HELD = 1024  # sessions per file whose last model is kept (a file is one session and its sidechains)
# toolDenialKind -> the decision it records (`L$c`: user-rejected; the kinds a policy returns otherwise)
DENIALS = {
    "user-rejected": "denied",
    "permission-rule": "denied by a permission rule (not asked)",
    "automode-blocked": "blocked by auto mode (not asked)",
    "automode-unavailable": "denied: auto mode unavailable (not asked)",
    "automode-parsing-error": "denied: auto mode could not decide (not asked)",
}
NOT_DECISIONS = frozenset({"cancelled", "interrupted"})  # the run stopped: no one refused the call


def parse_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """qoder_cli.transcript.v1: a session file or a sub-agent file, every line a row or more."""
    yield from _Walk(ctx).rows()


class _Walk:
    """The rows of one transcript file, in file order."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        parts = ctx.source.path.split("/")
        self.agent = ""  # the sub-agent id of a file under subagents/
        self.file_session = parts[-1].removesuffix(".jsonl")
        if len(parts) >= 3 and parts[-2] == "subagents" and parts[-1].startswith("agent-"):
            self.agent = parts[-1].removeprefix("agent-").removesuffix(".jsonl")
            self.file_session = parts[-3]
        self.calls = BoundedLedger()
        self.cwd = ""
        self.models: dict[str, str] = {}

    def rows(self) -> Iterator[Draft]:
        """Every row of the file, then a ``no result recorded`` row per call never answered."""
        for item in read_jsonl(self.ctx):
            if not isinstance(item, Line):
                yield item
                continue
            found = list(self._entry(item))
            yield from found or [Draft("system", f"entry {excerpt(compact(item.value.get('type')), 80)}: no content",
                                       item.locator, **self._columns(item.value))]
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()

    # -- columns ------------------------------------------------------------------------------------------------

    def _columns(self, entry: dict, when: int | None = None) -> dict:
        cwd, branch = entry.get("cwd"), entry.get("gitBranch")
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
        moment = when if when is not None else ns_from_iso(entry.get("timestamp"))
        return {"session_id": self._session(entry), "project_path": self.cwd,
                "git_branch": branch if isinstance(branch, str) else "", "timestamp_ns": moment,
                "timestamp_source": "record" if moment is not None else "none"}

    def _session(self, entry: dict) -> str:
        named = entry.get("sessionId")
        session = named if isinstance(named, str) and named else self.file_session
        agent = entry.get("agentId") if isinstance(entry.get("agentId"), str) else ""
        if self.agent:
            return f"{session}/agent-{agent or self.agent}"
        if entry.get("isSidechain") is True:
            return f"{session}/agent-{agent}" if agent else f"{session}/sidechain"
        return session

    def _delegated(self, entry: dict) -> bool:
        return bool(self.agent) or entry.get("isSidechain") is True

    # -- one entry ----------------------------------------------------------------------------------------------

    def _entry(self, line: Line) -> Iterator[Draft]:
        kind = line.value.get("type")
        if isinstance(kind, str) and kind:
            read = {"user": self._user, "assistant": self._assistant, "system": self._system,
                    "attachment": self._attachment}.get(kind, self._metadata)
            yield from read(line.value, line)
        else:
            yield bad_line(line.number, "no entry type", line.raw)

    def _system(self, entry: dict, line: Line) -> Iterator[Draft]:
        yield Draft("system", _system_text(entry), line.locator, **self._columns(entry))

    def _attachment(self, entry: dict, line: Line) -> Iterator[Draft]:
        text = f"attachment: {excerpt(compact(entry.get('attachment')), 2000)}"
        yield Draft("system", text, line.locator, **self._columns(entry))

    def _metadata(self, entry: dict, line: Line) -> Iterator[Draft]:
        kind = str(entry.get("type"))
        yield Draft("system", metadata_text(kind, entry), line.locator,
                    **self._columns(entry, metadata_time(kind, entry)))

    def _user(self, entry: dict, line: Line) -> Iterator[Draft]:
        blocks = _blocks(entry.get("message"))
        if blocks is None:
            yield bad_line(line.number, "user entry without text or content blocks", line.raw)
            return
        columns = self._columns(entry)
        results = 0  # the n-th tool_result of the entry takes the n-th toolDenialKind of a list
        for position, block in enumerate(blocks):
            where = f"{line.locator}/message/content/{position}"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_result":
                yield from self._result(block, entry, results, where, columns)
                results += 1
            elif kind == "text":
                yield self._typed(str(block.get("text", "")), entry, where, columns)
            elif is_image_block(block) or kind == "document":
                shown = image_placeholder(block) if kind != "document" else f"[document {_media(block)}]"
                yield Draft("system" if self._delegated(entry) else "user", shown, where, **columns)
            else:
                yield Draft("system", f"content block {excerpt(compact(kind), 80)}: {excerpt(compact(block))}", where,
                            **columns)

    def _typed(self, text: str, entry: dict, where: str, columns: dict) -> Draft:
        """A user text block: what the person typed, or what the CLI or a delegating agent wrote."""
        if entry.get("isCompactSummary") is True:
            return Draft("system", f"compaction summary: {text}", where, **columns)
        if entry.get("isMeta") is True:
            return Draft("system", f"meta message: {text}", where, **columns)
        if text.strip() in INTERRUPTIONS:
            return Draft("system", f"interrupted: {text.strip()}", where, **columns)
        if self._delegated(entry):
            return Draft("system", f"subagent prompt: {text}", where, **columns)
        return Draft("user", text, where, **columns)

    def _result(self, block: dict, entry: dict, index: int, where: str, columns: dict) -> Iterator[Draft]:
        call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else ""
        call = self.calls.take(call_id) if call_id else None
        name = call.tool_name if call else self.calls.called_name(call_id)
        text = _result_text(block.get("content"))
        if block.get("is_error") is True:
            text = f"error: {text}"
        ids = {"tool_name": name, "tool_use_id": call_id}
        yield Draft("tool_result", text, where, **ids, **columns)
        if call is None and not (call_id and self.calls.was_called(call_id)):
            yield Draft("system", f"parser: tool result for {name or 'an unknown tool'} with no tool call before it",
                        where, **ids, **columns)
        decision = _decision(_nth(entry.get("toolDenialKind"), index), _nth(entry.get("userFeedback"), index))
        if decision:
            yield Draft("system", f"permission decision: {decision}", where, **ids, **columns)

    def _assistant(self, entry: dict, line: Line) -> Iterator[Draft]:
        message = entry.get("message")
        blocks = _blocks(message)
        if blocks is None:
            yield bad_line(line.number, "assistant entry without text or content blocks", line.raw)
            return
        message = as_dict(message)
        model = message.get("model") if isinstance(message.get("model"), str) else ""
        columns = {**self._columns(entry), "model": model}
        synthetic = model == SYNTHETIC_MODEL
        if model and not synthetic:
            yield from self._model_change(columns["session_id"], model, line, columns)
        for position, block in enumerate(blocks):
            yield from self._reply_block(block, f"{line.locator}/message/content/{position}", synthetic, columns)
        if entry.get("aborted") is True:
            yield Draft("system", "interrupted: the reply was aborted before it finished (aborted)", line.locator,
                        **columns)
        usage = as_dict(message.get("usage"))
        if usage and message.get("stop_reason") is not None:  # the last block's entry of a reply carries its usage
            yield Draft("system", _tokens_text(model, usage, message), f"{line.locator}/message/usage", **columns)

    def _model_change(self, session: str, model: str, line: Line, columns: dict) -> Iterator[Draft]:
        before = self.models.get(session, "")
        if before == model:
            return
        if session not in self.models and len(self.models) >= MODELS_HELD:
            self.models.clear()  # many sidechains in one file: a model may be named again, never lost
        self.models[session] = model
        text = f"model: {before} -> {model}" if before else f"model: {model}"
        yield Draft("system", text, f"{line.locator}/message/model", **columns)

    def _reply_block(self, block, where: str, synthetic: bool, columns: dict) -> Iterator[Draft]:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = str(block.get("text", ""))
            yield Draft("system", f"synthetic: {text}", where, **columns) if synthetic else Draft(
                "assistant", text, where, **columns)
        elif kind == "thinking":
            yield Draft("thinking", str(block.get("thinking", "")), where, **columns)
        elif kind == "redacted_thinking":
            yield Draft("thinking", "[redacted thinking]", where, **columns)
        elif kind == "tool_use":
            yield self._call(block, where, columns)
        else:
            yield Draft("system", f"content block {excerpt(compact(kind), 80)}: {excerpt(compact(block))}", where,
                        **columns)

    def _call(self, block: dict, where: str, columns: dict) -> Draft:
        call_id = block.get("id") if isinstance(block.get("id"), str) else ""
        name = block.get("name") if isinstance(block.get("name"), str) else ""
        if call_id and self.calls.was_called(call_id):  # a streamed call written again with its reply
            return Draft("system", f"repeated: tool call {call_id} ({name}) was given on an earlier line", where,
                         tool_name=name, tool_use_id=call_id, **columns)
        call = Draft("tool_use", compact(block.get("input")), where, tool_name=name, tool_use_id=call_id, **columns)
        self.calls.called(call)
        return call


# -- small readers ----------------------------------------------------------------------------------------------


def _blocks(message) -> list | None:
    """A message's content blocks (text content is one text block); None when it has neither."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else None


def _media(block: dict) -> str:
    return excerpt(compact(as_dict(block.get("source")).get("media_type") or "unknown type"), 80)


def _result_text(content) -> str:
    if isinstance(content, str):
        return content
    pieces = []
    for item in as_list(content):
        if isinstance(item, dict) and item.get("type") == "text":
            pieces.append(str(item.get("text", "")))
        elif is_image_block(item):
            pieces.append(image_placeholder(item))
        else:
            pieces.append(compact(item))
    return "\n".join(pieces) if isinstance(content, list) else compact(content)


def _nth(value, index: int):
    """One value of a field that holds one value per tool result when an entry has several."""
    if isinstance(value, list):
        return value[index] if index < len(value) else None
    return value if index == 0 else None


def _decision(kind, feedback) -> str:
    if not isinstance(kind, str) or not kind or kind in NOT_DECISIONS:
        return ""
    decision = DENIALS.get(kind, f"denied ({excerpt(kind, 80)})")
    if kind == "user-rejected" and isinstance(feedback, str) and feedback:
        return f"denied with feedback: {feedback}"
    return decision


def _system_text(entry: dict) -> str:
    subtype = compact(entry.get("subtype") or "")
    content = compact(entry.get("content") or "")
    if subtype == "compact_boundary":
        metadata = entry.get("compactMetadata")
        detail = f" ({excerpt(compact(metadata), 1000)})" if metadata is not None else ""
        return f"compaction: {content}{detail}"
    level = entry.get("level")
    return f"system {excerpt(subtype, 80)}" + (f" ({compact(level)})" if level else "") + f": {content}"


def _tokens_text(model: str, usage: dict, message: dict) -> str:
    counts = [f"{name}={compact(usage.get(key))}" for key, name in (
        ("input_tokens", "input"), ("output_tokens", "output"), ("cache_read_input_tokens", "cache_read"),
        ("cache_creation_input_tokens", "cache_write")) if usage.get(key) is not None]
    return (f"tokens generated: model={model} {' '.join(counts)} (message {compact(message.get('id') or '')}, "
            f"stop {compact(message.get('stop_reason'))})")
