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
A workspaceStorage folder's project: formats/vscode_workspace.py. The normalised types and the
joins between them: formats/vscode_chat_model.py.

What a session is read into has a budget, MAX_SESSION_ITEMS objects (requests,
response parts, tool rounds, calls, results) per session or per
``interactive.sessions`` array: the object they come from is within decode's
or the mutation log's limit, but a part costs 160 to 660 bytes here (measured),
up to 2.5 times what those limits estimate for its text. Past it the items are
counted, not read, and one ``parser:`` row in the session's problems says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from aitrail.analyzer.formats.mutation_log import Replay
from aitrail.analyzer.formats.vscode_chat_model import (  # the types, re-exported: parsers import them from here
    IGNORED_PARTS,
    ChatRequest,
    ChatSession,
    Confirmation,
    ResponsePart,
    ToolCall,
    ToolInvocation,
    ToolRound,
    base_call_id,
    same_name,
)
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

__all__ = ["IGNORED_PARTS", "ChatRequest", "ChatSession", "Confirmation", "IndexEntry", "ResponsePart", "ToolCall",
           "ToolInvocation", "ToolRound", "base_call_id", "choose_session_files", "json_pointer",
           "normalise_session", "same_name", "session_from_document", "session_from_log", "session_index",
           "sessions_from_array"]

Locate = Callable[..., str]  # path parts -> locator
# Objects a session is read into (each request, response part, tool round, call and result is one):
# 300,000 costs 50 to 200 MB. A long real session has a thousand requests of tens of parts each.
MAX_SESSION_ITEMS = 300_000
CONFIRM_KINDS = {0: "denied", 1: "not needed", 2: "setting", 3: "tool scope", 4: "user", 5: "skipped"}


def json_pointer(*parts: object) -> str:
    """``json:/a/0/b~1c`` (RFC 6901)."""
    return "json:/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _document_locator(*parts: object) -> str:
    return json_pointer(*parts) if parts else "file"


class ReadBudget:
    """MAX_SESSION_ITEMS for one session (or one array of them): items taken, then items counted."""

    def __init__(self) -> None:
        self.taken = 0
        self.over_at = ""  # the locator of the first item not read
        self.counted = 0  # items from there on, counted, not read

    def take(self, locate: Locate, *path: object) -> bool:
        """Whether the item at ``path`` may be read; past the budget it is counted instead."""
        if self.taken < MAX_SESSION_ITEMS:
            self.taken += 1
            return True
        self.over_at = self.over_at or locate(*path)
        self.counted += 1
        return False

    def row(self) -> Draft:
        """The ``parser:`` row of a budget passed (call only when ``over_at`` is set)."""
        return over_limit("session", f"{MAX_SESSION_ITEMS} requests, response parts, tool rounds, calls and results "
                          "read", f"{self.counted} more from here on were counted, not read", self.over_at)


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


def _parts(response: object, locate: Locate, path: tuple,
           budget: ReadBudget) -> tuple[list[ResponsePart], list[ToolInvocation]]:
    if isinstance(response, str):  # legacy: one string for the whole response
        return ([ResponsePart("markdown", response, locate(*path))] if budget.take(locate, *path) else []), []
    parts, invocations = [], []
    for index, part in enumerate(response if isinstance(response, list) else ()):
        where = path + (index,)
        if not budget.take(locate, *where):
            continue
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


def _rounds(metadata: dict, locate: Locate, path: tuple, budget: ReadBudget) -> list[ToolRound]:
    rounds = []
    for index, round_ in enumerate(_list(metadata.get("toolCallRounds"))):
        where = path + ("toolCallRounds", index)
        if not isinstance(round_, dict) or not budget.take(locate, *where):
            continue
        calls = [ToolCall(_text(call.get("id")), _text(call.get("name")), _compact(call.get("arguments", "")), index,
                          locate(*where, "toolCalls", position))
                 for position, call in enumerate(_list(round_.get("toolCalls")))
                 if isinstance(call, dict) and budget.take(locate, *where, "toolCalls", position)]
        thinking = round_.get("thinking")
        thinking = thinking.get("text") if isinstance(thinking, dict) else thinking
        rounds.append(ToolRound(_text(round_.get("id")), _text(round_.get("response")), _joined(thinking),
                                ns_from_ms(round_.get("timestamp")), calls, locate(*where)))
    return rounds


