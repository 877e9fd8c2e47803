"""Cowork ``local_<uuid>/audit.jsonl``: the Agent SDK message stream, one signed JSON object per line.

Line types ([obs] CROW: ``system``, ``assistant``, ``user``, ``result``,
``command_lifecycle``, ``rate_limit_event``) carry the SDK's message shapes
([src] anthropics/claude-agent-sdk-python message_parser.py) plus
``_audit_timestamp`` (ISO, the row's time) and ``_audit_hmac`` (the chain,
chain.py). Rows (docs/agents/claude-desktop.md):

* ``system`` ``init``: ``system init: cwd=…, model=…, permissionMode=…, tools=[…],
  mcp_servers=[…]`` plus ``permission setting: permissionMode=…`` and ``model:``;
  other subtypes ``system <subtype>: <fields>`` (``compact_boundary`` is a
  compaction marker);
* ``assistant``: one row per content block: ``assistant`` (text), ``thinking``,
  ``tool_use`` (the input as compact JSON, tool name and id); ``model:`` where
  the model changes;
* ``user``: typed text is a ``user`` row; ``tool_result`` blocks are
  ``tool_result`` rows joined to their call by ``tool_use_id``; a line marked
  ``isReplay`` is a copy of an earlier prompt (``repeated (isReplay):``), one
  marked ``isSynthetic`` or a text the engine injects is ``injected context:``,
  and a text for a sub-agent (``parent_tool_use_id`` set) is ``subagent prompt:``;
* ``result``: ``result (<subtype>): num_turns=…, duration_ms=…, total_cost_usd=…,
  usage=…`` and one ``permission decision: denied`` row per ``permission_denials``
  entry; ``rate_limit_event``: ``rate limit: …``; anything else ``event <type>: …``;
* the chain: one ``audit chain:`` or ``integrity: chain break:`` row (chain.py).

Columns: session = the line's ``session_id`` (the engine's Claude Code session);
project = ``userSelectedFolders[0]`` of the session's ``local_<uuid>.json`` when
the bundle has it, else the ``cwd`` of the ``system init`` line (the VM path
``/sessions/<name>``); the first row of the file says which.

Sample (research 1.10, digests invented there)::

    {"type":"user","session_id":"f1e2d3c4-…","message":{"role":"user","content":[{"type":"text",
     "text":"List the invoices over 1000 EUR"}]},"_audit_timestamp":"2026-08-30T09:14:02.118Z","_audit_hmac":"3b1f…"}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.formats.idioms import settings_value
from aitrail.analyzer.formats.json_values import as_text, compact, label
from aitrail.analyzer.formats.jsonl import Line, read_jsonl
from aitrail.analyzer.formats.text import excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .blocks import block_text, injected, permission_decision, result_text
from .chain import AuditChain, load_key, not_checked_row
from .values import cowork_project, cowork_record

ENVELOPE = frozenset(("type", "subtype", "uuid", "session_id", "_audit_timestamp", "_audit_hmac", "message",
                      "parent_tool_use_id"))
INIT_FACTS = ("cwd", "model", "permissionMode", "apiKeySource", "claude_code_version", "output_style")
RESULT_FACTS = ("is_error", "num_turns", "duration_ms", "duration_api_ms", "total_cost_usd", "stop_reason",
                "terminal_reason", "api_error_status")


class AuditWalk:
    """What one audit log's walk holds: the session columns, the model, open calls and the chain."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.project, self.project_field = self._index_project()
        self.model = ""
        self.calls = CallLedger()
        self.first = True

    def _index_project(self) -> tuple[str, str]:
        """The project of the session's ``../local_<uuid>.json``, and which of its fields gave it."""
        source, record = cowork_record(self.ctx, self.ctx.source.directory)
        return cowork_project(record, source.name) if record is not None and source is not None else ("", "")

    def base(self, record: dict, line: Line) -> dict:
        """The columns every row of one line carries."""
        ns = ns_from_iso(record.get("_audit_timestamp"))
        when = {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else {"timestamp_source": "none"}
        session = record.get("session_id")
        return {"session_id": session if isinstance(session, str) and len(session) <= 200 else "",
                "project_path": self.project, **when}

    def rows(self, line: Line) -> Iterator[Draft]:
        """The rows of one decoded line."""
        record = line.value
        base = self.base(record, line)
        kind = record.get("type")
        if kind == "system":
            yield from self._system(record, line, base)
        elif kind == "assistant":
            yield from self._assistant(record, line, base)
        elif kind == "user":
            yield from self._user(record, line, base)
        elif kind == "result":
            yield from self._result(record, line, base)
        elif kind == "rate_limit_event":
            info = record.get("rate_limit_info")
            yield Draft("system", f"rate limit: {excerpt(compact(info), 500)}", line.locator, **base)
        else:
            yield Draft("system", f"event {excerpt(as_text(kind), 60) or '(no type)'}: {self._rest(record)}",
                        line.locator, **base)

    def _rest(self, record: dict) -> str:
        return excerpt(compact({key: value for key, value in record.items() if key not in ENVELOPE}), 500)

    # -- system ------------------------------------------------------------------------------------

    def _system(self, record: dict, line: Line, base: dict) -> Iterator[Draft]:
        subtype = excerpt(as_text(record.get("subtype")), 60) or "message"
        if subtype != "init":
            yield Draft("system", f"system {subtype}: {self._rest({**record, 'subtype': None})}", line.locator, **base)
            return
        if not self.project_field and isinstance(record.get("cwd"), str):
            self.project, self.project_field = excerpt(record["cwd"], 1000), "cwd of the system init line (the VM)"
            base = {**base, "project_path": self.project}
        facts = [f"{key}={excerpt(as_text(record[key]), 300)}" for key in INIT_FACTS if record.get(key) is not None]
        for key in ("tools", "mcp_servers", "agents", "slash_commands", "skills"):
            if isinstance(record.get(key), list):
                facts.append(f"{key}={excerpt(compact(record[key]), 600)}")
        yield Draft("system", f"system init: {', '.join(facts)}", line.locator, **base)
        if record.get("permissionMode") is not None:
            yield Draft("system", f"permission setting: permissionMode="
                        f"{settings_value(record['permissionMode'], 'permissionMode')} (from audit.jsonl system init)",
                        f"{line.locator}/permissionMode", **base)
        yield from self._model(label(record.get("model")), f"{line.locator}/model", base)

    def _model(self, model: str, where: str, base: dict) -> Iterator[Draft]:
        if model and model != self.model:
            text = f"model: {self.model} -> {model}" if self.model else f"model: {model}"
            self.model = model
            yield Draft("system", text, where, **{**base, "model": model})

    # -- assistant ---------------------------------------------------------------------------------

    def _assistant(self, record: dict, line: Line, base: dict) -> Iterator[Draft]:
        message = record.get("message")
        if not isinstance(message, dict):
            yield Draft("system", f"event assistant: {self._rest(record)}", line.locator, **base)
            return
        yield from self._model(label(message.get("model")), f"{line.locator}/message/model", base)
        base = {**base, "model": self.model}
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        for number, block in enumerate(blocks):
            yield from self._assistant_block(block, f"{line.locator}/message/content/{number}", base)

    def _assistant_block(self, block, where: str, base: dict) -> Iterator[Draft]:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            yield Draft("assistant", as_text(block.get("text")), where, **base)
        elif kind in ("thinking", "redacted_thinking"):
            text = as_text(block.get("thinking")) if kind == "thinking" else "[redacted thinking]"
            yield Draft("thinking", text, where, **base)
        elif kind in ("tool_use", "server_tool_use"):
            call_id, name = label(block.get("id")), label(block.get("name"))
            call = Draft("tool_use", compact(block.get("input")), where, tool_name=name, tool_use_id=call_id, **base)
            self.calls.called(call)
            yield call
        elif isinstance(block, str):
            yield Draft("assistant", block, where, **base)
        else:
            yield Draft("system", f"content block {excerpt(as_text(kind), 60)}: {excerpt(compact(block), 500)}",
                        where, **base)

    # -- user --------------------------------------------------------------------------------------

    def _user(self, record: dict, line: Line, base: dict) -> Iterator[Draft]:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if content is None:
            yield Draft("system", f"event user: {self._rest(record)}", line.locator, **base)
            return
        blocks = content if isinstance(content, list) else [content]
        for number, block in enumerate(blocks):
            where = f"{line.locator}/message/content/{number}" if isinstance(content, list) else \
                f"{line.locator}/message/content"
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield from self._tool_result(block, where, base)
            else:
                yield self._user_text(record, block_text(block), where, base)

    def _user_text(self, record: dict, text: str, where: str, base: dict) -> Draft:
        if record.get("isReplay") is True:
            return Draft("system", f"repeated (isReplay): {text}", where, **base)
        if record.get("isSynthetic") is True or injected(text):
            return Draft("system", f"injected context: {text}", where, **base)
        if isinstance(record.get("parent_tool_use_id"), str) and record["parent_tool_use_id"]:
            return Draft("system", f"subagent prompt: {text}", where,
                         **{**base, "tool_use_id": label(record["parent_tool_use_id"])})
        return Draft("user", text, where, **base)

    def _tool_result(self, block: dict, where: str, base: dict) -> Iterator[Draft]:
        call_id = label(block.get("tool_use_id"))
        call = self.calls.take(call_id)
        name = call.tool_name if call else self.calls.called_name(call_id)
        text = result_text(block.get("content"))
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **base)
        if call is None and not self.calls.is_answered(call_id):
            what = f"tool_use_id {call_id}" if call_id else "no tool_use_id"
            yield Draft("system", f"parser: tool result for an unknown tool ({what}) with no tool call before it",
                        where, **base)
        self.calls.answered(call_id, name)
        decision = permission_decision(text, block.get("is_error"))
        if decision:
            yield Draft("system", f"permission decision: {decision}", where, tool_name=name, tool_use_id=call_id,
                        **base)

    # -- result ------------------------------------------------------------------------------------

    def _result(self, record: dict, line: Line, base: dict) -> Iterator[Draft]:
        subtype = excerpt(as_text(record.get("subtype")), 60) or "?"
        facts = [f"{key}={excerpt(as_text(record[key]), 100)}" for key in RESULT_FACTS if record.get(key) is not None]
        if isinstance(record.get("usage"), dict):
            facts.append(f"usage={excerpt(compact(record['usage']), 500)}")
        yield Draft("system", f"result ({subtype}): {', '.join(facts)}", line.locator, **base)
        denials = record.get("permission_denials")
        for number, denial in enumerate(denials if isinstance(denials, list) else []):
            if not isinstance(denial, dict):
                continue
            yield Draft("system", f"permission decision: denied (result permission_denials: "
                        f"{excerpt(compact(denial.get('tool_input')), 300)})",
                        f"{line.locator}/permission_denials/{number}", tool_name=label(denial.get("tool_name")),
                        tool_use_id=label(denial.get("tool_use_id")), **base)


