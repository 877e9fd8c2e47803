r"""Codex ResponseItems (the model-visible history) as timeline rows, for every rollout generation.

The TypeScript CLI's ``items[]``, the untagged Rust lines and the ``payload`` of
tagged ``response_item`` lines are the same OpenAI Responses items::

    {"type":"message","role":"user","content":[{"type":"input_text","text":"fix the login"}]}
    {"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"call_1"}
    {"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"a.py\\n\",\"metadata\":{\"exit_code\":0}}"}
    {"type":"reasoning","summary":[{"type":"summary_text","text":"**Planning**"}],"encrypted_content":"gAAA..."}

Calls and results are joined by ``call_id`` only (``formats.call_budget.BoundedLedger``: a CallLedger
holding at most MAX_CALL_IDS ids of one file, the calls past it counted). ``arguments`` is
a JSON *string*: shell calls show the decoded command, other calls the string
itself (it already is JSON text). An output that is itself a JSON string
``{"output":..., "metadata":...}`` (rollouts before 2026-05) is decoded once more.
Image parts are shown by the shared ``formats.text.image_placeholder``; an item
written without its ``type`` is read as the one type its fields fit (``item_kind``).

References: openai/codex@ed6e5cf919 codex-rs/protocol/src/models.rs:703-749,753-909,1170-1235,1313-1328;
codex-rs/core/src/tools/mod.rs:61-86; openai/codex@82061660ae core/src/tools/mod.rs (JSON output);
openai/codex@0846c126ea codex-rs/core/src/event_mapping.rs (contextual user messages, reply events);
openai/codex@01baf68dc7 codex-rs/protocol/src/items.rs (one agent_message event per text part);
openai/codex@001cb8e233 codex-rs/protocol/src/models.rs (ResponseItem, tagged by ``type``);
openai/openai-python@0ff7d7b513 src/openai/types/responses/easy_input_message.py (``type`` optional);
openai/codex@109c40defd codex-rs/core/src/context/contextual_user_message.rs;
openai/codex@c8984c96f2 codex-rs/core/src/context/user_instructions.rs;
openai/codex@001f15e971 codex-rs/core/src/tools/events.rs (rejection texts);
openai/codex@01d69e28a9 codex-cli/src/utils/agent/handle-exec-command.ts (TypeScript denials);
zazula/codex-1@eb1534727f (fork of openai/codex) codex-rs/core/src/context/approved_command_prefix_saved.rs
(research/formats-cli-agents.md 2.3, 2.4).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable, Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, plain
from aitrail.analyzer.formats.text import excerpt, image_placeholder, is_image_block
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

# Function names whose arguments carry a command line: shown as the command itself.
SHELL_TOOLS = frozenset({"shell", "container.exec", "shell_command", "exec_command", "local_shell"})
# Text parts that begin like this are written by the harness, not typed by the user.
CONTEXT_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ", "<user_shell_command>",
    "<turn_aborted>", "<subagent_notification>", "<skill>", "<external_", "<INSTRUCTIONS>",
    "<permissions instructions>", "<collaboration_mode>", "<model_switch>", "<personality_spec>",
)
_WRAPPED_BLOCK = re.compile(r"^\s*<([a-z][a-z0-9_]*)(?:\s[^>]*)?>.*</\1>\s*$", re.DOTALL)
_IMAGE_TAG = re.compile(r"^\s*</?(?:local_)?image\b[^>]*>\s*$")
PREFIX_SAVED = "Approved command prefix saved:"
# The texts Codex writes as a call's output when the user answers "no" to an approval prompt.
REJECTIONS = ("exec command rejected by user", "patch rejected by user")
# The row of a prompt's response line when its user_message event is kept (parsers/codex/pairing.py).
PROMPT_REPEAT = "duplicate of line {line} (the prompt, as its user_message event)"
# The TypeScript CLI's stand-ins for the user's answer, sent as a user message after a denial.
DENIAL_NOTES = ("No, don't do that — keep going though.", "No, don't do that — stop for now.")


def as_text(value) -> str:
    """A string as it is; anything else as compact JSON (None as empty)."""
    if isinstance(value, str):
        return value
    if type(value) is int:  # token counts, exit codes: what json.dumps writes for an int, without it
        return str(value)
    if isinstance(value, bytes):
        return plain(value)
    return "" if value is None else json_value(value)


def json_value(value) -> str:
    """Compact JSON with sorted keys, for arguments, metadata and excerpts (settings: ``idioms.setting_value``)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=plain)


