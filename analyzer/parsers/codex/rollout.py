"""Codex rollouts: the tagged JSONL lines (2025-09 on) and the untagged Rust lines before them.

Each line says what it is, so one reader takes both generations, line by line:

* tagged: ``{"timestamp": "<UTC ISO>", "type": "session_meta|turn_context|response_item|event_msg|compacted|...",
  "payload": {...}}`` (newer builds add ``ordinal`` and ``metadata``, and more ``type`` values);
* untagged (2025-05 to 2025-09): line 1 a bare meta object ``{"id", "timestamp", "instructions", "git"}``,
  then bare ResponseItems and ``{"record_type":"state"}`` lines, none with a time.

Codex records the same content twice: a prompt as a ``response_item`` user message
*and* a ``user_message`` event; a reply as an assistant message and an
``agent_message`` event; a reasoning summary as a reasoning item and
``agent_reasoning`` events. They are paired by text as the file is read
(pairing.py), so each content
gives one row (the prompt from the event, which holds only what the user typed;
replies and reasoning from the response item, which is complete) and the other
line a ``duplicate of line N`` row.

References: openai/codex@ed6e5cf919 codex-rs/protocol/src/protocol.rs:1130-1327,2755-2902,2975-2980,
codex-rs/rollout/src/recorder.rs:1360-1391,1666-1694, codex-rs/rollout/src/policy.rs:28-159;
openai/codex@5c48600bb3 codex-rs/core/src/rollout/recorder.rs:36-60,355-395 (untagged);
openai/codex@43809a454e (#3380, tagged lines); openai/codex@0846c126ea codex-rs/core/src/event_mapping.rs
(research/formats-cli-agents.md 2.3, 2.8, 2.9).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, cast

from aitrail.analyzer.formats.idioms import as_dict, setting_value
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.scan import search_after
from aitrail.analyzer.formats.text import bad_file, bad_line, bad_record, excerpt, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .items import (
    ItemReader,
    as_text,
    content_text,
    item_kind,
    json_value,
)
from .pairing import EVENT_REPEAT, Repeats, event_kind

TAGGED_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
THREAD_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# turn_context keys that are permission state (protocol.rs:2862-2902)
PERMISSION_KEYS = ("approval_policy", "sandbox_policy", "permission_profile", "network", "file_system_sandbox_policy")
META_KEYS = ("originator", "cli_version", "source", "thread_source", "model_provider", "forked_from_id",
             "parent_thread_id", "agent_nickname", "agent_role", "agent_type", "agent_path")
TOOL_EVENTS = ("patch_apply_end", "mcp_tool_call_end", "exec_command_end", "web_search_end")
TURN_EVENTS = {"task_started": "started", "turn_started": "started", "task_complete": "complete",
               "turn_complete": "complete", "turn_aborted": "aborted"}
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")  # the first after <environment_context> (scan.search_after: linear)


def thread_id_from_name(name: str) -> str:
    """The thread uuid in a rollout's file name (the name's time is local and is not used)."""
    found = THREAD_ID.findall(name)
    return found[-1] if found else ""


# -- rows ------------------------------------------------------------------------------------


class RolloutReader:
    """The state a rollout carries from line to line: session, project, branch, model, settings."""

    def __init__(self, ctx: ParseContext, duplicates: Repeats):
        self.session_id = thread_id_from_name(ctx.source.name)
        self.project = self.branch = self.model = ""
        self.start_ns: int | None = None  # the session's start: the only time untagged lines have
        self.settings: dict[str, str] = {}
        self.meta_seen = False
        self.items = ItemReader()
        self.duplicates = duplicates

    def moment(self, timestamp_ns: int | None, source: str = "record") -> dict:
        """Time and the thread's current columns for a row of this line."""
        return {"timestamp_ns": timestamp_ns, "timestamp_source": source, "session_id": self.session_id,
                "project_path": self.project, "git_branch": self.branch, "model": self.model}

    def line_rows(self, line: Line) -> Iterable[Draft]:
        """The rows of one rollout line, tagged or untagged.

        Called once per line and iterated at once (read_rollout): the rows, or
        the generator that makes them, are handed back without a generator
        around each level.
        """
        record, locator = line.value, line.locator
        kind = record.get("type")
        if "payload" in record and isinstance(kind, str):
            return self.tagged(record, kind, line)
        if "record_type" in record:
            rest = {key: value for key, value in record.items() if key != "record_type"}
            suffix = f": {excerpt(json_value(rest))}" if rest else ""
            return [Draft("system", f"state snapshot (record_type={as_text(record['record_type'])}){suffix}", locator,
                          **self.moment(self.start_ns, "index"))]
        if isinstance(kind, str) and kind in TAGGED_TYPES:
            return [bad_line(line.number, f"a {kind} line without its payload", line.raw)]
        if isinstance(kind, str):
            self.learn_cwd(record)
            # untagged lines carry no time: the session's start, a session-level time ("index")
            return self.items.rows(record, locator, self.moment(self.start_ns, "index"),
                                   self.duplicates.get(line.number))
        if "id" in record and "timestamp" in record:
            return self.session_meta(record, locator, ns_from_iso(record.get("timestamp")))
        if item_kind(record) is not None:  # a bare ResponseItem written without its type (items.untagged_kind)
            self.learn_cwd(record)
            return self.items.rows(record, locator, self.moment(self.start_ns, "index"),
                                   self.duplicates.get(line.number))
        return [bad_line(line.number, "an object with no rollout record type", line.raw)]

    def tagged(self, record: dict, kind: str, line: Line) -> Iterable[Draft]:
        """A tagged line, by its ``type``: meta, turn context, item, event, compaction."""
        payload, locator = record.get("payload"), line.locator
        timestamp_ns = ns_from_iso(record.get("timestamp"))
        if not isinstance(payload, dict):
            return [bad_line(line.number, f"the {kind} payload is not an object", line.raw)]
        if kind == "response_item":
            self.learn_cwd(payload)
            return self.items.rows(payload, locator, self.moment(timestamp_ns), self.duplicates.get(line.number))
        if kind == "event_msg":
            return self.event(payload, line, timestamp_ns)
        if kind == "session_meta":
            return self.session_meta(payload, locator, timestamp_ns)
        if kind == "turn_context":
            return self.turn_context(payload, locator, timestamp_ns)
        if kind == "compacted":
            history = payload.get("replacement_history")
            suffix = f" (replacement history: {len(history)} items)" if isinstance(history, list) else ""
            return [Draft("system", f"compaction: {as_text(payload.get('message'))}{suffix}", locator,
                          **self.moment(timestamp_ns))]
        return [Draft("system", f"unknown rollout item type {kind}: {excerpt(json_value(payload))}", locator,
                      **self.moment(timestamp_ns))]

    def learn_cwd(self, item: dict) -> None:
        """Untagged rollouts record no cwd but in the injected ``<environment_context>``: take it there."""
        if self.project or item.get("role") != "user" or item_kind(item) != "message":
            return
        found = search_after(content_text(item.get("content")), "<environment_context>", _CWD)
        if found:
            self.project = found.group(1).strip()

    # session_meta and turn_context

    def session_meta(self, meta: dict, locator: str, timestamp_ns: int | None) -> Iterator[Draft]:
        """The ``session start:`` row, and the thread's id, cwd and branch for later rows.

        The row's time is this line's own: the line's ``timestamp``, else the
        session start the meta itself records; with neither the row is untimed
        (never another line's time, which this record does not claim).
        """
        git = as_dict(meta.get("git"))
        started = ns_from_iso(meta.get("timestamp"))
        own_ns = timestamp_ns if timestamp_ns is not None else started
        if not self.meta_seen:  # a forked file repeats its parent's meta later: the first is this thread's
            self.meta_seen = True
            self.session_id = as_text(meta.get("id")) or self.session_id
            self.project = as_text(meta.get("cwd")) or self.project
            self.branch = as_text(git.get("branch"))
            self.start_ns = own_ns if started is None else started
        fields = [f"id={as_text(meta.get('id'))}"] + ([f"cwd={as_text(meta['cwd'])}"] if meta.get("cwd") else [])
        fields += [f"{key}={as_text(meta[key])}" for key in META_KEYS if meta.get(key) not in (None, "")]
        fields += [f"git_{key}={as_text(git[key])}" for key in ("branch", "commit_hash", "repository_url")
                   if git.get(key)]
        base = as_dict(meta.get("base_instructions")).get("text")
        if isinstance(base, str):
            fields.append(f"base_instructions={len(base)} characters")
        moment = self.moment(own_ns)
        yield Draft("system", "session start: " + " ".join(fields), locator, **moment)
        instructions = meta.get("instructions")
        if isinstance(instructions, str) and instructions.strip():
            yield Draft("system", f"instructions: {instructions}", f"{locator}/instructions", **moment)

    def turn_context(self, context: dict, locator: str, timestamp_ns: int | None) -> Iterator[Draft]:
        """``model:`` and ``permission setting:`` rows where a turn's context changes them."""
        rows: list[Draft] = []
        cwd, model = as_text(context.get("cwd")), as_text(context.get("model"))
        if cwd and cwd != self.project:
            if self.project:
                rows.append(Draft("system", f"project: {self.project} -> {cwd}", locator))
            self.project = cwd
        if model and model != self.model:
            text = f"model: {self.model} -> {model}" if self.model else f"model: {model}"
            rows.append(Draft("system", text, locator))
            self.model = model
        for key in PERMISSION_KEYS:
            if key in context and context[key] is not None:
                value = setting_value(context[key])
                if self.settings.get(key) != value:
                    self.settings[key] = value
                    rows.append(Draft("system", f"permission setting: {key}={value} (from turn_context)", locator))
        if not rows:  # every line gives a row: say what stayed in force
            fields = [f"model={self.model}", *(f"{key}={value}" for key, value in self.settings.items())]
            rows.append(Draft("system", f"turn context: unchanged ({' '.join(fields)})", locator))
        moment = self.moment(timestamp_ns)
        for row in rows:
            yield Draft(row.turn_type, row.text, row.locator, **moment)

    # events

    def event(self, event: dict, line: Line, timestamp_ns: int | None) -> Iterator[Draft]:
        """An event_msg: prompts, turn boundaries, tool events, tokens; the rest as system rows."""
        kind, locator, moment = event_kind(event), line.locator, self.moment(timestamp_ns)
        repeats = self.duplicates.get(line.number)
        if kind == "user_message":
            yield Draft("user", as_text(event.get("message")), locator, **moment)
            yield from _attachments(event, locator, moment)
        elif kind in ("agent_message", "agent_reasoning", "agent_reasoning_raw_content"):
            turn = "assistant" if kind == "agent_message" else "thinking"
            text = as_text(event.get("message" if kind == "agent_message" else "text"))
            if repeats is not None:
                yield Draft("system", EVENT_REPEAT.replace("{kind}", kind).format(line=repeats), locator, **moment)
            else:
                yield Draft(turn, text, locator, **moment)
        elif kind == "token_count":
            yield Draft("system", token_text(event, self.model), locator, **moment)
        elif kind in TURN_EVENTS:
            yield Draft("system", turn_text(event, TURN_EVENTS[kind]), locator, **moment)
        elif kind in TOOL_EVENTS:
            call_id = as_text(event.get("call_id"))
            yield Draft("system", tool_event_text(kind, event), locator,
                        tool_name=self.items.calls.called_name(call_id), tool_use_id=call_id, **moment)
        elif kind == "thread_rolled_back":
            yield Draft("system", f"event: thread_rolled_back num_turns={as_text(event.get('num_turns'))} (Codex drops "
                                  "those turns from the thread's history on resume; their rows above are kept)",
                        locator, **moment)
        else:
            rest = {key: value for key, value in event.items() if key != "type"}
            suffix = f" {excerpt(json_value(rest))}" if rest else ""
            yield Draft("system", f"event: {kind or '(no type)'}{suffix}", locator, **moment)

    def owned(self, row: Draft) -> Draft:
        """A parser: row made without the reader's state still says which thread it belongs to."""
        if not row.session_id:
            row.session_id, row.project_path = self.session_id, self.project
        return row

    def orphans(self) -> Iterator[Draft]:
        """A ``no result recorded`` row per call still open at the end of the file; the call budget's row, if any."""
        yield from self.items.calls.orphans()
        yield from (self.owned(row) for row in self.items.calls.over_limit_rows())


