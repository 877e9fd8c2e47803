"""The messages of one Zed thread, in every generation, as rows; calls joined to results by their id.

[src] zed-industries/zed ``crates/agent/src/thread.rs`` (``Message``, ``UserMessage``,
``UserMessageContent``, ``AgentMessage``, ``AgentMessageContent``; serde's
external tagging) and ``crates/agent/src/legacy_thread.rs``
(``SerializedMessage``, ``SerializedMessageSegment`` tagged by ``type``,
``SerializedToolUse``, ``SerializedToolResult``, ``LegacySerializedMessage``):

* ``{"User": {"id", "content": [{"Text"} | {"Mention": {uri, content}} | {"Image"}]}}``:
  one ``user`` row (the text parts, an image as its placeholder), then one
  ``attachment:`` row per mention (the @-mentioned file, symbol, thread or
  URL, then the content Zed sent with it);
* ``{"Agent": {"content": [{"Text"} | {"Thinking"} | {"RedactedThinking"} |
  {"ToolUse": {id, name, input, raw_input}}], "tool_results": {<id>: result}}}``:
  ``assistant``, ``thinking`` and ``tool_use`` rows in order, then a
  ``tool_result`` row per entry of ``tool_results``, whose key is the id of
  the ToolUse it answers;
* ``"Resume"``: a ``resume:`` row (Zed's synthetic "continue" turn);
* legacy ``{id, role, segments | text, tool_uses, tool_results, context,
  is_hidden}``: the same rows by role; in the 0.1.0 shape the results sit on
  the next user message, which the id join does not mind.

Calls are held in one ledger per thread (BoundedLedger), keyed by id.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft

from .values import Thread, image_text, result_text

TOOL_ERROR = "[tool error] "


def message_rows(thread: Thread, messages: object, ledger: BoundedLedger,
                 after: dict[int, list[Draft]] | None = None) -> Iterator[Draft]:
    """Every message's rows; ``after[i]`` (rows of message ``i``'s request, e.g. tokens) follows message ``i``."""
    if not isinstance(messages, list):
        if messages is not None:
            yield thread.row("system", f"parser: unparseable record (messages is a JSON {type(messages).__name__}, "
                             "not an array)", thread.at("messages"), timestamp_source="none", timestamp_ns=None)
        return
    for index, message in enumerate(messages):
        yield from _message(thread, index, message, ledger)
        yield from (after or {}).get(index, ())


def _message(thread: Thread, index: int, message: object, ledger: BoundedLedger) -> Iterator[Draft]:
    if message == "Resume":
        yield thread.row("system", "resume: Zed asked the agent to continue where it left off (a \"Resume\" turn)",
                         thread.at("messages", index))
    elif isinstance(message, dict) and isinstance(message.get("User"), dict):
        yield from _user(thread, index, message["User"])
    elif isinstance(message, dict) and isinstance(message.get("Agent"), dict):
        yield from _agent(thread, index, message["Agent"], ledger)
    elif isinstance(message, dict) and "role" in message:
        yield from _legacy(thread, index, message, ledger)
    else:
        kind = next(iter(message), "") if isinstance(message, dict) else type(message).__name__
        yield thread.row("system", f"message ({as_text(kind)[:80]}): {excerpt(compact(message))}",
                         thread.at("messages", index))


# -- 0.3.0 (agent2 / ACP) ------------------------------------------------------------------------


def _user(thread: Thread, index: int, user: dict) -> Iterator[Draft]:
    where = ("messages", index, "User")
    content = user.get("content")
    parts = content if isinstance(content, list) else [content]
    texts, mentions = [], []
    for position, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("Text"), str):
            texts.append(part["Text"])
        elif isinstance(part, dict) and "Image" in part:
            texts.append(image_text(part["Image"]))
        elif isinstance(part, dict) and isinstance(part.get("Mention"), dict):
            mentions.append((position, part["Mention"]))
        elif part is not None:
            mentions.append((position, {"uri": f"(content part {compact(part)[:200]})", "content": ""}))
    if texts or not mentions:
        yield thread.row("user", "\n".join(texts), thread.at(*where))
    for position, mention in mentions:
        yield thread.row("system", _attachment(mention), thread.at(*where, "content", position))


def _attachment(mention: dict) -> str:
    """``attachment: <uri> (<N> chars)`` and the content Zed sent with the mention."""
    uri = mention.get("uri")
    named = uri if isinstance(uri, str) else compact(uri)
    body = as_text(mention.get("content"))
    return f"attachment: {named} ({len(body)} chars)" + (f"\n{body}" if body else "")


def _agent(thread: Thread, index: int, agent: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    where = ("messages", index, "Agent")
    content = agent.get("content")
    for position, part in enumerate(content if isinstance(content, list) else []):
        locator = thread.at(*where, "content", position)
        if isinstance(part, dict) and isinstance(part.get("Text"), str):
            yield thread.row("assistant", part["Text"], locator)
        elif isinstance(part, dict) and isinstance(part.get("Thinking"), dict):
            yield thread.row("thinking", as_text(part["Thinking"].get("text")), locator)
        elif isinstance(part, dict) and "RedactedThinking" in part:
            yield thread.row("thinking", _redacted(part["RedactedThinking"]), locator)
        elif isinstance(part, dict) and isinstance(part.get("ToolUse"), dict):
            yield _call(thread, part["ToolUse"], locator, ledger)
        else:
            yield thread.row("system", f"message part ({_kind(part)}): {excerpt(compact(part))}", locator)
    results = agent.get("tool_results")
    if isinstance(results, dict):
        for key, result in results.items():
            yield from _result(thread, key, result, thread.at(*where, "tool_results", key), ledger)
    elif results is not None:
        yield thread.row("system", f"parser: unparseable record (tool_results is a JSON {type(results).__name__}, "
                         "not an object)", thread.at(*where, "tool_results"))


def _kind(part: object) -> str:
    if isinstance(part, dict) and part:
        return as_text(next(iter(part)))[:80]
    return type(part).__name__


def _redacted(data: object) -> str:
    length = len(data) if isinstance(data, str) else len(compact(data))
    return f"(redacted thinking: {length} characters the provider encrypted; not shown)"


def _call(thread: Thread, use: dict, locator: str, ledger: BoundedLedger) -> Draft:
    arguments = use.get("input")
    text = as_text(use.get("raw_input")) if arguments is None else compact(arguments)
    call = thread.row("tool_use", text, locator, tool_name=label(use.get("name")), tool_use_id=label(use.get("id")))
    ledger.called(call, f"{thread.session_id}\0{call.tool_use_id}" if call.tool_use_id else None)
    return call


def _result(thread: Thread, key: object, result: object, locator: str, ledger: BoundedLedger) -> Iterator[Draft]:
    values = result if isinstance(result, dict) else {"content": result}
    call_id = label(values.get("tool_use_id")) or label(key)
    call = ledger.take(f"{thread.session_id}\0{call_id}") if call_id else None
    name = label(values.get("tool_name")) or (call.tool_name if call else "")
    text = result_text(values.get("content"))
    if values.get("is_error") is True:
        text = TOOL_ERROR + text
    yield thread.row("tool_result", text, locator, tool_name=name, tool_use_id=call_id)
    if call is None and not ledger.was_called(f"{thread.session_id}\0{call_id}"):
        yield thread.row("system", f"parser: tool result for {name or call_id} with no tool call before it", locator,
                         tool_name=name, tool_use_id=call_id)


# -- legacy SerializedThread (absent version, 0.1.0, 0.2.0) ----------------------------------------


def _legacy(thread: Thread, index: int, message: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    role = as_text(message.get("role"))
    hidden = message.get("is_hidden") is True
    for position, (kind, text) in enumerate(_segments(message)):
        locator = thread.at("messages", index, "segments" if "segments" in message else "text",
                            *((position,) if "segments" in message else ()))
        yield _legacy_turn(thread, role, kind, text, hidden, locator)
    if message.get("context"):
        yield thread.row("system", f"injected context: {as_text(message['context'])}",
                         thread.at("messages", index, "context"))
    uses = message.get("tool_uses")
    for position, use in enumerate(uses if isinstance(uses, list) else []):
        if isinstance(use, dict):
            yield _call(thread, use, thread.at("messages", index, "tool_uses", position), ledger)
    results = message.get("tool_results")
    for position, result in enumerate(results if isinstance(results, list) else []):
        key = result.get("tool_use_id") if isinstance(result, dict) else ""
        yield from _result(thread, key, result, thread.at("messages", index, "tool_results", position), ledger)


def _segments(message: dict) -> list[tuple[str, str]]:
    """(kind, text) of each segment; the oldest shape keeps one ``text``."""
    if "segments" not in message:
        return [("text", as_text(message.get("text")))] if message.get("text") not in (None, "") else []
    found = []
    segments = message.get("segments")
    for segment in segments if isinstance(segments, list) else []:
        if not isinstance(segment, dict):
            found.append(("other", compact(segment)))
        elif segment.get("type") == "text":
            found.append(("text", as_text(segment.get("text"))))
        elif segment.get("type") == "thinking":
            found.append(("thinking", as_text(segment.get("text"))))
        elif segment.get("type") == "RedactedThinking" or "RedactedThinking" in segment:
            found.append(("redacted", _redacted(segment.get("data", segment.get("RedactedThinking")))))
        else:
            found.append(("other", compact(segment)))
    return found


def _legacy_turn(thread: Thread, role: str, kind: str, text: str, hidden: bool, locator: str) -> Draft:
    if kind in ("thinking", "redacted"):
        return thread.row("thinking", text, locator)
    if kind == "other":
        return thread.row("system", f"message part ({role}): {excerpt(text)}", locator)
    if hidden:  # written by Zed, not shown in the panel
        return thread.row("system", f"hidden message ({role}): {text}", locator)
    if role in ("user", "assistant"):
        return thread.row(role, text, locator)
    if role == "system":
        return thread.row("system", f"system message: {text}", locator)
    return thread.row("system", f"message ({role[:80]}): {text}", locator)
