"""What every event file of a conversation needs from the others, read once per conversation and worker.

One event per file means that no single file can say whether its tool call was
answered, which model wrote it or where the conversation ran. ``facts(ctx,
directory)`` reads the conversation once (per worker process, through
``ctx.cached``): base_state.json (work directory, model, the model of each LLM
response from ``stats``) and every event file of the conversation (the calls
made and answered, the first prompt, the first and last local times). Every
event file of the conversation then asks the same cached answer.

Bounded: at most SCAN_FILES files and SCAN_BYTES bytes are read for one
conversation and at most MAX_IDS call ids and response models are held; past
a bound ``over`` says so, and the event parser then writes no "no result
recorded" row (it cannot know) and one ``parser:`` row names the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.joined_json import cached_table, joined_document
from aitrail.analyzer.formats.json_values import label
from aitrail.analyzer.view.bundle import Source
from aitrail.analyzer.view.context import ParseContext

from .paths import Conversation, event_index, sort_key
from .values import content_text, kind_of

SCAN_FILES = 200_000  # event files read for one conversation's facts
SCAN_BYTES = 512 * 1024 * 1024  # bytes of event files read for one conversation's facts
MAX_IDS = 262_144  # call ids (made or answered) and response models held for one conversation

EVENT_STORES = ("conversation_events", "subagent_events")
ANSWERS = frozenset({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})


@dataclass
class Facts:
    """One conversation as its other files describe it."""

    working_dir: str = ""
    model: str = ""  # base_state.json agent.llm.model: the model the conversation is set to now
    models: dict[str, str] = field(default_factory=dict)  # LLM response id -> model (stats token_usages)
    called: dict[str, int] = field(default_factory=dict)  # tool_call_id -> index of the first ActionEvent
    answered: set[str] = field(default_factory=set)  # tool_call_ids some observation, rejection or error answers
    first_prompt: str = ""
    first_local: str = ""  # the first and last event `timestamp`, local time as written
    last_local: str = ""
    events: int = 0
    unread: int = 0  # event files that could not be read or decoded
    first_path: str = ""  # the conversation's first event file (where its one over-limit row goes)
    over: str = ""  # which bound stopped the scan, '' when the whole conversation was read


def facts(ctx: ParseContext, conversation: Conversation) -> Facts:
    """The cached facts of ``conversation`` (read on first use in this worker)."""
    value = ctx.cached(("openhands", "facts", conversation.directory), lambda: _read_facts(ctx, conversation))
    return value if isinstance(value, Facts) else Facts()


def event_sources(ctx: ParseContext, events_directory: str) -> list[Source]:
    """The event files of one ``events/`` directory of this location, in the SDK's order."""
    table = cached_table(ctx, ("openhands", "event-dirs"), lambda: _event_directories(ctx))
    return list(table.get(events_directory, []))


def _event_directories(ctx: ParseContext) -> dict[str, list[Source]]:
    table: dict[str, list[Source]] = {}
    for store in EVENT_STORES:
        for source in ctx.related(store):
            table.setdefault(source.directory, []).append(source)
    for sources in table.values():
        sources.sort(key=lambda source: sort_key(source.name))
    return table


def _read_facts(ctx: ParseContext, conversation: Conversation) -> Facts:
    found = Facts()
    _read_state(ctx, conversation, found)
    sources = event_sources(ctx, f"{conversation.directory}/events")
    found.first_path = sources[0].path if sources else ""
    read = 0
    for position, (source, record) in enumerate(_records(ctx, sources, found)):
        if position >= SCAN_FILES or read > SCAN_BYTES:
            found.over = found.over or (f"{SCAN_FILES} event files or {SCAN_BYTES} bytes read for one "
                                        "conversation's calls and results")
            break
        read += source.size
        if record is not None:
            _note(found, source, record)
    return found


def _records(ctx: ParseContext, sources: list[Source], found: Facts) -> Iterator[tuple[Source, dict | None]]:
    for source in sources:
        found.events += 1
        record = joined_document(ctx, source)
        if not isinstance(record, dict):
            found.unread += 1
        yield source, record if isinstance(record, dict) else None


def _note(found: Facts, source: Source, record: dict) -> None:
    stamp = label(record.get("timestamp"), 64)
    if stamp:
        found.first_local = found.first_local or stamp
        found.last_local = stamp
    kind, call = kind_of(record), label(record.get("tool_call_id"), 500)
    if call and len(found.called) + len(found.answered) >= MAX_IDS:
        found.over = found.over or f"{MAX_IDS} call ids held for one conversation"
        return
    if kind == "ActionEvent" and call:
        index = event_index(source.name)
        found.called.setdefault(call, index if index is not None else -1)
    elif kind in ANSWERS and call:
        found.answered.add(call)
    elif kind == "MessageEvent" and record.get("source") == "user" and not found.first_prompt:
        message = record.get("llm_message")
        found.first_prompt = content_text(message.get("content")) if isinstance(message, dict) else ""


def _read_state(ctx: ParseContext, conversation: Conversation, found: Facts) -> None:
    """Work directory, model and per-response models from the conversation's base_state.json."""
    state = read_state(ctx, conversation.directory)
    if state is None and conversation.subagent:  # a sub-agent without its own state: the parent's directory
        state = read_state(ctx, conversation.directory.rsplit("/subagents/", 1)[0])
    if state is None:
        return
    workspace = state.get("workspace")
    found.working_dir = label(workspace.get("working_dir"), 4096) if isinstance(workspace, dict) else ""
    found.model = state_model(state)
    for response, model in response_models(state):
        if len(found.models) >= MAX_IDS:
            break
        found.models.setdefault(response, model)


def read_state(ctx: ParseContext, directory: str) -> dict | None:
    """A conversation directory's base_state.json as an object, None when absent or unreadable."""
    state = joined_document(ctx, ctx.at(f"{directory}/base_state.json", "conversation_state"))
    return state if isinstance(state, dict) else None


def state_model(state: dict) -> str:
    """``agent.llm.model`` of a base_state.json."""
    agent = state.get("agent")
    llm = agent.get("llm") if isinstance(agent, dict) else None
    return label(llm.get("model"), 300) if isinstance(llm, dict) else ""


def response_models(state: dict) -> Iterator[tuple[str, str]]:
    """(LLM response id, model) of every ``stats.usage_to_metrics.*.token_usages[]`` entry."""
    stats = state.get("stats")
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(metrics, dict):
        return
    for usage in metrics.values():
        usages = usage.get("token_usages") if isinstance(usage, dict) else None
        for entry in usages if isinstance(usages, list) else ():
            if isinstance(entry, dict) and label(entry.get("response_id")) and label(entry.get("model"), 300):
                yield entry["response_id"], entry["model"]
