"""The Junie CLI store ``~/.junie``: the session index, each session's event stream, and the prompt history.

[obs] Haehnchen/idea-de-espend-ml-llm@14f1bb4bbf ``JUNIE_SESSION_ADAPTER.md``
(Junie builds of 2026-02; research section 8.4) and community Junie readers:

* ``sessions/index.jsonl``: ``{sessionId, createdAt, updatedAt (epoch ms),
  taskName, status}`` (``projectDir`` in some builds): one ``session:`` row
  per line at ``createdAt`` (record).
* ``sessions/session-<YYMMDD>-<HHMMSS>-<rand>/events.jsonl``: ``{"kind":
  "UserPromptEvent", "prompt"}``, ``UserResponseEvent``, ``{"kind":
  "SessionA2uxEvent", "event": {"state", "agentEvent": {"kind", ...}}}``,
  ``TaskState``, ``SendToAgentEvent``. No line has a time: every row takes
  its session's ``createdAt`` from the index (``timestamp_source`` index)
  and its line as locator; a session the index does not name is untimed
  (the directory name's time is local, without a zone: it stays in the
  ``session_id``). Block events are coalesced by ``stepId`` (blocks.py);
  ``CurrentDirectoryUpdatedEvent`` (``currentDirectory`` or ``directory``)
  sets the project of the rows after it; ``LlmResponseMetadataEvent``
  ``modelUsage[]`` gives ``tokens generated:`` rows and the model column.
  Status updates are written only when the status changes; environment
  variables (``EnvironmentVariablesUpdatedEvent``) and the agent's opaque
  state (``AgentStateUpdatedEvent``) are never shown.
* ``history.jsonl`` (secondary): ``{text, timestamp (epoch ms),
  projectPath}`` per prompt ([obs] a public write-up of Junie 888.57): a
  ``user`` row as the events write it, so a prompt its session still holds
  is dropped and one whose session is gone is kept.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.jsonl import Line, each_line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms, over_limit

from .blocks import BLOCKS, Steps, block_rows, other_block, short_kind

INDEX_BUDGET = 200_000  # sessions of the index held to time the events files (about 30 MB)
SILENT = ("EnvironmentVariablesUpdatedEvent", "AgentStateUpdatedEvent")  # secrets and opaque state: never shown


def session_dir(path: str) -> str:
    """The session id of an events.jsonl: its directory's name."""
    parts = path.split("/")
    return parts[-2] if len(parts) >= 2 else ""


# -- sessions/index.jsonl ------------------------------------------------------------------------------


def parse_junie_index(ctx: ParseContext) -> Iterator[Draft]:
    """sessions/index.jsonl: one ``session:`` row per session, at its createdAt."""
    yield from each_line(ctx, _index_row)


def _index_row(line: Line) -> Iterator[Draft]:
    value = line.value
    session = label(value.get("sessionId"))
    if not session:
        yield bad_line(line.number, "no sessionId", line.raw)
        return
    facts = ", ".join(f"{key}={as_text(value[key])}" for key in ("status", "createdAt", "updatedAt", "projectDir")
                      if value.get(key) not in (None, ""))
    created = ns_from_ms(value.get("createdAt"))
    yield Draft("system", f"session: {as_text(value.get('taskName'))} ({facts})", line.locator, session_id=session,
                project_path=label(value.get("projectDir"), 1024), timestamp_ns=created,
                timestamp_source="record" if created else "none")


class _Index(dict):
    """sessionId -> (createdAt ns, projectDir) from this home's index files; ``over`` past INDEX_BUDGET."""

    over = False


def _index(ctx: ParseContext) -> _Index:
    found = _Index()
    for source in ctx.related("junie_session_index"):
        for item in read_jsonl(ParseContext(ctx.bundle, source, {})):
            if not isinstance(item, Line) or not label(item.value.get("sessionId")):
                continue
            if len(found) >= INDEX_BUDGET:
                found.over = True
                continue
            found[item.value["sessionId"]] = (ns_from_ms(item.value.get("createdAt")),
                                              label(item.value.get("projectDir"), 1024))
    return found


# -- sessions/session-*/events.jsonl -------------------------------------------------------------------


class _Session:
    """What the rows of one events file share, and what changes along it (project, model, status)."""

    def __init__(self, session: str, created: int | None, project: str):
        self.session, self.created, self.project = session, created, project
        self.model = ""
        self.status = ""

    def columns(self) -> dict:
        return {"session_id": self.session, "project_path": self.project, "model": self.model,
                "timestamp_ns": self.created, "timestamp_source": "index" if self.created else "none"}


