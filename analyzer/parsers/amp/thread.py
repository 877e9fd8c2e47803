"""threads/T-<uuid>.json: one Amp thread, the whole document (local-thread builds, up to early 2026).

Shape (npm @sourcegraph/amp 0.0.1767830505-ga62310 dist/main.js): ``{v, id,
created (Unix ms), title, agentMode, env.initial.trees[{displayName, uri,
repository}], originThreadID, mainThreadID, relationships, messages[]}``. A
message is ``{role user|assistant|info, messageId, content[]}``; a user message
carries ``meta.sentAt`` (Unix ms), ``interrupted``, ``source`` (course
correction), ``fileMentions``; an assistant message ``state {type complete|
streaming|cancelled|error}`` and ``usage {model, inputTokens, outputTokens,
cacheWriteTokens, cacheReadTokens, credits}``. Blocks: ``text``, ``image``,
``thinking``, ``redacted_thinking``, ``tool_use {id, name, input}``,
``tool_result {toolUseID, run {status, result|error|reason}}`` (in the next
user message), and in ``info`` messages ``summary`` and
``manual_bash_invocation {args, toolRun}``.

Only ``created`` and a user message's ``sentAt`` are times: every other row
takes the time of the last timed record before it (``index``: a lower bound).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote, urlsplit

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.json_values import as_text, compact, document_or_row, facts, label, mapping
from aitrail.analyzer.formats.text import bad_record, excerpt, image_placeholder, is_image_block, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms

RUN_TEXT = {
    "cancelled": "(cancelled: no output recorded)",
    "queued": "(queued when the thread was saved: no output recorded)",
    "in-progress": "(still running when the thread was saved: no output recorded)",
}


class Thread:
    """A thread's columns, the last time seen, the current model and the open calls."""

    def __init__(self, ctx: ParseContext, document: dict):
        thread_id = label(document.get("id")) or ctx.source.name.removesuffix(".json")
        self.columns = {"session_id": thread_id, "project_path": project_of(document)}
        self.moment = ns_from_ms(document.get("created"))
        self.model = ""
        self.calls = BoundedLedger()

    def timed(self, value) -> dict:
        """A row at its own time (Unix ms, ``record``); it becomes the time of the untimed rows after it."""
        moment = ns_from_ms(value)
        if moment is None:
            return self.untimed()
        self.moment = moment
        return {**self.columns, "timestamp_ns": moment, "timestamp_source": "record"}

    def untimed(self) -> dict:
        """A row with no time of its own: the last time before it (``index``), or none."""
        source = "index" if self.moment is not None else "none"
        return {**self.columns, "timestamp_ns": self.moment, "timestamp_source": source}


def project_of(document: dict) -> str:
    """The first tree's ``file://`` URI as a path (``file:///C:/x`` as ``C:/x``); '' when there is none."""
    trees = mapping(mapping(document.get("env")).get("initial")).get("trees")
    for tree in trees if isinstance(trees, list) else []:
        uri = as_text(mapping(tree).get("uri"))
        if uri.startswith("file://"):
            path = unquote(urlsplit(uri).path)
            return path[1:] if len(path) > 2 and path[0] == "/" and path[2] == ":" else path
    return ""


def parse_thread(ctx: ParseContext) -> Iterator[Draft]:
    """threads/T-<uuid>.json: the thread's session row, then each message's rows; calls joined by id."""
    document = yield from document_or_row(json_document(ctx.data, "thread file"))
    if document is None:
        return
    thread = Thread(ctx, document)
    yield from _thread_rows(thread, document)
    messages = document.get("messages")
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        yield from _message_rows(thread, mapping(message), pointer("messages", index), message)
    yield from thread.calls.orphans()
    yield from thread.calls.over_limit_rows()


THREAD_FACTS = ("agentMode", "v", "originThreadID", "mainThreadID", "archived")


