"""One Goose message (role, content blocks, visibility metadata) as timeline rows.

The same renderer reads a ``messages.content_json`` array of sessions.db, a
``thread_messages`` copy and a line of a legacy ``sessions/<name>.jsonl``, so a
message imported from a legacy file gives exactly the rows of its database copy
(the secondary copy is then dropped by the run's de-duplication).

``MessageContent`` is serde-tagged by ``type`` (camelCase) [src]
block/goose@865e4a030a crates/goose/src/conversation/message/content_types.rs;
``toolCall`` / ``toolResult`` are ``{"status":"success","value":...}`` or
``{"status":"error","error":"..."}`` and a result's value is an MCP
``CallToolResult`` (``content``, ``isError``) or, in sessions written before it,
a bare array of content items (conversation/tool_result_serde.rs).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, as_list, setting_value
from aitrail.analyzer.formats.text import bad_record, excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.rows import Draft

# What Goose writes as the result of a call the user refused, or that chat mode skipped
# (block/goose@06781cc713 crates/goose/src/agents/tool_execution.rs DECLINED_RESPONSE,
# CHAT_MODE_TOOL_SKIPPED_RESPONSE): the start of each text is enough to know it.
DECLINED = "The user has declined to run this tool."
CHAT_MODE_SKIPPED = "Let the user know the tool call was skipped in goose chat mode."
# The assistant text Goose adds after a compaction summary (context_mgmt/mod.rs *_CONTINUATION_TEXT).
COMPACTED = "Your context was compacted"


def text_field(value: dict, key: str) -> str:
    """A string field of an object, '' when it is missing or not a string."""
    found = value.get(key)
    return found if isinstance(found, str) else ""


def message_rows(message: dict, locator: str, base: dict, ledger: BoundedLedger,
                 unpaired_rows: bool = True) -> Iterator[Draft]:
    """The rows of one message: one per content block, at ``<locator>/<position>``.

    Args:
        message: ``{"role", "content": [blocks], "metadata": {...}}``.
        locator: the message's locator (``sqlite:messages:<rowid>/content_json``, ``line:N/content``).
        base: the columns every row of the message carries (time, session, project, model, origin).
        ledger: the session's open tool calls.
        unpaired_rows: give the ``parser: tool result for ... with no tool call before it`` row
            (not for copies that may hold part of a conversation).
    """
    role = text_field(message, "role")
    content = message.get("content")
    if not isinstance(content, list):
        yield bad_record(locator, "content is not an array of content blocks", setting_value(content))
        return
    hidden_from_user = as_dict(message.get("metadata")).get("userVisible") is False
    for position, block in enumerate(content):
        where = f"{locator}/{position}"
        if not isinstance(block, dict):
            yield bad_record(where, "content block is not an object", setting_value(block))
            continue
        yield from _block_rows(role, block, where, base, ledger, hidden_from_user, unpaired_rows)


def _block_rows(role: str, block: dict, where: str, base: dict, ledger: BoundedLedger,
                hidden_from_user: bool, unpaired_rows: bool) -> Iterator[Draft]:
    kind = text_field(block, "type")
    if kind == "text":
        yield _text_row(role, text_field(block, "text"), where, base, hidden_from_user or _for_model_only(block))
    elif is_image_block(block):
        yield _text_row(role, image_placeholder(block), where, base, hidden_from_user)
    elif kind in ("toolRequest", "frontendToolRequest"):
        yield from _call_rows(block, where, base, ledger)
    elif kind == "toolResponse":
        yield from _result_rows(block, where, base, ledger, unpaired_rows)
    elif kind in ("thinking", "reasoning"):
        text = text_field(block, "thinking") or text_field(block, "text")
        yield Draft("thinking", text or unknown(kind, block), where, **base)
    elif kind == "redactedThinking":
        yield Draft("thinking", "[redacted thinking: not readable]", where, **base)
    else:
        asked = _confirmation_of(kind, block)
        if asked is None:
            yield Draft("system", _other_text(kind, block), where, **base)
        else:  # a permission prompt: the tool and call it was about
            yield Draft("system", _confirmation(asked), where, tool_name=text_field(asked, "toolName"),
                        tool_use_id=text_field(asked, "id"), **base)


def _for_model_only(block: dict) -> bool:
    """A text whose MCP annotations name the assistant as its only audience: context, not shown to the user."""
    audience = as_dict(block.get("annotations")).get("audience")
    return isinstance(audience, list) and audience == ["assistant"]


def _text_row(role: str, text: str, where: str, base: dict, hidden_from_user: bool) -> Draft:
    if text.startswith(COMPACTED) and hidden_from_user:
        return Draft("system", f"compaction: {text}", where, **base)
    if hidden_from_user:
        return Draft("system", f"context (not shown to the user): {text}", where, **base)
    if role in ("user", "assistant"):
        return Draft(role, text, where, **base)
    return Draft("system", f"message ({excerpt(role, 40)}): {text}", where, **base)


def _call_rows(block: dict, where: str, base: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    call_id = text_field(block, "id")
    outcome = as_dict(block.get("toolCall"))
    value = as_dict(outcome.get("value"))
    name = text_field(value, "name")
    if outcome.get("status") == "error" or not name:
        text = f"invalid tool call: {text_field(outcome, 'error') or setting_value(outcome)}"
    else:
        text = setting_value(value.get("arguments") if "arguments" in value else {})
    draft = Draft("tool_use", text, where, tool_name=name, tool_use_id=call_id, **base)
    ledger.called(draft)
    yield draft


def _result_rows(block: dict, where: str, base: dict, ledger: BoundedLedger, unpaired_rows: bool
                 ) -> Iterator[Draft]:
    call_id = text_field(block, "id")
    call = ledger.take(call_id)
    name = call.tool_name if call is not None else ""
    text = result_text(as_dict(block.get("toolResult")))
    yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **base)
    decision = _decision(text)
    if decision:
        yield Draft("system", decision, where, tool_name=name, tool_use_id=call_id, **base)
    if call is None and unpaired_rows and not ledger.was_called(call_id):
        yield Draft("system", f"parser: tool result for {name or call_id} with no tool call before it", where,
                    tool_name=name, tool_use_id=call_id, **base)


def result_text(result: dict) -> str:
    """The text of a ``toolResult``: its content items joined, ``[tool error]`` first when it failed."""
    if result.get("status") == "error":
        return f"[tool error] {text_field(result, 'error')}"
    value = result.get("value")
    items = as_list(value.get("content")) if isinstance(value, dict) else as_list(value)
    text = "\n".join(_item_text(item) for item in items)
    if isinstance(value, dict) and value.get("isError") is True:
        return f"[tool error] {text}"
    return text


def _item_text(item) -> str:
    """One MCP content item: its text, an image placeholder, or a resource's text or address."""
    if not isinstance(item, dict):
        return setting_value(item)
    if isinstance(item.get("text"), str):
        return item["text"]
    if is_image_block(item):
        return image_placeholder(item)
    resource = as_dict(item.get("resource"))
    if isinstance(resource.get("text"), str):
        return resource["text"]
    if isinstance(resource.get("uri"), str):
        return f"[resource {resource['uri']}]"
    return setting_value(item)


