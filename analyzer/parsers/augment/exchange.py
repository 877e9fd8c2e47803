"""One ``exchange:<conversation>:<exchange>`` value of Augment's kv-store: a request and its response, as rows.

The value is a JSON object [obs, community extractors]: ``request_message``
(the prompt, empty when the exchange only sends tool results back),
``response_text``, ``request_nodes``, ``response_nodes``, ``model_id``,
``status`` and ``timestamp`` (ISO 8601). The nodes are read where they have
the shapes of Augment's chat API that its CLI, Auggie, writes [src: npm
@augmentcode/auggie 0.36.0; the same vendor API, an inference for the
extension]: a response node of type 5 carries ``tool_use {tool_use_id,
tool_name, input_json}``, type 8 ``thinking {content}``; a request node of
type 1 carries ``tool_result_node {tool_use_id, content, is_error}``, the
result of a call made in an earlier exchange. Other nodes (IDE state, text
nodes repeating the prompt) are not read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.calls import no_result_row
from aitrail.analyzer.formats.idioms import as_dict, as_list, epoch_ns, escape_key
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.view.rows import Draft

PREFIX = "exchange:"
TOOL_USE, THINKING, TOOL_RESULT = 5, 8, 1


def conversation_of(key: str) -> str:
    """The conversation id of an ``exchange:<conversation>:<exchange>`` key ('' when the key has no such part)."""
    parts = key.split(":", 2)
    return parts[1] if len(parts) == 3 and parts[0] + ":" == PREFIX else ""


def calls_of(value: dict) -> Iterator[tuple[str, str]]:
    """(tool_use_id, tool_name) of every tool call the exchange's response makes."""
    for node in as_list(value.get("response_nodes")):
        node = as_dict(node)
        use = node.get("tool_use")
        if node.get("type") == TOOL_USE and isinstance(use, dict) and label(use.get("tool_use_id")):
            yield use["tool_use_id"], label(use.get("tool_name"))


def results_of(value: dict) -> Iterator[str]:
    """The tool_use_id of every tool result the exchange's request sends back."""
    for node in as_list(value.get("request_nodes")):
        node = as_dict(node)
        result = node.get("tool_result_node")
        if node.get("type") == TOOL_RESULT and isinstance(result, dict) and label(result.get("tool_use_id")):
            yield result["tool_use_id"]


@dataclass
class Exchange:
    """What every row of one exchange version shares, and how its calls join their results."""

    value: dict
    locator: str  # the version's place in its file, the JSON pointer appended per row
    session_id: str
    project: str
    tool_names: dict[tuple[str, str], str]  # (conversation, tool_use_id) -> tool name, from the whole directory
    answered: frozenset[tuple[str, str]] | None  # (conversation, tool_use_id) with a result anywhere; None: unknown

    def where(self, *pointer) -> str:
        """The locator of a part of the value."""
        return self.locator + "".join("/" + escape_key(part) for part in pointer)

    def columns(self, model: str = "") -> dict:
        """Time (the value's ``timestamp``), session, project and model."""
        when = epoch_ns(self.value.get("timestamp"))
        return {"timestamp_ns": when, "timestamp_source": "record" if when is not None else "none",
                "session_id": self.session_id, "project_path": self.project, "model": model}

    def rows(self) -> Iterator[Draft]:
        """The prompt, the results sent back, thinking, the reply, the calls and an unfinished status, in that order."""
        value, model = self.value, label(self.value.get("model_id"))
        prompt = as_text(value.get("request_message"))
        if prompt:
            yield Draft("user", prompt, self.where("request_message"), **self.columns())
        for index, node in enumerate(as_list(value.get("request_nodes"))):
            result = as_dict(node).get("tool_result_node")
            if as_dict(node).get("type") == TOOL_RESULT and isinstance(result, dict):
                yield self.result_row(result, self.where("request_nodes", index, "tool_result_node"))
        nodes = as_list(value.get("response_nodes"))
        for index, node in enumerate(nodes):
            thinking = as_dict(as_dict(node).get("thinking"))
            if as_dict(node).get("type") == THINKING and as_text(thinking.get("content")):
                yield Draft("thinking", as_text(thinking["content"]), self.where("response_nodes", index, "thinking"),
                            **self.columns(model))
        reply = as_text(value.get("response_text"))
        if reply:
            yield Draft("assistant", reply, self.where("response_text"), **self.columns(model))
        for index, node in enumerate(nodes):
            use = as_dict(node).get("tool_use")
            if as_dict(node).get("type") == TOOL_USE and isinstance(use, dict):
                yield from self.call_rows(use, self.where("response_nodes", index, "tool_use"), model)
        status = label(value.get("status"))
        if status and status != "success":
            yield Draft("system", f"exchange status: {status}", self.where("status"), **self.columns(model))

    def result_row(self, result: dict, where: str) -> Draft:
        """A ``tool_result`` row, named after its call wherever in the directory the call is."""
        call_id = label(result.get("tool_use_id"))
        text = as_text(result.get("content"))
        if result.get("is_error") is True:
            text = f"[tool error] {text}"
        name = self.tool_names.get((self.session_id, call_id), "") if call_id else ""
        return Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **self.columns())

    def call_rows(self, use: dict, where: str, model: str) -> Iterator[Draft]:
        """A ``tool_use`` row (its input JSON as written), and the row saying no result is anywhere for it."""
        call_id, name = label(use.get("tool_use_id")), label(use.get("tool_name"))
        call = Draft("tool_use", as_text(use.get("input_json")), where, tool_name=name,
                     tool_use_id=call_id or f"position:{where}", **self.columns(model))
        yield call
        if self.answered is not None and (self.session_id, call_id) not in self.answered:
            yield no_result_row(call)
