"""Gemini CLI message records as timeline rows: parts, thoughts, tool calls, model changes.

One ``MessageRecord`` (chat JSONL line, legacy ``.json`` ``messages[]`` item)
is ``{id, timestamp, type: user|gemini|info|error|warning, content,
displayContent?}``; a ``gemini`` record adds ``toolCalls[]``, ``thoughts[]``,
``tokens`` and ``model``. ``content`` is a Gemini ``PartListUnion``: a string
or parts such as ``{text, thought?}``, ``{functionCall: {id, name, args}}``,
``{functionResponse: {id, name, response}}``, ``{inlineData: {mimeType}}``.

    {"id":"c1…2","timestamp":"2026-07-02T09:14:08.010Z","type":"gemini","content":"",
     "toolCalls":[{"id":"grep_search_1782983648010_0","name":"grep_search","args":{…},
                   "result":[{"functionResponse":{"id":"grep_search_…","name":"grep_search",
                              "response":{"output":"src/db/pool.py:14: …"}}}],"status":"success",
                   "timestamp":"2026-07-02T09:14:08.010Z"}],
     "thoughts":[{"subject":"…","description":"…","timestamp":"…"}],"model":"gemini-3-pro-preview"}

A tool call and its result live in the same ``toolCalls`` entry; the
``functionResponse`` parts sent back to the model are also recorded as a
synthetic ``user`` message (since 2026), which must never become a user row.
``SessionRenderer`` turns the messages of one session into rows, joins calls
to results by id across the session, tracks the model, and reports calls that
have no result. The walk over the parts themselves (thoughts, text, calls,
responses, the join and the denial texts) is shared with Qwen Code, a fork
that records the same Content: ``formats/gemini_content.py``.

References: google-gemini/gemini-cli@5411f113ca packages/core/src/services/chatRecordingTypes.ts:30-75,
packages/core/src/core/geminiChat.ts:464-560,1620-1650,
packages/core/src/scheduler/state-manager.ts:457-540 (denial text),
packages/core/src/scheduler/scheduler.ts:711-719,
packages/core/src/utils/environmentContext.ts:66-76,
packages/cli/src/ui/hooks/useExecutionLifecycle.ts:61-66 (research/formats-cli-agents.md 3.4).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.gemini_content import (
    ContentWalk,
    compact,
    denial_rows,
    function_response,
    moment,
    part_text,
    parts_of,
    result_groups,
    result_text,
)
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.rows import Draft, ns_from_iso

# User-role text the CLI injects, never typed by the user (system rows, not user rows).
INJECTED_USER_PREFIXES = (
    "<session_context>",
    "This is the Gemini CLI. We are setting up the context for our chat.",
    "I ran the following shell command:",
    "User has manually exited Plan Mode.",
    "Plan approved. Switching to",
    "<state_snapshot>",
)
# Model turns the CLI writes itself: after the context message (before 2026), after a compression summary.
INJECTED_MODEL_TEXTS = ("Got it. Thanks for the context!", "Got it. Thanks for the additional context!")
SYSTEM_TYPES = ("info", "error", "warning")


def user_text_kind(text: str) -> str:
    """``user`` for what the user typed, ``system`` for context the CLI injected."""
    return "system" if text.lstrip().startswith(INJECTED_USER_PREFIXES) else "user"


@dataclass
class Message:
    """The copy of a message that gives its rows, and where it is."""

    record: dict
    locator: str  # "line:5", "line:12/$set/messages/0", "json:/messages/3"
    marker: str = ""  # "rewound@line:9" / "replaced@line:12": the message left the conversation there
    first_time: str | None = None  # the timestamp of the first copy (copies keep it; see the docs)

    def at(self, *parts) -> str:
        """The locator of a part of this message, marked when the copy was rewound or replaced."""
        locator = "/".join([self.locator, *(str(part) for part in parts)])
        return f"{locator}/{self.marker}" if self.marker else locator

    @property
    def kind(self) -> str:
        """The message's ``type`` ('' if it has none)."""
        value = self.record.get("type")
        return value if isinstance(value, str) else ""

    @property
    def message_id(self) -> str:
        """The message's ``id`` as text ('' if none)."""
        return str(self.record.get("id") or "")