_ASCII_WHITESPACE = bytes(code for code in range(128) if chr(code).isspace())  # what str.split() drops, in ASCII


def signature(text: str) -> bytes:
    """What two records of the same content share: the text without any whitespace, as a digest.

    A digest, so that pairing a large rollout holds 16 bytes per record, not its text.
    """
    if text.isascii():  # the same bytes as below, deleted in C: no list of words (7x faster for 2 KB)
        squeezed = text.encode("ascii").translate(None, _ASCII_WHITESPACE)
    else:
        squeezed = "".join(text.split()).encode("utf-8", "surrogatepass")
    # SHA-256 (16 bytes of it): twice as fast as BLAKE2b where the CPU has SHA instructions
    return hashlib.sha256(squeezed).digest()[:16]


# -- message content ------------------------------------------------------------------------


# the content part types that hold text (``content_parts`` kind ``text``), and the field that holds each one's text
_TEXT_FIELDS = {"input_text": "text", "output_text": "text", "text": "text", "summary_text": "text",
                "reasoning_text": "text", "refusal": "refusal"}


def content_parts(content) -> list[tuple[str, str]]:
    """(kind, text) per content part: kind ``text``, ``image`` (``formats.text.image_placeholder``) or ``other``."""
    if isinstance(content, str):
        return [("text", content)]
    if not isinstance(content, list):
        return [] if content is None else [("other", as_text(content))]
    parts = []
    for part in content:
        part_dict = as_dict(part)
        kind = part_dict.get("type")
        field = _TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
        if field is not None:
            parts.append(("text", as_text(part_dict.get(field))))
        elif is_image_block(part_dict):
            parts.append(("image", image_placeholder(part_dict)))
        elif kind == "encrypted_content":
            parts.append(("other", "[encrypted content]"))
        else:
            parts.append(("other", as_text(part)))
    return parts


def text_parts(content) -> list[str]:
    """The texts of a content's text parts: ``content_parts``'s of kind ``text``, without the other parts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        field = _TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
        if field is not None:
            texts.append(as_text(part.get(field)))
    return texts


def content_text(content) -> str:
    """The texts of a message's content parts, one per line."""
    return "\n".join(text for _, text in content_parts(content))


def prompt_signature(content) -> bytes:
    """The typed text of a user message, as its user_message event repeats it (image tags left out)."""
    texts = [text for kind, text in content_parts(content) if kind == "text" and not _IMAGE_TAG.match(text)]
    return signature("".join(texts))


def reply_signatures(content) -> list[bytes]:
    """One signature per text part of an assistant message: what its ``agent_message`` events repeat.

    Codex writes one event per text part and none for an image part
    (event_mapping.rs ``parse_agent_message``, items.rs ``as_legacy_events``),
    so a reply that also holds an image still pairs with its event.
    """
    return [signature(text) for kind, text in content_parts(content) if kind == "text"]


def is_context(content) -> bool:
    """A user-role message the harness wrote (environment, AGENTS.md, shell and abort notices)."""
    for kind, text in content_parts(content):
        if kind == "text" and (text.lstrip().startswith(CONTEXT_PREFIXES) or _WRAPPED_BLOCK.match(text)
                               or text.strip() in DENIAL_NOTES):
            return True
    return False


def reasoning_texts(item: dict) -> tuple[list[str], list[str]]:
    """(summary parts, raw content parts) of a reasoning item."""
    return text_parts(item.get("summary")), text_parts(item.get("content"))


# -- items written without their type ---------------------------------------------------------


