"""``brain/<uuid>/.system_generated/logs/transcript.jsonl`` (and ``transcript_full.jsonl``): one line per step.

Record [obs, FAD connector and its fixture]: ``{step_index, source, type, status,
created_at, content?, thinking?, tool_calls?}``. ``created_at`` is RFC 3339 UTC
with second precision. Rows:

* ``USER_INPUT``: the ``<USER_REQUEST>`` blocks (joined by a blank line; the
  whole content when there is none) are a user row; a ``<USER_SETTINGS_CHANGE>``
  block is a ``settings change:`` row, and a ``Model Selection`` change also a
  ``model:`` row whose model fills the model column from then on; an
  ``<ADDITIONAL_METADATA>`` block (it holds the user's local time, with no zone)
  is an ``additional metadata:`` row, its text kept as written;
* ``PLANNER_RESPONSE``: ``thinking`` is a thinking row, ``content`` an assistant row;
* any other ``MODEL`` step is a tool step: each ``tool_calls[]`` element a
  tool_use row (name from ``name``, ``tool_name`` or ``function.name``; id from
  ``id``, ``call_id`` or ``tool_call_id``; ``arguments`` as written), and the
  step's ``content`` one tool_result row joined to the first call's id (the call
  and its result are one record); each further call of the step gets a
  tool_result row saying the result is given with the first call. A step without ``tool_calls`` has no id of its
  own: its call is named after the step type (``VIEW_FILE`` -> ``view_file``) and
  joined by the positional id ``step:<step_index>``. A ``status`` other than
  ``DONE`` is said at the start of the result; a step with calls and no
  ``content`` gives ``parser: no result recorded`` for its first call;
* ``EPHEMERAL_MESSAGE`` / ``SYSTEM_MESSAGE`` and non-MODEL steps of other types:
  ``injected context (<type>):`` rows; ``CONVERSATION_HISTORY`` with no content
  (a marker) gives no row.

The session is the ``brain/<uuid>`` directory name; the project comes from a
trajectory summary or conversation_summaries.db naming that id (project.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.calls import no_result_row
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .project import conversation_of, project_of

_BLOCK = {tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL)
          for tag in ("USER_REQUEST", "USER_SETTINGS_CHANGE", "ADDITIONAL_METADATA")}
_MODEL_CHANGE = re.compile(r"`Model Selection` from (.+?) to (.+?)(?:\.\s|\.?$)", re.DOTALL)
INJECTED_TYPES = frozenset({"EPHEMERAL_MESSAGE", "SYSTEM_MESSAGE", "CONVERSATION_HISTORY"})


class Session:
    """What the lines of one transcript share: the conversation, its project, the model in use."""

    def __init__(self, ctx: ParseContext):
        self.session_id = conversation_of(ctx)
        self.project_path = project_of(ctx, self.session_id)
        self.model = ""

    def row(self, turn_type: str, text: str, line: Line, timestamp_ns: int | None, **extra) -> Draft:
        """A row of this session at the step's time (untimed when the step has none)."""
        return Draft(turn_type, text, line.locator, timestamp_ns=timestamp_ns,
                     timestamp_source="record" if timestamp_ns is not None else "none",
                     session_id=self.session_id, project_path=self.project_path, model=self.model, **extra)


def parse_transcript(ctx: ParseContext) -> Iterator[Draft]:
    """Each step of a transcript as rows (see the module docstring)."""
    session = Session(ctx)
    yield from each_line(ctx, lambda line: _step_rows(session, line))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _step_rows(session: Session, line: Line) -> Iterator[Draft]:
    record = line.value
    kind, source = _text(record.get("type")), _text(record.get("source"))
    if not kind:
        yield bad_line(line.number, "step without a type", line.raw)
        return
    when = ns_from_iso(record.get("created_at"))
    content = record.get("content")
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    if kind == "USER_INPUT":
        yield from _user_rows(session, line, content or "", when)
    elif kind == "PLANNER_RESPONSE":
        if _text(record.get("thinking")).strip():
            yield session.row("thinking", record["thinking"], line, when)
        if content:
            yield session.row("assistant", content, line, when)
    elif source == "MODEL" and kind not in INJECTED_TYPES:
        yield from _tool_rows(session, line, record, kind, content, when)
    elif content:
        yield session.row("system", f"injected context ({kind}): {content}", line, when)


def _user_rows(session: Session, line: Line, content: str, when: int | None) -> Iterator[Draft]:
    requests = [found.strip() for found in _BLOCK["USER_REQUEST"].findall(content)]
    body = "\n\n".join(requests) if requests else content.strip()
    if body:
        yield session.row("user", body, line, when)
    for change in _BLOCK["USER_SETTINGS_CHANGE"].findall(content):
        change = change.strip()
        yield session.row("system", f"settings change: {change}", line, when)
        model = _MODEL_CHANGE.search(change)
        if model:
            before, after = model.group(1).strip(), model.group(2).strip()
            session.model = "" if after.lower() == "none" else after
            text = f"model: {after}" if before.lower() == "none" else f"model: {before} -> {after}"
            yield session.row("system", text, line, when)
    for metadata in _BLOCK["ADDITIONAL_METADATA"].findall(content):
        yield session.row("system", f"additional metadata: {metadata.strip()}", line, when)


def _call_parts(call: object, kind: str) -> tuple[str, str, str]:
    """(name, id, arguments as written) of one ``tool_calls`` element."""
    if not isinstance(call, dict):
        return kind.lower(), "", json.dumps(call, ensure_ascii=False)
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = next((value for value in (call.get("name"), call.get("tool_name"), function.get("name"))
                 if isinstance(value, str) and value.strip()), kind.lower())
    call_id = next((value for value in (call.get("id"), call.get("call_id"), call.get("tool_call_id"))
                    if isinstance(value, str) and value), "")
    arguments = next((value for value in (call.get("arguments"), call.get("args"), call.get("input"),
                                          function.get("arguments")) if value is not None), None)
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return name, call_id, "" if arguments is None else text


def _tool_rows(session: Session, line: Line, record: dict, kind: str, content: str | None,
               when: int | None) -> Iterator[Draft]:
    calls = record.get("tool_calls") if isinstance(record.get("tool_calls"), list) else []
    positional = f"step:{record.get('step_index', line.number)}"
    parts = [_call_parts(call, kind) for call in calls] or [
        (kind.lower(), "", f"[no tool_calls in the step; the call is named after its type {kind}]")]
    first_name, first_id = parts[0][0], parts[0][1] or positional
    first_call = None
    for name, call_id, arguments in parts:
        call = session.row("tool_use", arguments, line, when, tool_name=name, tool_use_id=call_id or positional)
        first_call = first_call or call
        yield call
    status = _text(record.get("status"))
    prefix = f"[status {status}] " if status and status != "DONE" else ""
    if content is not None or prefix:
        yield session.row("tool_result", f"{prefix}{content or ''}".rstrip(" "), line, when, tool_name=first_name,
                          tool_use_id=first_id)
        for name, call_id, _ in parts[1:]:  # one record, one result: the other calls point to it
            yield session.row("tool_result", f"[the step records one result for its {len(parts)} calls; it is given "
                                             f"with call {first_id}]", line, when, tool_name=name,
                              tool_use_id=call_id or positional)
    elif first_call is not None:
        yield no_result_row(first_call)  # the step records its calls and no content: the result was not kept
