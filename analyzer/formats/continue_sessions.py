r"""Continue-style chat sessions: the sessions.json index, session files, dev_data logs.

Used by Continue and by forks that kept its layout (PearAI's pearai.pearai, an
older snapshot). ``sessions/sessions.json`` is an array of ``{sessionId, title,
dateCreated (ms epoch as a string), workspaceDirectory, messageCount?}``; each
``sessions/<id>.json`` holds the conversation with no per-message time, so the
index supplies the only time a session has (a ``reasoning`` block has its own
``startAt``). The generations are told apart by key presence: no tool fields;
``message.toolCalls`` with one ``toolCallState``; ``toolCallStates[]`` with
message ids and reasoning. A call's result is a later ``role: "tool"`` item
(the IDE) or the state's ``output`` (the cn CLI); a rejected call has status
``canceled`` / a ``Tool Call Rejected`` output. Prompts logged as text render
each message as ``<role>\n<content>\n\n``. ``read_session``,
``unlisted_sessions``, ``dev_data_chat_rows``, ``tool_usage_rows`` and
``tokens_generated_rows`` walk each file into rows; a fork passes the names of
its index and session stores.

References: continuedev/continue@d0a3c0b6 core/util/history.ts:111-192,
core/index.d.ts:274-298,335-545, core/llm/index.ts:544-567, core/util/messageContent.ts:34-36,
gui/src/redux/thunks/cancelToolCall.ts:11-47, extensions/cli/src/services/ChatHistoryService.ts:297-320,
packages/config-yaml/src/schemas/data/; continuedev/continue@4916cdda2e core/index.d.ts:394-415;
trypear/pearai-submodule@51eceef core/util/history.ts:7-135, core/llm/index.ts:373-384
(research/formats-vscode-family.md 4.2-4.6).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.calls import no_result_row
from aitrail.analyzer.formats.cline_tasks import number
from aitrail.analyzer.formats.continue_prompts import role_blocks
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import (
    bad_file,
    bad_line,
    bad_record,
    image_placeholder,
    is_image_block,
    json_document,
)
from aitrail.analyzer.formats.vscode_workspace import uri_target
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.context import FileTooLarge, ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso, ns_from_ms

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
REJECTED = "Tool Call Rejected"  # the output item a rejected call gets (gui/src/redux/thunks/cancelToolCall.ts)


@dataclass
class IndexEntry:
    """One sessions.json entry: id, title, creation time, workspace, and where it sits in the index."""

    session_id: str
    title: str
    created_ns: int | None
    workspace: str
    locator: str
    message_count: int | None = None


def read_index(ctx: ParseContext, source: Source) -> tuple[dict[str, IndexEntry], list[Draft]]:
    """Entries by session id, and a parser: row for everything the index loses."""
    try:
        document = decode_json(ctx.read(source))
    except (ValueError, UnicodeDecodeError, FileTooLarge) as exc:  # a huge index must not hide the sessions
        return {}, [bad_file(f"unreadable session index, sessions keep no time: {exc}")]
    if not isinstance(document, list):
        return {}, [bad_file(f"unreadable session index: a JSON {type(document).__name__}, not an array")]
    entries: dict[str, IndexEntry] = {}
    problems: list[Draft] = []
    for position, item in enumerate(document):
        locator = f"json:/{position}"
        session_id = item.get("sessionId", item.get("session_id")) if isinstance(item, dict) else None
        if not isinstance(session_id, str) or not session_id:
            problems.append(bad_record(locator, "index entry without a sessionId", json.dumps(item)[:1000]))
            continue
        created = ns_from_ms(item.get("dateCreated"))
        if item.get("dateCreated") is not None and created is None:
            problems.append(bad_record(locator, f"dateCreated {item.get('dateCreated')!r} is not a time"))
        entries[session_id] = IndexEntry(
            session_id=session_id, title=str(item.get("title") or ""), created_ns=created,
            workspace=project_path(item.get("workspaceDirectory")), locator=locator,
            message_count=_count(item.get("messageCount")),
        )
    return entries, problems


def _count(value) -> int | None:
    """``messageCount`` when it is a whole number (older indexes have none)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def session_index(ctx: ParseContext, index_store: str) -> dict[str, IndexEntry]:
    """The index entries of the same location as the current source (read once per worker)."""
    def load() -> dict[str, IndexEntry]:
        merged: dict[str, IndexEntry] = {}
        for source in ctx.related(index_store):
            merged.update(read_index(ctx, source)[0])
        return merged

    return ctx.cached(("continue-index", index_store, ctx.source.location), load)


