"""agent_conversations and agent_tasks: each conversation's title, usage and settings; its tasks as protobuf.

[src] ``agent_conversations`` (app/src/persistence/agent.rs:17-130;
crates/persistence/src/model.rs ``AgentConversationData``,
``ConversationUsageMetadata``, ``ModelTokenUsage``, ``AgentConversationSummary``):
``conversation_data`` is JSON with ``conversation_usage_metadata`` (credits,
token usage per model, tool-call counts, ``was_summarized``),
``reverted_action_ids``, ``parent_conversation_id``, ``agent_name``, ``run_id``,
``autoexecute_override`` (``RespectUserSettings`` | ``RunToCompletion``) and a
``server_conversation_token`` (never shown); ``summary`` (from 2026-07-07) is
JSON ``{initial_query, title, initial_working_directory, is_restorable}``;
its ``initial_query`` is a secondary ``user`` row only when ai_queries no
longer holds that prompt (ai_queries is trimmed apart from the conversations).
The row is rewritten on every update and its ``last_modified_at`` bumped
(UTC); at most 200 conversations are kept (older trees are evicted).

``agent_tasks.task`` is ``api::Task::encode_to_vec()``: a protobuf
``warp.multi_agent.v1.Task`` (warpdotdev/warp-proto-apis apis/multi_agent/v1/task.proto)
whose ``messages`` hold the queries, the agent's output and reasoning, the tool
calls and their results. This parser does not decode it: each blob is one
``parser:`` row with its task id and size, never its bytes (its length is
asked of SQLite; the blob is never fetched).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.idioms import as_dict, as_list, setting_value
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .tables import has_column, missing_column, read_table, text_value, when

SESSION_FACTS = ("initial_working_directory", "agent_name", "parent_conversation_id", "run_id", "is_remote_child")
USAGE_FACTS = ("credits_spent", "platform_credits_spent", "total_provider_cost_in_cents", "context_window_usage")
TOKEN_FACTS = ("warp_tokens", "byok_tokens", "custom_endpoint_tokens")


def conversation_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """Per conversation: ``session:``, its first prompt (secondary), settings, usage, compaction, reverts."""
    held = _prompt_probe(connection)
    for row, problems in read_table(connection, "agent_conversations"):
        yield from problems
        conversation = label(row.get("conversation_id"), 1024)
        locator = f"sqlite:agent_conversations:{row.get('_rowid')}"
        data = yield from _json(row.get("conversation_data"), f"{locator}/conversation_data", conversation)
        summary = yield from _json(row.get("summary"), f"{locator}/summary", conversation)
        columns = {"session_id": conversation, "project_path": label(summary.get("initial_working_directory"), 4096),
                   **when(row.get("last_modified_at"))}
        yield _session_row(data, summary, locator, columns)
        initial = summary.get("initial_query")
        if isinstance(initial, str) and initial.strip() and not held(conversation, initial):
            # the prompt that opened the conversation, kept here after ai_queries dropped it (secondary)
            yield Draft("user", initial, f"{locator}/summary/initial_query", origin="secondary",
                        **{**columns, "timestamp_source": "index" if columns["timestamp_ns"] else "none"})
        yield from _data_rows(data, locator, columns)


def _prompt_probe(connection: sqlite3.Connection) -> Callable[[str, str], bool]:
    """A test: does ai_queries still hold this conversation's prompt with exactly this text?

    One bounded query per conversation (at most 200 are kept): the input JSON is
    searched for the prompt as serde_json writes it (``"text":"<escaped>"``).
    Where ai_queries cannot answer, the prompt is given (a secondary row, named so).
    """
    if not (sqlite_safe.is_real_table(connection, "ai_queries") and has_column(connection, "ai_queries", "input")
            and has_column(connection, "ai_queries", "conversation_id")):
        return lambda conversation, text: False

    def held(conversation: str, text: str) -> bool:
        needle = '"text":' + json.dumps(text, ensure_ascii=False)
        found = sqlite_safe.rows(connection, 'SELECT 1 FROM "ai_queries" WHERE "conversation_id" = ? AND '
                                             'instr("input", ?) > 0 LIMIT 1', (conversation, needle),
                                 "ai_queries prompts")
        return next(found, None) is not None

    return held


def _json(raw, locator: str, conversation: str) -> Iterator[Draft]:
    """A JSON object column (an empty dict for NULL), after the row saying why it is not one."""
    if raw is None:
        return {}
    try:
        value = decode_json(text_value(raw))
    except (ValueError, UnicodeDecodeError) as exc:
        value, reason = None, f"not JSON: {exc}"
    else:
        reason = "not a JSON object"
    if isinstance(value, dict):
        return value
    problem = bad_record(locator, reason, text_value(raw))
    problem.session_id = conversation
    yield problem
    return {}


def _session_row(data: dict, summary: dict, locator: str, columns: dict) -> Draft:
    title = label(summary.get("title"), 4096) or "(no title recorded)"
    facts = ", ".join(f"{key}={as_text(value)}" for key in SESSION_FACTS
                      if (value := summary.get(key, data.get(key))) not in (None, "", False))
    text = f"session: {title}" + (f" ({facts})" if facts else "")
    return Draft("system", text, locator, **columns)


def _data_rows(data: dict, locator: str, columns: dict) -> Iterator[Draft]:
    mode = data.get("autoexecute_override")
    if mode is not None:
        yield Draft("system", f"permission setting: autoexecute_override={setting_value(mode)} (from "
                              f"agent_conversations, conversation {columns['session_id']})",
                    f"{locator}/conversation_data/autoexecute_override", **columns)
    usage = as_dict(data.get("conversation_usage_metadata"))
    usage_at = f"{locator}/conversation_data/conversation_usage_metadata"
    for index, entry in enumerate(as_list(usage.get("token_usage"))):
        entry = as_dict(entry)
        counts = _token_counts(entry)
        model = label(entry.get("model_id"))
        yield Draft("system", f"tokens generated: model={model}, {counts} (conversation total)",
                    f"{usage_at}/token_usage/{index}", **{**columns, "model": model})
    if usage:
        yield Draft("system", f"session usage: {_usage_text(usage)}", usage_at, **columns)
    if usage.get("was_summarized") is True:
        yield Draft("system", "compaction: the conversation was summarized (conversation_usage_metadata."
                              "was_summarized)", f"{usage_at}/was_summarized", **columns)
    reverted = [label(item) for item in as_list(data.get("reverted_action_ids")) if label(item)]
    if reverted:
        yield Draft("system", f"reverted actions: {', '.join(reverted)}", f"{locator}/conversation_data/"
                                                                          "reverted_action_ids", **columns)


def _token_counts(entry: dict) -> str:
    """``warp_tokens=N, byok_tokens=N, ...``; older rows called warp_tokens ``total_tokens`` (serde alias)."""
    values = dict(entry)
    if "warp_tokens" not in values and "total_tokens" in values:
        values["warp_tokens"] = values["total_tokens"]
    return ", ".join(f"{key}={as_text(values[key])}" for key in TOKEN_FACTS if values.get(key) is not None)


def _usage_text(usage: dict) -> str:
    facts = [f"{key}={as_text(usage[key])}" for key in USAGE_FACTS if usage.get(key) is not None]
    tools = as_dict(usage.get("tool_usage_metadata"))
    calls = [f"{name.removesuffix('_stats')}={as_text(as_dict(stats).get('count'))}"
             for name, stats in tools.items() if as_dict(stats).get("count")]
    if calls:
        facts.append("tool calls: " + ", ".join(calls))
    return ", ".join(facts) or compact(usage)


def task_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """One ``parser:`` row per agent_tasks blob: its task id and size, never its bytes."""
    sized = has_column(connection, "agent_tasks", "task")
    if not sized:
        yield missing_column("agent_tasks", "task")
    for row, problems in read_table(connection, "agent_tasks"):
        yield from problems
        rowid = row.get("_rowid")
        size = _blob_size(connection, rowid) if sized and rowid is not None else "size unknown"
        task = label(row.get("task_id"), 1024) or "(no task id)"
        yield Draft("system", f"parser: agent_tasks task {task} not decoded (protobuf warp.multi_agent.v1.Task, "
                              f"{size}): it holds the task's messages, the agent's replies among them",
                    f"sqlite:agent_tasks:{rowid}/task", session_id=label(row.get("conversation_id"), 1024),
                    **when(row.get("last_modified_at")))


def _blob_size(connection: sqlite3.Connection, rowid: int) -> str:
    """The task value's length as SQLite stores it (the value itself is never fetched)."""
    found = next(sqlite_safe.rows(connection, 'SELECT length("task"), typeof("task") FROM "agent_tasks" '
                                              "WHERE rowid = ?", (rowid,), "agent_tasks sizes"), None)
    if found is None or found[0] is None:
        return "no value"
    unit = "bytes" if found[1] == "blob" else f"characters of {found[1]}"
    return f"{found[0]} {unit}"