def _attachments(event: dict, locator: str, moment: dict) -> Iterator[Draft]:
    local = [as_text(path) for path in event.get("local_images") or () if path] \
        if isinstance(event.get("local_images"), list) else []
    images = event.get("images")
    count = len(images) if isinstance(images, list) else 0
    if local or count:
        text = "attachments: " + ", ".join([*(f"local image {path}" for path in local)] +
                                          ([f"{count} pasted image(s)"] if count else []))
        yield Draft("system", text, f"{locator}/attachments", **moment)


def token_text(event: dict, model: str) -> str:
    """``tokens generated: model=<m> input_tokens=... (last response; thread total_tokens=N)``."""
    info = event.get("info")
    if not isinstance(info, dict):
        limits = event.get("rate_limits")
        return f"tokens generated: model={model} none recorded (rate_limits: {excerpt(json_value(limits))})"
    last, total = as_dict(info.get("last_token_usage")), as_dict(info.get("total_token_usage"))
    # a count is an int (not a bool, which as_text writes as JSON): formatted as it is, without a call per count
    counts = " ".join([f"{key}={value}" if type(value) is int else f"{key}={as_text(value)}"
                       for key, value in (last or total).items()])
    text = f"tokens generated: model={model} {counts}".rstrip()
    if last and "total_tokens" in total:
        text += f" (last response; thread total_tokens={as_text(total['total_tokens'])})"
    elif total:
        text += " (thread total)"
    if info.get("model_context_window") is not None:
        text += f" context_window={as_text(info['model_context_window'])}"
    return text