def message_text(content) -> str:
    """A ChatMessage content as text: a string, or text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif is_image_block(part):  # {"type":"imageUrl","imageUrl":{"url":"data:..."}}: never the bytes
                parts.append(image_placeholder(part))
            else:
                parts.append(json.dumps(part, sort_keys=True))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, sort_keys=True)


# -- the session walk: session files, the index's lost sessions, dev_data -------------------------------


def project_path(value) -> str:
    """A recorded workspace as a path: a ``file://`` (or remote) URI to its path, a plain path as written."""
    text = str(value or "")
    if _URI.match(text):
        try:
            return uri_target(text)[0] or text
        except ValueError:
            return text
    return text


def read_session(ctx: ParseContext, index_store: str = "session_index") -> Iterator[Draft]:
    """A session file: one row per history and perplexityHistory message, its tool calls and results.

    Every row takes the session's ``dateCreated`` from the index in ``index_store``
    (``index`` time) and its workspace; a ``model:`` row is written where a message's
    promptLogs name a model or change it. Tool calls (``message.toolCalls``, else the
    item's ``toolCallStates`` / ``toolCallState``) are ``tool_use`` rows joined by id to
    the later ``role: "tool"`` items; a call the user rejected gets ``permission decision:
    denied``; a call no tool item answers takes its state's ``output`` (where cn writes
    results); a call never answered gets the ``parser: no result recorded`` row.
    """
    document, problem = json_document(ctx.data, "session file")
    if problem is not None:
        yield problem
        return
    session_id = str(document.get("sessionId") or ctx.source.name.removesuffix(".json"))
    entry = session_index(ctx, index_store).get(session_id)
    base = {
        "session_id": session_id,
        "project_path": project_path(document.get("workspaceDirectory") or (entry.workspace if entry else "")),
        "timestamp_ns": entry.created_ns if entry else None,
        "timestamp_source": "index",
    }
    if "history" not in document and "perplexityHistory" not in document:
        yield bad_record("json:/", "session without history or perplexityHistory", json.dumps(document)[:2000])
    walk = _Walk(base, _answered_by_items(document))
    for list_name in ("history", "perplexityHistory"):
        items = document.get(list_name)
        if items is None:
            continue
        if not isinstance(items, list):
            yield bad_record(f"json:/{list_name}", f"{list_name} is a JSON {type(items).__name__}, not an array")
            continue
        for position, item in enumerate(items):
            yield from walk.item(item, f"json:/{list_name}/{position}")
    yield from walk.finish()


def _answered_by_items(document: dict) -> frozenset[str]:
    """The call ids a ``role: "tool"`` item answers (the IDE's results); the others keep theirs in the state.

    One id per tool item: the session document (within MAX_DOCUMENT_BYTES and MAX_DECODE_COST) bounds them.
    """
    found = set()
    for list_name in ("history", "perplexityHistory"):
        items = document.get(list_name)
        for item in items if isinstance(items, list) else ():
            message = item.get("message") if isinstance(item, dict) else None
            if isinstance(message, dict) and message.get("role") == "tool":
                found.add(str(message.get("toolCallId") or ""))
    return frozenset(found)


