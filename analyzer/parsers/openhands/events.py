"""One OpenHands event file (``events/event-<index>-<id>.json``): its rows.

Each file holds one pydantic Event tagged by ``kind`` (software-agent-sdk
openhands-sdk/openhands/sdk/event/): the conversation's messages, the model's
tool calls (``ActionEvent``), their results (``ObservationEvent``,
``UserRejectObservation``, ``AgentErrorEvent``), and control events
(system_events.py). A call and its result are two files, joined by
``tool_call_id``; facts.py reads the conversation once to know which calls were
answered.

Times: ``timestamp`` is ``datetime.now().isoformat()``, local time WITHOUT an
offset (event/base.py:26-29). It is never given a zone: every row of the file is
timed by the file's modification time (``file-mtime``), which the SDK sets once,
writing each event to a new file (conversation/event_store.py:184-224).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.calls import no_result_row
from aitrail.analyzer.formats.idioms import as_dict, as_list, file_mtime, pointer
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

from .facts import Facts, facts
from .history import task_text
from .paths import Conversation, event_conversation, event_index
from .system_events import CONTROL_HANDLERS, other_event
from .values import ERROR_HEADER, content_text, json_file, kind_of

DEFAULT_REJECTION = "User rejected the action"  # UserRejectObservation.rejection_reason's default


class Event:
    """One event file being rendered: its record, conversation, cached facts and shared columns."""

    def __init__(self, ctx: ParseContext, record: dict, conversation: Conversation, known: Facts):
        self.record, self.conversation, self.known = record, conversation, known
        self.index = event_index(ctx.source.name)
        self.columns = {"session_id": conversation.session_id, "project_path": known.working_dir,
                        **file_mtime(ctx)}

    def row(self, turn_type: str, text: str, *keys, **columns) -> Draft:
        """A row at ``json:/<keys>`` (``json:/`` for the whole event) with the event's columns."""
        return Draft(turn_type, text, pointer(*keys), **self.columns, **columns)

    @property
    def model(self) -> str:
        """The model of the LLM response that wrote this event (base_state.json stats), '' if unknown."""
        return self.known.models.get(label(self.record.get("llm_response_id")), "")


def parse_event(ctx: ParseContext) -> Iterator[Draft]:
    """conversations/<id>/[subagents/<id>/]events/event-*.json: one event's rows, timed by the file's mtime."""
    conversation = event_conversation(ctx.source.directory)
    record, problems = json_file(ctx.data, "event file", conversation.session_id)
    if not isinstance(record, dict):
        yield from problems
        return
    known = facts(ctx, conversation)
    event = Event(ctx, record, conversation, known)
    if known.over and ctx.source.path == known.first_path:
        yield over_limit("conversation scan", known.over, "calls of this conversation get no 'no result recorded' "
                         "row and results no 'no tool call' row", "json:/", session_id=conversation.session_id,
                         project_path=known.working_dir)
    handler = EVENT_HANDLERS.get(kind_of(record)) or CONTROL_HANDLERS.get(kind_of(record)) or other_event
    yield from handler(event)


# -- messages -----------------------------------------------------------------------------------


def _message(event: Event) -> Iterator[Draft]:
    message = as_dict(event.record.get("llm_message"))
    text = content_text(message.get("content"))
    source = label(event.record.get("source"), 40)
    role = label(message.get("role"), 40)
    if source == "user" and role in ("user", ""):
        if event.conversation.subagent:  # written by the parent agent's task call, not typed
            yield event.row("system", f"subagent prompt: {text}", "llm_message", "content")
        else:
            yield event.row("user", text, "llm_message", "content")
    elif source == "agent" and role in ("assistant", ""):
        yield from _reasoning(event, message, "llm_message")
        if text.strip() or not message.get("tool_calls"):
            yield event.row("assistant", text, "llm_message", "content", model=event.model)
    else:  # stop-hook feedback (source environment), a hook's message, a system message
        yield event.row("system", f"message ({source or '?'}, {role or '?'}): {text}", "llm_message", "content")
    yield from _extended(event)
    yield from _critic(event)


def _extended(event: Event) -> Iterator[Draft]:
    """``extended_content``: text the agent context added after the message or result (skills, path rules)."""
    extra = content_text(event.record.get("extended_content")) if event.record.get("extended_content") else ""
    skills = [label(name) for name in as_list(event.record.get("activated_skills")) if label(name)]
    if extra.strip() or skills:
        named = f" (skills: {', '.join(skills)})" if skills else ""
        yield event.row("system", f"injected context{named}: {extra}", "extended_content")


def _critic(event: Event) -> Iterator[Draft]:
    critic = event.record.get("critic_result")
    if isinstance(critic, dict):
        message = as_text(critic.get("message"))
        yield event.row("system", f"critic: score={as_text(critic.get('score'))}" + (f": {message}" if message else ""),
                        "critic_result")


