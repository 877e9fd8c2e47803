"""Grok Build's chat_history.jsonl: the model-protocol log of one session.

One JSON object per line, discriminated by ``type`` (or ``role`` in some
writers): ``system``, ``user``, ``assistant``, ``reasoning``, ``tool_result``,
``backend_tool_call``, and ``tool_use`` (a spelling seen in one sample). Two
shapes are observed: lines with a nanosecond ISO ``timestamp`` (0.2.x), and
lines with no time at all (1.0.25), whose rows take the file's mtime.

Rows: ``user`` for typed prompts; a user line with ``synthetic_reason``
(``project_instructions``, ``system_reminder``) was injected by Grok and is a
``system`` row ``injected context (<reason>): ...``; ``assistant`` text with
``model_id`` in the model column and a ``model:`` row where it first appears
or changes; each ``tool_calls[]`` entry a ``tool_use`` row (tool_use_id = its
``id``); ``tool_result`` a ``tool_result`` row joined by ``tool_call_id``;
reasoning summaries ``thinking`` rows (``encrypted_content`` is never shown);
a ``backend_tool_call`` (run by xAI's server) a ``tool_use`` row named by
``kind.tool_type`` with ``kind.id`` as tool_use_id, never answered by a line;
the system prompt ``system prompt: ...``; anything else ``entry <type>: ...``.
An image part (``{"type":"image","url":"data:..."}``, in user content or a
tool result's ``images``) is its placeholder, never its base64 bytes.

Each line is one serde ``ConversationItem`` (xai-org/grok-build
crates/codegen/xai-grok-sampling-types/src/conversation.rs: ``ConversationItem``,
``BackendToolKind``, ``ContentPart``, ``ToolResultItem``, ``ToolCall``),
appended by ``append_chat_message`` (crates/codegen/xai-grok-shell/src/session/storage/jsonl/mod.rs).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .paths import project_of, session_of
from .values import as_text, block_text, compact


class _Session:
    """What one transcript carries from line to line: its columns, current model, open calls."""

    def __init__(self, ctx: ParseContext):
        self.columns = {"session_id": session_of(ctx), "project_path": project_of(ctx)}
        self.mtime = file_mtime(ctx)
        self.model = ""
        self.calls = BoundedLedger()  # at most call_budget.MAX_CALL_IDS ids

    def when(self, record: dict) -> dict:
        """The record's own time, or the file's mtime when the line has none (the 1.0.25 shape)."""
        moment = ns_from_iso(record.get("timestamp"))
        if moment is not None:
            return {"timestamp_ns": moment, "timestamp_source": "record"}
        return dict(self.mtime)

    def fields(self, record: dict) -> dict:
        """Session, project and time; the model only on the lines that name it (assistant, tool_use)."""
        return {**self.columns, **self.when(record), "model": as_text(record.get("model_id"))}


def record_type(record: dict) -> str:
    """``type``, else ``role`` (both discriminators are observed)."""
    kind = record.get("type")
    if not isinstance(kind, str) or not kind:
        kind = record.get("role")
    return kind if isinstance(kind, str) else ""


def parse_chat_history(ctx: ParseContext) -> Iterator[Draft]:
    """sessions/<encoded cwd>/<session>/chat_history.jsonl: one or more rows per line, calls joined by id."""
    session = _Session(ctx)
    for line in read_jsonl(ctx):
        if isinstance(line, Line):
            yield from _line_rows(session, line)
        else:
            yield line
    yield from session.calls.orphans()
    yield from session.calls.over_limit_rows()


def _line_rows(session: _Session, line: Line) -> Iterator[Draft]:
    record, kind = line.value, record_type(line.value)
    handler = _HANDLERS.get(kind)
    if handler is not None:
        yield from handler(session, record, line.locator)
        return
    shown = {key: value for key, value in record.items() if key != "encrypted_content"}
    yield Draft("system", f"entry {kind or '(no type)'}: {excerpt(compact(shown))}", line.locator,
                **session.fields(record))


def _system(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    yield Draft("system", f"system prompt: {block_text(record.get('content'))}", locator, **session.fields(record))


def _user(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    text = block_text(record.get("content"))
    reason = record.get("synthetic_reason")
    if reason:  # written by Grok into the user role (instructions, reminders): never a typed prompt
        yield Draft("system", f"injected context ({as_text(reason)}): {text}", locator, **session.fields(record))
        return
    yield Draft("user", text, locator, **session.fields(record))
    if record.get("prior_turn_interrupt") is True:  # [obs] key; the user cut the turn before this prompt short
        yield Draft("system", "interrupted: the turn before this prompt was interrupted (prior_turn_interrupt)",
                    f"{locator}/prior_turn_interrupt", **session.fields(record))


def _model_rows(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    model = as_text(record.get("model_id"))
    if not model or model == session.model:
        return
    text = f"model: {session.model} -> {model}" if session.model else f"model: {model}"
    session.model = model
    yield Draft("system", text, f"{locator}/model_id", **session.fields(record))


def _assistant(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    yield from _model_rows(session, record, locator)
    text = block_text(record.get("content"))
    calls = record.get("tool_calls")
    calls = calls if isinstance(calls, list) else []
    if text.strip() or not calls:
        yield Draft("assistant", text, locator, **session.fields(record))
    for position, call in enumerate(calls):
        yield _call_row(session, record, call, f"{locator}/tool_calls/{position}")


def _call_row(session: _Session, record: dict, call, locator: str, text: str | None = None) -> Draft:
    """One call as a tool_use row: ``{id, name, arguments}`` as Grok Build writes a ``tool_calls[]`` entry.

    The OpenAI spelling (``function.name``, ``function.arguments``) and
    ``input`` are read too; ``text`` replaces the arguments when given.
    """
    call = call if isinstance(call, dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = as_text(function.get("name") or call.get("name"))
    if text is None:
        arguments = function.get("arguments", call.get("arguments", call.get("input")))
        text = arguments if isinstance(arguments, str) else compact(arguments)
    draft = Draft("tool_use", text, locator, tool_name=name, tool_use_id=as_text(call.get("id")),
                  **session.fields(record))
    session.calls.called(draft)
    return draft


def _tool_use(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    """A ``tool_use`` line (a third-party sample's spelling of a call): id, name, input, or text content.

    Grok Build itself writes no such line (``ConversationItem`` has no
    ``tool_use`` variant); one sample gives only ``content`` text blocks,
    which are the call's text when it records no arguments.
    """
    yield from _model_rows(session, record, locator)
    given = any(key in record for key in ("arguments", "input", "function"))
    text = block_text(record["content"]) if not given and "content" in record else None
    yield _call_row(session, record, record, locator, text)


def _tool_result(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    call_id = as_text(record.get("tool_call_id") or record.get("tool_use_id") or record.get("id"))
    call = session.calls.take(call_id)
    name = call.tool_name if call is not None else as_text(record.get("name") or record.get("tool_name"))
    yield Draft("tool_result", _result_text(record), locator, tool_name=name, tool_use_id=call_id,
                **session.fields(record))
    if call is None:
        yield Draft("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool call "
                              "before it", locator, tool_name=name, tool_use_id=call_id, **session.fields(record))


def _result_text(record: dict) -> str:
    """The result's content, then a placeholder per picture in ``images`` (a read_file of an image or PDF)."""
    text = block_text(record.get("content", record.get("output")))
    images = record.get("images")
    if isinstance(images, list) and images:
        pictures = block_text(images)
        text = f"{text}\n{pictures}" if text else pictures
    return text


def _reasoning(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    summary = record.get("summary")
    texts = [as_text(part.get("text")) for part in summary if isinstance(part, dict)] \
        if isinstance(summary, list) else []
    texts = [text for text in texts if text]
    if not texts:  # only the encrypted blob: say so, never show it
        yield Draft("thinking", "(encrypted reasoning only; no summary recorded)", locator, **session.fields(record))
        return
    for position, text in enumerate(texts):
        yield Draft("thinking", text, f"{locator}/summary/{position}" if len(texts) > 1 else locator,
                    **session.fields(record))


def _backend_call(session: _Session, record: dict, locator: str) -> Iterator[Draft]:
    """A call xAI's server ran during sampling (web_search, x_search, code_interpreter): its call and its result.

    ``kind`` is the Responses API item tagged by ``tool_type`` (the tool's
    name), with its ``id`` as tool_use_id. The server ran the call and fed
    the result to the model, so no ``tool_result`` line follows: the record
    holds both, and gives a ``tool_use`` row (what was asked: action, input,
    code) and a ``tool_result`` row (status, sources, outputs), both at its line.
    """
    kind = record.get("kind")
    fields = session.fields(record)
    if not isinstance(kind, dict):  # not the written shape: named by what it says, the record shown, unjoined
        name = _label(kind) or _label(record.get("name")) or _label(record.get("tool_name"))
        shown = {key: value for key, value in record.items() if key not in ("type", "role", "timestamp")}
        yield Draft("tool_use", excerpt(compact(shown), 4000), locator, tool_name=name or "backend_tool_call",
                    **fields)
        return
    name = _label(kind.get("tool_type")) or _label(kind.get("name")) or "backend_tool_call"
    call_id = _label(kind.get("id"))
    asked, answered = _backend_parts(kind)
    yield Draft("tool_use", excerpt(compact(asked), 4000), locator, tool_name=name, tool_use_id=call_id, **fields)
    yield Draft("tool_result", excerpt(compact(answered), 4000) if answered else NO_BACKEND_RESULT, locator,
                tool_name=name, tool_use_id=call_id, **fields)


BACKEND_RESULT_KEYS = ("status", "outputs", "results", "output", "error")
NO_BACKEND_RESULT = "(run by the server; no result recorded with the call)"


def _backend_parts(kind: dict) -> tuple[dict, dict]:
    """(what was asked, what came back) of a backend call: ``action.sources`` and the status are the answer."""
    asked = {key: value for key, value in kind.items() if key not in ("tool_type", "id", *BACKEND_RESULT_KEYS)}
    answered = {key: kind[key] for key in BACKEND_RESULT_KEYS if key in kind}
    action = asked.get("action")
    if isinstance(action, dict) and "sources" in action:
        asked["action"] = {key: value for key, value in action.items() if key != "sources"}
        answered["sources"] = action["sources"]
    return asked, answered


def _label(value) -> str:
    """A name or id only when it is a short string: a container never lands in a column."""
    return value if isinstance(value, str) and len(value) <= 200 else ""


_HANDLERS = {
    "system": _system,
    "user": _user,
    "assistant": _assistant,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "tool": _tool_result,
    "reasoning": _reasoning,
    "backend_tool_call": _backend_call,
}