def turn_text(event: dict, what: str) -> str:
    """``turn <what>: <id> (<fields>)`` for a turn start, completion or abort."""
    fields = [f"{key}={as_text(event[key])}" for key in
              ("reason", "duration_ms", "model_context_window", "collaboration_mode_kind")
              if event.get(key) is not None]
    turn_id = as_text(event.get("turn_id"))
    return f"turn {what}" + (f": {turn_id}" if turn_id else "") + (f" ({', '.join(fields)})" if fields else "")


def tool_event_text(kind: str, event: dict) -> str:
    """The text of a tool's end event (patch applied, MCP call, command, web search)."""
    if kind == "patch_apply_end":
        changes = as_dict(event.get("changes"))
        lines = [f"event: patch_apply_end success={as_text(event.get('success'))}"]
        for path, change in changes.items():
            change = as_dict(change)
            diff = change.get("unified_diff") or change.get("content") or ""
            lines.append(f"{as_text(change.get('type'))} {path}" + (f"\n{as_text(diff)}" if diff else ""))
        return "\n".join(lines)
    if kind == "mcp_tool_call_end":
        invocation = as_dict(event.get("invocation"))
        result = event.get("result")
        outcome = "error" if isinstance(result, dict) and "Err" in result else "ok"
        return (f"event: mcp_tool_call_end {as_text(invocation.get('server'))}.{as_text(invocation.get('tool'))} "
                f"{outcome} (duration {as_text(event.get('duration'))})")
    if kind == "exec_command_end":
        return f"event: exec_command_end exit_code={as_text(event.get('exit_code'))}"
    return f"event: {kind} {excerpt(as_text(event.get('query')))}".rstrip()