def item_kind(item: dict) -> str | None:
    """A ResponseItem's type: its ``type`` tag; when the tag is missing (or null), the one type its fields fit.

    A ``type`` of another JSON kind (a list, a number) is no tag: None, an unknown item.
    """
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return untagged_kind(item) if kind is None else None


def untagged_kind(item: dict) -> str | None:
    """The ResponseItem type whose required fields an untagged item has, when exactly one type has them.

    Upstream's variants (protocol/src/models.rs ``ResponseItem``) share no such
    set: ``role`` + ``content`` is only a message (the Responses API's
    ``EasyInputMessage`` makes ``type`` optional), a ``summary`` list only
    reasoning, ``name`` + ``arguments`` + ``call_id`` only a function call,
    ``name`` + ``input`` + ``call_id`` only a custom tool call, and ``call_id``
    + ``output`` a call's output (function or custom: read alike). Anything
    else, or an item that fits two, stays an unknown item.
    """
    fits = []
    if isinstance(item.get("role"), str) and isinstance(item.get("content"), (list, str)):
        fits.append("message")
    if isinstance(item.get("summary"), list):
        fits.append("reasoning")
    called = isinstance(item.get("call_id"), str)
    if called and isinstance(item.get("name"), str) and "arguments" in item:
        fits.append("function_call")
    if called and isinstance(item.get("name"), str) and "input" in item:
        fits.append("custom_tool_call")
    if called and "output" in item:
        fits.append("function_call_output")
    return fits[0] if len(fits) == 1 else None


# -- calls and results ------------------------------------------------------------------------


def decode_arguments(raw) -> dict | None:
    """The arguments object of a function call (a JSON string on disk), or None."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    try:
        value = decode_json(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def command_text(command) -> str:
    """A command as the user would type it: an argv list shell-quoted, a string as it is.

    ``["apply_patch", "<patch>"]`` (how early Rust builds sent patches) keeps the
    patch body unquoted on the lines after the name.
    """
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        if len(command) == 2 and command[0] == "apply_patch":
            return f"apply_patch\n{command[1]}"
        return shlex.join(command)
    return as_text(command)


def call_text(name: str, raw_arguments) -> str:
    """The text of a function call row (the rule is in docs/agents/codex.md)."""
    arguments = decode_arguments(raw_arguments)
    if arguments is None:
        return as_text(raw_arguments)
    command_key = "command" if "command" in arguments else ("cmd" if "cmd" in arguments else None)
    if name in SHELL_TOOLS and command_key:
        lines = [command_text(arguments[command_key])]
        lines += [f"{key}: {as_text(value)}" for key, value in arguments.items() if key != command_key]
        return "\n".join(lines)
    if name == "apply_patch" and isinstance(arguments.get("input"), str) and len(arguments) == 1:
        return arguments["input"]
    return raw_arguments if isinstance(raw_arguments, str) else json_value(raw_arguments)


def output_text(output) -> str:
    """A call's output as text; the older JSON-string form is decoded once more."""
    if isinstance(output, dict) and "content" in output:  # a FunctionCallOutputPayload written as an object
        return output_text(output.get("content"))
    if isinstance(output, list):
        return content_text(output)
    text = as_text(output)
    if text.lstrip().startswith("{"):
        try:
            decoded = decode_json(text)
        except ValueError:
            return text
        if isinstance(decoded, dict) and "output" in decoded and set(decoded) <= {"output", "metadata"}:
            body = as_text(decoded.get("output"))
            if "metadata" in decoded:
                separator = "" if body.endswith("\n") or not body else "\n"
                body += separator + f"metadata: {json_value(decoded['metadata'])}"
            return body
    return text


def rejection(output, text: str | None = None) -> bool:
    """Whether a call's output is what Codex writes when the user denied the call.

    Rust: ``exec command rejected by user`` / ``patch rejected by user``. TypeScript
    CLI: ``{"output":"aborted","metadata":{}}`` (an automatic rejection by the
    approval policy carries an ``error`` in its metadata and is not the user's).
    ``text``: ``output_text(output)``, when the caller has it already.
    """
    text = output_text(output) if text is None else text
    # lstrip, not strip: no phrase ends in whitespace, and a multi-KB output is not copied twice
    if text.lstrip().startswith(REJECTIONS):
        return True
    raw = as_text(output)
    if not raw.lstrip().startswith("{"):
        return False
    try:
        decoded = decode_json(raw.strip())
    except ValueError:
        return False
    return isinstance(decoded, dict) and decoded.get("output") == "aborted" and decoded.get("metadata") == {}