class _Walk:
    """The state one session file's walk carries from item to item: the model in use and the open calls.

    Args:
        base: the columns every row of the session takes.
        answered_by_items: call ids a later tool item answers; any other call whose state
            holds an ``output`` (cn writes its results there) takes that as its result.
    """

    def __init__(self, base: dict, answered_by_items: frozenset[str] = frozenset()) -> None:
        self.base = base
        self.model: str | None = None
        self.ledger = BoundedLedger()  # the session's calls, joined by id anywhere later (MAX_CALL_IDS)
        self.answered_by_items = answered_by_items

    def item(self, item, locator: str) -> Iterator[Draft]:
        """The rows of one history item, in the order a reader meets them."""
        if not isinstance(item, dict) or not isinstance(item.get("message"), dict):
            yield bad_record(locator, "history item without a message object", json.dumps(item)[:2000])
            return
        message = item["message"]
        item_model = _prompt_log_model(item)
        if item_model and item_model != self.model:
            text = f"model: {item_model}" if self.model is None else f"model: {self.model} -> {item_model}"
            yield Draft("system", text, f"{locator}/promptLogs/0/{_model_key(item)}", model=item_model, **self.base)
            self.model = item_model
        columns = dict(self.base, model=item_model or "")
        yield from _reasoning(item.get("reasoning"), f"{locator}/reasoning/text", columns)
        role = message.get("role")
        text = message_text(message.get("content"))
        if role == "tool":
            yield from self._result(message, text, f"{locator}/message/content", columns)
            return
        calls = list(_tool_calls(item, message, locator))
        if not (calls and role == "assistant" and not text.strip()):  # a bare call: its tool_use rows say it
            turn = role if role in ("user", "assistant", "system", "thinking") else "system"
            if turn == "system" and role != "system":
                text = f"role {role!r}: {text}"
            yield Draft(turn, text, f"{locator}/message/content", **columns)
        for call_locator, call_id, name, arguments in calls:
            call = Draft("tool_use", arguments, call_locator, tool_name=name, tool_use_id=call_id, **columns)
            self.ledger.called(call)
            yield call
        yield from self._states(item, locator, columns)

    def _result(self, message: dict, text: str, locator: str, columns: dict) -> Iterator[Draft]:
        call_id = str(message.get("toolCallId") or "")
        name = self.ledger.called_name(call_id)
        if call_id and not self.ledger.was_called(call_id):
            yield Draft("system", f"parser: tool result for {call_id} with no tool call before it", locator,
                        tool_use_id=call_id, **columns)
        self.ledger.take(call_id)  # answered ids are not recorded: nothing here asks whether an id was answered
        yield Draft("tool_result", text, locator, tool_name=name, tool_use_id=call_id, **columns)

    def _states(self, item: dict, locator: str, columns: dict) -> Iterator[Draft]:
        """A rejected call's ``permission decision: denied``; the state's output for a call no tool item answers."""
        for state_locator, state in _call_states(item, locator):
            call_id = str(state.get("toolCallId") or "")
            name = self.ledger.called_name(call_id)
            output = state.get("output")
            if state.get("status") == "canceled" or _rejected(output):
                yield Draft("system", "permission decision: denied", f"{state_locator}/status",
                            tool_name=name, tool_use_id=call_id, **columns)
            if isinstance(output, list) and call_id and call_id not in self.answered_by_items:
                self.ledger.take(call_id)
                yield Draft("tool_result", render_output(output), f"{state_locator}/output", tool_name=name,
                            tool_use_id=call_id, **dict(columns, model=""))

    def finish(self) -> Iterator[Draft]:
        """The ``parser: no result recorded`` row of each call never answered; the ledger's limit row, if reached."""
        yield from self.ledger.orphans()
        yield from self.ledger.over_limit_rows()


def _reasoning(reasoning, locator: str, columns: dict) -> Iterator[Draft]:
    """The item's reasoning as a ``thinking`` row, at its own ``startAt`` when that is a time."""
    if not isinstance(reasoning, dict) or not isinstance(reasoning.get("text"), str) or not reasoning["text"]:
        return
    started = ns_from_ms(reasoning.get("startAt"))
    timing = {"timestamp_ns": started, "timestamp_source": "record"} if started is not None else {}
    yield Draft("thinking", reasoning["text"], locator, **{**columns, **timing})