def read_rollout(ctx: ParseContext) -> Iterator[Draft]:
    """Every row of one rollout (.jsonl, or .jsonl.zst decompressed by the context), in one read.

    Rows leave in file order; ``Repeats`` holds a few back while a line that a
    later one may repeat is open (pairing.py).
    """
    repeats = Repeats(ctx)
    reader = RolloutReader(ctx, repeats)
    try:
        for line in read_jsonl(ctx):
            if isinstance(line, Line):
                held = repeats.place(line)
                yield from repeats.release([reader.owned(row) for row in reader.line_rows(line)], held)
            else:
                yield from repeats.release([reader.owned(line)])
            if repeats.notices:  # a pairing budget was reached: its parser: row, once
                yield from [reader.owned(row) for row in repeats.take_notices()]
    except MemberUnreadable as exc:
        yield from repeats.finish()  # the pairs the readable lines make: those a full read would make
        if "zstd" not in str(exc):
            raise  # a member that fails its digest: dispatch says so for the whole file
        reason = str(exc).removeprefix(f"{ctx.source.member}: ")
        yield reader.owned(bad_file(f"{reason}; the rows before this one come from the complete lines "
                                    "ahead of the damage"))
    except Exception:
        # a parser bug: dispatch adds a crash row after the rows given; give the held ones first,
        # decided by the whole file as a reader that paired first would have decided them
        repeats.settle()
        yield from repeats.finish()
        yield from [reader.owned(row) for row in repeats.take_notices()]
        raise
    yield from repeats.finish()
    yield from reader.orphans()


