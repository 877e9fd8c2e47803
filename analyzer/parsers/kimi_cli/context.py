"""context.jsonl (and its rotations context_<N>.jsonl, and the first layout's <id>.jsonl): the model's context.

Each line is a kosong ``Message`` dumped without its nulls, or a control
record (soul/context.py:91-133,232-248, kosong message.py:200-290):

    {"role":"_system_prompt","content":"..."}      the system prompt, first line
    {"role":"_checkpoint","id":N}                  a checkpoint marker
    {"role":"_usage","token_count":N}              the context's size in tokens
    {"role":"user"|"assistant"|"tool"|"system", "content": "<text>" | [parts], "tool_calls": [...],
     "tool_call_id": "...", "partial": true}

No line has a time: every row is untimed (``none``). The store is secondary:
wire.jsonl holds the same conversation with times, and rows written the same
way from both are one row; what only the context holds stays (the system
prompt, checkpoints, messages Kimi injected in the user role, compaction
summaries, the history before a /clear kept in a rotation, a session of the
first layout with no wire log).

Rows: ``system prompt:``; ``checkpoint: <id>``; ``context tokens:
token_count=<n>``; a user message -> ``user`` (``subagent prompt:`` in a
sub-agent's context; ``injected context:`` when Kimi wrote it: ``<system>`` or
``<system-reminder>`` text); an assistant message -> ``thinking`` per think part,
``assistant`` per other part, ``tool_use`` per call; a tool message ->
``tool_result`` joined by ``tool_call_id``; a system message -> ``system
message:``; a message still marked ``partial`` has ``partial:`` first on its rows.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import as_dict, as_list
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .paths import place_of, work_dir_of
from .values import content_text, is_injected, is_think, part_text, think_text

UNTIMED = {"timestamp_source": "none"}


class _Context:
    """One context file being read: its columns, whether it is a sub-agent's, its open calls."""

    def __init__(self, ctx: ParseContext):
        place = place_of(ctx.source.path, first_layout=ctx.source.store.endswith(".legacy_context"))
        self.columns = {"session_id": place.session_id, "project_path": work_dir_of(ctx, place.bucket), **UNTIMED}
        self.subagent = bool(place.subagent)
        self.calls = BoundedLedger()

    def row(self, turn_type: str, text: str, locator: str, partial: bool = False, **columns) -> Draft:
        return Draft(turn_type, f"partial: {text}" if partial else text, locator, **self.columns, **columns)


def parse_context(ctx: ParseContext) -> Iterator[Draft]:
    """sessions/<md5>/<id>/context[_N].jsonl, a sub-agent's, or sessions/<md5>/<id>.jsonl: untimed rows per line."""
    context = _Context(ctx)
    for line in read_jsonl(ctx):
        if not isinstance(line, Line):
            line.session_id = context.columns["session_id"]
            yield line
            continue
        yield from _line_rows(context, line.value, line.locator)
    yield from context.calls.orphans()
    yield from context.calls.over_limit_rows()


def _line_rows(context: _Context, record: dict, locator: str) -> Iterator[Draft]:
    role = label(record.get("role"), 100)
    partial = record.get("partial") is True
    if role == "_system_prompt":
        yield context.row("system", f"system prompt: {as_text(record.get('content'))}", locator)
    elif role == "_checkpoint":
        yield context.row("system", f"checkpoint: {as_text(record.get('id'))}", locator)
    elif role == "_usage":
        yield context.row("system", f"context tokens: token_count={as_text(record.get('token_count'))}", locator)
    elif role == "user":
        yield context.row(*_user(context, content_text(record.get("content"))), locator, partial)
    elif role == "assistant":
        yield from _assistant(context, record, locator, partial)
    elif role == "tool":
        yield from _tool(context, record, locator, partial)
    elif role == "system":
        yield context.row("system", f"system message: {content_text(record.get('content'))}", locator, partial)
    else:
        shown = {key: value for key, value in record.items() if key != "role"}
        yield context.row("system", f"context record {role or '(no role)'}: {excerpt(compact(shown), 2000)}",
                          locator)


def _user(context: _Context, text: str) -> tuple[str, str]:
    if is_injected(text):
        return "system", f"injected context: {text}"
    if context.subagent:  # the parent agent's Agent call wrote it
        return "system", f"subagent prompt: {text}"
    return "user", text


def _assistant(context: _Context, record: dict, locator: str, partial: bool) -> Iterator[Draft]:
    content = record.get("content")
    parts = content if isinstance(content, list) else ([] if content in (None, "") else [content])
    for position, part in enumerate(parts):
        where = f"{locator}/content/{position}" if isinstance(content, list) and len(parts) > 1 else locator
        if is_think(part):
            yield context.row("thinking", think_text(part), where, partial)
        else:
            yield context.row("assistant", part_text(part), where, partial)
    calls = as_list(record.get("tool_calls"))
    for position, call in enumerate(calls):
        call = as_dict(call)
        function = as_dict(call.get("function"))
        arguments = function.get("arguments")
        draft = context.row("tool_use", arguments if isinstance(arguments, str) else as_text(arguments),
                            f"{locator}/tool_calls/{position}", partial, tool_name=label(function.get("name")),
                            tool_use_id=label(call.get("id")))
        context.calls.called(draft)
        yield draft
    if not parts and not calls:
        yield context.row("assistant", "", locator, partial)


def _tool(context: _Context, record: dict, locator: str, partial: bool) -> Iterator[Draft]:
    call_id = label(record.get("tool_call_id"))
    call = context.calls.take(call_id)
    name = call.tool_name if call is not None else label(record.get("name"))
    yield context.row("tool_result", content_text(record.get("content")), locator, partial, tool_name=name,
                      tool_use_id=call_id)
    if call is None:
        yield context.row("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool "
                                    "call before it", locator, tool_name=name, tool_use_id=call_id)
