"""Auggie session files: ``~/.augment/sessions/<id>.json`` (and ``<id>-backup<N>.json``), one conversation each.

The envelope is [src] (``saveSession``): ``sessionId``, ``created`` and
``modified`` (``new Date().toISOString()``, UTC), ``title`` / ``customTitle``,
``workspaceId``, ``rootTaskUuid``, ``parentConversationId``,
``isCloudAgent``, ``agentState`` (``modelId``, ``userGuidelines``,
``workspaceGuidelines``, ``userEmail``), ``summarizations``, ``subAgents``
and ``queue``. ``chatHistory`` items are [src] (``pushExchange``):
``{exchange, completed, sequenceId, finishedAt, changedFiles,
changedFilesSkipped, changedFilesSkippedCount}``, the exchange
``{request_message, response_text, request_id, request_nodes,
response_nodes, model_id}``. Response nodes: type 0 text (joined into
``response_text``), 5 ``tool_use {tool_use_id, tool_name, input_json}``,
8 thinking (``content`` / ``thinking.content``); a request node of type 1 is
``tool_result_node {tool_use_id, content, is_error, content_nodes}``: the
result of a call made in an earlier exchange, so calls and results join by
``tool_use_id`` across the whole file. A request text node (types 0 and 10)
that repeats ``request_message`` is not shown twice; other node types and the
inner shapes of ``changedFiles``, ``summarizations`` and ``subAgents`` are
not established, and are shown as bounded excerpts naming what they are.

Rows of an exchange are timed by its ``finishedAt`` (ISO UTC); the session
rows by ``created``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, as_list, pointer, setting_value
from aitrail.analyzer.formats.json_values import document_or_row
from aitrail.analyzer.formats.text import bad_record, base64_size, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

_BACKUP = re.compile(r"^(?P<id>.+)-backup\d+\.json$")
SESSION_FACTS = ("created", "modified", "workspaceId", "rootTaskUuid", "parentConversationId", "isCloudAgent",
                 "poseidonAgentId", "remoteCreatedAt", "terminalId", "subAgentCreditsUsed", "subAgentCostUsd")
TOOL_USE, THINKING, TEXT = 5, 8, 0
TOOL_RESULT = 1
TEXT_NODES = (0, 10)


def text_of(value) -> str:
    """A string as it is; anything else as compact JSON ('' for None)."""
    return "" if value is None else value if isinstance(value, str) else setting_value(value)


class SessionReader:
    """One session document: its columns, the model in use and the calls waiting for their results."""

    def __init__(self, ctx: ParseContext, document: dict) -> None:
        named = _BACKUP.match(ctx.source.name)
        fallback = named.group("id") if named else ctx.source.name.removesuffix(".json")
        self.session_id = text_of(document.get("sessionId")) or fallback
        self.document = document
        self.model = ""
        self.calls = BoundedLedger()

    def times(self, iso) -> dict:
        """Time columns from an ISO time (untimed when it is not one)."""
        ns = ns_from_iso(iso)
        return {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else {"timestamp_source": "none"}

    def base(self, iso, model: str = "") -> dict:
        """The columns every row of the session shares."""
        return {"session_id": self.session_id, "model": model, **self.times(iso)}

    # -- the envelope -------------------------------------------------------------------------------------------

    def session_rows(self) -> Iterator[Draft]:
        """The ``session:`` row, the session's model and guidelines."""
        document, created = self.document, self.document.get("created")
        title = text_of(document.get("customTitle")) or text_of(document.get("title")) or self.session_id
        state = as_dict(document.get("agentState"))
        facts = [f"{key}={text_of(document[key])}" for key in SESSION_FACTS if document.get(key) not in (None, "")]
        if isinstance(state.get("userEmail"), str) and state["userEmail"]:
            facts.append(f"account={state['userEmail']}")
        yield Draft("system", f"session: {title} ({', '.join(facts)})", "json:/", **self.base(created))
        model = text_of(state.get("modelId"))
        if model:
            yield Draft("system", f"model: {model} (the session's model when it was last saved, agentState.modelId)",
                        pointer("agentState", "modelId"), **self.base(document.get("modified"), model))
        for key, label in (("userGuidelines", "user guidelines"), ("workspaceGuidelines", "workspace guidelines")):
            if isinstance(state.get(key), str) and state[key].strip():
                yield Draft("system", f"{label}: {state[key]}", pointer("agentState", key), **self.base(created))

    def extra_rows(self) -> Iterator[Draft]:
        """Summaries, sub-agents (shapes not established: excerpts) and the queued messages not yet sent."""
        modified = self.document.get("modified")
        for key, label in (("summarizations", "summarization"), ("subAgents", "subagent")):
            for index, item in enumerate(as_list(self.document.get(key))):
                yield Draft("system", f"{label}: {excerpt(setting_value(item))}", pointer(key, index),
                            **self.base(modified))
        for index, message in enumerate(as_list(as_dict(self.document.get("queue")).get("messages"))):
            message = as_dict(message)
            yield Draft("system", f"queued message ({text_of(message.get('mode')) or 'no mode'}, not sent when the "
                                  f"session was saved): {text_of(message.get('text'))}",
                        pointer("queue", "messages", index), **self.base(modified))

    # -- exchanges ----------------------------------------------------------------------------------------------

    def item_rows(self, item, index: int) -> Iterator[Draft]:
        """The rows of one chatHistory item, in the order they happened."""
        where = pointer("chatHistory", index)
        if not isinstance(item, dict) or not isinstance(item.get("exchange"), dict):
            yield bad_record(where, "a chatHistory item without an exchange object", setting_value(item))
            return
        exchange, finished = item["exchange"], item.get("finishedAt")
        model = text_of(exchange.get("model_id"))
        yield from self.model_rows(model, f"{where}/exchange/model_id", finished)
        yield from self.request_rows(exchange, f"{where}/exchange", finished)
        if item.get("isHistorySummary") is True:
            yield Draft("system", f"compaction: history summary: {text_of(exchange.get('response_text'))}",
                        f"{where}/exchange/response_text", **self.base(finished, model))
        else:
            yield from self.response_rows(exchange, f"{where}/exchange", finished, model)
        yield from self.state_rows(item, where, finished)

    def model_rows(self, model: str, where: str, finished) -> Iterator[Draft]:
        """``model:`` where an exchange's model is first seen or changes."""
        if model and model != self.model:
            text = f"model: {self.model} -> {model}" if self.model else f"model: {model}"
            self.model = model
            yield Draft("system", text, where, **self.base(finished, model))

    def request_rows(self, exchange: dict, where: str, finished) -> Iterator[Draft]:
        """Tool results of earlier calls (request nodes), then the user's message."""
        message = text_of(exchange.get("request_message"))
        for index, node in enumerate(as_list(exchange.get("request_nodes"))):
            yield from self.request_node(node, message, f"{where}/request_nodes/{index}", finished)
        if message:
            yield Draft("user", message, f"{where}/request_message", **self.base(finished))

    def request_node(self, node, message: str, where: str, finished) -> Iterator[Draft]:
        """A tool_result node as its ``tool_result`` row; a text node that is not the request message as a row."""
        node = as_dict(node)
        kind = node.get("type")
        if kind == TOOL_RESULT and isinstance(node.get("tool_result_node"), dict):
            yield from self.result_row(node["tool_result_node"], f"{where}/tool_result_node", finished)
        elif kind in TEXT_NODES and isinstance(node.get("text_node"), dict):
            text = text_of(node["text_node"].get("content"))
            if text and text != message:
                yield Draft("system", f"request text node (type {kind}): {text}", f"{where}/text_node",
                            **self.base(finished))
        else:
            yield Draft("system", f"request node (type {text_of(kind)}): {excerpt(setting_value(node))}", where,
                        **self.base(finished))

    def result_row(self, result: dict, where: str, finished) -> Iterator[Draft]:
        """A tool result joined to its call by ``tool_use_id`` (a row when no call came before it)."""
        call_id = text_of(result.get("tool_use_id"))
        call = self.calls.take(call_id)
        text = text_of(result.get("content")) or _content_nodes_text(result.get("content_nodes"))
        if result.get("is_error") is True:
            text = f"[tool error] {text}"
        name = call.tool_name if call is not None else ""
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **self.base(
            finished, call.model if call is not None else ""))
        if call is None and not self.calls.was_called(call_id):
            yield Draft("system", "parser: tool result for an unknown tool with no tool call before it", where,
                        tool_use_id=call_id, **self.base(finished))

    def response_rows(self, exchange: dict, where: str, finished, model: str) -> Iterator[Draft]:
        """Thinking nodes, the reply text, then the tool calls, in the order the nodes give them."""
        nodes = [as_dict(node) for node in as_list(exchange.get("response_nodes"))]
        for index, node in enumerate(nodes):
            if node.get("type") == THINKING:
                thinking = as_dict(node.get("thinking")).get("content", node.get("content"))
                yield Draft("thinking", text_of(thinking), f"{where}/response_nodes/{index}",
                            **self.base(finished, model))
        reply = text_of(exchange.get("response_text"))
        if reply:
            yield Draft("assistant", reply, f"{where}/response_text", **self.base(finished, model))
        for index, node in enumerate(nodes):
            kind = node.get("type")
            if kind == TOOL_USE and isinstance(node.get("tool_use"), dict):
                yield self.call_row(node["tool_use"], f"{where}/response_nodes/{index}/tool_use", finished, model)
            elif kind not in (TEXT, THINKING, TOOL_USE):
                yield Draft("system", f"response node (type {text_of(kind)}): {excerpt(setting_value(node))}",
                            f"{where}/response_nodes/{index}", **self.base(finished, model))

    def call_row(self, use: dict, where: str, finished, model: str) -> Draft:
        """A ``tool_use`` row: the call's input JSON as written, its id for the result to join."""
        call_id = text_of(use.get("tool_use_id")) or f"position:{where}"
        name = text_of(use.get("tool_name"))
        server = text_of(use.get("mcp_server_name"))
        text = text_of(use.get("input_json")) + (f" (MCP server {server})" if server else "")
        call = Draft("tool_use", text, where, tool_name=name, tool_use_id=call_id, **self.base(finished, model))
        self.calls.called(call)
        return call

    def state_rows(self, item: dict, where: str, finished) -> Iterator[Draft]:
        """An exchange not completed, and the files it changed."""
        if item.get("completed") is False:
            yield Draft("system", "exchange not completed (completed=false)", f"{where}/completed",
                        **self.base(finished))
        changed, skipped = as_list(item.get("changedFiles")), item.get("changedFilesSkippedCount")
        if changed or (isinstance(skipped, int) and not isinstance(skipped, bool) and skipped > 0):
            yield Draft("system", f"changed files: {excerpt(setting_value(changed))}"
                                  + (f" ({skipped} more skipped)" if skipped else ""), f"{where}/changedFiles",
                        **self.base(finished))


