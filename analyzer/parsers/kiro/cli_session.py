"""Kiro CLI's session store: ``~/.kiro/sessions/cli/<uuid>.jsonl`` and its ``<uuid>.json`` state sidecar.

Every shape here is observed by third parties ([obs]), never read in source (the
CLI is closed): franken_agent_detection ``src/connectors/kiro.rs`` @9d43dcfe (line
``{"version":"v1","kind":K,"data":{...}}``; kinds Prompt, AssistantMessage,
ToolResults; blocks ``{kind, data}`` text / thinking / toolUse / toolResult;
``data.meta.timestamp`` of a Prompt in epoch seconds, a value of 1e11 or more
already ms), an aws-bench Kiro CLI adapter (index copy, repository unresolved:
``toolUse.data.{toolUseId, name, input}``, ``toolResult.data.{toolUseId, content
[{kind: text|json, data}], status}``; sidecar ``session_state.rts_model_state
.model_info.model_id`` and ``conversation_metadata.user_turn_metadatas[]`` with
token counts), and cli-continues ``src/parsers/kiro.ts`` @8c23346d (envelope lines
keyed ``AssistantMessage`` / ``UserMessage`` / ``ToolResults``, kirodotdev/Kiro#6110).
So every field is read defensively: a block of another shape is a ``block <kind>:``
row, a record of another kind a ``record <kind>:`` row, never dropped.

Only a Prompt carries a time. The rows of the records after it take that time with
``timestamp_source`` index (the turn the prompt opened); rows before any prompt
take the sidecar's ``created_at`` (index), else none. Project: the sidecar's
``cwd``; model: the sidecar's model id.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.json_values import as_text, compact, document_or_row, label, mapping
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import excerpt, image_placeholder, is_image_block, json_document
from aitrail.analyzer.view.context import FileTooLarge, ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .values import ERROR_PREFIX, kiro_time

ENVELOPES = {"AssistantMessage": "AssistantMessage", "assistantMessage": "AssistantMessage",
             "UserMessage": "Prompt", "userMessage": "Prompt", "ToolResults": "ToolResults",
             "toolResults": "ToolResults"}
TOKEN_KEYS = ("input_token_count", "output_token_count")


def sidecar_facts(ctx: ParseContext) -> dict:
    """The sidecar's cwd, model and created_at for a session log (empty when there is none or it is unreadable)."""
    stem = ctx.source.name.rsplit(".", 1)[0]
    source = ctx.sibling(f"{stem}.json", "cli_session_state")
    if source is None:
        return {}
    try:
        document, problem = json_document(ctx.read(source), "session state")
    except FileTooLarge:
        return {}
    if problem is not None:
        return {}
    return {"cwd": label(document.get("cwd"), 4096), "model": session_model(document),
            "created": ns_from_iso(document.get("created_at"))}


def session_model(document: dict) -> str:
    """The sidecar's model: ``session_state.model_info`` (FAD) or ``session_state.rts_model_state.model_info``."""
    state = mapping(document.get("session_state"))
    return (label(mapping(state.get("model_info")).get("model_id"))
            or label(mapping(mapping(state.get("rts_model_state")).get("model_info")).get("model_id")))


class _Session:
    """One session log being read: its columns, the current turn's time, the calls awaiting results."""

    def __init__(self, ctx: ParseContext):
        facts = sidecar_facts(ctx)
        self.columns = {"session_id": ctx.source.name.rsplit(".", 1)[0], "project_path": facts.get("cwd", ""),
                        "model": facts.get("model", "")}
        created = facts.get("created")
        self.turn: tuple[int | None, str] = (created, "index") if created is not None else (None, "none")
        self.ledger = BoundedLedger()

    def draft(self, turn: str, text: str, locator: str, **columns) -> Draft:
        return Draft(turn, text, locator, self.turn[0], self.turn[1], **{**self.columns, **columns})


def parse_cli_session(ctx: ParseContext) -> Iterator[Draft]:
    """One Kiro CLI session log: prompts, replies, thinking, calls and results joined by toolUseId."""
    session = _Session(ctx)
    yield from each_line(ctx, lambda line: _line_rows(line, session))
    yield from session.ledger.orphans()
    yield from session.ledger.over_limit_rows()


def _record(value: dict) -> tuple[str, dict]:
    """(kind, data) of a line: the ``kind``/``data`` form, or an envelope keyed by the kind."""
    if "kind" in value:
        return label(value.get("kind")) or compact(value.get("kind"))[:80], mapping(value.get("data"))
    for key, kind in ENVELOPES.items():
        if isinstance(value.get(key), dict):
            return kind, value[key]
    if isinstance(value.get("method"), str):  # an ACP notification (session/update ...)
        update = mapping(mapping(value.get("params")).get("update"))
        kind = label(update.get("sessionUpdate"))
        return f"{value['method']}{f' ({kind})' if kind else ''}", {}
    return "", {}


def _line_rows(line: Line, session: _Session) -> Iterator[Draft]:
    kind, data = _record(line.value)
    locator = line.locator
    if session.turn[1] == "record":  # the prompt's own time is the prompt's; what follows it is only bounded by it
        session.turn = (session.turn[0], "index")
    if kind == "Prompt":
        raw = mapping(data.get("meta")).get("timestamp")
        moment = kiro_time(raw)
        if moment is not None:
            session.turn = (moment, "record")
        yield from _blocks(data.get("content"), "user", locator, session)
        if moment is None and isinstance(raw, str) and raw.strip():  # local time without a zone: kept as written
            yield session.draft("system", f"time without zone: {raw}", f"{locator}/data/meta/timestamp")
    elif kind == "AssistantMessage":
        yield from _blocks(data.get("content"), "assistant", locator, session)
    elif kind == "ToolResults":
        yield from _blocks(data.get("content"), "tool", locator, session)
    else:
        yield session.draft("system", f"record {kind or 'without kind'}: {excerpt(compact(line.value))}", locator)