def _tool_results(metadata: dict, locate: Locate, path: tuple, budget: ReadBudget) -> dict[str, tuple[str, str]]:
    results = metadata.get("toolCallResults")
    out = {}
    for call_id, result in (results.items() if isinstance(results, dict) else ()):
        if not budget.take(locate, *path, "toolCallResults", call_id):
            continue
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


def _request(request: dict, index: int, locate: Locate, budget: ReadBudget) -> ChatRequest:
    path = ("requests", index)
    message = request.get("message")
    text = message if isinstance(message, str) else _text(message.get("text")) if isinstance(message, dict) else ""
    text_path = path + ("message",) if isinstance(message, str) else path + ("message", "text")
    result = request.get("result")
    metadata = result.get("metadata") if isinstance(result, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    meta_path = path + ("result", "metadata")
    parts, invocations = _parts(request.get("response"), locate, path + ("response",), budget)
    agent = request.get("agent")
    state, completed = _state(request)
    timings = result.get("timings") if isinstance(result, dict) else None
    elapsed = timings.get("totalElapsed") if isinstance(timings, dict) else None
    elapsed = elapsed if isinstance(elapsed, int) and not isinstance(elapsed, bool) and 0 <= elapsed < 1e10 else None
    return ChatRequest(index, _text(request.get("requestId")), text, ns_from_ms(request.get("timestamp")),
                       _text(request.get("modelId")), _text(metadata.get("resolvedModel")),
                       _text(agent.get("id")) if isinstance(agent, dict) else "", parts, invocations,
                       _rounds(metadata, locate, meta_path, budget), _tool_results(metadata, locate, meta_path, budget),
                       state, completed, locate(*path), locate(*text_path), locate(*path, "modelId"), elapsed)


def normalise_session(data: dict, generation: str, locate: Locate, budget: ReadBudget | None = None) -> ChatSession:
    """A session object of any version as a ChatSession; ``locate(*path)`` spells each value's locator.

    Within ``budget`` (default: one of its own, whose ``parser:`` row, if passed, ends the
    session's problems; a caller that shares one across sessions adds that row itself).
    """
    own = budget is None
    budget = ReadBudget() if budget is None else budget
    version = data.get("version") if isinstance(data.get("version"), int) else 1
    title = _text(data.get("customTitle")) or _text(data.get("computedTitle"))
    creation = ns_from_ms(data.get("creationDate"))
    requests = [_request(request, index, locate, budget)
                for index, request in enumerate(_list(data.get("requests")))
                if isinstance(request, dict) and budget.take(locate, "requests", index)]
    last = ns_from_ms(data.get("lastMessageDate"))
    if last is None:  # v1 and gen C: the newest request, else the creation
        times = [moment for request in requests for moment in (request.completed_ns, request.timestamp_ns) if moment]
        last = max(times, default=creation)
    return ChatSession(_text(data.get("sessionId")), version, generation, title, creation, last,
                       _text(data.get("initialLocation")), _text(data.get("requesterUsername")), requests,
                       problems=[budget.row()] if own and budget.over_at else [], locator=locate())


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
    session.problems = [*replay.problems, *session.problems]
    return session


def sessions_from_array(value: object, row_locator: str) -> list[ChatSession]:
    """Gen A: the ``interactive.sessions`` array; locators ``<row_locator>/<i>/…`` (e.g. ``sqlite:ItemTable:7``).

    One ReadBudget for the whole array; its ``parser:`` row, if passed, goes to the session where it was.
    """
    sessions: list[ChatSession] = []
    budget, reached_in = ReadBudget(), None
    for index, item in enumerate(value if isinstance(value, list) else ()):
        if isinstance(item, dict):
            def locate(*path: object, _index: int = index) -> str:
                return row_locator + json_pointer(_index, *path)[len("json:"):]
            sessions.append(normalise_session(item, "A", locate, budget))
            reached_in = reached_in or (sessions[-1] if budget.over_at else None)
    if reached_in is not None:
        reached_in.problems.append(budget.row())
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
