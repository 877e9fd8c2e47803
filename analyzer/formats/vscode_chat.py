"""VS Code chat sessions (Copilot Chat) normalised, and the session index.

Sessions are persisted by VS Code core (``contrib/chat``), in three generations
(research/formats-vscode-family.md 2.1):

- A: ItemTable key ``interactive.sessions``, one JSON array of session objects
  (``sessions_from_array``);
- B: ``chatSessions/<id>.json`` (and ``emptyWindowChatSessions/``), one session
  object (``session_from_document``);
- C: ``chatSessions/<id>.jsonl``, an ObjectMutationLog (formats/mutation_log.py)
  replayed into the same object (``session_from_log``); when ``<id>.jsonl`` and
  ``<id>.json`` are both present upstream reads the ``.jsonl`` only: the
  ``.json`` is an older snapshot of the same session (``choose_session_files``).

The session object has versions 1-3 (2.3): v1 has no ``version`` and no
``lastMessageDate``, v2 a ``computedTitle``, v3 a ``customTitle``; gen C drops
``requesterUsername`` and ``lastMessageDate``. Requests (2.4) carry the prompt
as ``message.text`` (legacy: a plain string), ``timestamp`` (ms), ``modelId``
and the response parts (2.5): markdown parts have no ``kind`` (legacy: plain
strings, or one string for the whole response), ``thinking``, and
``toolInvocationSerialized`` with ``isConfirmed`` a boolean (1.99-1.103) or
``{type: n}`` (>= 1.104: 0 Denied, 1 ConfirmationNotNeeded, 2 Setting,
3 LmServicePerTool, 4 UserAction, 5 Skipped). Copilot's ``result.metadata``
(2.6) has ``toolCallRounds`` (one per model call, ids suffixed ``__vscode-<n>``)
and ``toolCallResults`` keyed by those ids; ``base_call_id`` strips the suffix
to join them to the invocation parts' ``toolCallId`` (a call with no id: by
position, when ``ChatRequest.calls`` can trust it).

Every normalised value carries the locator it came from: ``json:/pointer`` in
a ``.json``, the ``line:N`` that last wrote it in a ``.jsonl``, or the
ItemTable row plus pointer for gen A. Nothing here makes rows; a parser does.

References: voideditor/void@b3166e7e src/vs/workbench/contrib/chat/common/chatModel.ts:L962-1103,
L1618-1677, chatSessionStore.ts:L26-62, L144-174, L339-350, chatService.ts:L72-259;
microsoft/vscode@047238f9 .../chat/common/model/chatSessionStore.ts (readSessionFromLocation),
@03d43368 .../model/chatSessionOperationLog.ts, @c3c6e234 .../chatService/chatService.ts (ToolConfirmKind);
microsoft/vscode-copilot-chat@31acd00a src/extension/prompt/common/conversation.ts:L348-404,
src/extension/prompt/common/intents.ts:L21-49, src/extension/intents/node/toolCallingLoop.ts:L1361.
A workspaceStorage folder's project: formats/vscode_workspace.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from aitrail.analyzer.formats.decode import decode_json
from aitrail.analyzer.formats.mutation_log import Replay
from aitrail.analyzer.rows import ns_from_ms

Locate = Callable[..., str]  # path parts -> locator
_SUFFIX = re.compile(r"__vscode-\d+$")
# parts that only decorate the text around them (a link, a code block's file, an edit checkpoint):
# they neither separate markdown blocks nor are rows of their own
IGNORED_PARTS = frozenset({"inlineReference", "codeblockUri", "undoStop", "prepareToolInvocation",
                           "progressMessage", "progressTaskSerialized", "mcpServersStarting",
                           "clearToPreviousToolInvocation", "markdownVuln", "treeData"})
CONFIRM_KINDS = {0: "denied", 1: "not needed", 2: "setting", 3: "tool scope", 4: "user", 5: "skipped"}


def json_pointer(*parts: object) -> str:
    """``json:/a/0/b~1c`` (RFC 6901)."""
    return "json:/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _document_locator(*parts: object) -> str:
    return json_pointer(*parts) if parts else "file"


def base_call_id(call_id: str) -> str:
    """The model's tool-call id without Copilot's ``__vscode-<n>`` suffix (the id VS Code's parts carry)."""
    return _SUFFIX.sub("", call_id)


def same_name(call_name: str, tool_id: str) -> bool:
    """Whether a round's call and an invocation part name the same tool: equal, or one names none."""
    return not call_name or not tool_id or call_name == tool_id


def _text(value: object) -> str:
    """A string, or a MarkdownString's ``value``; anything else is empty."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return value["value"]
    return ""


def _list(value: object) -> list:
    """``value`` if it is an array, else an empty one: a field of the wrong type is skipped, not iterated."""
    return value if isinstance(value, list) else []


def _joined(value: object) -> str:
    """A string, a list of strings (thinking), or a MarkdownString, as one text."""
    if isinstance(value, list):
        return "".join(item for item in value if isinstance(item, str))
    return _text(value)


def _compact(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Confirmation:
    """How a tool call was confirmed: ``kind`` approved/denied (boolean era) or a ToolConfirmKind name."""

    kind: str
    detail: str = ""  # the setting id (kind "setting") or scope (kind "tool scope")
    locator: str = ""


@dataclass
class ToolInvocation:
    """A ``toolInvocationSerialized`` response part."""

    tool_call_id: str
    tool_id: str
    message: str
    input: str
    output: str
    is_error: bool
    is_complete: bool
    confirmation: Confirmation | None
    locator: str


@dataclass
class ToolCall:
    """One call the model made, from ``result.metadata.toolCallRounds[].toolCalls[]``."""

    id: str
    name: str
    arguments: str
    round_index: int
    locator: str

    @property
    def base_id(self) -> str:
        """The id without ``__vscode-<n>``."""
        return base_call_id(self.id)


@dataclass
class ToolRound:
    """One model call: the text it produced, its calls, its thinking, its start time."""

    id: str
    response: str
    thinking: str
    timestamp_ns: int | None
    calls: list[ToolCall]
    locator: str


@dataclass
class ResponsePart:
    """A response part in display order: kind ``markdown``, ``thinking``, ``tool`` or the part's own kind."""

    kind: str
    text: str
    locator: str


@dataclass
class ChatRequest:
    """One user turn and its response."""

    index: int
    request_id: str
    text: str
    timestamp_ns: int | None
    model_id: str
    resolved_model: str
    agent_id: str
    parts: list[ResponsePart]
    invocations: list[ToolInvocation]
    rounds: list[ToolRound]
    tool_results: dict[str, tuple[str, str]]  # call id as the model gave it -> (result text, locator)
    state: int | None  # modelState.value (gen C) or 2 for isCanceled
    completed_ns: int | None
    locator: str
    text_locator: str
    model_locator: str = ""
    elapsed_ms: int | None = None  # result.timings.totalElapsed: the response's duration

    @property
    def finished_ns(self) -> int | None:
        """When the response ended: ``modelState.completedAt``, else the request's time plus ``totalElapsed``."""
        if self.completed_ns is not None:
            return self.completed_ns
        if self.timestamp_ns is not None and self.elapsed_ms is not None:
            return self.timestamp_ns + self.elapsed_ms * 1_000_000
        return None

    @property
    def markdown(self) -> str:
        """The assistant text of the whole response, one text for all its markdown parts.

        Adjacent markdown parts are one block streamed in pieces and are joined as
        they are; blocks that other parts (a tool call, thinking) separate are
        joined by a blank line, as the chat view shows them apart.
        """
        blocks: list[list[str]] = []
        joined = False  # the last part that counts was markdown: this one continues its block
        for part in self.parts:
            if part.kind == "markdown":
                if joined:
                    blocks[-1].append(part.text)
                else:
                    blocks.append([part.text])
                joined = True
            elif part.kind not in IGNORED_PARTS:
                joined = False
        texts = ("".join(block).strip() for block in blocks)
        return "\n\n".join(text for text in texts if text)

    def result_for(self, call: ToolCall) -> tuple[str, str] | None:
        """The (text, locator) of ``toolCallResults`` for ``call``, by its full or its base id."""
        return self.tool_results.get(call.id) or self.tool_results.get(call.base_id)

    def calls(self, same_tool: Callable[[str, str], bool] = same_name,
              ) -> list[tuple[ToolCall, ToolInvocation | None, tuple[str, str] | None]]:
        """Every model call of the request with its response part and its result, in round order.

        Parts are joined by id (the call's id without ``__vscode-<n>``); a call no id joins
        (no id in its round entry, or parts with ids of their own) takes the n-th part as the
        n-th call when ``_by_position`` trusts the order, and a call with no id its result by
        that part's ``toolCallId``. ``same_tool(call name, part toolId)`` says whether two
        names are one tool (the parser knows its tools' two names).
        """
        calls = [call for round_ in self.rounds for call in round_.calls]
        by_id = {invocation.tool_call_id: invocation for invocation in self.invocations if invocation.tool_call_id}
        joined = [by_id.get(call.base_id) or by_id.get(call.id) for call in calls]
        placed = self._by_position(calls, joined, same_tool)
        by_base: dict[str, tuple[str, str]] = {}  # results by the id without __vscode-<n>
        for key, value in self.tool_results.items():
            by_base.setdefault(base_call_id(key), value)
        paired = []
        for call, by_key, by_place in zip(calls, joined, placed, strict=True):
            part = by_key or by_place
            part_id = part.tool_call_id if part is not None else ""
            result = self.result_for(call) if call.id else by_base.get(part_id) if part_id else None
            paired.append((call, part, result))
        return paired

    def _by_position(self, calls: list[ToolCall], joined: list[ToolInvocation | None],
                     same_tool: Callable[[str, str], bool]) -> list[ToolInvocation | None]:
        """The n-th part for each call no id joined, or None for every call when the order is not trusted.

        Trusted when there are as many parts as calls, each id-joined pair sits at one
        position, and every other pair's names agree where both name one: a missing part
        or an extra call shifts every pair after it, so one disagreement pairs none.
        """
        unpaired: list[ToolInvocation | None] = [None] * len(calls)
        if len(calls) != len(self.invocations) or all(part is not None for part in joined):
            return unpaired
        taken = {id(part) for part in joined if part is not None}
        for call, by_key, part in zip(calls, joined, self.invocations, strict=True):
            if by_key is not None and by_key is not part:
                return unpaired
            if by_key is None and (id(part) in taken or not same_tool(call.name, part.tool_id)):
                return unpaired
        return [part if by_key is None else None for by_key, part in zip(joined, self.invocations, strict=True)]


@dataclass
class ChatSession:
    """A normalised chat session of any generation."""

    session_id: str
    version: int
    generation: str  # "A", "B" or "C"
    title: str
    creation_ns: int | None
    last_message_ns: int | None
    initial_location: str
    requester: str
    requests: list[ChatRequest] = field(default_factory=list)
    problems: list = field(default_factory=list)  # Drafts: replay lines not applied, records not understood
    locator: str = ""


def _confirmation(value: object, locator: str) -> Confirmation | None:
    if isinstance(value, bool):
        return Confirmation("approved" if value else "denied", "", locator)
    if isinstance(value, dict) and isinstance(value.get("type"), int) and not isinstance(value.get("type"), bool):
        detail = value.get("id") if value["type"] == 2 else value.get("scope") if value["type"] == 3 else ""
        return Confirmation(CONFIRM_KINDS.get(value["type"], f"type {value['type']}"), _text(detail), locator)
    return None


def _result_details(details: object) -> tuple[str, str, bool]:
    """(input, output, is_error) of ``resultDetails`` in its three shapes (URIs, input/output, data)."""
    if isinstance(details, list):  # URIs or locations the tool touched
        paths = [_text(item.get("fsPath") or item.get("path") or item.get("uri", {}).get("path"))
                 if isinstance(item, dict) and isinstance(item.get("uri", {}), dict) else "" for item in details]
        return "", "\n".join(path for path in paths if path), False
    if not isinstance(details, dict):
        return "", "", False
    output = details.get("output")
    items = output if isinstance(output, list) else [output] if isinstance(output, dict) else []
    texts = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "embed" and isinstance(item.get("value"), str):
            texts.append(item["value"])
        elif isinstance(item, dict) and item.get("type") == "ref":
            texts.append(_text(item.get("uri", {}).get("path")) if isinstance(item.get("uri"), dict) else "")
        elif isinstance(item, dict) and item.get("type") == "data":
            texts.append(f"[{item.get('mimeType', 'data')}]")  # base64 data is not text
    return _text(details.get("input")), "\n".join(text for text in texts if text), details.get("isError") is True


def _part_text(part: dict) -> str:
    """What a part of another kind says: its content or message, else the file it names."""
    for key in ("content", "message", "title"):
        if _text(part.get(key)):
            return _text(part[key])
    uri = part.get("uri")
    return _text(uri.get("path")) if isinstance(uri, dict) else ""


def _invocation_input(part: dict, details_input: str) -> str:
    data = part.get("toolSpecificData")
    if isinstance(data, dict) and data.get("kind") == "terminal":
        command = data.get("commandLine")
        return _text(command.get("original")) if isinstance(command, dict) else _text(data.get("command"))
    if isinstance(data, dict) and data.get("kind") == "input":
        return _compact(data.get("rawInput"))
    return details_input


def _invocation(part: dict, locate: Locate, path: tuple) -> ToolInvocation:
    details_input, output, is_error = _result_details(part.get("resultDetails"))
    message = _text(part.get("pastTenseMessage")) or _text(part.get("invocationMessage"))
    return ToolInvocation(_text(part.get("toolCallId")), _text(part.get("toolId")), message,
                          _invocation_input(part, details_input), output, is_error, part.get("isComplete") is True,
                          _confirmation(part.get("isConfirmed"), locate(*path, "isConfirmed")), locate(*path))


def _parts(response: object, locate: Locate, path: tuple) -> tuple[list[ResponsePart], list[ToolInvocation]]:
    if isinstance(response, str):  # legacy: one string for the whole response
        return [ResponsePart("markdown", response, locate(*path))], []
    parts, invocations = [], []
    for index, part in enumerate(response if isinstance(response, list) else ()):
        where = path + (index,)
        if isinstance(part, str) or (isinstance(part, dict) and "kind" not in part and "value" in part):
            parts.append(ResponsePart("markdown", _text(part), locate(*where)))
        elif isinstance(part, dict) and part.get("kind") == "thinking":
            parts.append(ResponsePart("thinking", _joined(part.get("value")), locate(*where)))
        elif isinstance(part, dict) and part.get("kind") == "toolInvocationSerialized":
            invocations.append(_invocation(part, locate, where))
            parts.append(ResponsePart("tool", invocations[-1].message, locate(*where)))
        elif isinstance(part, dict):
            parts.append(ResponsePart(_text(part.get("kind")) or "unknown", _part_text(part), locate(*where)))
    return parts, invocations


def _rounds(metadata: dict, locate: Locate, path: tuple) -> list[ToolRound]:
    rounds = []
    for index, round_ in enumerate(_list(metadata.get("toolCallRounds"))):
        if not isinstance(round_, dict):
            continue
        where = path + ("toolCallRounds", index)
        calls = [ToolCall(_text(call.get("id")), _text(call.get("name")), _compact(call.get("arguments", "")), index,
                          locate(*where, "toolCalls", position))
                 for position, call in enumerate(_list(round_.get("toolCalls"))) if isinstance(call, dict)]
        thinking = round_.get("thinking")
        thinking = thinking.get("text") if isinstance(thinking, dict) else thinking
        rounds.append(ToolRound(_text(round_.get("id")), _text(round_.get("response")), _joined(thinking),
                                ns_from_ms(round_.get("timestamp")), calls, locate(*where)))
    return rounds


def _tool_results(metadata: dict, locate: Locate, path: tuple) -> dict[str, tuple[str, str]]:
    results = metadata.get("toolCallResults")
    out = {}
    for call_id, result in (results.items() if isinstance(results, dict) else ()):
        content = result.get("content") if isinstance(result, dict) else None
        texts = [_compact(item.get("value")) if isinstance(item, dict) and "value" in item else _compact(item)
                 for item in (content if isinstance(content, list) else ())]
        out[call_id] = ("\n".join(texts), locate(*path, "toolCallResults", call_id))
    return out


def _state(request: dict) -> tuple[int | None, int | None]:
    model_state = request.get("modelState")
    if isinstance(model_state, dict) and isinstance(model_state.get("value"), int):
        return model_state["value"], ns_from_ms(model_state.get("completedAt"))
    return (2 if request.get("isCanceled") is True else None), None


def _request(request: dict, index: int, locate: Locate) -> ChatRequest:
    path = ("requests", index)
    message = request.get("message")
    text = message if isinstance(message, str) else _text(message.get("text")) if isinstance(message, dict) else ""
    text_path = path + ("message",) if isinstance(message, str) else path + ("message", "text")
    result = request.get("result")
    metadata = result.get("metadata") if isinstance(result, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    meta_path = path + ("result", "metadata")
    parts, invocations = _parts(request.get("response"), locate, path + ("response",))
    agent = request.get("agent")
    state, completed = _state(request)
    timings = result.get("timings") if isinstance(result, dict) else None
    elapsed = timings.get("totalElapsed") if isinstance(timings, dict) else None
    elapsed = elapsed if isinstance(elapsed, int) and not isinstance(elapsed, bool) and 0 <= elapsed < 1e10 else None
    return ChatRequest(index, _text(request.get("requestId")), text, ns_from_ms(request.get("timestamp")),
                       _text(request.get("modelId")), _text(metadata.get("resolvedModel")),
                       _text(agent.get("id")) if isinstance(agent, dict) else "", parts, invocations,
                       _rounds(metadata, locate, meta_path), _tool_results(metadata, locate, meta_path),
                       state, completed, locate(*path), locate(*text_path), locate(*path, "modelId"), elapsed)


def normalise_session(data: dict, generation: str, locate: Locate) -> ChatSession:
    """A session object of any version as a ChatSession; ``locate(*path)`` spells each value's locator."""
    version = data.get("version") if isinstance(data.get("version"), int) else 1
    title = _text(data.get("customTitle")) or _text(data.get("computedTitle"))
    creation = ns_from_ms(data.get("creationDate"))
    requests = [_request(request, index, locate)
                for index, request in enumerate(_list(data.get("requests"))) if isinstance(request, dict)]
    last = ns_from_ms(data.get("lastMessageDate"))
    if last is None:  # v1 and gen C: the newest request, else the creation
        times = [moment for request in requests for moment in (request.completed_ns, request.timestamp_ns) if moment]
        last = max(times, default=creation)
    return ChatSession(_text(data.get("sessionId")), version, generation, title, creation, last,
                       _text(data.get("initialLocation")), _text(data.get("requesterUsername")), requests,
                       locator=locate())


def session_from_document(data: bytes) -> tuple[ChatSession | None, str]:
    """A gen B ``<id>.json``: the session, or None and the reason it is not one (for a ``parser:`` row)."""
    try:
        value = decode_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"session file is not JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"session file is a JSON {type(value).__name__}, not an object"
    return normalise_session(value, "B", _document_locator), ""


def session_from_log(replay: Replay) -> ChatSession | None:
    """A gen C ``<id>.jsonl`` replayed (mutation_log.replay_lines); None when no line gave a session object.

    The replay's problem rows travel in ``problems``; each value cites the line that last wrote it.
    A member that ended early is ``replay.failure``, for the caller to raise after its rows.
    """
    if not isinstance(replay.value, dict):
        return None
    session = normalise_session(replay.value, "C", replay.locator)
    session.problems = list(replay.problems)
    return session


def sessions_from_array(value: object, row_locator: str) -> list[ChatSession]:
    """Gen A: the ``interactive.sessions`` array; locators ``<row_locator>/<i>/…`` (e.g. ``sqlite:ItemTable:7``)."""
    sessions = []
    for index, item in enumerate(value if isinstance(value, list) else ()):
        if isinstance(item, dict):
            def locate(*path: object, _index: int = index) -> str:
                return row_locator + json_pointer(_index, *path)[len("json:"):]
            sessions.append(normalise_session(item, "A", locate))
    return sessions


@dataclass
class IndexEntry:
    """An entry of ``chat.ChatSessionStore.index`` (research 2.2)."""

    session_id: str
    title: str
    last_message_ns: int | None
    is_empty: bool
    pointer: str  # JSON pointer into the index value, e.g. ``/entries/<id>``


def session_index(value: object) -> list[IndexEntry]:
    """The entries of an index value; sessions absent from it still exist (the index is trimmed, not the files)."""
    entries = value.get("entries") if isinstance(value, dict) else None
    out = []
    for key, entry in (entries.items() if isinstance(entries, dict) else ()):
        if isinstance(entry, dict):
            out.append(IndexEntry(_text(entry.get("sessionId")) or key, _text(entry.get("title")),
                                  ns_from_ms(entry.get("lastMessageDate")), entry.get("isEmpty") is True,
                                  json_pointer("entries", key)[len("json:"):]))
    return out


def choose_session_files(paths: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Upstream's reader rule: per session id the ``.jsonl`` if present, else the ``.json``.

    Returns:
        ({session id: path to read}, [paths of ``.json`` snapshots superseded by a ``.jsonl``]).
    """
    by_id: dict[str, dict[str, str]] = {}
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        for suffix in (".jsonl", ".json"):
            if name.endswith(suffix) and len(name) > len(suffix):
                by_id.setdefault(name[:-len(suffix)], {})[suffix] = path
                break
    chosen = {key: files.get(".jsonl") or files[".json"] for key, files in by_id.items()}
    superseded = [files[".json"] for files in by_id.values() if ".jsonl" in files and ".json" in files]
    return chosen, superseded