def _blocks(content, role: str, locator: str, session: _Session) -> Iterator[Draft]:
    if isinstance(content, str):  # a bare string where blocks were expected
        content = [{"kind": "text", "data": content}]
    for position, block in enumerate(content if isinstance(content, list) else []):
        where = f"{locator}/content/{position}"
        block = mapping(block)
        kind, data = label(block.get("kind")), block.get("data")
        if kind == "text":
            text = data if isinstance(data, str) else as_text(mapping(data).get("data"))
            if role == "tool":  # text beside the results: not a turn of either side
                yield session.draft("system", f"block text: {text}", where)
            else:
                yield session.draft(role, text, where)
        elif kind == "thinking":
            yield session.draft("thinking", data if isinstance(data, str) else as_text(mapping(data).get("data")),
                                where)
        elif kind == "toolUse":
            yield _call(mapping(data), where, session)
        elif kind == "toolResult":
            yield from _result(mapping(data), where, session)
        elif is_image_block(block) or kind == "image":
            yield session.draft("system", f"attachment: {image_placeholder(block)}", where)
        else:
            yield session.draft("system", f"block {kind or 'without kind'}: {excerpt(compact(block))}", where)


def _call_id(data: dict) -> str:
    return label(data.get("toolUseId")) or label(data.get("tool_use_id")) or label(data.get("id"))


def _call(data: dict, locator: str, session: _Session) -> Draft:
    call = session.draft("tool_use", compact(data.get("input", data.get("args", {}))), locator,
                         tool_name=label(data.get("name")), tool_use_id=_call_id(data))
    session.ledger.called(call)
    return call


def _result(data: dict, locator: str, session: _Session) -> Iterator[Draft]:
    call_id = _call_id(data)
    call = session.ledger.take(call_id)
    text = result_text(data.get("content"))
    if label(data.get("status")).lower() in ("error", "failed", "failure"):
        text = ERROR_PREFIX + text
    yield session.draft("tool_result", text, locator, tool_name=call.tool_name if call else "", tool_use_id=call_id)
    if call is None:
        yield session.draft("system", f"parser: tool result for {call_id or 'a call'} with no tool call before it",
                            locator, tool_use_id=call_id)


def result_text(content) -> str:
    """A toolResult's content: ``[{kind: text|json, data}]``, ``[{text}]``, ``[{Text}|{Json}]`` or a string."""
    if isinstance(content, str) or content is None:
        return as_text(content)
    parts = []
    for item in content if isinstance(content, list) else [content]:
        item = mapping(item) if not isinstance(item, str) else {"kind": "text", "data": item}
        if item.get("kind") == "text":
            parts.append(as_text(item.get("data")))
        elif item.get("kind") == "json":
            parts.append(compact(item.get("data")))
        elif "text" in item or "Text" in item:
            parts.append(as_text(item.get("text", item.get("Text"))))
        elif "json" in item or "Json" in item:
            parts.append(compact(item.get("json", item.get("Json"))))
        else:
            parts.append(compact(item))
    return "\n".join(parts)


# -- the state sidecar ---------------------------------------------------------------------------------------


def parse_cli_session_state(ctx: ParseContext) -> Iterator[Draft]:
    """A session's state sidecar: ``session:`` (title, cwd, times), ``model:``, per-turn token counts."""
    document = yield from document_or_row(json_document(ctx.data, "session state"))
    if document is None:
        return
    session = label(document.get("session_id")) or ctx.source.name.rsplit(".", 1)[0]
    cwd, model = label(document.get("cwd"), 4096), session_model(document)
    created, updated = ns_from_iso(document.get("created_at")), ns_from_iso(document.get("updated_at"))
    columns = {"session_id": session, "project_path": cwd, "model": model}
    facts = ", ".join(f"{key}={as_text(document[key])}" for key in ("session_id", "cwd", "created_at", "updated_at")
                      if isinstance(document.get(key), (str, int, float)))
    yield Draft("system", f"session: {as_text(document.get('title'))} ({facts})", "json:/title", created,
                "record" if created is not None else "none", **columns)
    later = (updated, "record") if updated is not None else (created, "index") if created is not None else (None,
                                                                                                             "none")
    if model:
        yield Draft("system", f"model: {model} (the session's model, session_state)", "json:/session_state", *later,
                    **columns)
    turns = mapping(mapping(document.get("session_state")).get("conversation_metadata")).get("user_turn_metadatas")
    for index, turn in enumerate(turns if isinstance(turns, list) else []):
        yield from _turn_usage(mapping(turn), index, later, columns)


def _turn_usage(turn: dict, index: int, when: tuple, columns: dict) -> Iterator[Draft]:
    """``tokens generated:`` for a turn's recorded counts and metered credits ([obs]; untimed per turn)."""
    counts = {key: turn[key] for key in TOKEN_KEYS if isinstance(turn.get(key), (int, float))}
    usage = turn.get("metering_usage")
    credits = [mapping(item).get("value") for item in (usage if isinstance(usage, list) else [])]
    credits = [value for value in credits if isinstance(value, (int, float)) and not isinstance(value, bool)]
    if not counts and not credits:
        return
    model = label(turn.get("model")) or columns["model"]
    facts = " ".join([f"{key}={value}" for key, value in counts.items()]
                     + ([f"credits={sum(credits):g}"] if credits else []))
    yield Draft("system", f"tokens generated: model={model} {facts} (user turn {index + 1})",
                f"json:/session_state/conversation_metadata/user_turn_metadatas/{index}", when[0],
                "index" if when[0] is not None else "none", **{**columns, "model": model})