def _thread_rows(thread: Thread, document: dict) -> Iterator[Draft]:
    at = thread.timed(document.get("created"))
    trees = mapping(mapping(document.get("env")).get("initial")).get("trees")
    uris = [as_text(mapping(tree).get("uri")) for tree in (trees if isinstance(trees, list) else [])]
    details = ", ".join(part for part in (facts(document, THREAD_FACTS),
                                          f"trees={','.join(uris)}" if uris else "") if part)
    yield Draft("system", f"session: {as_text(document.get('title')) or '(untitled)'} ({details})", "json:/title",
                **at)
    for key in ("relationships", "parentRelationships"):
        if document.get(key):
            yield Draft("system", f"thread relationship: {key}={excerpt(compact(document[key]), 2000)}",
                        pointer(key), **at)


def _message_rows(thread: Thread, message: dict, locator: str, raw) -> Iterator[Draft]:
    role = as_text(message.get("role"))
    if role == "user":
        yield from _user(thread, message, locator)
    elif role == "assistant":
        yield from _assistant(thread, message, locator)
    elif role == "info":
        yield from _info(thread, message, locator)
    else:
        yield bad_record(locator, f"message of unknown role {excerpt(role, 80)!r}", compact(raw))


def _blocks(message: dict) -> list[tuple[int, dict]]:
    content = message.get("content")
    return [(position, mapping(block)) for position, block in enumerate(content if isinstance(content, list) else [])]


# -- user messages --------------------------------------------------------------------------------

def _user(thread: Thread, message: dict, locator: str) -> Iterator[Draft]:
    fields = thread.timed(mapping(message.get("meta")).get("sentAt"))
    parts, pictures = [], []
    for position, block in _blocks(message):
        kind, where = block.get("type"), f"{locator}/content/{position}"
        if kind == "text":
            parts.append(as_text(block.get("text")))
        elif is_image_block(block):  # its own row, so the prompt's text is the text history.jsonl keeps
            pictures.append(Draft("system", f"attachment: {picture(block)}", where, **fields))
        elif kind == "tool_result":
            yield from _result(thread, block, where, fields)
        else:
            parts.append(f"[{as_text(kind) or 'block'}] {excerpt(compact(block), 2000)}")
    if parts:
        text = "\n".join(parts)
        source = as_text(mapping(message.get("source")).get("type"))
        if source:  # course corrections are written by Amp's observer, not typed
            yield Draft("system", f"injected prompt ({source}): {text}", locator, **fields)
        else:
            yield Draft("user", text, locator, **fields)
    yield from pictures
    mentions = mapping(message.get("fileMentions")).get("files")
    for position, mention in enumerate(mentions if isinstance(mentions, list) else []):
        yield Draft("system", f"attachment: {as_text(mapping(mention).get('uri'))}",
                    f"{locator}/fileMentions/files/{position}", **fields)
    if message.get("interrupted") is True:
        yield Draft("system", "interrupted: the user interrupted the turn of this message (interrupted=true)",
                    f"{locator}/interrupted", **fields)


def picture(block: dict) -> str:
    """An image block's placeholder; Amp spells the type ``source.mediaType``, read as the shared helper reads it."""
    source = mapping(block.get("source"))
    if "mediaType" in source and "media_type" not in source:
        block = {**block, "source": {**source, "media_type": source["mediaType"]}}
    return image_placeholder(block)


def result_text(run: dict) -> str:
    """A tool run's row text by its status: the result (compact JSON for an object), the error, or what happened."""
    status = as_text(run.get("status"))
    if status == "done":
        result = run.get("result")
        return result if isinstance(result, str) else compact(result)
    if status == "error":
        error = run.get("error")
        return f"error: {as_text(mapping(error).get('message')) or as_text(error)}"
    if status == "rejected-by-user":
        return f"(rejected by the user: {as_text(run.get('reason')) or 'no reason recorded'})"
    if status == "blocked-on-user":
        return f"(waiting for the user's approval when the thread was saved: {as_text(run.get('reason'))})"
    return RUN_TEXT.get(status, f"(run status {status or 'not recorded'}: {excerpt(compact(run), 2000)})")


