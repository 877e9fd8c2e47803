"""PearAI: chat sessions (Continue fork), agent tasks (Roo Code 3.15 fork), and their side records.

The row rules are those of docs/agents/pearai.md (the seed's Parser plan):

* chat sessions: one row per history / perplexityHistory item, every row at the
  session's ``dateCreated`` from sessions.json (``index`` time), with
  ``model:`` rows when promptLogs name a model or change it;
* agent tasks: api_conversation_history.json, XML tool tags as tool_use rows
  (tool_use_id = the assistant message's index), ``[tool for 'arg'] Result:``
  blocks as tool_result rows, permission decision rows after denied or
  annotated results, project from the task list in state.vscdb;
* state.vscdb: one ``task:`` row per taskHistory entry and one
  ``permission setting:`` row per standing auto-approval key;
* the PearAI output channel log and dev_data/chat.jsonl as secondary sources,
  dev_data/tokens_generated.jsonl as ``tokens generated:`` rows.

Sample records::

    {"history":[{"message":{"role":"user","content":"why does build.sh fail"}, ...}],
     "perplexityHistory":[], "sessionId":"9b1c2d3e-...", "workspaceDirectory":"/home/alice/proj"}
    [{"role":"assistant","content":[{"type":"text","text":"<execute_command>\\n<command>npm test</command>\\n</execute_command>"}],"ts":1759400103000}]

References: trypear/pearai-submodule@51eceef core/index.d.ts:207-332, core/util/history.ts:7-135,
core/llm/index.ts:247-291,373-384,548-588, extensions/vscode/src/extension/VsCodeExtension.ts:132-155;
trypear/PearAI-Roo-Code@0b6df73 src/core/Cline.ts:323-327,1271-1386, src/core/prompts/responses.ts:8-14,
src/schemas/index.ts:327-352,584-597; trypear/PearAI-Roo-Code@7bd0c94 src/core/assistant-message/index.ts
(tool names).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats import cline_tasks as tasks
from aitrail.analyzer.formats.continue_sessions import last_user_block, message_text, read_index, session_index
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_file, bad_line, bad_record, json_document
from aitrail.analyzer.formats.vscode_state import StateUnreadable, extension_state, read_row
from aitrail.analyzer.rows import Draft, ns_from_ms

EXTENSION_ROW = "PearAI.pearai-roo-cline"
TOOL_NAMES = (
    "execute_command", "read_file", "write_to_file", "apply_diff", "insert_content", "search_and_replace",
    "search_files", "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "switch_mode", "new_task",
    "show_task_plan",
)
APPROVAL_KEYS = (
    "autoApprovalEnabled", "alwaysAllowReadOnly", "alwaysAllowReadOnlyOutsideWorkspace", "alwaysAllowWrite",
    "alwaysAllowWriteOutsideWorkspace", "alwaysAllowBrowser", "alwaysApproveResubmit", "alwaysAllowMcp",
    "alwaysAllowModeSwitch", "alwaysAllowSubtasks", "alwaysAllowExecute", "allowedCommands",
)
SEPARATOR = "=" * 74
RULE = "#" * 44
_LOG_SESSION = re.compile(r"(?:^|/)logs/(\d{8}T\d{6})/")


# -- chat sessions (Continue fork) ------------------------------------------------------


def parse_chat_session(ctx: ParseContext) -> Iterator[Draft]:
    document, problem = json_document(ctx.data, "session file")
    if problem is not None:
        yield problem
        return
    session_id = str(document.get("sessionId") or ctx.source.name.removesuffix(".json"))
    entry = session_index(ctx, "session_index").get(session_id)
    base = {
        "session_id": session_id,
        "project_path": str(document.get("workspaceDirectory") or (entry.workspace if entry else "")),
        "timestamp_ns": entry.created_ns if entry else None,
        "timestamp_source": "index",
    }
    if "history" not in document and "perplexityHistory" not in document:
        yield bad_record("json:/", "session without history or perplexityHistory", json.dumps(document)[:2000])
    model = None
    for list_name in ("history", "perplexityHistory"):
        items = document.get(list_name)
        if items is None:
            continue
        if not isinstance(items, list):
            yield bad_record(f"json:/{list_name}", f"{list_name} is a JSON {type(items).__name__}, not an array")
            continue
        for position, item in enumerate(items):
            for draft in _chat_item(item, f"json:/{list_name}/{position}", base, model):
                if draft.extra.get("model_now"):
                    model = draft.extra["model_now"]
                yield draft


def _chat_item(item, locator: str, base: dict, model: str | None) -> Iterator[Draft]:
    if not isinstance(item, dict) or not isinstance(item.get("message"), dict):
        yield bad_record(locator, "history item without a message object", json.dumps(item)[:2000])
        return
    message = item["message"]
    item_model = _prompt_log_model(item)
    if item_model and item_model != model:
        text = f"model: {item_model}" if model is None else f"model: {model} -> {item_model}"
        yield Draft("system", text, f"{locator}/promptLogs/0/completionOptions/model", model=item_model,
                    extra={"model_now": item_model}, **base)
    role = message.get("role")
    turn = role if role in ("user", "assistant", "system") else "system"
    text = message_text(message.get("content"))
    if turn == "system" and role != "system":
        text = f"role {role!r}: {text}"
    yield Draft(turn, text, f"{locator}/message/content", model=item_model or "", **base)


def _prompt_log_model(item: dict) -> str | None:
    logs = item.get("promptLogs")
    if isinstance(logs, list) and logs and isinstance(logs[0], dict):
        options = logs[0].get("completionOptions")
        if isinstance(options, dict) and isinstance(options.get("model"), str) and options["model"]:
            return options["model"]
    return None


def parse_session_index(ctx: ParseContext) -> Iterator[Draft]:
    """Bad index entries, and entries whose session file is not in the bundle."""
    entries, problems = read_index(ctx, ctx.source)
    yield from problems
    for entry in entries.values():
        if ctx.sibling(f"{entry.session_id}.json", "chat_sessions") is None:
            yield Draft("system", f"session: {entry.title} (listed in sessions.json; its session file is not in the bundle)",
                        entry.locator, timestamp_ns=entry.created_ns, timestamp_source="index",
                        session_id=entry.session_id, project_path=entry.workspace)


# -- agent tasks (Roo Code fork) ---------------------------------------------------------


def parse_agent_task(ctx: ParseContext) -> Iterator[Draft]:
    name = ctx.source.name
    if name == "api_conversation_history.json":
        yield from _api_history(ctx)
    elif name == "ui_messages.json" and ctx.sibling("api_conversation_history.json") is None:
        yield from _ui_messages(ctx)
    # task_metadata.json (files in context) and a ui_messages.json beside its API history add no rows


def _task_id(ctx: ParseContext) -> str:
    return ctx.source.directory.rsplit("/", 1)[-1]


def _task_workspaces(ctx: ParseContext) -> dict[str, str]:
    """taskHistory id -> workspace, from every state.vscdb of the bundle (read once per worker)."""
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        for source in ctx.related("global_state"):
            try:
                row = read_row(ctx, EXTENSION_ROW, source)
                history = extension_state(row).get("taskHistory") if row else None
            except StateUnreadable:
                continue
            for item in history if isinstance(history, list) else ():
                if isinstance(item, dict) and isinstance(item.get("id"), str) and item.get("workspace"):
                    found.setdefault(item["id"], str(item["workspace"]))
        return found

    return ctx.cached(("pearai-workspaces",), load)


def _task_columns(ctx: ParseContext) -> dict:
    """session_id (the task folder) and project_path (from the task list) of every row of a task."""
    task_id = _task_id(ctx)
    return {"session_id": task_id, "project_path": _task_workspaces(ctx).get(task_id, "")}


def _api_history(ctx: ParseContext) -> Iterator[Draft]:
    messages, problem = json_document(ctx.data, "api_conversation_history.json", list)
    if problem is not None:
        yield problem
        return
    base = _task_columns(ctx)
    open_calls: list[Draft] = []
    for index, message in enumerate(messages):
        locator = f"json:/{index}"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            yield bad_record(locator, "not a user or assistant message", json.dumps(message)[:2000])
            continue
        moment = {"timestamp_ns": ns_from_ms(message.get("ts")), "timestamp_source": "record", **base}
        content = message.get("content")
        blocks = [content] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            yield bad_record(f"{locator}/content", "content is neither text nor a list of blocks")
            continue
        if message["role"] == "assistant":
            yield from _orphan_calls(open_calls)
            open_calls = []
            yield from _assistant(blocks, index, locator, moment, open_calls)
        else:
            yield from _user(blocks, locator, moment, open_calls)
            open_calls = []
    yield from _orphan_calls(open_calls)


def _assistant(blocks: list, index: int, locator: str, moment: dict, calls: list[Draft]) -> Iterator[Draft]:
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        for segment in tasks.split_assistant_text(tasks.block_text(block), TOOL_NAMES):
            if segment.kind == "text":
                yield Draft("assistant", segment.text, where, **moment)
            elif segment.kind == "thinking":
                yield Draft("thinking", segment.text, where, **moment)
            else:
                call_id = str(index) if not calls else f"{index}.{len(calls) + 1}"
                call = Draft("tool_use", segment.text, where, tool_name=segment.tool_name, tool_use_id=call_id, **moment)
                calls.append(call)
                yield call


def _user(blocks: list, locator: str, moment: dict, calls: list[Draft]) -> Iterator[Draft]:
    result: dict | None = None  # the tool result being assembled from consecutive blocks
    for position, block in enumerate(blocks):
        where = f"{locator}/content/{position}"
        text = tasks.block_text(block)
        kind = tasks.classify_user_block(text) if isinstance(block, (str, dict)) and text else None
        if kind is None:
            continue
        if result is not None and kind.kind == "user":
            result["texts"].append(kind.text)
            continue
        if result is not None:
            yield from _finish_result(result, moment)
            result = None
        if kind.kind == "result":
            call = _take_call(calls, kind.tool_name)
            result = {"tool": kind.tool_name, "call": call, "texts": [kind.text] if kind.text else [], "where": where}
        elif kind.kind in ("not_executed", "rejected_earlier"):
            call = _take_call(calls, kind.tool_name)
            yield Draft("tool_result", kind.text, where, tool_name=kind.tool_name,
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind.kind == "system":
            yield Draft("system", kind.text, where, **moment)
        else:  # task or user: typed by the user
            yield Draft("user", kind.text, where, **moment)
    if result is not None:
        yield from _finish_result(result, moment)


def _take_call(calls: list[Draft], tool_name: str) -> Draft | None:
    for position, call in enumerate(calls):
        if call.tool_name == tool_name:
            return calls.pop(position)
    return calls.pop(0) if calls else None


def _finish_result(result: dict, moment: dict) -> Iterator[Draft]:
    call = result["call"]
    call_id = call.tool_use_id if call else ""
    output = "\n".join(result["texts"])
    yield Draft("tool_result", output, result["where"], tool_name=result["tool"], tool_use_id=call_id, **moment)
    if call is None:
        yield Draft("system", f"parser: tool result for {result['tool']} with no tool call before it",
                    result["where"], **moment)
    decision = tasks.permission_decision(result["texts"][0]) if result["texts"] else None
    if decision:
        yield Draft("system", f"permission decision: {decision}", result["where"], tool_name=result["tool"],
                    tool_use_id=call_id, **moment)


def _orphan_calls(calls: list[Draft]) -> Iterator[Draft]:
    for call in calls:
        yield Draft("system", f"parser: no result recorded for tool call {call.tool_use_id} ({call.tool_name})",
                    call.locator, timestamp_ns=call.timestamp_ns, timestamp_source=call.timestamp_source,
                    session_id=call.session_id, project_path=call.project_path, tool_name=call.tool_name,
                    tool_use_id=call.tool_use_id)


def _ui_messages(ctx: ParseContext) -> Iterator[Draft]:
    """Fallback transcript when the task's API history is not in the bundle."""
    events, problem = json_document(ctx.data, "ui_messages.json", list)
    if problem is not None:
        yield problem
        return
    base = _task_columns(ctx)
    seen_prompt, open_asks = False, []
    for index, event in enumerate(events):
        locator = f"json:/{index}"
        if not isinstance(event, dict) or event.get("type") not in ("ask", "say"):
            yield bad_record(locator, "not an ask or say event", json.dumps(event)[:2000])
            continue
        moment = {"timestamp_ns": ns_from_ms(event.get("ts")), "timestamp_source": "record", **base}
        kind, text = event.get(event["type"]) or "", str(event.get("text") or "")
        if event.get("partial"):
            continue  # a streaming placeholder, superseded by the final event with the same ts
        if event["type"] == "say" and kind == "text":
            yield Draft("assistant" if seen_prompt else "user", text, locator, **moment)
            seen_prompt = True
        elif kind == "user_feedback":
            yield Draft("user", text, locator, **moment)
        elif kind == "reasoning":
            yield Draft("thinking", text, locator, **moment)
        elif event["type"] == "ask" and kind in ("tool", "command", "use_mcp_server", "browser_action_launch"):
            call = Draft("tool_use", text, locator, tool_name=tasks.ui_tool_name(kind, text),
                         tool_use_id=str(event.get("ts", "")), **moment)
            open_asks.append(call)
            yield call
        elif kind in ("command_output", "mcp_server_response", "browser_action_result"):
            call = open_asks.pop() if open_asks else None
            yield Draft("tool_result", text, locator, tool_name=call.tool_name if call else "",
                        tool_use_id=call.tool_use_id if call else "", **moment)
        elif kind in ("completion_result", "followup"):
            yield Draft("assistant", text, locator, **moment)
        else:
            yield Draft("system", f"ui {event['type']} {kind}: {text}", locator, **moment)
    yield from _orphan_calls(open_asks)  # ui_messages.json keeps no output for file tools


