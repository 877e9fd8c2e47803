"""Gemini API ``Content`` as chat recorders keep it: parts, thoughts, and calls joined to results by id.

Gemini CLI records each turn's ``content`` as a Gemini ``PartListUnion`` and its
fork Qwen Code records ``message: Content {role, parts[]}``: the same part
shapes in both, from ``@google/genai``:

* ``{text}`` (a thought when ``thought: true``), ``{inlineData: {mimeType, data}}``,
  ``{fileData: {fileUri}}``;
* ``{functionCall: {id, name, args}}`` in a model turn;
* ``{functionResponse: {id, name, response: {output} | {error}}}`` in the user
  turn that carries tool results back to the model, followed by any extra
  parts that belong to that result (file text, media).

    {"role":"model","parts":[{"text":"Reading it.","thought":true},
     {"functionCall":{"id":"call_5d2","name":"read_file","args":{"absolute_path":"/src/cron.yaml"}}}]}
    {"role":"user","parts":[{"functionResponse":{"id":"call_5d2","name":"read_file",
     "response":{"output":"schedule: 0 2 * * 2-7"}}}]}

``ContentWalk`` turns one session's parts into rows: ``thinking`` per thought
part, one text row per turn, ``tool_use`` per call and ``tool_result`` per
response, joined by ``functionCall.id`` = ``functionResponse.id``; a result
whose text is the scheduler's denial text adds ``permission decision: denied``;
calls never answered get the ledger's ``no result recorded`` row. Each agent
decides what a user turn, a system record and a model change are.

References: google-gemini/gemini-cli@5411f113ca packages/core/src/services/chatRecordingTypes.ts:30-75,
packages/core/src/core/geminiChat.ts:464-560, packages/core/src/scheduler/state-manager.ts:457-540
(denial texts); npm @qwen-code/qwen-code@0.24.4 chunks/chunk-DPEB6S2R.js ``createFunctionResponsePart``
(functionResponse ``{id: callId, name, response: {output}}``), ``createErrorResponse`` (``{error}``),
``createCancelledResponse`` and the ``User did not allow tool call`` cancel message;
chunks/chunk-FNYSD5OC.js ``createUserContent`` / ``createModelContent`` (``{role, parts}``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.calls import CallLedger
from aitrail.analyzer.view.rows import Draft, ns_from_iso

# The result a denied confirmation leaves in the call's functionResponse: Gemini CLI's scheduler
# generations, and Qwen Code's "[Operation Cancelled] Reason: User did not allow tool call".
DENIAL_TEXTS = ("User denied execution.", "User did not allow tool call")


def compact(value) -> str:
    """A JSON value as one line, key order kept (the same text wherever the value appears)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def moment(text, fallback: int | None = None) -> dict:
    """Draft time fields from an ISO string; the fallback (already a record time) when it is not one."""
    ns = ns_from_iso(text)
    return {"timestamp_ns": ns if ns is not None else fallback, "timestamp_source": "record"}


def parts_of(content) -> list:
    """A PartListUnion as a list of parts (a string is one text part)."""
    if content is None:
        return []
    if isinstance(content, (str, dict)):
        return [content]
    if isinstance(content, list):
        return content
    return [content]


def part_text(part) -> str:
    """One non-call part as text: text, a placeholder for media, JSON for anything else."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return compact(part)
    if isinstance(part.get("text"), str):
        return part["text"]
    for key, field in (("inlineData", "mimeType"), ("fileData", "fileUri")):
        if isinstance(part.get(key), dict):
            return f"[{key} {part[key].get(field, '')}]".replace(" ]", "]")
    return compact(part)


def is_thought(part) -> bool:
    """Whether a part is a thought (``thought: true`` with text)."""
    return isinstance(part, dict) and part.get("thought") is True and isinstance(part.get("text"), str)


def function_call(part) -> dict | None:
    """A part's ``functionCall`` object, or None."""
    call = part.get("functionCall") if isinstance(part, dict) else None
    return call if isinstance(call, dict) else None


def function_response(part) -> dict | None:
    """A part's ``functionResponse`` object, or None."""
    response = part.get("functionResponse") if isinstance(part, dict) else None
    return response if isinstance(response, dict) else None


def response_text(response: dict) -> str:
    """What a tool returned: ``output`` as is, ``error`` as ``error: …``, otherwise the JSON."""
    body = response.get("response")
    if isinstance(body, dict) and set(body) == {"output"} and isinstance(body["output"], str):
        return body["output"]
    if isinstance(body, dict) and set(body) == {"error"} and isinstance(body["error"], str):
        return f"error: {body['error']}"
    return "" if body is None else compact(body)


def result_groups(parts: list) -> list[tuple[str, str, str]]:
    """(call id, tool name, text) per functionResponse with the parts that follow it.

    A tool's response parts are its functionResponse and then any extra parts
    (file text, inline data) that belong to it; parts before the first
    functionResponse form a group with no id.
    """
    groups: list[list] = []
    for part in parts:
        response = function_response(part)
        if response is not None or not groups:
            groups.append([str(response.get("id") or "") if response else "",
                           str(response.get("name") or "") if response else "", []])
        groups[-1][2].append(response_text(response) if response is not None else part_text(part))
    return [(call_id, name, "\n".join(text for text in texts if text)) for call_id, name, texts in groups]