def _decision(text: str) -> str:
    if text.startswith(DECLINED):
        return "permission decision: denied"
    if text.startswith(CHAT_MODE_SKIPPED):
        return "permission decision: not run (chat mode skips every tool call)"
    return ""


def _other_text(kind: str, block: dict) -> str:
    """Elicitations and notifications; any other block type named with an excerpt."""
    if kind == "actionRequired":
        data = as_dict(block.get("data"))
        action = text_field(data, "actionType")
        if action == "elicitation":
            return f"elicitation: {text_field(data, 'message')}"
        if action == "elicitationResponse":
            return f"elicitation response: {setting_value(data.get('userData', data.get('user_data')))}"
    if kind == "systemNotification":
        return f"notification ({excerpt(text_field(block, 'notificationType'), 40)}): {text_field(block, 'msg')}"
    return unknown(f"content block {excerpt(kind, 40)}", block)


def _confirmation_of(kind: str, block: dict) -> dict | None:
    """The confirmation request a block holds (a ``toolConfirmationRequest``, or one inside ``actionRequired``)."""
    if kind == "toolConfirmationRequest":
        return block
    data = as_dict(block.get("data"))
    if kind == "actionRequired" and data.get("actionType") == "toolConfirmation":
        return data
    return None


def _confirmation(block: dict) -> str:
    """A tool confirmation Goose asked for: the tool, its arguments and the prompt shown."""
    name = text_field(block, "toolName")
    prompt = text_field(block, "prompt")
    suffix = f" ({prompt})" if prompt else ""
    return f"confirmation requested: {name} {setting_value(block.get('arguments', {}))}{suffix}"


def unknown(kind: str, value: dict) -> str:
    """A block the parser has no rule for: its kind and a bounded compact excerpt."""
    return f"{kind}: {excerpt(setting_value(value))}"
