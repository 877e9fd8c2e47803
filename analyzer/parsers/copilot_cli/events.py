"""session-state/<id>/events.jsonl: the Copilot CLI's event log, one typed event per line.

Every line is ``{id, timestamp, parentId, agentId?, type, data}`` (npm
@github/copilot 1.0.56 package/schemas/session-events.schema.json). The
conversation: ``user.message`` (a typed prompt, or an injected one when its
``source`` is not the user's), ``assistant.message`` (text, ``toolRequests``,
model), ``assistant.reasoning``, ``tool.execution_start`` /
``tool.execution_complete`` joined to the request by ``toolCallId``. The rest
(session, permission, sub-agent, hook and compaction events) are in
events_session.py. Ephemeral events are never written by the CLI; one found on
disk, or a type this parser does not know, is an ``event <type>:`` row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.jsonl import Line
from aitrail.analyzer.formats.text import excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso, over_limit

from .values import as_text, compact, label, mapping, session_of

MAX_OPEN_REQUESTS = 65_536  # permission requests held until their decision (each a short summary)


class Session:
    """What one event log carries from line to line: its columns, model, open calls and permission requests."""

    def __init__(self, ctx: ParseContext):
        self.columns = {"session_id": session_of(ctx), "project_path": "", "git_branch": ""}
        self.model = ""
        self.calls = BoundedLedger()
        self.user_requested: set[str] = set()  # open calls the user ran (tool.user_requested)
        self.requests: dict[str, tuple[str, str]] = {}  # permission requestId -> (toolCallId, summary)
        self.requests_over: Draft | None = None
        self.requests_dropped = 0
        self.last_reasoning = ""

    def fields(self, event: dict, model: str = "") -> dict:
        """Session, project, branch and the event's own time (``none`` when it has no valid one)."""
        moment = ns_from_iso(event.get("timestamp"))
        return {**self.columns, "timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none",
                "model": model}

    def hold_request(self, request_id: str, value: tuple[str, str], draft: Draft) -> None:
        """Keep a permission request until its decision, within MAX_OPEN_REQUESTS."""
        if len(self.requests) >= MAX_OPEN_REQUESTS and request_id not in self.requests:
            self.requests_over = self.requests_over or draft
            self.requests_dropped += 1
            return
        self.requests[request_id] = value

    def limit_rows(self) -> Iterator[Draft]:
        """The ``parser:`` rows of the budgets this file reached."""
        yield from self.calls.orphans()
        yield from self.calls.over_limit_rows()
        if self.requests_over is not None:
            yield over_limit("permission requests", f"{MAX_OPEN_REQUESTS} held until their decision",
                             f"{self.requests_dropped} later requests were not held: their decision rows do not "
                             "repeat what was asked", self.requests_over.locator, **_where(self.requests_over))


def _where(draft: Draft) -> dict:
    return {"session_id": draft.session_id, "project_path": draft.project_path}


Handler = Callable[[Session, dict, dict, str], Iterator[Draft]]


def event_rows(session: Session, line: Line, handlers: dict[str, Handler]) -> Iterator[Draft]:
    """The rows of one event line: its handler's, or one ``event <type>:`` row for a type not read."""
    event = line.value
    kind = label(event.get("type"))
    data = mapping(event.get("data"))
    handler = handlers.get(kind)
    if handler is None or event.get("ephemeral") is True:
        shown = {key: value for key, value in event.items() if key not in ("id", "timestamp", "parentId", "type")}
        yield Draft("system", f"event {kind or '(no type)'}: {excerpt(compact(shown), 2000)}", line.locator,
                    **session.fields(event))
        return
    yield from handler(session, event, data, line.locator)


# -- prompts and replies --------------------------------------------------------------------------

TYPED_SOURCES = ("", "user")  # user.message.source of a prompt the user typed (absent on most)