def result_text(result) -> str:
    """A tool call's result parts as text."""
    return "\n".join(text for _, _, text in result_groups(parts_of(result)) if text)


def is_denial(text: str) -> bool:
    """Whether a result text is one of the fixed texts of a denied call."""
    return any(marker in text for marker in DENIAL_TEXTS)


def denial_rows(text: str, where: str, tool_name: str, call_id: str, columns: dict) -> Iterator[Draft]:
    """``permission decision: denied`` when ``text`` is a denied call's result; ``columns`` are the row's others."""
    if is_denial(text):
        yield Draft("system", "permission decision: denied", where, tool_name=tool_name, tool_use_id=call_id,
                    **columns)


class ContentWalk:
    """Rows of one session's Content parts, every call joined to its result by id across the session.

    Args:
        ledger: holds the calls waiting for their result: a CallLedger (the default, for a
            caller that bounds the session itself) or a BoundedLedger (a streamed file).
        max_ids: at most this many ids kept in ``used`` and ``answered`` (None: no bound);
            past it a result of a call not kept reads as having no call before it, as a
            BoundedLedger's calls past its limit do.
    """

    def __init__(self, ledger: CallLedger | BoundedLedger | None = None, max_ids: int | None = None):
        self.calls = ledger if ledger is not None else CallLedger()
        self.max_ids = max_ids
        self.used: set[str] = set()  # ids of the tool_use rows made so far
        self.answered: set[str] = set()  # ids whose result was given (a copy of the call may still be open)

    def _keep(self, ids: set[str], call_id: str) -> None:
        if call_id and (self.max_ids is None or len(ids) < self.max_ids):
            ids.add(call_id)

    def call(self, use: Draft, answered: bool = False) -> None:
        """A ``tool_use`` row was made: its call waits for its result, unless that was already given.

        ``answered``: the call's result is recorded with it (the caller makes its row).
        """
        self._keep(self.used, use.tool_use_id)
        if answered:
            self.answer(use.tool_use_id)
        elif use.tool_use_id not in self.answered:
            self.calls.called(use)

    def answer(self, call_id: str) -> None:
        """A result for ``call_id`` was given (its call, if still open, needs no ``no result`` row)."""
        self._keep(self.answered, call_id)

    def model_rows(self, parts: list, part_at: Callable[[int], str], whole: str, columns: dict,
                   skip: Callable[[str], bool] | None = None, system_texts: tuple[str, ...] = ()) -> Iterator[Draft]:
        """The rows of a model turn's parts: thoughts, then the text, then the calls.

        Args:
            parts: the turn's parts.
            part_at: the locator of part ``index``.
            whole: the locator of the turn (the text row; a call when it is the only part).
            columns: the other columns of every row (time, session, project, model ...).
            skip: the call ids whose rows come from elsewhere (another copy of the same call).
            system_texts: whole texts the recorder writes itself: system rows, not assistant rows.
        """
        texts, calls = [], []
        for index, part in enumerate(parts):
            call = function_call(part)
            if is_thought(part):
                yield Draft("thinking", part["text"], part_at(index), **columns)
            elif call is not None:
                calls.append((index, call))
            else:
                texts.append(part_text(part))
        text = "".join(texts)
        if text.strip():
            yield Draft("system" if text.strip() in system_texts else "assistant", text, whole, **columns)
        for index, call in calls:
            call_id = str(call.get("id") or "")
            if call_id and skip is not None and skip(call_id):
                continue
            use = Draft("tool_use", compact(call.get("args", {})), part_at(index) if len(parts) > 1 else whole,
                        tool_name=str(call.get("name") or ""), tool_use_id=call_id, **columns)
            yield use
            self.call(use)

    def result_rows(self, call_id: str, name: str, text: str, where: str, columns: dict,
                    known: Callable[[str], bool] | None = None, decision: bool = True) -> Iterator[Draft]:
        """A functionResponse's ``tool_result`` row, joined to its call by id.

        A result whose call is neither open nor made as a row (nor ``known`` to the
        caller) is followed by ``parser: tool result for <tool> with no tool call
        before it``; a denial text by ``permission decision: denied``, unless
        ``decision`` is False (the caller has a record of the decision itself).
        """
        call = self.calls.take(call_id)
        name = name or (call.tool_name if call else "")
        yield Draft("tool_result", text, where, tool_name=name, tool_use_id=call_id, **columns)
        if call_id and call is None and not (known is not None and known(call_id)) and call_id not in self.used:
            yield Draft("system", f"parser: tool result for {name or 'a tool'} with no tool call before it", where,
                        tool_name=name, tool_use_id=call_id, **columns)
        self.answer(call_id)
        if decision:
            yield from denial_rows(text, where, name, call_id, columns)

    def finish(self) -> Iterator[Draft]:
        """A ``no result recorded`` row for every call whose result is nowhere in the session."""
        for row in self.calls.orphans():
            if row.tool_use_id not in self.answered:
                yield row
        if isinstance(self.calls, BoundedLedger):
            yield from self.calls.over_limit_rows()
