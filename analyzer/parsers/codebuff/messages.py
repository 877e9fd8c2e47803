"""chat-messages.json: the current CLI's chat as its screen shows it, a JSON array of ChatMessage.

``saveChatState`` writes the chat's messages (and run-state.json beside them)
after each turn (cli/src/utils/run-state-storage.ts, stored copy 0b40fb03a0),
strings cut at 8,000 characters and base64 payloads emptied
(payload-sanitizer.ts, stored copy 34998bb58a). ``ChatMessage``
(cli/src/types/chat.ts, stored copy 03cb53dc0a): ``{id, variant: ai|user|agent|error,
content, blocks?, timestamp, parentId?, agent?, isComplete?, credits?,
completionTime?, metadata?{bashCwd, runState}, validationErrors?, userError?,
attachments?, textAttachments?, fileAttachments?}``; blocks are ``text{content,
textType: reasoning|text}``, ``tool{toolCallId, toolName, input, output?,
outputRaw?}``, ``agent{agentId, agentName, agentType, content, status, blocks?,
initialPrompt?, spawnToolCallId?}``, ``ask-user{toolCallId, questions,
answers?, skipped?}``, ``plan{content}``, ``mode-divider{mode}``,
``gate-state{gate, gateStatus, details?}``, ``image{image, mediaType}``,
``agent-list``, ``html`` (never written: it is not serialisable).

Rows: a ``session:`` row named as the chat list names the chat (its first
prompt, cut at 100 characters); ``user`` / ``assistant`` for the content;
``thinking`` for reasoning text blocks; ``tool_use`` + ``tool_result`` for a
tool block joined by ``toolCallId`` (a block without ``output`` is a call
whose result was not saved: ``parser: no result recorded``); ``subagent:`` /
``subagent prompt:`` and the sub-agent's own blocks for an agent block;
``asked the user:``, ``plan:``, ``mode:``, ``gate:``, ``error:``,
``attachment:``, ``bash mode:`` (a command the user ran, ``metadata.bashCwd``),
``credits:``. ``isComplete: false`` marks the row ``partial:``. A message
``timestamp`` is used only when it is an ISO time with a zone (the writer's
``formatTimestamp`` was not found; UI tests write ``12:00``); other rows take
the chat's start (``index``), and the times as written are quoted in the
``session:`` row. ``metadata.model`` and ``metadata.usage`` (seen only by
third-party readers) give the model column and ``tokens generated:`` rows
when present.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.text import bad_record, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .chat import Chat, as_text, compact, label, media_text, short, title_of

MAX_DEPTH = 50  # agent blocks inside agent blocks read at most (the document's nesting is bounded anyway)
VARIANTS = ("ai", "assistant", "user", "agent", "error")  # "assistant": the spelling third-party readers give


class _Messages(Chat):
    """A chat-messages.json being read: the model in use."""

    def __init__(self, ctx: ParseContext):
        super().__init__(ctx)
        self.model = ""


def parse_chat_messages(ctx: ParseContext) -> Iterator[Draft]:
    """projects/<basename>/chats/<chatId>/chat-messages.json: every message and block, calls joined by id."""
    messages, problem = json_document(ctx.data, "chat-messages.json", kind=list)
    if problem is not None:
        yield problem
        return
    chat = _Messages(ctx)
    yield _session_row(chat, messages)
    for position, message in enumerate(messages):
        yield from _message(chat, message, pointer(position))
    yield from chat.end()


def _session_row(chat: _Messages, messages: list) -> Draft:
    """The chat as the chat list names it, with the message times that are not instants quoted."""
    found = [message for message in messages if isinstance(message, dict)]
    first = next((message["content"] for message in found if message.get("variant") == "user"
                  and isinstance(message.get("content"), str) and message["content"].strip()), None)
    unread = [message["timestamp"] for message in found
              if isinstance(message.get("timestamp"), str) and message["timestamp"]
              and ns_from_iso(message["timestamp"]) is None]
    facts = [f"chat {chat.chat_id}", f"project basename {chat.project}", f"{len(messages)} messages"]
    if unread:
        facts.append(f"message times as written, no zone: {excerpt(unread[0], 80)} .. {excerpt(unread[-1], 80)}")
    title = title_of(first) if first is not None else "(empty chat)"
    return chat.row("system", f"session: {title} ({'; '.join(facts)})", "file")


def _message(chat: _Messages, message, locator: str) -> list[Draft]:
    if not isinstance(message, dict) or message.get("variant") not in VARIANTS:
        return [bad_record(locator, "not a chat message (no known variant)", short(message))]
    own = ns_from_iso(message.get("timestamp"))
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    rows = list(_model_rows(chat, metadata, locator, own))
    variant = message["variant"]
    partial = "partial: " if message.get("isComplete") is False else ""
    if variant == "agent" and isinstance(message.get("agent"), dict):
        agent = message["agent"]
        kind, name = as_text(agent.get("agentType")), as_text(agent.get("agentName"))
        rows.append(chat.row("system", f"subagent: {kind} \"{name}\" (responseCount="
                                       f"{as_text(agent.get('responseCount'))})", f"{locator}/agent", own))
    if isinstance(metadata.get("bashCwd"), str):
        rows.append(chat.row("system", f"bash mode: a command the user ran in {metadata['bashCwd']}",
                             f"{locator}/metadata/bashCwd", own))
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        rows.append(_content_row(chat, variant, partial + content, f"{locator}/content", own))
    blocks = message.get("blocks")
    if isinstance(blocks, list):
        rows.extend(_blocks(chat, variant, blocks, f"{locator}/blocks", own, partial, 0))
    rows.extend(_attachments(chat, message, locator, own))
    rows.extend(_errors(chat, message, locator, own))
    if isinstance(message.get("credits"), (int, float)) and not isinstance(message.get("credits"), bool):
        rows.append(chat.row("system", f"credits: {message['credits']} (charged for this reply)",
                             f"{locator}/credits", own, model=chat.model))
    return rows


def _model_rows(chat: _Messages, metadata: dict, locator: str, own: int | None) -> Iterator[Draft]:
    model = label(metadata.get("model"))
    if model and model != chat.model:
        text = f"model: {chat.model} -> {model}" if chat.model else f"model: {model}"
        chat.model = model
        yield chat.row("system", text, f"{locator}/metadata/model", own, model=model)
    usage = metadata.get("usage")
    if isinstance(usage, dict):
        counts = " ".join(f"{key}={usage[name]}" for key, name in (("input_tokens", "inputTokens"),
                                                                  ("output_tokens", "outputTokens"))
                          if isinstance(usage.get(name), int) and not isinstance(usage.get(name), bool))
        if counts:
            yield chat.row("system", f"tokens generated: model={chat.model or '(unknown)'} {counts}",
                           f"{locator}/metadata/usage", own, model=chat.model)


def _content_row(chat: _Messages, variant: str, text: str, locator: str, own: int | None) -> Draft:
    if variant == "user":
        return chat.row("user", text, locator, own)
    if variant == "error":
        return chat.row("system", f"error: {text}", locator, own)
    return chat.row("assistant", text, locator, own, model=chat.model)


def _blocks(chat: _Messages, variant: str, blocks: list, locator: str, own: int | None, partial: str,
            depth: int) -> Iterator[Draft]:
    if depth > MAX_DEPTH:
        yield bad_record(locator, f"agent blocks nested deeper than {MAX_DEPTH} levels; not read")
        return
    for position, block in enumerate(blocks):
        where = f"{locator}/{position}"
        if not isinstance(block, dict):
            yield bad_record(where, "a block that is not an object", short(block))
            continue
        handler = _BLOCKS.get(block.get("type"))
        if handler is None:
            yield chat.row("system", f"block {as_text(block.get('type')) or '(no type)'}: {short(block)}", where, own)
            continue
        yield from handler(chat, variant, block, where, own, partial, depth)


def _text_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    text = block.get("content")
    if not isinstance(text, str) or not text.strip():
        return
    if block.get("textType") == "reasoning":
        yield chat.row("thinking", text, f"{where}/content", own, model=chat.model)
        return
    yield _content_row(chat, variant, partial + text, f"{where}/content", own)


def _tool_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    name, call_id = label(block.get("toolName")), label(block.get("toolCallId"))
    yield chat.call(name, call_id, block.get("input"), f"{where}/input", own, model=chat.model)
    if "output" in block or "outputRaw" in block:
        output = block.get("output")
        text = output if isinstance(output, str) else as_text(block.get("outputRaw", output))
        yield from chat.result(name, call_id, text, f"{where}/output", own)


def _agent_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    facts = [f"status={as_text(block.get('status'))}", f"agentId={as_text(block.get('agentId'))}"]
    if block.get("spawnToolCallId"):
        facts.append(f"spawnToolCallId={as_text(block['spawnToolCallId'])}")
    yield chat.row("system", f"subagent: {as_text(block.get('agentType'))} \"{as_text(block.get('agentName'))}\" "
                             f"({', '.join(facts)})", where, own, tool_use_id=label(block.get("spawnToolCallId")))
    if isinstance(block.get("initialPrompt"), str) and block["initialPrompt"].strip():
        yield chat.row("system", f"subagent prompt: {block['initialPrompt']}", f"{where}/initialPrompt", own)
    if isinstance(block.get("blocks"), list):
        yield from _blocks(chat, "ai", block["blocks"], f"{where}/blocks", own, partial, depth + 1)
    if isinstance(block.get("content"), str) and block["content"].strip():
        yield chat.row("assistant", partial + block["content"], f"{where}/content", own, model=chat.model)


def _ask_user_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    answer = "skipped" if block.get("skipped") is True else compact(block.get("answers"))
    yield chat.row("system", f"asked the user: {compact(block.get('questions'))}; answers: {answer}", where, own,
                   tool_use_id=label(block.get("toolCallId")))


def _plan_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    yield chat.row("system", f"plan: {as_text(block.get('content'))}", f"{where}/content", own)


def _mode_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    yield chat.row("system", f"mode: {as_text(block.get('mode'))}", where, own)


def _gate_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    details = f" ({as_text(block['details'])})" if block.get("details") else ""
    yield chat.row("system", f"gate: {as_text(block.get('gate'))} {as_text(block.get('gateStatus'))}{details}", where,
                   own)


def _image_block(chat, variant, block, where, own, partial, depth) -> Iterator[Draft]:
    yield _content_row(chat, variant, media_text(block), where, own)


_BLOCKS = {"text": _text_block, "tool": _tool_block, "agent": _agent_block, "ask-user": _ask_user_block,
           "plan": _plan_block, "mode-divider": _mode_block, "gate-state": _gate_block, "image": _image_block}


def _attachments(chat: _Messages, message: dict, locator: str, own: int | None) -> Iterator[Draft]:
    for key in ("attachments", "fileAttachments"):
        items = message.get(key)
        for position, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                size = f" ({item['size']} bytes)" if isinstance(item.get("size"), int) else ""
                yield chat.row("system", f"attachment: {as_text(item.get('path') or item.get('filename'))}{size}",
                               f"{locator}/{key}/{position}", own)
    texts = message.get("textAttachments")
    for position, item in enumerate(texts if isinstance(texts, list) else []):
        if isinstance(item, dict):
            yield chat.row("system", f"attachment: pasted text ({as_text(item.get('charCount'))} characters): "
                                     f"{as_text(item.get('content'))}", f"{locator}/textAttachments/{position}", own)


def _errors(chat: _Messages, message: dict, locator: str, own: int | None) -> Iterator[Draft]:
    if isinstance(message.get("userError"), str) and message["userError"]:
        yield chat.row("system", f"error: {message['userError']}", f"{locator}/userError", own)
    errors = message.get("validationErrors")
    for position, item in enumerate(errors if isinstance(errors, list) else []):
        text = item.get("message") if isinstance(item, dict) else item
        yield chat.row("system", f"error: validation: {as_text(text)}", f"{locator}/validationErrors/{position}", own)
