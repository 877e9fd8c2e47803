"""A VS Code chat session as the analyzer holds it: requests, response parts, tool calls and their joins.

formats/vscode_chat.py reads the three generations of session (and their
locators) into these objects; a parser renders them as rows. The joins made
here need no reading: a model call (``result.metadata.toolCallRounds``, ids
suffixed ``__vscode-<n>``) is paired with its ``toolInvocationSerialized`` part
by the id without the suffix, or by position when ``ChatRequest._by_position``
can trust it, and with its ``toolCallResults`` entry by its full or base id.

References: as formats/vscode_chat.py (research/formats-vscode-family.md 2.4-2.6;
microsoft/vscode-copilot-chat@31acd00a src/extension/prompt/common/conversation.ts:L348-404,
src/extension/intents/node/toolCallingLoop.ts:L1361).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_SUFFIX = re.compile(r"__vscode-\d+$")
# parts that only decorate the text around them (a link, a code block's file, an edit checkpoint):
# they neither separate markdown blocks nor are rows of their own
IGNORED_PARTS = frozenset({"inlineReference", "codeblockUri", "undoStop", "prepareToolInvocation",
                           "progressMessage", "progressTaskSerialized", "mcpServersStarting",
                           "clearToPreviousToolInvocation", "markdownVuln", "treeData"})


def base_call_id(call_id: str) -> str:
    """The model's tool-call id without Copilot's ``__vscode-<n>`` suffix (the id VS Code's parts carry)."""
    return _SUFFIX.sub("", call_id)


def same_name(call_name: str, tool_id: str) -> bool:
    """Whether a round's call and an invocation part name the same tool: equal, or one names none."""
    return not call_name or not tool_id or call_name == tool_id


@dataclass
class Confirmation:
    """How a tool call was confirmed: ``kind`` approved/denied (boolean era) or a ToolConfirmKind name."""

    kind: str
    detail: str = ""  # the setting id (kind "setting") or scope (kind "tool scope")
    locator: str = ""


@dataclass
class ToolInvocation:
    """A ``toolInvocationSerialized`` response part."""

    tool_call_id: str
    tool_id: str
    message: str
    input: str
    output: str
    is_error: bool
    is_complete: bool
    confirmation: Confirmation | None
    locator: str


@dataclass
class ToolCall:
    """One call the model made, from ``result.metadata.toolCallRounds[].toolCalls[]``."""

    id: str
    name: str
    arguments: str
    round_index: int
    locator: str

    @property
    def base_id(self) -> str:
        """The id without ``__vscode-<n>``."""
        return base_call_id(self.id)


@dataclass
class ToolRound:
    """One model call: the text it produced, its calls, its thinking, its start time."""

    id: str
    response: str
    thinking: str
    timestamp_ns: int | None
    calls: list[ToolCall]
    locator: str


@dataclass
class ResponsePart:
    """A response part in display order: kind ``markdown``, ``thinking``, ``tool`` or the part's own kind."""

    kind: str
    text: str
    locator: str


@dataclass
class ChatRequest:
    """One user turn and its response."""

    index: int
    request_id: str
    text: str
    timestamp_ns: int | None
    model_id: str
    resolved_model: str
    agent_id: str
    parts: list[ResponsePart]
    invocations: list[ToolInvocation]
    rounds: list[ToolRound]
    tool_results: dict[str, tuple[str, str]]  # call id as the model gave it -> (result text, locator)
    state: int | None  # modelState.value (gen C) or 2 for isCanceled
    completed_ns: int | None
    locator: str
    text_locator: str
    model_locator: str = ""
    elapsed_ms: int | None = None  # result.timings.totalElapsed: the response's duration

    @property
    def finished_ns(self) -> int | None:
        """When the response ended: ``modelState.completedAt``, else the request's time plus ``totalElapsed``."""
        if self.completed_ns is not None:
            return self.completed_ns
        if self.timestamp_ns is not None and self.elapsed_ms is not None:
            return self.timestamp_ns + self.elapsed_ms * 1_000_000
        return None

    @property
    def markdown(self) -> str:
        """The assistant text of the whole response, one text for all its markdown parts.

        Adjacent markdown parts are one block streamed in pieces and are joined as
        they are; blocks that other parts (a tool call, thinking) separate are
        joined by a blank line, as the chat view shows them apart.
        """
        blocks: list[list[str]] = []
        joined = False  # the last part that counts was markdown: this one continues its block
        for part in self.parts:
            if part.kind == "markdown":
                if joined:
                    blocks[-1].append(part.text)
                else:
                    blocks.append([part.text])
                joined = True
            elif part.kind not in IGNORED_PARTS:
                joined = False
        texts = ("".join(block).strip() for block in blocks)
        return "\n\n".join(text for text in texts if text)

    def result_for(self, call: ToolCall) -> tuple[str, str] | None:
        """The (text, locator) of ``toolCallResults`` for ``call``, by its full or its base id."""
        return self.tool_results.get(call.id) or self.tool_results.get(call.base_id)

    def calls(self, same_tool: Callable[[str, str], bool] = same_name,
              ) -> list[tuple[ToolCall, ToolInvocation | None, tuple[str, str] | None]]:
        """Every model call of the request with its response part and its result, in round order.

        Parts are joined by id (the call's id without ``__vscode-<n>``); a call no id joins
        (no id in its round entry, or parts with ids of their own) takes the n-th part as the
        n-th call when ``_by_position`` trusts the order, and a call with no id its result by
        that part's ``toolCallId``. ``same_tool(call name, part toolId)`` says whether two
        names are one tool (the parser knows its tools' two names).
        """
        calls = [call for round_ in self.rounds for call in round_.calls]
        by_id = {invocation.tool_call_id: invocation for invocation in self.invocations if invocation.tool_call_id}
        joined = [by_id.get(call.base_id) or by_id.get(call.id) for call in calls]
        placed = self._by_position(calls, joined, same_tool)
        by_base: dict[str, tuple[str, str]] = {}  # results by the id without __vscode-<n>
        for key, value in self.tool_results.items():
            by_base.setdefault(base_call_id(key), value)
        paired = []
        for call, by_key, by_place in zip(calls, joined, placed, strict=True):
            part = by_key or by_place
            part_id = part.tool_call_id if part is not None else ""
            result = self.result_for(call) if call.id else by_base.get(part_id) if part_id else None
            paired.append((call, part, result))
        return paired

    def _by_position(self, calls: list[ToolCall], joined: list[ToolInvocation | None],
                     same_tool: Callable[[str, str], bool]) -> list[ToolInvocation | None]:
        """The n-th part for each call no id joined, or None for every call when the order is not trusted.

        Trusted when there are as many parts as calls, each id-joined pair sits at one
        position, and every other pair's names agree where both name one: a missing part
        or an extra call shifts every pair after it, so one disagreement pairs none.
        """
        unpaired: list[ToolInvocation | None] = [None] * len(calls)
        if len(calls) != len(self.invocations) or all(part is not None for part in joined):
            return unpaired
        taken = {id(part) for part in joined if part is not None}
        for call, by_key, part in zip(calls, joined, self.invocations, strict=True):
            if by_key is not None and by_key is not part:
                return unpaired
            if by_key is None and (id(part) in taken or not same_tool(call.name, part.tool_id)):
                return unpaired
        return [part if by_key is None else None for by_key, part in zip(joined, self.invocations, strict=True)]


@dataclass
class ChatSession:
    """A normalised chat session of any generation."""

    session_id: str
    version: int
    generation: str  # "A", "B" or "C"
    title: str
    creation_ns: int | None
    last_message_ns: int | None
    initial_location: str
    requester: str
    requests: list[ChatRequest] = field(default_factory=list)
    problems: list = field(default_factory=list)  # Drafts: replay lines not applied, records not understood
    locator: str = ""