# -- state.vscdb: task list and standing permissions ------------------------------------


def parse_global_state(ctx: ParseContext) -> Iterator[Draft]:
    try:
        row = read_row(ctx, EXTENSION_ROW)
        state = extension_state(row) if row is not None else None
    except StateUnreadable as exc:
        yield bad_file(f"{ctx.source.name}: {exc}")
        return
    if state is None:
        return
    locator = row.locator()
    mtime = {"timestamp_ns": ctx.source.mtime_ns, "timestamp_source": "file-mtime"}
    for key in APPROVAL_KEYS:
        if key in state:
            value = json.dumps(state[key], separators=(",", ":"), ensure_ascii=False)
            # "state.vscdb" even for the .backup copy: the source column names the file, and
            # the same text lets a setting unchanged since the backup deduplicate against the live one
            yield Draft("system", f"permission setting: {key}={value} (from state.vscdb "
                                  f"{EXTENSION_ROW.lower()}, file mtime)", f"{locator}/{key}", **mtime)
    history = state.get("taskHistory")
    if history is not None and not isinstance(history, list):
        yield bad_record(f"{locator}/taskHistory", "taskHistory is not an array")
        return
    for position, item in enumerate(history or ()):
        where = f"{locator}/taskHistory/{position}"
        if not isinstance(item, dict) or not item.get("id"):
            yield bad_record(where, "task history entry without an id", json.dumps(item)[:2000])
            continue
        yield Draft("system", tasks.task_row_text(item), where, timestamp_ns=ns_from_ms(item.get("ts")),
                    session_id=str(item["id"]), project_path=str(item.get("workspace") or ""))


