"""messages.json: the legacy client's chat, the message history the model saw, rewritten after each turn.

``setMessages`` (CodebuffAI/codebuff@da0d57111a npm-app/src/chat-storage.ts:12-88)
writes ``{id: <chatId>, messages: [...], updatedAt: <ISO UTC>}``, every message
but the last with its browser logs and metrics cut out of the text. The file
exists from 2025-02-03 (commit 18bf4b81) and the message shape changed three
times, each read here:

* to 2025-05-29: ``{role: user|assistant, content: string | [text, image,
  tool_use{id, name, input}, tool_result{tool_use_id, content}]}``
  (common/src/types/message.ts at 877b94ef^);
* to 2025-08-25: the AI SDK's CoreMessage (877b94ef): roles system, user,
  assistant, tool; parts ``tool-call{toolCallId, toolName, args}``,
  ``tool-result{toolCallId, toolName, result}`` in a tool message's array;
* since 2025-08-25 (813b7526, 2fea71c4): ``Message``
  (common/src/types/messages/codebuff-message.ts,
  content-part.ts at da0d57111a): ``tool-call{toolCallId, toolName, input}``,
  a tool message's content ONE ``tool-result{toolCallId, toolName,
  output: [{type: json, value} | {type: media, data, mediaType}]}``,
  ``reasoning{text}``, ``image``, ``file``.

No message has a time: every row takes the chat's start from its id
(``index``), and ``updatedAt`` (the last save) is quoted in the ``session:`` row.
Tool calls written as XML in the text (``<codebuff_tool_call>``, the legacy
tool protocol of common/src/tools/constants.ts) stay in the assistant text.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.json_values import document_or_row
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .chat import Chat, as_text, label, media_text, output_text, short


def parse_legacy_messages(ctx: ParseContext) -> Iterator[Draft]:
    """projects/<basename>/chats/<chatId>/messages.json: one row per text, call, result and reasoning part."""
    document = yield from document_or_row(json_document(ctx.data, "messages.json"))
    if document is None:
        return
    chat = Chat(ctx)
    messages = document.get("messages")
    if not isinstance(messages, list):
        yield bad_record("json:/messages", "no messages array", short(document.get("messages")))
        return
    facts = [f"chat {chat.chat_id}", f"project basename {chat.project}", f"{len(messages)} messages",
             f"updatedAt {as_text(document.get('updatedAt')) or '(none)'}"]
    yield chat.row("system", f"session: (untitled) (legacy messages.json; {'; '.join(facts)})", "file")
    for position, message in enumerate(messages):
        yield from _message(chat, message, pointer("messages", position))
    yield from chat.end()


def _message(chat: Chat, message, locator: str) -> Iterator[Draft]:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        yield bad_record(locator, "not a message (no role)", short(message))
        return
    role, content = message["role"], message.get("content")
    if role == "tool":
        parts = content if isinstance(content, list) else [content]
        for position, part in enumerate(parts):
            yield from _result(chat, part, f"{locator}/content" + (f"/{position}" if isinstance(content, list) else ""))
        return
    if role not in ("user", "assistant", "system"):
        yield bad_record(locator, f"unknown role {label(role, 80)!r}", short(message))
        return
    if isinstance(content, str):
        yield _text_row(chat, role, content, f"{locator}/content")
        return
    if not isinstance(content, list):
        yield bad_record(f"{locator}/content", "content is neither text nor a list of parts", short(content))
        return
    texts: list[str] = []
    for position, part in enumerate(content):
        where = f"{locator}/content/{position}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in ("image", "file"):
            texts.append(media_text(part))
        else:
            if texts:
                yield _text_row(chat, role, "\n".join(texts), f"{locator}/content")
                texts = []
            yield from _part(chat, role, part, where)
    if texts:
        yield _text_row(chat, role, "\n".join(texts), f"{locator}/content")


def _text_row(chat: Chat, role: str, text: str, locator: str) -> Draft:
    if role == "system":
        return chat.row("system", f"system message: {text}", locator)
    return chat.row("user" if role == "user" else "assistant", text, locator)


def _part(chat: Chat, role: str, part, where: str) -> Iterator[Draft]:
    """A part that is not text: a call, a result, reasoning; anything else named."""
    if not isinstance(part, dict):
        yield bad_record(where, "a part that is not an object", short(part))
        return
    kind = part.get("type")
    if kind == "reasoning" and isinstance(part.get("text"), str):
        yield chat.row("thinking", part["text"], f"{where}/text")
    elif kind == "tool-call":
        arguments = part.get("input", part.get("args"))
        yield chat.call(label(part.get("toolName")), label(part.get("toolCallId")), arguments, where)
    elif kind == "tool_use":
        yield chat.call(label(part.get("name")), label(part.get("id")), part.get("input"), where)
    elif kind in ("tool-result", "tool_result"):
        yield from _result(chat, part, where)
    else:
        yield chat.row("system", f"message part ({as_text(kind) or 'no type'}): {short(part)}", where)


def _result(chat: Chat, part, where: str) -> Iterator[Draft]:
    if not isinstance(part, dict):
        yield bad_record(where, "a tool result that is not an object", short(part))
        return
    if part.get("type") == "tool_result":  # the 2025 Anthropic shape, inside a user message
        yield from chat.result("", label(part.get("tool_use_id")), output_text(part.get("content")), where)
        return
    output = part["output"] if "output" in part else part.get("result")
    yield from chat.result(label(part.get("toolName")), label(part.get("toolCallId")), output_text(output), where)