def parse_junie_events(ctx: ParseContext) -> Iterator[Draft]:
    """events.jsonl: prompts, agent blocks (coalesced by stepId), model usage, all at the session's createdAt."""
    name = session_dir(ctx.source.path)
    index = ctx.cached(("junie-index",), lambda: _index(ctx))
    created, project = index.get(name, (None, ""))
    if name not in index and index.over:
        yield over_limit("Junie session index", f"{INDEX_BUDGET} sessions held", "this session's rows are untimed",
                         "file", session_id=name)
    state = _Session(name, created, project)
    steps = Steps()
    for item in read_jsonl(ctx):
        if isinstance(item, Line) and isinstance(_agent_event(item.value), dict):
            steps.note(_agent_event(item.value), item.number)
    for item in read_jsonl(ctx):
        if isinstance(item, Draft):
            yield item
        else:
            yield from _event_rows(item, state, steps)
    yield from steps.over_limit_rows()


def _agent_event(record: dict) -> dict | None:
    event = record.get("event")
    agent = event.get("agentEvent") if isinstance(event, dict) else None
    return agent if isinstance(agent, dict) else None


def _event_rows(line: Line, state: _Session, steps: Steps) -> Iterator[Draft]:
    record, where = line.value, line.locator
    kind = as_text(record.get("kind"))
    if kind in ("UserPromptEvent", "UserResponseEvent"):
        prompt = as_text(record.get("prompt"))
        yield Draft("user", prompt, where, **state.columns())
        shown = record.get("presentablePrompt")
        if isinstance(shown, str) and shown and shown != prompt:
            yield Draft("system", f"prompt as shown to the user: {shown}", f"{where}/presentablePrompt",
                        **state.columns())
        return
    agent = _agent_event(record)
    if kind == "SessionA2uxEvent" and agent is not None:
        yield from _agent_rows(agent, line, state, steps)
        return
    yield Draft("system", f"event {kind[:120]}: {excerpt(compact(record))}", where, **state.columns())


def _agent_rows(event: dict, line: Line, state: _Session, steps: Steps) -> Iterator[Draft]:
    kind, where = short_kind(event.get("kind")), f"{line.locator}/event/agentEvent"
    if kind in BLOCKS:
        if not steps.superseded(event, line.number):
            yield from block_rows(event, where, state.columns(), steps.updates(event))
    elif kind == "CurrentDirectoryUpdatedEvent":
        directory = label(event.get("currentDirectory") or event.get("directory"), 1024)
        if directory:
            state.project = directory
            yield Draft("system", f"project: {directory}", where, **state.columns())
    elif kind == "LlmResponseMetadataEvent":
        yield from _usage(event, where, state)
    elif kind == "AgentCurrentStatusUpdatedEvent":
        status = as_text(event.get("status"))
        if status and status != state.status:
            state.status = status
            yield Draft("system", f"status: {status}", where, **state.columns())
    elif kind == "AgentTaskNameUpdatedEvent":
        yield Draft("system", f"title: {as_text(event.get('name'))}", where, **state.columns())
    elif kind == "AgentPlanUpdatedEvent":
        yield Draft("system", f"plan: {as_text(event.get('plan') or event.get('items'))}", where, **state.columns())
    elif kind == "AgentPatchCreatedEvent":
        yield Draft("system", f"patch: {as_text(event.get('patch'))}", where, **state.columns())
    elif kind not in SILENT:
        yield other_block(event, where, state.columns())


def _usage(event: dict, where: str, state: _Session) -> Iterator[Draft]:
    usage = event.get("modelUsage")
    entries = usage if isinstance(usage, list) else [event]
    for index, entry in enumerate(entry for entry in entries if isinstance(entry, dict)):
        model = label(entry.get("model"))
        if model and model != state.model:
            previous, state.model = state.model, model
            yield Draft("system", f"model: {previous} -> {model}" if previous else f"model: {model}",
                        f"{where}/modelUsage/{index}", **state.columns())
        counts = " ".join(f"{key}={as_text(entry.get(key))}" for key in
                          ("inputTokens", "outputTokens", "cacheInputTokens", "cacheCreateTokens", "cost", "time")
                          if entry.get(key) is not None)
        yield Draft("system", f"tokens generated: model={model} {counts}", f"{where}/modelUsage/{index}",
                    **{**state.columns(), "model": model or state.model})


# -- history.jsonl -------------------------------------------------------------------------------------


def parse_junie_history(ctx: ParseContext) -> Iterator[Draft]:
    """history.jsonl (secondary): a ``user`` row per prompt, at its own epoch-ms time, with its project."""
    yield from each_line(ctx, _history_row)


def _history_row(line: Line) -> Iterator[Draft]:
    text = line.value.get("text")
    if not isinstance(text, str):
        yield bad_line(line.number, "no prompt text", line.raw)
        return
    when = ns_from_ms(line.value.get("timestamp"))
    yield Draft("user", text, line.locator, project_path=label(line.value.get("projectPath"), 1024),
                timestamp_ns=when, timestamp_source="record" if when else "none")