def parse_audit(ctx: ParseContext) -> Iterator[Draft]:
    """An audit.jsonl: the SDK messages as rows, calls joined to results, then its chain's row."""
    walk = AuditWalk(ctx)
    key, why_not = load_key(ctx)
    chain = AuditChain(key) if key is not None else None
    last_columns: dict = {"project_path": walk.project}
    for item in read_jsonl(ctx):
        if isinstance(item, Draft):
            if chain is not None:
                chain.unreadable(_line_number(item.locator), _unread_reason(item.text))
            yield dataclasses.replace(item, project_path=walk.project)
            continue
        rows = list(walk.rows(item))
        if chain is not None:
            chain.record(item.number, item.raw, item.value, rows[0].timestamp_ns if rows else None)
        if walk.first and rows:
            walk.first = False
            yield _project_note(walk, rows[0])
        if rows:
            last_columns = {"session_id": rows[-1].session_id, "project_path": rows[-1].project_path}
        yield from rows
    yield from walk.calls.orphans()
    closing = chain.rows() if chain is not None else iter([not_checked_row(why_not)])
    for row in closing:
        yield dataclasses.replace(row, **last_columns)


def _project_note(walk: AuditWalk, first: Draft) -> Draft:
    """Which field gave this file's project path (the Cowork cwd is a VM path, not the user's folder)."""
    source = walk.project_field or "nothing: neither the session's local_<uuid>.json nor a system init cwd"
    return Draft("system", f"project: {walk.project or '(none)'} (from {source})", first.locator.split("/", 1)[0],
                 session_id=first.session_id, project_path=walk.project, timestamp_ns=first.timestamp_ns,
                 timestamp_source=first.timestamp_source)


def _unread_reason(text: str) -> str:
    """Why a line gave no record, for the chain's list of failing lines."""
    if text.startswith("parser: line too long"):
        return "the line was too long to read"
    if text.startswith("parser: unparseable line (torn last line"):
        return "the last line is cut short, without its newline"
    return "the line is not a JSON object"


def _line_number(locator: str) -> int:
    head = locator.split("/", 1)[0]
    digits = head.removeprefix("line:")
    return int(digits) if digits.isdigit() else 0
