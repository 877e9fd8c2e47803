"""OpenHands control events: system prompt, condensation, pause, errors, hooks, state updates, token logs.

Each is one ``system`` row (docs/agents/openhands.md, "Row rules"); a kind the
parser does not know is ``event <kind>: <record>``, never dropped. Values whose
key names a credential are withheld (formats/idioms.py ``settings_value``): a
state update can carry the whole conversation state, agent settings included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aitrail.analyzer.formats.idioms import as_dict, as_list, settings_value
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft

from .values import content_text, kind_of

if TYPE_CHECKING:  # events.py imports this module: the type only, no cycle at run time
    from .events import Event

SHOWN_CHARS = 2000  # characters of a state update or an unknown event shown in its row


def _system_prompt(event: Event) -> Iterator[Draft]:
    record = event.record
    text = content_text(record.get("system_prompt"))
    tools = [_tool_name(tool) for tool in as_list(record.get("tools"))]
    named = f"\n(tools: {', '.join(name for name in tools if name)})" if any(tools) else ""
    dynamic = content_text(record.get("dynamic_context")) if record.get("dynamic_context") else ""
    yield event.row("system", f"system prompt: {text}{named}" + (f"\n{dynamic}" if dynamic else ""), "system_prompt")


def _tool_name(tool) -> str:
    """A tool definition's name as the model saw it (``name``, else the ``title`` annotation, else its kind)."""
    tool = as_dict(tool)
    annotations = as_dict(tool.get("annotations"))
    return label(tool.get("name")) or label(tool.get("title")) or label(annotations.get("title")) or kind_of(tool)


def _condensation(event: Event) -> Iterator[Draft]:
    record = event.record
    forgotten = as_list(record.get("forgotten_event_ids"))
    summary = as_text(record.get("summary"))
    text = f"compaction: {len(forgotten)} earlier events dropped from the model's view"
    yield event.row("system", text + (f"; summary: {summary}" if summary else ""), "forgotten_event_ids")


def _condensation_request(event: Event) -> Iterator[Draft]:
    yield event.row("system", "compaction: requested")


def _condensation_summary(event: Event) -> Iterator[Draft]:
    yield event.row("system", f"compaction: summary: {as_text(event.record.get('summary'))}", "summary")


def _pause(event: Event) -> Iterator[Draft]:
    yield event.row("system", "paused: the user paused the agent between steps")


def _interrupt(event: Event) -> Iterator[Draft]:
    yield event.row("system", "interrupted: the user cancelled the agent's LLM call in flight")


def _conversation_error(event: Event) -> Iterator[Draft]:
    record = event.record
    yield event.row("system", f"error: {as_text(record.get('code'))}: {as_text(record.get('detail'))}", "detail")


def _hook(event: Event) -> Iterator[Draft]:
    record = event.record
    facts = [f"{key}={as_text(record[key])}" for key in ("tool_name", "exit_code", "success", "blocked", "reason",
                                                         "error") if record.get(key) not in (None, "")]
    text = f"hook {as_text(record.get('hook_event_type'))}: {as_text(record.get('hook_command'))}"
    yield event.row("system", text + (f" ({'; '.join(facts)})" if facts else ""), "hook_command",
                    tool_name=label(record.get("tool_name")))


def _state_update(event: Event) -> Iterator[Draft]:
    """A state change the SDK broadcast: its key and value; never the agent (LLM settings) or the secret registry.

    The SDK redacts secrets in these dumps, but a dump of another version (or a
    forged one) need not: a ``full_state`` shows only the fields of STATE_FIELDS.
    """
    record = event.record
    key, value = as_text(record.get("key")), record.get("value")
    if key == "full_state" and isinstance(value, dict):
        shown = settings_value(_safe_state(value))
    elif key in HIDDEN_STATE:
        shown = f"(not shown: {key} can hold credentials)"
    else:
        shown = settings_value(value, key)
    yield event.row("system", f"state update: {key}={excerpt(shown, SHOWN_CHARS)}", "value")


HIDDEN_STATE = frozenset({"agent", "secret_registry", "secrets", "hook_config", "agent_state"})
STATE_FIELDS = ("execution_status", "confirmation_policy", "security_analyzer", "max_iterations", "stuck_detection",
                "activated_knowledge_skills", "invoked_skills", "tags")


def _safe_state(state: dict) -> dict:
    """The fields of a full state dump that hold no credentials, plus the model and work directory by name."""
    shown = {key: state[key] for key in STATE_FIELDS if key in state}
    llm = as_dict(as_dict(state.get("agent")).get("llm"))
    if label(llm.get("model"), 300):
        shown["model"] = llm["model"]
    workspace = as_dict(state.get("workspace"))
    if label(workspace.get("working_dir"), 4096):
        shown["working_dir"] = workspace["working_dir"]
    return shown


def _tokens(event: Event) -> Iterator[Draft]:
    record = event.record
    prompt, response = as_list(record.get("prompt_token_ids")), as_list(record.get("response_token_ids"))
    yield event.row("system", f"tokens generated: prompt_tokens={len(prompt)} response_tokens={len(response)} "
                              "(token ids recorded)", "response_token_ids")


def _completion_log(event: Event) -> Iterator[Draft]:
    record = event.record
    data = as_text(record.get("log_data"))
    text = (f"model completion: model={as_text(record.get('model_name'))} usage_id={as_text(record.get('usage_id'))}"
            f" file={as_text(record.get('filename'))}: {excerpt(data)}")
    yield event.row("system", text, "log_data", model=label(record.get("model_name"), 300))


def _acp_call(event: Event) -> Iterator[Draft]:
    """A call an ACP sub-process (another agent) ran and reported whole: its call and its result, one event."""
    record = event.record
    name = label(record.get("tool_kind")) or label(record.get("title")) or "acp_tool_call"
    call_id = label(record.get("tool_call_id"))
    asked = {"title": record.get("title"), "raw_input": record.get("raw_input")}
    yield event.row("tool_use", as_text(asked), "raw_input", tool_name=name, tool_use_id=call_id)
    output = record.get("raw_output") if record.get("raw_output") is not None else record.get("content")
    status = as_text(record.get("status")) or "(no status)"
    shown = as_text(output) if output is not None else f"(no output recorded; status {status})"
    prefix = "[error]\n" if record.get("is_error") is True else ""
    yield event.row("tool_result", prefix + shown, "raw_output", tool_name=name, tool_use_id=call_id)


def _streaming(event: Event) -> Iterator[Draft]:
    record = event.record
    yield event.row("system", f"streaming delta: {as_text(record.get('content'))}", "content")


def other_event(event: Event) -> Iterator[Draft]:
    """An event kind this parser does not know: named, its fields shown (credentials withheld)."""
    shown = {key: value for key, value in event.record.items() if key not in ("kind", "id", "timestamp")}
    kind = kind_of(event.record) or "(no kind)"
    yield event.row("system", f"event {kind}: {excerpt(settings_value(shown), SHOWN_CHARS)}")


CONTROL_HANDLERS = {
    "SystemPromptEvent": _system_prompt,
    "Condensation": _condensation,
    "CondensationRequest": _condensation_request,
    "CondensationSummaryEvent": _condensation_summary,
    "PauseEvent": _pause,
    "InterruptEvent": _interrupt,
    "ConversationErrorEvent": _conversation_error,
    "HookExecutionEvent": _hook,
    "ConversationStateUpdateEvent": _state_update,
    "TokenEvent": _tokens,
    "LLMCompletionLogEvent": _completion_log,
    "ACPToolCallEvent": _acp_call,
    "StreamingDeltaEvent": _streaming,
}