# -- output channel log (secondary) ----------------------------------------------------------


def parse_output_log(ctx: ParseContext) -> Iterator[Draft]:
    text = ctx.data.decode("utf-8", "replace")
    lines = text.split("\n")
    moment = {"timestamp_ns": _log_session_ns(ctx), "timestamp_source": "log-dir"}
    records, preamble = _log_records(lines)
    if preamble and any(line.strip(" \t\r") for line in preamble[1]):
        yield bad_record(f"line:{preamble[0]}", "text before the first record separator", "\n".join(preamble[1]))
    model, request = None, None
    for start, body in records:
        head = body[0] if body else ""
        if head == "Settings:":
            parsed = _request(body)
            if parsed is None:
                yield bad_record(f"line:{start}", "Settings: write with no # rule (cut off mid-write)", "\n".join(body))
                continue
            if request is not None:
                yield from _request_rows(request, None, moment)
            settings, prompt = parsed
            new_model = settings.get("model")
            if new_model and new_model != model:
                label = f"model: {new_model}" if model is None else f"model: {model} -> {new_model}"
                yield Draft("system", label, f"line:{start}", model=new_model, **moment)
                model = new_model
            request = (start, prompt, new_model or "")
        elif head == "Completion:":
            reply = "\n".join(body[1:]).strip("\n")
            yield from _request_rows(request, (start, reply), moment)
            request = None
        else:
            yield bad_record(f"line:{start}", "a write that starts with neither Settings: nor Completion:", "\n".join(body))
    if request is not None:
        yield from _request_rows(request, None, moment)