def _tool_calls(item: dict, message: dict, locator: str) -> Iterator[tuple[str, str, str, str]]:
    """(locator, id, tool name, arguments) of each call: the message's toolCalls, then states not among them."""
    seen: set[str] = set()
    calls = message.get("toolCalls")
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        if isinstance(call, dict):
            found = _call_fields(call)
            seen.add(found[0])
            yield (f"{locator}/message/toolCalls/{position}", *found)
    for state_locator, state in _call_states(item, locator):
        call = state.get("toolCall")
        found = _call_fields(call if isinstance(call, dict) else {}, str(state.get("toolCallId") or ""))
        if found[0] not in seen:
            seen.add(found[0])
            yield (f"{state_locator}/toolCall", *found)


def _call_fields(call: dict, fallback_id: str = "") -> tuple[str, str, str]:
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else json.dumps(arguments, sort_keys=True)
    return str(call.get("id") or fallback_id), str(function.get("name") or ""), arguments


def _call_states(item: dict, locator: str) -> Iterator[tuple[str, dict]]:
    """The item's tool call states: the ``toolCallStates`` array, or the older single ``toolCallState``."""
    states = item.get("toolCallStates")
    if isinstance(states, list):
        for position, state in enumerate(states):
            if isinstance(state, dict):
                yield f"{locator}/toolCallStates/{position}", state
    elif isinstance(item.get("toolCallState"), dict):
        yield f"{locator}/toolCallState", item["toolCallState"]


def render_output(items: list) -> str:
    """Context items as a tool message renders them: their contents joined by blank lines."""
    return "\n\n".join(str(entry.get("content") or "") if isinstance(entry, dict) else json.dumps(entry)
                        for entry in items)


def _rejected(output) -> bool:
    return isinstance(output, list) and any(isinstance(entry, dict) and entry.get("name") == REJECTED
                                            for entry in output)


def _model_key(item: dict) -> str:
    first = item["promptLogs"][0]
    options = first.get("completionOptions")
    if isinstance(options, dict) and isinstance(options.get("model"), str) and options["model"]:
        return "completionOptions/model"
    return "modelTitle"


def _prompt_log_model(item: dict) -> str | None:
    """The model of an item's first prompt log: ``completionOptions.model`` (older logs), else ``modelTitle``."""
    logs = item.get("promptLogs")
    if isinstance(logs, list) and logs and isinstance(logs[0], dict):
        options = logs[0].get("completionOptions")
        if isinstance(options, dict) and isinstance(options.get("model"), str) and options["model"]:
            return options["model"]
        if isinstance(logs[0].get("modelTitle"), str) and logs[0]["modelTitle"]:
            return logs[0]["modelTitle"]
    return None


def unlisted_sessions(ctx: ParseContext, sessions_store: str = "chat_sessions") -> Iterator[Draft]:
    """Bad index entries, and a ``session:`` row per entry whose file (in ``sessions_store``) is not in the bundle."""
    entries, problems = read_index(ctx, ctx.source)
    yield from problems
    for entry in entries.values():
        if ctx.sibling(f"{entry.session_id}.json", sessions_store) is None:
            count = f" with messageCount {entry.message_count}" if entry.message_count is not None else ""
            yield Draft("system", f"session: {entry.title} (listed in sessions.json{count}; its session file is "
                                  "not in the bundle)", entry.locator, timestamp_ns=entry.created_ns,
                        timestamp_source="index", session_id=entry.session_id, project_path=entry.workspace)