def parse_rollout(ctx: ParseContext) -> Iterator[Draft]:
    """Tagged rollouts, and untagged ones in date folders or archives (each line says which it is)."""
    yield from read_rollout(ctx)


def parse_rollout_untagged(ctx: ParseContext) -> Iterator[Draft]:
    """The flat ``sessions/rollout-*.jsonl`` files of 2025-05 to 2025-07: untagged lines only.

    Same reader: a line of another generation found here is still read as what it is.
    """
    yield from read_rollout(ctx)


def parse_rollout_legacy_json(ctx: ParseContext) -> Iterator[Draft]:
    """The TypeScript CLI's ``{"session": {...}, "items": [...]}``; every row at the session's start."""
    document, problem = json_document(ctx.data, "rollout")
    if problem is not None:
        yield problem
        return
    document = cast(dict, document)  # json_document's kind: an object, when there is no problem
    session = as_dict(document.get("session"))
    # one time for the whole file: the session's start, a session-level time ("index") for the items;
    # the session object's own rows keep "record" (the time is theirs), as an untagged meta line's do
    moment: dict[str, Any] = {"timestamp_ns": ns_from_iso(session.get("timestamp")), "timestamp_source": "index",
              "session_id": as_text(session.get("id")) or thread_id_from_name(ctx.source.name)}
    if "session" in document:
        own = {**moment, "timestamp_source": "record"}
        yield Draft("system", f"session start: id={as_text(session.get('id'))} (TypeScript CLI rollout)",
                    "json:/session", **own)
        instructions = session.get("instructions")
        if isinstance(instructions, str) and instructions.strip():
            yield Draft("system", f"instructions: {instructions}", "json:/session/instructions", **own)
    else:
        yield bad_record("json:/", "rollout without a session object")
    items = document.get("items")
    if not isinstance(items, list):
        yield bad_record("json:/items", "rollout without an items array")
        return
    reader = ItemReader()
    for position, item in enumerate(items):
        locator = f"json:/items/{position}"
        if not isinstance(item, dict):
            yield bad_record(locator, "item is not an object", json.dumps(item)[:2000])
            continue
        yield from reader.rows(item, locator, moment)
    yield from reader.calls.orphans()
    yield from reader.calls.over_limit_rows()