class SessionRenderer:
    """Rows of one session's messages, in the order the caller gives them.

    Built over every message of the session first, so that a result recorded
    only in a later synthetic user message still meets its call, and a
    functionResponse already recorded with its call is not repeated.

    Its id sets and call ledger hold ids of the messages it is given, and no
    more than they hold: those are within the replay's budget for a chat
    (``replay.MAX_HELD_COST``) and within the document limits for a legacy or
    saved chat, so they need no budget of their own.
    """

    def __init__(self, messages: list[Message], base: dict, subagent: bool = False):
        self.base = base
        self.subagent = subagent  # a sub-agent's "user" turns are what the parent agent sent it
        self.model = ""
        self.call_ids: set[str] = set()
        self.result_ids: set[str] = set()
        self.walk = ContentWalk()  # calls whose result has not been met yet, the ids answered and made rows
        for message in messages:
            for call in self._tool_calls(message):
                if not isinstance(call, dict):
                    continue  # reported where the message's rows are made
                call_id = str(call.get("id") or "")
                if call_id:
                    self.call_ids.add(call_id)
                    if call.get("result") not in (None, [], ""):
                        self.result_ids.add(call_id)

    @staticmethod
    def _tool_calls(message: Message) -> list:
        calls = message.record.get("toolCalls") if message.kind == "gemini" else None
        return calls if isinstance(calls, list) else []

    def _time(self, message: Message) -> dict:
        return moment(message.first_time if ns_from_iso(message.first_time) else message.record.get("timestamp"))

    def rows(self, message: Message) -> Iterator[Draft]:
        """The rows of one message, by its type."""
        kind = message.kind
        produced = False
        if kind == "user":
            rows = self._user(message)
        elif kind == "gemini":
            rows = self._gemini(message)
        else:
            rows = self._system(message)
        for row in rows:
            produced = True
            yield row
        if not produced:
            yield Draft("system", f"message {message.message_id} ({kind or 'no type'}) has no text, thoughts or "
                                  f"tool calls", message.at(), **self._time(message), **self.base)

    def _bad(self, locator: str, reason: str, value) -> Draft:
        row = bad_record(locator, reason, compact(value))
        row.session_id, row.project_path = self.base.get("session_id", ""), self.base.get("project_path", "")
        return row

    # -- user records ---------------------------------------------------------------------

    def _user(self, message: Message) -> Iterator[Draft]:
        parts = parts_of(message.record.get("content"))
        when = self._time(message)
        if any(function_response(part) is not None for part in parts):
            yield from self._tool_responses(message, parts, when)
            return
        display = message.record.get("displayContent")
        # displayContent is what the user typed when content was expanded (@file text, pastes)
        source = parts_of(display) if display not in (None, "", []) else parts
        text = "".join(part_text(part) for part in source)
        if text.strip() and self.subagent:
            yield Draft("system", f"subagent prompt: {text}", message.at(), **when, **self.base)
        elif text.strip():
            yield Draft(user_text_kind(text), text, message.at(), **when, **self.base)

    def _tool_responses(self, message: Message, parts: list, when: dict) -> Iterator[Draft]:
        """A synthetic user message carrying tool results back to the model."""
        repeated: list[tuple[str, str]] = []
        for index, (call_id, name, text) in enumerate(result_groups(parts)):
            if call_id and call_id in self.result_ids:
                repeated.append((name, call_id))
                continue
            where = message.at("content", index) if len(parts) > 1 else message.at()
            yield from self.walk.result_rows(call_id, name, text, where, {**when, **self.base},
                                             self.call_ids.__contains__)
        if repeated:
            # one call: its name and id in the columns too, so the row joins like the call's own rows
            single = {"tool_name": repeated[0][0], "tool_use_id": repeated[0][1]} if len(repeated) == 1 else {}
            yield Draft("system", "tool responses sent to the model: "
                        + ", ".join(f"{name} ({call_id})" for name, call_id in repeated)
                        + "; each result is the tool_result row of its call", message.at(), **single, **when,
                        **self.base)

    # -- gemini records -------------------------------------------------------------------------

    def _gemini(self, message: Message) -> Iterator[Draft]:
        when = self._time(message)
        model = message.record.get("model")
        model = model if isinstance(model, str) else ""
        thoughts = message.record.get("thoughts")
        if model and model != self.model:
            label = f"model: {model}" if not self.model else f"model: {self.model} -> {model}"
            # at the message's first row: its thoughts are timed before the message itself
            times = [time for time in (when["timestamp_ns"], *self._thought_times(thoughts)) if time is not None]
            first = min(times) if times else None
            yield Draft("system", label, message.at(), model=model, timestamp_ns=first, **self.base)
            self.model = model
        fields = {**self.base, "model": model}
        for index, thought in enumerate(thoughts if isinstance(thoughts, list) else ()):
            if not isinstance(thought, dict):
                yield self._bad(message.at("thoughts", index), "thought is not an object", thought)
                continue
            text = "\n".join(str(thought.get(key) or "") for key in ("subject", "description")).strip("\n")
            yield Draft("thinking", text, message.at("thoughts", index),
                        **moment(thought.get("timestamp"), when["timestamp_ns"]), **fields)
        yield from self._gemini_content(message, when, fields)
        for index, call in enumerate(self._tool_calls(message)):
            yield from self._tool_call(message, index, call, when, fields)

    @staticmethod
    def _thought_times(thoughts) -> list[int]:
        times = [ns_from_iso(thought.get("timestamp")) for thought in thoughts if isinstance(thought, dict)] \
            if isinstance(thoughts, list) else []
        return [time for time in times if time is not None]

    def _gemini_content(self, message: Message, when: dict, fields: dict) -> Iterator[Draft]:
        # a call that is also a toolCalls entry gets its rows from there
        yield from self.walk.model_rows(parts_of(message.record.get("content")),
                                        lambda index: message.at("content", index), message.at(),
                                        {**when, **fields}, self.call_ids.__contains__, INJECTED_MODEL_TEXTS)

    def _tool_call(self, message: Message, index: int, call, when: dict, fields: dict) -> Iterator[Draft]:
        where = message.at("toolCalls", index)
        if not isinstance(call, dict):
            yield self._bad(where, "tool call is not an object", call)
            return
        call_id, name = str(call.get("id") or ""), str(call.get("name") or "")
        use = Draft("tool_use", compact(call.get("args", {})), where, tool_name=name, tool_use_id=call_id,
                    **when, **fields)
        yield use
        result = call.get("result")
        if result in (None, [], ""):
            self.walk.call(use)  # a later synthetic user message may still carry it
            return
        self.walk.call(use, answered=True)
        finished = moment(call.get("timestamp"), when["timestamp_ns"])
        text = result_text(result)
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **finished, **fields)
        yield from denial_rows(text, where, name, call_id, {**finished, **fields})

    # -- info / error / warning and unknown types ------------------------------------------------

    def _system(self, message: Message) -> Iterator[Draft]:
        kind = message.kind
        text = "".join(part_text(part) for part in parts_of(message.record.get("content")))
        label = kind if kind in SYSTEM_TYPES else f"unknown message type {compact(message.record.get('type'))}"
        yield Draft("system", f"{label}: {text}", message.at(), **self._time(message), **self.base)

    def finish(self) -> Iterator[Draft]:
        """A parser: row for every call whose result is nowhere in the session."""
        yield from self.walk.finish()