def _result(thread: Thread, block: dict, locator: str, fields: dict) -> Iterator[Draft]:
    call_id = label(block.get("toolUseID"))
    call = thread.calls.take(call_id)
    name = call.tool_name if call is not None else ""
    run = mapping(block.get("run"))
    yield Draft("tool_result", result_text(run), locator, tool_name=name, tool_use_id=call_id, model=thread.model,
                **fields)
    if run.get("status") == "rejected-by-user":
        reason = as_text(run.get("reason"))
        yield Draft("system", f"permission decision: denied ({reason})" if reason else "permission decision: denied",
                    f"{locator}/run", tool_name=name, tool_use_id=call_id, **fields)
    if call is None:
        yield Draft("system", f"parser: tool result for {name or call_id or '(unnamed tool)'} with no tool call "
                              "before it", locator, tool_name=name, tool_use_id=call_id, **fields)


# -- assistant and info messages ------------------------------------------------------------------

USAGE_NAMES = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
               ("cacheWriteTokens", "cache_write_tokens"), ("cacheReadTokens", "cache_read_tokens"),
               ("credits", "credits"))


def _assistant(thread: Thread, message: dict, locator: str) -> Iterator[Draft]:
    fields = thread.untimed()
    usage = mapping(message.get("usage"))
    model = label(usage.get("model"))
    if model and model != thread.model:
        yield Draft("system", f"model: {thread.model} -> {model}" if thread.model else f"model: {model}",
                    f"{locator}/usage/model", model=model, **fields)
        thread.model = model
    fields = {**fields, "model": model or thread.model}
    for position, block in _blocks(message):
        kind, where = block.get("type"), f"{locator}/content/{position}"
        if kind == "text":
            yield Draft("assistant", as_text(block.get("text")), where, **fields)
        elif kind == "thinking":
            yield Draft("thinking", as_text(block.get("thinking")), where, **fields)
        elif kind == "redacted_thinking":
            yield Draft("thinking", "(redacted thinking: not readable, not shown)", where, **fields)
        elif kind == "tool_use":
            draft = Draft("tool_use", compact(block.get("input")), where, tool_name=label(block.get("name")),
                          tool_use_id=label(block.get("id")), **fields)
            thread.calls.called(draft)
            yield draft
        else:
            yield Draft("assistant", f"[{as_text(kind) or 'block'}] {excerpt(compact(block), 2000)}", where, **fields)
    state = as_text(mapping(message.get("state")).get("type"))
    if state and state != "complete":
        error = as_text(mapping(mapping(message.get("state")).get("error")).get("message"))
        yield Draft("system", f"reply stopped ({state}{': ' + error if error else ''})", f"{locator}/state",
                    **fields)
    if usage:
        counts = " ".join(f"{name}={as_text(usage[key])}" for key, name in USAGE_NAMES if key in usage)
        yield Draft("system", f"tokens generated: model={model} {counts}".rstrip(), f"{locator}/usage", **fields)


def _info(thread: Thread, message: dict, locator: str) -> Iterator[Draft]:
    fields = thread.untimed()
    for position, block in _blocks(message):
        kind, where = block.get("type"), f"{locator}/content/{position}"
        if kind == "summary":
            summary = mapping(block.get("summary"))
            if summary.get("type") == "thread":
                text = f"compaction: the thread was summarised into thread {as_text(summary.get('thread'))}"
            else:
                text = f"compaction: summary of the thread so far: {as_text(summary.get('summary'))}"
            yield Draft("system", text, where, **fields)
        elif kind == "manual_bash_invocation":
            yield from _manual_bash(block, where, fields)
        elif kind == "text":
            yield Draft("system", f"info: {as_text(block.get('text'))}", where, **fields)
        else:
            yield Draft("system", f"info block {as_text(kind)}: {excerpt(compact(block), 2000)}", where, **fields)


def _manual_bash(block: dict, locator: str, fields: dict) -> Iterator[Draft]:
    """A shell command the user ran himself (``!``): its call and its result, one id made from the block's place."""
    call_id = f"manual-bash:{locator}"  # the format records no id: the block's locator is unique in the file
    yield Draft("tool_use", compact(block.get("args")), locator, tool_name="Bash", tool_use_id=call_id, **fields)
    yield Draft("tool_result", result_text(mapping(block.get("toolRun"))), f"{locator}/toolRun", tool_name="Bash",
                tool_use_id=call_id, **fields)