def _content_nodes_text(nodes) -> str:
    """A tool result's content nodes: text as it is, an image as its format and size, never its bytes."""
    parts = []
    for node in as_list(nodes):
        node = as_dict(node)
        if isinstance(node.get("text_content"), str):
            parts.append(node["text_content"])
        elif isinstance(node.get("image_content"), dict):
            data = node["image_content"].get("image_data")
            size = f", {base64_size(data)} bytes" if isinstance(data, str) else ""
            parts.append(f"[image {text_of(node['image_content'].get('format'))}{size}]")
    return "\n".join(parts)


def parse_session(ctx: ParseContext) -> Iterator[Draft]:
    """A session file: the session's rows, every exchange's rows, then the calls never answered."""
    document = yield from document_or_row(json_document(ctx.data, "session file"))
    if document is None:
        return
    reader = SessionReader(ctx, document)
    yield from reader.session_rows()
    history = document.get("chatHistory")
    if history is not None and not isinstance(history, list):
        yield bad_record(pointer("chatHistory"), "chatHistory is not a list", setting_value(history))
    for index, item in enumerate(as_list(history)):
        yield from reader.item_rows(item, index)
    yield from reader.extra_rows()
    yield from reader.calls.orphans()
    yield from reader.calls.over_limit_rows()
