"""base_state.json: one conversation's state, rewritten on every change.

Rows (timed by the file's mtime, the last change, except token rows): the
session (its first prompt as title, as ``openhands --resume`` lists it), the
conversation's current model, the confirmation policy and security analyzer
as ``permission setting:`` rows, the token and cost totals per LLM, and
actions a hook blocked. The agent's LLM settings (``api_key``, redacted or
encrypted by the SDK) and the secret registry are never read.

Shape: software-agent-sdk openhands-sdk/openhands/sdk/conversation/state.py:82-230
(ConversationState), security/confirmation_policy.py:27-58, llm/utils/metrics.py:8-130
(Metrics: ``costs[].timestamp`` is ``time.time()``, Unix seconds).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.float_seconds import ns_from_float_seconds
from aitrail.analyzer.formats.idioms import as_dict, as_list, file_mtime, settings_value
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .facts import Facts, facts, state_model
from .paths import Conversation, conversation_of
from .values import json_file, kind_of

TITLE_CHARS = 120
TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def parse_base_state(ctx: ParseContext) -> Iterator[Draft]:
    """conversations/<id>/[subagents/<id>/]base_state.json: session, model, permission and token rows."""
    conversation = conversation_of(ctx.source.directory)
    state, problems = json_file(ctx.data, "base_state.json", conversation.session_id)
    if not isinstance(state, dict):
        yield from problems
        return
    workspace = as_dict(state.get("workspace"))
    columns = {"session_id": conversation.session_id, "project_path": label(workspace.get("working_dir"), 4096),
               **file_mtime(ctx)}
    known = facts(ctx, conversation)
    yield Draft("system", _session_text(state, conversation, known), "json:/id", **columns)
    model = state_model(state)
    if model:
        yield Draft("system", f"model: {model} (the conversation's current model, from base_state.json)",
                    "json:/agent/llm/model", model=model, **columns)
    yield from _permissions(state, columns)
    yield from _token_totals(state, columns)
    yield from _hook_blocks(state, columns)


def _session_text(state: dict, conversation: Conversation, known: Facts) -> str:
    title = excerpt(" ".join(known.first_prompt.split()), TITLE_CHARS) or "(no prompt recorded)"
    facts_shown = [f"conversation {label(state.get('id'), 100) or conversation.directory.rsplit('/', 1)[-1]}"]
    if known.events:
        span = (f", local times {known.first_local} .. {known.last_local}, no zone"
                if known.first_local else "")
        facts_shown.append(f"{known.events} event files{span}")
    for key in ("execution_status", "max_iterations"):
        if state.get(key) not in (None, ""):
            facts_shown.append(f"{key}={as_text(state[key])}")
    tools = [label(as_dict(tool).get("name")) for tool in as_list(as_dict(state.get("agent")).get("tools"))]
    if any(tools):
        facts_shown.append(f"tools: {', '.join(tool for tool in tools if tool)}")
    prefix = f"subagent: {conversation.subagent}: " if conversation.subagent else "session: "
    return f"{prefix}{title} ({'; '.join(facts_shown)})"


def _permissions(state: dict, columns: dict) -> Iterator[Draft]:
    """The confirmation policy (NeverConfirm, AlwaysConfirm, ConfirmRisky{threshold, confirm_unknown}) and analyzer."""
    for key in ("confirmation_policy", "security_analyzer"):
        value = state.get(key)
        if value is None:
            continue
        shown = kind_of(value) if isinstance(value, dict) and set(value) == {"kind"} else settings_value(value, key)
        yield Draft("system", f"permission setting: {key}={shown} (from base_state.json)", f"json:/{key}", **columns)


def _token_totals(state: dict, columns: dict) -> Iterator[Draft]:
    """One ``tokens generated:`` row per LLM usage id: its accumulated tokens and cost, at its last cost's time."""
    metrics = as_dict(as_dict(state.get("stats")).get("usage_to_metrics"))
    for usage_id, usage in metrics.items():
        usage = as_dict(usage)
        totals = as_dict(usage.get("accumulated_token_usage"))
        model = label(usage.get("model_name"), 300) or label(totals.get("model"), 300)
        counts = [f"{key}={as_text(totals[key])}" for key in TOKEN_KEYS if key in totals]
        counts.append(f"accumulated_cost={as_text(usage.get('accumulated_cost'))}")
        text = (f"tokens generated: model={model} {' '.join(counts)} (usage_id={usage_id}, totals over the "
                f"conversation; {len(as_list(usage.get('costs')))} priced calls)")
        when = _last_cost_time(usage)
        timed = {**columns, "timestamp_ns": when, "timestamp_source": "record"} if when is not None else columns
        yield Draft("system", text, f"json:/stats/usage_to_metrics/{_escape(usage_id)}",
                    **{**timed, "model": model})


def _last_cost_time(usage: dict) -> int | None:
    times = [ns_from_float_seconds(as_dict(cost).get("timestamp")) for cost in as_list(usage.get("costs"))]
    times = [moment for moment in times if moment is not None]
    return max(times) if times else None


def _hook_blocks(state: dict, columns: dict) -> Iterator[Draft]:
    """``blocked_actions`` / ``blocked_messages``: what a PreToolUse or UserPromptSubmit hook refused, unhandled."""
    for key, what in (("blocked_actions", "action"), ("blocked_messages", "message")):
        for event_id, reason in as_dict(state.get(key)).items():
            yield Draft("system", f"hook block: {what} event {event_id}: {as_text(reason)} (from base_state.json)",
                        f"json:/{key}/{_escape(event_id)}", **columns)


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
