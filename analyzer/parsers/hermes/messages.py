r"""One Hermes Agent message (an OpenAI chat message, as state.db stores it) as timeline rows.

Shape [src] pypi hermes-agent 0.19.0 ``hermes_state.py`` (``append_message``,
``_insert_message_rows``, ``_encode_content``): ``role`` user | assistant |
tool | system; ``content`` a string, or a list of parts (text, image_url)
stored as ``"\x00json:" + JSON``; an assistant's ``tool_calls`` is the
OpenAI array ``[{"id", "type": "function", "function": {"name",
"arguments": "<JSON text>"}}]`` (a JSON text in state.db, a list in the JSON
snapshots); a tool row carries ``tool_call_id`` and ``tool_name``;
``reasoning`` / ``reasoning_content`` hold the model's reasoning text.

The same renderer reads state.db rows and the JSON snapshots' messages, so a
snapshot message gives the very rows of its database copy (the run then drops
the secondary copy).

Permission decisions are read from a ``terminal`` result, a JSON object
[src] tools/terminal_tool.py (``{"output", "exit_code", "error", "status":
"blocked"}`` when refused; ``"approval"`` when a flagged command was
approved) with the refusal texts of tools/approval.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, setting_value
from aitrail.analyzer.formats.sqlite_chat import as_text
from aitrail.analyzer.formats.text import bad_record, excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

CONTENT_JSON_PREFIX = "\x00json:"  # hermes_state.py SessionDB._CONTENT_JSON_PREFIX

# The start of each refusal text a blocked terminal result carries (tools/approval.py), and the
# decision it records; the first match wins, so the longer, more specific texts come first.
REFUSALS = (
    ("BLOCKED: this command matches the user-defined deny rule", "permission decision: denied by a permission rule "
                                                                 "(approvals.deny, not asked)"),
    ("BLOCKED (hardline):", "permission decision: denied by the built-in blocklist (not asked)"),
    ("BLOCKED by smart approval", "permission decision: denied by smart approval"),
    ("BLOCKED: Action timed out without user response", "permission decision: denied (no answer before the "
                                                        "timeout)"),
    ("BLOCKED: Action denied by user", "permission decision: denied"),
    ("BLOCKED: User denied", "permission decision: denied"),
)


def content_text(content) -> str:
    r"""A message's content as text: a string as stored (a ``\x00json:`` list decoded), parts joined by newlines."""
    if isinstance(content, str) and content.startswith(CONTENT_JSON_PREFIX):
        try:
            content = decode_json(content[len(CONTENT_JSON_PREFIX):])
        except ValueError:  # Hermes itself then gives the raw string; the marker's NUL is left out
            return content[1:]
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    return "\n".join(_part_text(part) for part in parts)


def content_problem(content, locator: str) -> Draft | None:
    r"""The ``parser:`` row of a ``\x00json:`` content whose JSON does not decode (None when it is readable)."""
    if not (isinstance(content, str) and content.startswith(CONTENT_JSON_PREFIX)):
        return None
    try:
        decode_json(content[len(CONTENT_JSON_PREFIX):])
    except ValueError as exc:
        return bad_record(locator, f"content list is not JSON: {exc}", content[1:])
    return None


def _part_text(part) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return part["text"]
    if is_image_block(part):
        return image_placeholder(part)
    return setting_value(part)


def message_rows(message: dict, locator: str, base: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    """The rows of one message.

    Args:
        message: the message's fields (a state.db row, or a snapshot's message object).
        locator: the message's locator.
        base: the columns every row carries (time, session, project, branch, model, origin).
        ledger: the session's open tool calls.
    """
    role = as_text(message.get("role"))
    problem = content_problem(message.get("content"), f"{locator}/content")
    if problem is not None:
        yield problem
    if role == "assistant":
        yield from _assistant_rows(message, locator, base, ledger)
    elif role == "tool":
        yield from _tool_rows(message, locator, base, ledger)
    else:
        text = content_text(message.get("content"))
        if role == "user":
            yield Draft("user", text, f"{locator}/content", **base)
        elif role == "system":
            yield Draft("system", f"system message: {text}", f"{locator}/content", **base)
        else:
            yield Draft("system", f"message ({excerpt(role, 40)}): {text}", f"{locator}/content", **base)


def _assistant_rows(message: dict, locator: str, base: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    reasoning = as_text(message.get("reasoning"))
    other = as_text(message.get("reasoning_content"))
    if reasoning:
        yield Draft("thinking", reasoning, f"{locator}/reasoning", **base)
    if other and other != reasoning:
        yield Draft("thinking", other, f"{locator}/reasoning_content", **base)
    text = content_text(message.get("content"))
    if text:
        yield Draft("assistant", text, f"{locator}/content", **base)
    calls, problem = _calls(message.get("tool_calls"), f"{locator}/tool_calls")
    if problem is not None:
        yield problem
    for position, call in enumerate(calls):
        yield from _call_row(call, f"{locator}/tool_calls/{position}", base, ledger)


def _calls(value, locator: str) -> tuple[list, Draft | None]:
    """The tool_calls array (a JSON text in state.db, a list in a snapshot), or the row saying it is unreadable."""
    if value in (None, ""):
        return [], None
    if isinstance(value, str):
        try:
            value = decode_json(value)
        except ValueError as exc:
            return [], bad_record(locator, f"tool_calls is not JSON: {exc}", value)
    if not isinstance(value, list):
        return [], bad_record(locator, "tool_calls is not an array", setting_value(value))
    return value, None


def _call_row(call, where: str, base: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    if not isinstance(call, dict):
        yield bad_record(where, "tool call is not an object", setting_value(call))
        return
    function = as_dict(call.get("function"))
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else setting_value(arguments if arguments is not None else {})
    draft = Draft("tool_use", text, where, tool_name=as_text(function.get("name")),
                  tool_use_id=as_text(call.get("id")), **base)
    ledger.called(draft)
    yield draft


def _tool_rows(message: dict, locator: str, base: dict, ledger: BoundedLedger) -> Iterator[Draft]:
    call_id = as_text(message.get("tool_call_id"))
    call = ledger.take(call_id)
    name = as_text(message.get("tool_name") or message.get("name")) or (call.tool_name if call else "")
    text = content_text(message.get("content"))
    where = f"{locator}/content"
    yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **base)
    decision = decision_of(text)
    if decision:
        yield Draft("system", decision, where, tool_name=name, tool_use_id=call_id, **base)
    if call is None and not ledger.was_called(call_id):
        yield Draft("system", f"parser: tool result for {name or call_id} with no tool call before it", where,
                    tool_name=name, tool_use_id=call_id, **base)


def decision_of(text: str) -> str:
    """The permission decision a terminal result records: a refusal (``status: blocked``) or an approval."""
    if not text.startswith("{") or ('"blocked"' not in text and '"approval"' not in text):
        return ""  # most results: not a terminal result object, nothing to decode
    try:
        result = decode_json(text)
    except ValueError:
        return ""
    result = as_dict(result)
    if result.get("status") == "blocked":
        error = as_text(result.get("error"))
        return next((decision for start, decision in REFUSALS if error.startswith(start)),
                    f"permission decision: blocked ({excerpt(error, 200)})")
    approval = result.get("approval")
    if isinstance(approval, str):
        if "auto-approved by smart approval" in approval:
            return "permission decision: approved by smart approval"
        if "approved by the user" in approval:
            return "permission decision: approved"
    return ""