def dev_data_chat_rows(ctx: ParseContext, index_store: str = "session_index",
                       typed_last: bool = False) -> Iterator[Draft]:
    """A dev_data chat log (chat.jsonl, chatInteraction, chatFeedback): prompt, completion, feedback per line.

    The user row is the prompt's last ``<user>`` block; with ``typed_last`` only when
    that block ends the prompt (a call made after a tool result repeats the earlier
    prompt, which the user did not type again). A prompt not written as role blocks
    is a ``model request:`` row. The time is the line's ISO ``timestamp`` (0.2.0
    schema), else none; the model ``completionOptions.model``, else ``modelTitle``.
    """
    index = session_index(ctx, index_store)
    name = _dev_data_name(ctx)
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        prompt = str(record.get("prompt") or "")
        if not prompt and "completion" not in record and "feedback" not in record:
            yield bad_line(line.number, "no prompt, completion or feedback", line.raw)
            continue
        session_id = str(record.get("sessionId") or "")
        entry = index.get(session_id)
        base = {"session_id": session_id, "project_path": entry.workspace if entry else "",
                "model": _record_model(record), **_record_time(record)}
        prompted = list(_prompt_rows(prompt, line.locator, base, typed_last))
        yield from prompted
        completion = str(record.get("completion") or "")
        if "completion" in record and (completion.strip() or not prompted):  # "" after a prompt: a bare tool call
            yield Draft("assistant", completion, line.locator, **base)
        if "feedback" in record:
            yield Draft("system", f"user feedback: {json.dumps(record['feedback'])} (from {name})",
                        line.locator, **base)


def _dev_data_name(ctx: ParseContext) -> str:
    path = ctx.source.path
    return path[path.rindex("dev_data/"):] if "dev_data/" in path else ctx.source.name


def _record_model(record: dict) -> str:
    options = record.get("completionOptions")
    if isinstance(options, dict) and options.get("model"):
        return str(options["model"])
    return str(record.get("modelTitle") or record.get("modelName") or record.get("model") or "")


def _record_time(record: dict) -> dict:
    """A dev_data line's own ``timestamp`` (ISO in the 0.2.0 schema; ``createdAt`` in early drafts of it).

    ms numbers are read as ms; older layouts record no time.
    """
    value = record.get("timestamp", record.get("createdAt"))
    moment = ns_from_iso(value) if isinstance(value, str) else ns_from_ms(value)
    return {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none"}


def _prompt_rows(prompt: str, locator: str, base: dict, typed_last: bool) -> Iterator[Draft]:
    blocks = role_blocks(prompt) if prompt else None
    if typed_last and blocks:
        if blocks.last_role == "user":
            yield Draft("user", blocks.last_text.strip(), locator, **base)
    elif blocks and blocks.last_user is not None:
        yield Draft("user", blocks.last_user.strip(), locator, **base)
    elif prompt:
        yield Draft("system", f"model request: {prompt}", locator, **base)


def tool_usage_rows(ctx: ParseContext) -> Iterator[Draft]:
    """dev_data toolUsage: per line the call, ``permission decision: denied`` when not accepted, and its output.

    A call logged without output (a rejection is logged before any exists) gets the
    ``parser: no result recorded`` row.

    The rows read as the session file's would (arguments as the call's text, the output
    items' contents joined by blank lines), so a call still in its session is dropped.
    """
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        call_id, name = record.get("toolCallId"), record.get("functionName")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
            yield bad_line(line.number, "tool usage without toolCallId and functionName", line.raw)
            continue
        base = {"tool_name": name, "tool_use_id": call_id, **_record_time(record)}
        arguments = record.get("toolCallArgs", record.get("functionArgs"))
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments, sort_keys=True)
        call = Draft("tool_use", arguments, line.locator, **base)
        yield call
        if record.get("accepted") is False:
            yield Draft("system", "permission decision: denied", line.locator, **base)
        output = record.get("output")
        if isinstance(output, list) and output:
            yield Draft("tool_result", render_output(output), line.locator, **base)
        else:  # a rejected call is logged before any output exists
            yield no_result_row(call, ("timestamp_ns", "timestamp_source"))


def tokens_generated_rows(ctx: ParseContext) -> Iterator[Draft]:
    """dev_data tokens_generated / tokensGenerated: one ``tokens generated:`` row per line.

    Timed by the line's ISO ``timestamp`` where the schema has one (0.2.0), else none.
    """
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        text = (f"tokens generated: model={record.get('model', '')} provider={record.get('provider', '')} "
                f"promptTokens={number(record.get('promptTokens'))} "
                f"generatedTokens={number(record.get('generatedTokens'))}")
        yield Draft("system", text, line.locator, model=str(record.get("model") or ""), **_record_time(record))