def tool_name(item: dict) -> str:
    """A call's tool name, with its namespace (``namespace.name``) when it has one."""
    name = as_text(item.get("name"))
    namespace = item.get("namespace")
    return f"{namespace}.{name}" if isinstance(namespace, str) and namespace else name


# -- one item, many rows ----------------------------------------------------------------------


class ItemReader:
    """Turns ResponseItems into Drafts; ``moment`` holds the columns every row shares."""

    def __init__(self) -> None:
        self.calls = BoundedLedger()  # every call id of the file, within call_budget.MAX_CALL_IDS

    def rows(self, item: dict, locator: str, moment: dict, duplicate_of: int | None = None) -> Iterable[Draft]:
        """The rows of one ResponseItem, by its ``item_kind``; an unknown type is one system row.

        The handler's own generator is handed back, not wrapped in one more:
        this runs once per rollout line.
        """
        kind = item_kind(item)
        handler = _HANDLERS.get(kind) if kind is not None else None
        if handler is None:
            return [Draft("system", f"unknown response item type {as_text(item.get('type')) or '(none)'}: "
                                    f"{excerpt(as_text(item))}", locator, **moment)]
        return handler(self, item, locator, moment, duplicate_of)

    # messages and reasoning

    def message(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A message: a prompt, reply, injected context, or a developer note of a saved prefix rule."""
        role, content = as_text(item.get("role")), item.get("content")
        text = content_text(content)
        if role == "user" and is_context(content):
            yield Draft("system", f"context (user): {text}", locator, **moment)
        elif role == "user" and duplicate_of is not None:
            yield Draft("system", PROMPT_REPEAT.format(line=duplicate_of), locator, **moment)
        elif role in ("user", "assistant"):
            yield Draft(role, text, locator, **moment)
        elif role == "developer" and text.lstrip().startswith(PREFIX_SAVED):
            # the body lists the saved prefixes as "- [\"git\", \"push\"]" lines (format_allow_prefixes)
            body = text.lstrip()[len(PREFIX_SAVED):].strip().split("\n")
            saved = "; ".join(entry.strip().removeprefix("- ") for entry in body if entry.strip())
            yield Draft("system", f"permission decision: approved, and saved as a prefix rule: {saved}", locator,
                        **moment)
        else:
            yield Draft("system", f"context ({role or 'no role'}): {text}", locator, **moment)

    def reasoning(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A reasoning item: its summary and content as one thinking row."""
        summary, raw = reasoning_texts(item)
        pieces = ["\n\n".join(summary)] if summary else []
        if raw:
            pieces.append("\n\n".join(raw))
        encrypted = item.get("encrypted_content")
        if isinstance(encrypted, str) and encrypted:
            pieces.append(f"[encrypted reasoning: {len(encrypted)} characters, not readable]")
        yield Draft("thinking", "\n\n".join(pieces) or "[reasoning item with no summary or content]", locator,
                    **moment)

    # calls

    def _call(self, name: str, text: str, call_id, locator: str, moment: dict) -> Draft:
        call = Draft("tool_use", text, locator, tool_name=name, tool_use_id=as_text(call_id), **moment)
        self.calls.called(call)
        return call

    def function_call(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A function call: a tool_use row with its decoded arguments."""
        name = tool_name(item)
        yield self._call(name, call_text(name, item.get("arguments")), item.get("call_id"), locator, moment)

    def custom_tool_call(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A custom (freeform) tool call: a tool_use row with its input."""
        yield self._call(tool_name(item), as_text(item.get("input")), item.get("call_id"), locator, moment)

    def local_shell_call(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A local shell call: a tool_use row with the command."""
        action = as_dict(item.get("action"))
        lines = [command_text(action.get("command"))]
        lines += [f"{key}: {as_text(value)}" for key, value in action.items()
                  if key not in ("command", "type") and value is not None]
        yield self._call("local_shell", "\n".join(lines), item.get("call_id"), locator, moment)

    def tool_search_call(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A tool search call: a tool_use row with its arguments."""
        yield self._call("tool_search", as_text(item.get("arguments")), item.get("call_id"), locator, moment)

    def web_search_call(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A web search call: a tool_use row with its query (no id on disk, so no result joins it)."""
        # No id survives on disk (ids are skip_serializing), so there is nothing to join a result to.
        action = as_dict(item.get("action"))
        query = action.get("query") or action.get("queries") or action.get("url") or action
        yield Draft("tool_use", as_text(query), locator, tool_name="web_search", **moment)

    def image_generation_call(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """An image generation call: a tool_use row and its result row."""
        # The call and its result are one record; both rows carry its id.
        call_id = as_text(item.get("id"))
        yield Draft("tool_use", as_text(item.get("revised_prompt")), locator, tool_name="image_generation",
                    tool_use_id=call_id, **moment)
        result = item.get("result")
        text = f"[generated image: {len(result)} base64 characters]" if isinstance(result, str) and result else \
            f"[no image: status {as_text(item.get('status'))}]"
        yield Draft("tool_result", text, locator, tool_name="image_generation", tool_use_id=call_id, **moment)

    # results

    def call_output(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A call's output: a tool_result row joined by call_id, a permission decision on a rejection."""
        call_id = as_text(item.get("call_id"))
        name, known = self.calls.called_name(call_id), self.calls.was_called(call_id)
        self.calls.take(call_id)
        name = name or as_text(item.get("name"))
        output = item.get("tools") if item.get("type") == "tool_search_output" else item.get("output")
        text = output_text(output)
        yield Draft("tool_result", text, locator, tool_name=name, tool_use_id=call_id, **moment)
        if not known:
            yield Draft("system", f"parser: tool result for {name or call_id or 'a tool'} with no tool call before it",
                        locator, tool_name=name, tool_use_id=call_id, **moment)
        if rejection(output, text):
            yield Draft("system", "permission decision: denied", locator, tool_name=name, tool_use_id=call_id,
                        **moment)

    # other items

    def compaction(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A compaction item: the encrypted summary, by size only."""
        encrypted = as_text(item.get("encrypted_content"))
        yield Draft("system", "compaction: encrypted summary of the earlier conversation "
                              f"({len(encrypted)} characters)", locator, **moment)

    def ghost_snapshot(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A ghost snapshot: the commit that records the working tree."""
        yield Draft("system", f"ghost snapshot: {as_text(item.get('ghost_commit'))}", locator, **moment)

    def agent_message(self, item, locator, moment, duplicate_of) -> Iterator[Draft]:
        """A message between agents: author, recipient and text."""
        yield Draft("system", f"inter-agent message from {as_text(item.get('author'))} to "
                              f"{as_text(item.get('recipient'))}: {content_text(item.get('content'))}",
                    locator, **moment)


_HANDLERS = {
    "message": ItemReader.message,
    "reasoning": ItemReader.reasoning,
    "function_call": ItemReader.function_call,
    "custom_tool_call": ItemReader.custom_tool_call,
    "local_shell_call": ItemReader.local_shell_call,
    "tool_search_call": ItemReader.tool_search_call,
    "web_search_call": ItemReader.web_search_call,
    "image_generation_call": ItemReader.image_generation_call,
    "function_call_output": ItemReader.call_output,
    "custom_tool_call_output": ItemReader.call_output,
    "tool_search_output": ItemReader.call_output,
    "compaction": ItemReader.compaction,
    "compaction_summary": ItemReader.compaction,
    "context_compaction": ItemReader.compaction,
    "ghost_snapshot": ItemReader.ghost_snapshot,
    "agent_message": ItemReader.agent_message,
}
