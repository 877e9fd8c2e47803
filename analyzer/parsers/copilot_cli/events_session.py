"""The events of events.jsonl around the conversation: session, permissions, sub-agents, hooks, compaction.

Shapes: npm @github/copilot 1.0.56 package/schemas/session-events.schema.json
(``StartData``, ``ContextChangedData``, ``ModelChangeData``, ``PermissionRequest``,
``PermissionResult``, ``ShutdownData``, ``CompactionCompleteData``, ...).
The row texts are those of docs/agents/copilot-cli.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.rows import Draft

from .events import Handler, Session, model_rows
from .values import as_text, compact, facts, label, mapping

CONTEXT_KEYS = ("cwd", "gitRoot", "repository", "hostType", "repositoryHost", "branch", "headCommit", "baseCommit")
START_KEYS = ("sessionId", "copilotVersion", "producer", "version", "startTime", "selectedModel", "reasoningEffort",
              "reasoningSummary", "contextTier", "alreadyInUse", "remoteSteerable",
              "detachedFromSpawningParentSessionId")
RESUME_KEYS = ("resumeTime", "eventCount", "selectedModel", "reasoningEffort", "contextTier", "alreadyInUse",
               "sessionWasActive", "continuePendingWork")


def _context(session: Session, context: dict) -> None:
    """A working-directory context (start, resume, change) sets the project and branch of the rows after it."""
    if isinstance(context.get("cwd"), str):
        session.columns["project_path"] = context["cwd"]
    if isinstance(context.get("branch"), str):
        session.columns["git_branch"] = context["branch"]


def _begins(prefix: str, keys: tuple[str, ...]) -> Handler:
    """``session start:`` / ``session resume:``: every recorded field, the context for the rows after, the model."""
    def rows(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
        context = mapping(data.get("context"))
        _context(session, context)
        details = ", ".join(part for part in (facts(data, keys), facts(context, CONTEXT_KEYS)) if part)
        yield Draft("system", f"{prefix}: {details}", locator, **session.fields(event))
        yield from model_rows(session, label(data.get("selectedModel")), event, f"{locator}/selectedModel")
    return rows


def _context_changed(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    _context(session, data)
    yield Draft("system", f"context changed: {facts(data, CONTEXT_KEYS)}", locator, **session.fields(event))


def _model_change(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    new, old = as_text(data.get("newModel")), as_text(data.get("previousModel")) or session.model
    session.model = label(data.get("newModel")) or session.model
    extra = facts(data, ("previousReasoningEffort", "reasoningEffort", "reasoningSummary", "contextTier", "cause"))
    text = f"model: {old} -> {new}" if old else f"model: {new}"
    yield Draft("system", f"{text} ({extra})" if extra else text, locator, **session.fields(event, session.model))


def _mode_changed(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    yield Draft("system", f"permission setting: mode={as_text(data.get('newMode'))} (was "
                          f"{as_text(data.get('previousMode'))}; session.mode_changed)", locator,
                **session.fields(event))


def _permissions_changed(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    yield Draft("system", f"permission setting: allowAllPermissions={as_text(data.get('allowAllPermissions'))} (was "
                          f"{as_text(data.get('previousAllowAllPermissions'))}; session.permissions_changed)",
                locator, **session.fields(event))


def _compaction_complete(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    fields = session.fields(event)
    if data.get("success") is False:
        yield Draft("system", f"compaction failed: {as_text(data.get('error'))}", locator, **fields)
        return
    counts = facts(data, ("checkpointNumber", "checkpointPath", "preCompactionTokens", "postCompactionTokens",
                          "messagesRemoved", "tokensRemoved", "customInstructions"))
    yield Draft("system", f"compaction: ({counts}): {as_text(data.get('summaryContent'))}", locator, **fields)


def _truncation(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    counts = facts(data, ("messagesRemovedDuringTruncation", "tokensRemovedDuringTruncation", "tokenLimit",
                          "preTruncationMessagesLength", "postTruncationMessagesLength"))
    yield Draft("system", f"compaction: truncated by {as_text(data.get('performedBy'))} ({counts})", locator,
                **session.fields(event))


def _shutdown(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    fields = session.fields(event)
    changes = mapping(data.get("codeChanges"))
    details = ", ".join(part for part in (
        facts(data, ("shutdownType", "errorReason", "currentModel", "totalPremiumRequests", "totalApiDurationMs",
                     "sessionStartTime", "currentTokens")),
        facts(changes, ("linesAdded", "linesRemoved", "filesModified"))) if part)
    yield Draft("system", f"session end: {details}", locator, **fields)
    for model, metric in mapping(data.get("modelMetrics")).items():
        usage, requests = mapping(mapping(metric).get("usage")), mapping(mapping(metric).get("requests"))
        counts = [f"{name}={as_text(usage[key])}" for key, name in USAGE_NAMES if key in usage]
        counts += [f"requests={as_text(requests['count'])}"] if "count" in requests else []
        yield Draft("system", f"tokens generated: model={model} {' '.join(counts)} (session.shutdown totals)",
                    f"{locator}/modelMetrics/{model}", **{**fields, "model": label(model)})


USAGE_NAMES = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
               ("cacheReadTokens", "cache_read_tokens"), ("cacheWriteTokens", "cache_write_tokens"),
               ("reasoningTokens", "reasoning_tokens"))


def _described(prefix: str, keys: tuple[str, ...], text_key: str = "") -> Handler:
    """A handler writing ``<prefix>: <facts>`` (and ``: <text>`` from ``text_key``) for a simple event."""
    def rows(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
        known = facts(data, keys)
        text = f"{prefix}: {known}" if known else prefix
        if text_key and data.get(text_key) not in (None, ""):
            text = f"{text}: {as_text(data[text_key])}"
        yield Draft("system", text, locator, **session.fields(event))
    return rows


# -- permissions ----------------------------------------------------------------------------------

def request_summary(request: dict) -> str:
    """What a permission request asked, by its ``kind`` (PermissionRequest in the schema)."""
    kind = as_text(request.get("kind"))
    what = {
        "shell": request.get("fullCommandText"),
        "write": request.get("fileName"),
        "read": request.get("path"),
        "url": request.get("url"),
        "mcp": f"{as_text(request.get('serverName'))}/{as_text(request.get('toolName'))} "
               f"{as_text(request.get('args'))}".rstrip(),
        "memory": f"{as_text(request.get('subject'))}: {as_text(request.get('fact'))}",
        "custom-tool": f"{as_text(request.get('toolName'))} {as_text(request.get('args'))}".rstrip(),
        "hook": f"{as_text(request.get('toolName'))} {as_text(request.get('hookMessage'))}".rstrip(),
        "extension-management": f"{as_text(request.get('operation'))} {as_text(request.get('extensionName'))}",
        "extension-permission-access": f"{as_text(request.get('extensionName'))} "
                                       f"{as_text(request.get('capabilities'))}",
    }.get(kind)
    if what is None:
        return excerpt(compact(request), 500)
    intention = as_text(request.get("intention"))
    return f"{kind}: {excerpt(as_text(what), 2000)}" + (f" ({intention})" if intention else "")


def _permission_requested(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    request = mapping(data.get("permissionRequest"))
    call_id = label(request.get("toolCallId"))
    summary = request_summary(request)
    hooked = " (resolved by a permissionRequest hook)" if data.get("resolvedByHook") is True else ""
    draft = Draft("system", f"permission request: {summary}{hooked}", locator,
                  tool_name=session.calls.called_name(call_id), tool_use_id=call_id, **session.fields(event))
    session.hold_request(label(data.get("requestId")), (call_id, summary), draft)
    yield draft


def decision_text(result: dict) -> str:
    """``permission decision: ...`` for a PermissionResult (docs/agents/copilot-cli.md, Permission rows)."""
    kind = as_text(result.get("kind"))
    approval = compact(result["approval"]) if "approval" in result else ""
    texts = {
        "approved": "approved",
        "approved-for-session": f"approved for the rest of the session: {approval}",
        "approved-for-location": f"approved and remembered for {as_text(result.get('locationKey'))}: {approval}",
        "cancelled": f"cancelled {as_text(result.get('reason'))}".rstrip(),
        "denied-by-rules": f"denied by a permission rule: {as_text(result.get('rules'))}",
        "denied-no-approval-rule-and-could-not-request-from-user":
            "denied by a permission rule: no rule approved the call and the user could not be asked",
        "denied-by-content-exclusion-policy": f"denied by a permission rule: content exclusion policy for "
                                              f"{as_text(result.get('path'))}: {as_text(result.get('message'))}",
        "denied-by-permission-request-hook": f"denied by a permission rule: a permissionRequest hook: "
                                             f"{as_text(result.get('message'))}",
    }
    if kind == "denied-interactively-by-user":
        feedback = as_text(result.get("feedback"))
        return f"permission decision: denied with feedback: {feedback}" if feedback else "permission decision: denied"
    return f"permission decision: {texts.get(kind, kind or '(no result kind)')}"


def _permission_completed(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    held_call, summary = session.requests.pop(label(data.get("requestId")), ("", ""))
    call_id = label(data.get("toolCallId")) or held_call
    text = decision_text(mapping(data.get("result")))
    yield Draft("system", f"{text} ({summary})" if summary else text, locator,
                tool_name=session.calls.called_name(call_id), tool_use_id=call_id, **session.fields(event))


# -- sub-agents, skills, hooks, other -------------------------------------------------------------

def _subagent(state: str) -> Handler:
    def rows(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
        name = as_text(data.get("agentDisplayName") or data.get("agentName"))
        details = facts(data, ("agentName", "model", "totalToolCalls", "totalTokens", "durationMs"))
        text = f"subagent: {name} {state} ({details})"
        if state == "started" and data.get("agentDescription"):
            text = f"{text}: {as_text(data['agentDescription'])}"
        if state == "failed":
            text = f"{text}: {as_text(data.get('error'))}"
        call_id = label(data.get("toolCallId"))
        yield Draft("system", text, locator, tool_name=session.calls.called_name(call_id), tool_use_id=call_id,
                    **session.fields(event, label(data.get("model"))))
    return rows


def _subagent_selected(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    name = as_text(data.get("agentDisplayName") or data.get("agentName"))
    yield Draft("system", f"subagent: custom agent {name} selected (tools={as_text(data.get('tools'))})", locator,
                **session.fields(event))


def _skill(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    fields = session.fields(event)
    details = facts(data, ("trigger", "source", "path", "pluginName", "pluginVersion", "description"))
    yield Draft("system", f"skill: {as_text(data.get('name'))} invoked ({details}): {as_text(data.get('content'))}",
                locator, **fields)
    tools = data.get("allowedTools")
    if isinstance(tools, list) and tools:
        yield Draft("system", f"permission setting: allowedTools={compact(tools)} (skill "
                              f"{as_text(data.get('name'))}, while it is active)", f"{locator}/allowedTools", **fields)


def _hook(state: str) -> Handler:
    def rows(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
        details = facts(data, ("hookInvocationId", "success"))
        payload = data.get("input" if state == "started" else "output")
        error = mapping(data.get("error"))
        body = f"error: {as_text(error.get('message'))}" if error else excerpt(as_text(payload), 4000)
        yield Draft("system", f"hook: {as_text(data.get('hookType'))} {state} ({details}): {body}", locator,
                    **session.fields(event))
    return rows


def _system_message(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    role = as_text(data.get("role"))
    prefix = "system prompt" if role in ("", "system") else f"system prompt ({role})"
    yield Draft("system", f"{prefix}: {as_text(data.get('content'))}", locator, **session.fields(event))


def _external_tool(session: Session, event: dict, data: dict, locator: str) -> Iterator[Draft]:
    call_id, name = label(data.get("toolCallId")), label(data.get("toolName"))
    yield Draft("system", f"external tool requested: {name} ({call_id}) in {as_text(data.get('workingDirectory'))}: "
                          f"{as_text(data.get('arguments'))}", locator, tool_name=name, tool_use_id=call_id,
                **session.fields(event))


HANDLERS: dict[str, Handler] = {
    "session.start": _begins("session start", START_KEYS),
    "session.resume": _begins("session resume", RESUME_KEYS),
    "session.context_changed": _context_changed,
    "session.model_change": _model_change,
    "session.mode_changed": _mode_changed,
    "session.permissions_changed": _permissions_changed,
    "session.compaction_start": _described("compaction started", ("systemTokens", "conversationTokens",
                                                                  "toolDefinitionsTokens")),
    "session.compaction_complete": _compaction_complete,
    "session.truncation": _truncation,
    "session.shutdown": _shutdown,
    "session.error": _described("error", ("errorType", "errorCode", "statusCode", "url"), "message"),
    "session.info": _described("info", ("infoType", "url", "tip"), "message"),
    "session.warning": _described("warning", ("warningType", "url"), "message"),
    "session.plan_changed": _described("plan", ("operation",)),
    "session.workspace_file_changed": _described("workspace file", ("operation", "path")),
    "session.task_complete": _described("task complete", ("success",), "summary"),
    "session.handoff": _described("session handoff", ("handoffTime", "sourceType", "remoteSessionId", "host",
                                                      "repository", "context"), "summary"),
    "session.schedule_created": _described("schedule", ("id", "intervalMs", "recurring", "displayPrompt"), "prompt"),
    "session.schedule_cancelled": _described("schedule cancelled", ("id",)),
    "session.autopilot_objective_changed": _described("autopilot objective", ("operation", "id", "status")),
    "session.remote_steerable_changed": _described("setting", ("remoteSteerable",)),
    "permission.requested": _permission_requested,
    "permission.completed": _permission_completed,
    "subagent.started": _subagent("started"),
    "subagent.completed": _subagent("completed"),
    "subagent.failed": _subagent("failed"),
    "subagent.selected": _subagent_selected,
    "subagent.deselected": _described("subagent: custom agent deselected", ()),
    "skill.invoked": _skill,
    "hook.start": _hook("started"),
    "hook.end": _hook("ended"),
    "system.message": _system_message,
    "system.notification": _described("notification", ("kind",), "content"),
    "external_tool.requested": _external_tool,
}