def _log_records(lines: list[str]) -> tuple[list[tuple[int, list[str]]], tuple[int, list[str]] | None]:
    """Records after each pair of separator lines, with the line number of their first line."""
    records: list[tuple[int, list[str]]] = []
    preamble: list[str] = []
    current: list[str] | None = None
    index = 0
    while index < len(lines):
        if lines[index] == SEPARATOR and index + 1 < len(lines) and lines[index + 1] == SEPARATOR:
            current = []
            records.append((index + 3, current))
            index += 2
            continue
        (preamble if current is None else current).append(lines[index])
        index += 1
    return records, ((1, preamble) if preamble else None)


def _request(body: list[str]) -> tuple[dict, str] | None:
    settings: dict[str, str] = {}
    for position, line in enumerate(body[1:], start=1):
        if line == RULE:
            return settings, "\n".join(body[position + 1:]).strip("\n")
        key, separator, value = line.partition(": ")
        if separator:
            settings[key.strip()] = value.strip()
    return None


def _request_rows(request, completion, moment: dict) -> Iterator[Draft]:
    if request is None:
        if completion is not None:
            start, reply = completion
            yield Draft("system", f"model completion: {reply}", f"line:{start}", **moment)
        return
    start, prompt, model = request
    user = last_user_block(prompt)
    if user is not None:
        yield Draft("user", user, f"line:{start}", model=model, **moment)
        if completion is not None:
            yield Draft("assistant", completion[1], f"line:{completion[0]}", model=model, **moment)
        return
    yield Draft("system", f"model request: {prompt}", f"line:{start}", model=model, **moment)
    if completion is not None:
        yield Draft("system", f"model completion: {completion[1]}", f"line:{completion[0]}", model=model, **moment)