def _reasoning(event: Event, holder: dict, *keys) -> Iterator[Draft]:
    """Thinking rows: ``reasoning_content``, Anthropic ``thinking_blocks``, an OpenAI Responses reasoning item."""
    text = holder.get("reasoning_content")
    if isinstance(text, str) and text.strip():
        yield event.row("thinking", text, *keys, "reasoning_content", model=event.model)
    for position, block in enumerate(as_list(holder.get("thinking_blocks"))):
        block = as_dict(block)
        thought = block.get("thinking")
        shown = thought if isinstance(thought, str) else "(redacted thinking; content not recorded in clear)"
        yield event.row("thinking", shown, *keys, "thinking_blocks", position, model=event.model)
    item = as_dict(holder.get("responses_reasoning_item"))
    summary = [as_text(part) for part in as_list(item.get("summary")) + as_list(item.get("content")) if part]
    if summary:
        yield event.row("thinking", "\n".join(summary), *keys, "responses_reasoning_item", model=event.model)
    elif item.get("encrypted_content"):
        yield event.row("thinking", "(encrypted reasoning only; no summary recorded)", *keys,
                        "responses_reasoning_item", model=event.model)


# -- calls and their results --------------------------------------------------------------------


def _action(event: Event) -> Iterator[Draft]:
    record = event.record
    yield from _reasoning(event, record)
    thought = content_text(record.get("thought"))
    if thought.strip():  # the text the model wrote beside the call
        yield event.row("assistant", thought, "thought", model=event.model)
    call = as_dict(record.get("tool_call"))
    name = label(record.get("tool_name")) or label(call.get("name"))
    call_id = label(record.get("tool_call_id")) or label(call.get("id"))
    arguments = call.get("arguments")
    if not isinstance(arguments, str):  # no raw call: the parsed action, without its class tag
        arguments = compact({key: value for key, value in as_dict(record.get("action")).items() if key != "kind"})
    use = event.row("tool_use", arguments, "tool_call", tool_name=name, tool_use_id=call_id, model=event.model)
    yield use
    yield from _call_summary(event, name, call_id)
    yield from _tasks(event, name)
    yield from _critic(event)
    if call_id and not event.known.over and call_id not in event.known.answered:
        yield no_result_row(use)


def _call_summary(event: Event, name: str, call_id: str) -> Iterator[Draft]:
    """The model's own summary of the call and its security-risk rating (used by ConfirmRisky), when given."""
    summary = as_text(event.record.get("summary"))
    risk = label(event.record.get("security_risk"), 40)
    if not summary and risk in ("", "UNKNOWN"):
        return
    text = f"call summary: {summary or '(no summary recorded)'}" + (f" (security_risk={risk})" if risk else "")
    yield event.row("system", text, "summary" if summary else "security_risk", tool_name=name, tool_use_id=call_id)


def _tasks(event: Event, name: str) -> Iterator[Draft]:
    """A task_tracker ``plan`` call: one ``task:`` row per item of the list it sets.

    No tool_use_id: the rows read as TASKS.json's (a secondary store), so the
    current list is given once while the calls that set it survive.
    """
    action = as_dict(event.record.get("action"))
    if kind_of(action) != "TaskTrackerAction" or action.get("command") != "plan":
        return
    for position, item in enumerate(as_list(action.get("task_list"))):
        yield event.row("system", task_text(as_dict(item)), "action", "task_list", position, tool_name=name)


def _answer(event: Event) -> Iterator[Draft]:
    """A call's result: an observation, a rejection or an agent error, joined to the call by ``tool_call_id``."""
    record, kind = event.record, kind_of(event.record)
    name, call_id = label(record.get("tool_name")), label(record.get("tool_call_id"))
    if kind == "UserRejectObservation":
        reason = as_text(record.get("rejection_reason")) or DEFAULT_REJECTION
        yield event.row("tool_result", f"Action rejected: {reason}", "rejection_reason", tool_name=name,
                        tool_use_id=call_id)
        yield event.row("system", _decision(record, reason), "rejection_source", tool_name=name, tool_use_id=call_id)
    elif kind == "AgentErrorEvent":
        yield event.row("tool_result", as_text(record.get("error")), "error", tool_name=name, tool_use_id=call_id)
    else:
        yield event.row("tool_result", observation_text(as_dict(record.get("observation"))), "observation",
                        tool_name=name, tool_use_id=call_id)
        yield from _extended(event)
    yield from _unasked(event, name, call_id)


def _decision(record: dict, reason: str) -> str:
    if label(record.get("rejection_source"), 20) == "hook":
        return f"permission decision: denied by a hook: {reason}"
    if reason == DEFAULT_REJECTION:
        return "permission decision: denied"
    return f"permission decision: denied with feedback: {reason}"


def _unasked(event: Event, name: str, call_id: str) -> Iterator[Draft]:
    if event.known.over or not call_id:
        return
    asked_at = event.known.called.get(call_id)
    if asked_at is None or (event.index is not None and asked_at > event.index):
        yield event.row("system", f"parser: tool result for {name or call_id} with no tool call before it", "",
                        tool_name=name, tool_use_id=call_id)


def observation_text(observation: dict) -> str:
    """What the observation gave back: the SDK's error header, its content, then its exit code if it has one."""
    lines = [ERROR_HEADER] if observation.get("is_error") is True else []
    content = content_text(observation.get("content"))
    if content:
        lines.append(content)
    code = observation.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        lines.append(f"[exit code {code}]" if code != -1 else "[exit code -1: still running at the soft timeout]")
    if observation.get("timeout") is True:
        lines.append("[timed out]")
    return "\n".join(lines)


EVENT_HANDLERS = {
    "MessageEvent": _message,
    "ActionEvent": _action,
    "ObservationEvent": _answer,
    "UserRejectObservation": _answer,
    "AgentErrorEvent": _answer,
}
