r"""Continue-style chat sessions: the sessions.json index, session files, prompt logs.

Used by Continue and by forks that kept its layout (PearAI's pearai.pearai).
``sessions/sessions.json`` is an array of ``{sessionId, title, dateCreated
(ms epoch as a string), workspaceDirectory, ...}``; each ``sessions/<id>.json``
holds the conversation with no per-message time, so the index supplies the only
time a session has. Prompts logged as text render each message as
``<role>\n<content>\n\n``. ``read_session``, ``unlisted_sessions``,
``dev_data_chat_rows`` and ``tokens_generated_rows`` walk each file into rows;
a fork passes the names of its index and session stores.

References: continuedev/continue@d0a3c0b6 core/util/history.ts:111-192,
core/index.d.ts:292-298; trypear/pearai-submodule@51eceef core/util/history.ts:7-135,
core/llm/index.ts:373-384 (research/formats-vscode-family.md 4.2, 4.3, 4.6).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.bundle import Source
from aitrail.analyzer.context import FileTooLarge, ParseContext
from aitrail.analyzer.formats.cline_tasks import number
from aitrail.analyzer.formats.decode import decode_json
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import bad_file, bad_line, bad_record, json_document
from aitrail.analyzer.rows import Draft, ns_from_ms

_ROLE_TAG = re.compile(r"(?m)^<(system|user|assistant)>[ \t]*\n?")


@dataclass
class IndexEntry:
    """One sessions.json entry: id, title, creation time, workspace, and where it sits in the index."""

    session_id: str
    title: str
    created_ns: int | None
    workspace: str
    locator: str


def read_index(ctx: ParseContext, source: Source) -> tuple[dict[str, IndexEntry], list[Draft]]:
    """Entries by session id, and a parser: row for everything the index loses."""
    try:
        document = decode_json(ctx.read(source))
    except (ValueError, UnicodeDecodeError, FileTooLarge) as exc:  # a huge index must not hide the sessions
        return {}, [bad_file(f"unreadable session index, sessions keep no time: {exc}")]
    if not isinstance(document, list):
        return {}, [bad_file(f"unreadable session index: a JSON {type(document).__name__}, not an array")]
    entries: dict[str, IndexEntry] = {}
    problems: list[Draft] = []
    for position, item in enumerate(document):
        locator = f"json:/{position}"
        session_id = item.get("sessionId", item.get("session_id")) if isinstance(item, dict) else None
        if not isinstance(session_id, str) or not session_id:
            problems.append(bad_record(locator, "index entry without a sessionId", json.dumps(item)[:1000]))
            continue
        created = ns_from_ms(item.get("dateCreated"))
        if item.get("dateCreated") is not None and created is None:
            problems.append(bad_record(locator, f"dateCreated {item.get('dateCreated')!r} is not a time"))
        entries[session_id] = IndexEntry(
            session_id=session_id, title=str(item.get("title") or ""), created_ns=created,
            workspace=str(item.get("workspaceDirectory") or ""), locator=locator,
        )
    return entries, problems


def session_index(ctx: ParseContext, index_store: str) -> dict[str, IndexEntry]:
    """The index entries of the same location as the current source (read once per worker)."""
    def load() -> dict[str, IndexEntry]:
        merged: dict[str, IndexEntry] = {}
        for source in ctx.related(index_store):
            if source.location == ctx.source.location:
                merged.update(read_index(ctx, source)[0])
        return merged

    return ctx.cached(("continue-index", index_store, ctx.source.location), load)


def message_text(content) -> str:
    """A ChatMessage content as text: a string, or text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") == "imageUrl":
                parts.append("[image]")
            else:
                parts.append(json.dumps(part, sort_keys=True))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, sort_keys=True)


def role_blocks(prompt: str) -> list[tuple[str, str]] | None:
    """Split a prompt written as ``<role>`` blocks; None when it is not in that form."""
    pieces = _ROLE_TAG.split(prompt)
    if len(pieces) < 3 or pieces[0].strip():
        return None
    return [(pieces[index], pieces[index + 1].strip("\n")) for index in range(1, len(pieces) - 1, 2)]


def last_user_block(prompt: str) -> str | None:
    """The last ``<user>`` block of a prompt logged as text, or None if it has no role tags."""
    blocks = role_blocks(prompt)
    if not blocks:
        return None
    users = [text for role, text in blocks if role == "user"]
    return users[-1].strip() if users else None


# -- the session walk: session files, the index's lost sessions, dev_data -------------------------------


def read_session(ctx: ParseContext, index_store: str = "session_index") -> Iterator[Draft]:
    """A session file: one row per history and perplexityHistory message.

    Every row takes the session's ``dateCreated`` from the index in ``index_store``
    (``index`` time) and its workspace; a ``model:`` row is written where a message's
    promptLogs name a model or change it.
    """
    document, problem = json_document(ctx.data, "session file")
    if problem is not None:
        yield problem
        return
    session_id = str(document.get("sessionId") or ctx.source.name.removesuffix(".json"))
    entry = session_index(ctx, index_store).get(session_id)
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


def unlisted_sessions(ctx: ParseContext, sessions_store: str = "chat_sessions") -> Iterator[Draft]:
    """Bad index entries, and a ``session:`` row per entry whose file (in ``sessions_store``) is not in the bundle."""
    entries, problems = read_index(ctx, ctx.source)
    yield from problems
    for entry in entries.values():
        if ctx.sibling(f"{entry.session_id}.json", sessions_store) is None:
            yield Draft("system", f"session: {entry.title} (listed in sessions.json; its session file is not in "
                                  "the bundle)", entry.locator, timestamp_ns=entry.created_ns, timestamp_source="index",
                        session_id=entry.session_id, project_path=entry.workspace)


def dev_data_chat_rows(ctx: ParseContext, index_store: str = "session_index") -> Iterator[Draft]:
    """dev_data/chat.jsonl: the prompt's last user block, the completion, the feedback (no time recorded).

    A prompt without a user block is a ``model request:`` row.
    """
    index = session_index(ctx, index_store)
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


def tokens_generated_rows(ctx: ParseContext) -> Iterator[Draft]:
    """dev_data/tokens_generated.jsonl: one ``tokens generated:`` row per line (no time recorded)."""
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            yield line
            continue
        record = line.value
        text = (f"tokens generated: model={record.get('model', '')} provider={record.get('provider', '')} "
                f"promptTokens={number(record.get('promptTokens'))} "
                f"generatedTokens={number(record.get('generatedTokens'))}")
        yield Draft("system", text, line.locator, model=str(record.get("model") or ""), timestamp_source="none")