def _log_session_ns(ctx: ParseContext) -> int | None:
    """The editor session's start, from logs/<YYYYMMDDTHHMMSS>/ (local time).

    Only converted to UTC when the bundle was collected live on the subject, so
    that the recorded time zone is the subject's; otherwise no time is given.
    """
    match = _LOG_SESSION.search(ctx.source.path)
    collection = ctx.collection or {}
    if not match or collection.get("mode") not in ("current-user", "all-users"):
        return None
    offset = (collection.get("time_zone") or {}).get("utc_offset_seconds")
    if not isinstance(offset, int):
        return None
    local = dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=dt.timezone(dt.timedelta(seconds=offset)))
    return int(local.timestamp()) * 1_000_000_000


# -- dev_data tables ----------------------------------------------------------------------------


def parse_dev_data_chat(ctx: ParseContext) -> Iterator[Draft]:
    index = session_index(ctx, "session_index")
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        session_id = str(record.get("sessionId") or "")
        entry = index.get(session_id)
        options = record.get("completionOptions")
        model = str(options.get("model") or "") if isinstance(options, dict) else ""
        base = {"session_id": session_id, "project_path": entry.workspace if entry else "", "model": model,
                "timestamp_source": "none"}
        prompt = str(record.get("prompt") or "")
        if not prompt and "completion" not in record and "feedback" not in record:
            yield bad_line(line.number, "no prompt, completion or feedback", line.raw)
            continue
        user = last_user_block(prompt)
        if user is not None:
            yield Draft("user", user, line.locator, **base)
        elif prompt:
            yield Draft("system", f"model request: {prompt}", line.locator, **base)
        if "completion" in record:
            yield Draft("assistant", str(record.get("completion") or ""), line.locator, **base)
        if "feedback" in record:
            yield Draft("system", f"user feedback: {json.dumps(record['feedback'])} (from dev_data/chat.jsonl)",
                        line.locator, **base)


def parse_tokens_generated(ctx: ParseContext) -> Iterator[Draft]:
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        text = (f"tokens generated: model={record.get('model', '')} provider={record.get('provider', '')} "
                f"promptTokens={tasks.number(record.get('promptTokens'))} "
                f"generatedTokens={tasks.number(record.get('generatedTokens'))}")
        yield Draft("system", text, line.locator, model=str(record.get("model") or ""), timestamp_source="none")


PARSERS = (
    ("pearai.chat_session.v1", parse_chat_session),
    ("pearai.session_index.v1", parse_session_index),
    ("pearai.agent_task.v1", parse_agent_task),
    ("pearai.global_state.v1", parse_global_state),
    ("pearai.output_log.v1", parse_output_log),
    ("pearai.dev_data_chat.v1", parse_dev_data_chat),
    ("pearai.tokens_generated.v1", parse_tokens_generated),
)