def _user_message(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    text = as_text(data.get("content"))
    source = label(data.get("source"))
    fields = session.fields(event)
    if data.get("isAutopilotContinuation") is True:
        yield Draft("system", f"injected prompt (autopilot continuation): {text}", locator, **fields)
    elif source not in TYPED_SOURCES:  # system notifications, skills, quota wrap-ups: written by the CLI
        yield Draft("system", f"injected prompt ({source}): {text}", locator, **fields)
    else:
        yield Draft("user", text, locator, **fields)
    attachments = data.get("attachments")
    for position, attachment in enumerate(attachments if isinstance(attachments, list) else []):
        yield Draft("system", f"attachment: {attachment_text(attachment)}", f"{locator}/attachments/{position}",
                    **fields)


def attachment_text(attachment) -> str:
    """What an attachment names (a file, a selection, a GitHub reference); a blob only by type and size."""
    item = mapping(attachment)
    kind = as_text(item.get("type"))
    if kind == "blob":  # inline base64: never copied into a row
        block = {"type": "image", "mimeType": item.get("mimeType"), "data": item.get("data")}
        return f"blob {image_placeholder(block)} {as_text(item.get('displayName'))}".rstrip()
    if kind == "selection":
        where = f"{as_text(item.get('filePath'))} {as_text(item.get('selection'))}"
        return f"selection {where}: {as_text(item.get('text'))}"
    if kind == "github_reference":
        return (f"github {as_text(item.get('referenceType'))} #{as_text(item.get('number'))} "
                f"{as_text(item.get('title'))} ({as_text(item.get('state'))}) {as_text(item.get('url'))}")
    if kind in ("file", "directory"):
        lines = item.get("lineRange")
        suffix = f" lines {as_text(lines)}" if lines else ""
        return f"{kind} {as_text(item.get('path'))}{suffix}"
    return excerpt(compact(attachment), 2000)


def model_rows(session: Session, model: str, event: dict, locator: str) -> Iterator[Draft]:
    """``model: <id>`` where a model first appears, ``model: <old> -> <new>`` where it changes."""
    if not model or model == session.model:
        return
    text = f"model: {session.model} -> {model}" if session.model else f"model: {model}"
    session.model = model
    yield Draft("system", text, locator, **session.fields(event, model))


def _assistant_message(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    model = label(data.get("model"))
    if "agentId" not in event:  # a sub-agent's model is its own: the session's model does not change
        yield from model_rows(session, model, event, f"{locator}/model")
    fields = session.fields(event, model or session.model)
    reasoning = as_text(data.get("reasoningText"))
    if reasoning and reasoning != session.last_reasoning:  # the same text an assistant.reasoning event gave
        yield Draft("thinking", reasoning, f"{locator}/reasoningText", **fields)
    text = as_text(data.get("content"))
    requests = data.get("toolRequests")
    requests = requests if isinstance(requests, list) else []
    if text.strip() or not requests:
        yield Draft("assistant", text, locator, **fields)
    for position, request in enumerate(requests):
        request = mapping(request)
        draft = Draft("tool_use", arguments_text(request.get("arguments")), f"{locator}/toolRequests/{position}",
                      tool_name=label(request.get("name")), tool_use_id=label(request.get("toolCallId")), **fields)
        session.calls.called(draft)
        yield draft


def arguments_text(arguments) -> str:
    """A call's arguments as its row text: a string as it is, anything else as compact JSON."""
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else compact(arguments)


def _reasoning(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    session.last_reasoning = as_text(data.get("content"))
    yield Draft("thinking", session.last_reasoning, locator, **session.fields(event, session.model))


def _turn(label_text: str) -> Handler:
    def rows(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
        yield Draft("system", f"{label_text}: {as_text(data.get('turnId'))}", locator, **session.fields(event))
    return rows


def _abort(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    yield Draft("system", f"turn aborted: {as_text(data.get('reason'))}", locator, **session.fields(event))


# -- tool calls -----------------------------------------------------------------------------------


def _user_requested(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    """A tool the user ran himself (``!`` shell, slash commands): a tool_use row like the model's."""
    draft = Draft("tool_use", arguments_text(data.get("arguments")), locator, tool_name=label(data.get("toolName")),
                  tool_use_id=label(data.get("toolCallId")), **session.fields(event))
    session.calls.called(draft)
    if draft.tool_use_id and len(session.user_requested) < MAX_OPEN_REQUESTS:
        session.user_requested.add(draft.tool_use_id)
    yield draft


def _execution_start(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    """``tool started:`` for a call already requested; a ``tool_use`` row for a call known only from here."""
    call_id, name = label(data.get("toolCallId")), label(data.get("toolName"))
    fields = session.fields(event, "" if "agentId" in event else session.model)
    if call_id and call_id in session.calls.open:
        details = [f"mcp {as_text(data.get('mcpServerName'))}/{as_text(data.get('mcpToolName'))}"] \
            if data.get("mcpServerName") else []
        if call_id in session.user_requested:
            details.append("requested by the user")
        suffix = f"; {', '.join(details)}" if details else ""
        yield Draft("system", f"tool started: {name} ({call_id}{suffix})", locator, tool_name=name,
                    tool_use_id=call_id, **fields)
        return
    draft = Draft("tool_use", arguments_text(data.get("arguments")), locator, tool_name=name, tool_use_id=call_id,
                  **fields)
    session.calls.called(draft)
    yield draft


def _execution_complete(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    call_id = label(data.get("toolCallId"))
    call = session.calls.take(call_id)
    session.user_requested.discard(call_id)
    name = call.tool_name if call is not None else ""
    fields = session.fields(event, label(data.get("model")) or session.model)
    yield Draft("tool_result", result_text(data), locator, tool_name=name, tool_use_id=call_id, **fields)
    if call is None:
        yield Draft("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool call "
                              "before it", locator, tool_name=name, tool_use_id=call_id, **fields)


DETAILED = "\n[detailed result]\n"


def result_text(data: dict) -> str:
    """A result's text: what the model was sent, the fuller UI text after it when it differs, or the error.

    ``result.content`` (a shell call's ends with ``<exited with exit code N>``),
    then ``[detailed result]`` and ``detailedContent`` when that differs (edit
    diffs), then a placeholder per image of ``contents``; a failure is
    ``error: [<code>] <message>``.
    """
    result, error = mapping(data.get("result")), mapping(data.get("error"))
    if error or (data.get("success") is False and not result):
        code = as_text(error.get("code"))
        prefix = f"error: [{code}] " if code else "error: "
        return prefix + (as_text(error.get("message")) or "(no message recorded)")
    text = as_text(result.get("content"))
    detailed = as_text(result.get("detailedContent"))
    if detailed and detailed != text:
        text = f"{text}{DETAILED}{detailed}" if text else detailed
    contents = result.get("contents")
    pictures = [image_placeholder(block) for block in (contents if isinstance(contents, list) else [])
                if is_image_block(block)]
    if pictures:
        text = "\n".join([text, *pictures]) if text else "\n".join(pictures)
    return text if result else f"(no result recorded; success={as_text(data.get('success'))})"


HANDLERS: dict[str, Handler] = {
    "user.message": _user_message,
    "assistant.message": _assistant_message,
    "assistant.reasoning": _reasoning,
    "assistant.turn_start": _turn("turn started"),
    "assistant.turn_end": _turn("turn complete"),
    "abort": _abort,
    "tool.user_requested": _user_requested,
    "tool.execution_start": _execution_start,
    "tool.execution_complete": _execution_complete,
}
