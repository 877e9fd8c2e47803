"""PearAI chat sessions (Continue fork): sessions/<id>.json, sessions.json, dev_data/*.jsonl."""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats import cline_tasks as tasks
from aitrail.analyzer.formats.continue_sessions import last_user_block, message_text, read_index, session_index
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_line, bad_record, json_document
from aitrail.analyzer.rows import Draft


def parse_chat_session(ctx: ParseContext) -> Iterator[Draft]:
    """A Continue-fork chat session file: one row per history and perplexityHistory message.

    Every row takes the session's ``dateCreated`` from sessions.json (``index`` time) and
    its workspace; a ``model:`` row is written where a message's promptLogs name a model
    or change it.
    """
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


def parse_dev_data_chat(ctx: ParseContext) -> Iterator[Draft]:
    """dev_data/chat.jsonl (secondary): the prompt's last user block, the completion, the feedback.

    The file keeps no time; a prompt without a user block is a ``model request:`` row.
    """
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
    """dev_data/tokens_generated.jsonl: one ``tokens generated:`` row per line (no time recorded)."""
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        text = (f"tokens generated: model={record.get('model', '')} provider={record.get('provider', '')} "
                f"promptTokens={tasks.number(record.get('promptTokens'))} "
                f"generatedTokens={tasks.number(record.get('generatedTokens'))}")
        yield Draft("system", text, line.locator, model=str(record.get("model") or ""), timestamp_source="none")
