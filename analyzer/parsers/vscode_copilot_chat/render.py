"""A normalised chat session (formats/vscode_chat.py) as timeline rows.

Per request, in this order: a ``model:`` row where the picked model is new or
changes, the user row (the prompt as typed), a ``thinking`` row per thinking
part, per model tool call its ``tool_use`` (arguments as the model gave them,
``tool_use_id`` the call id without ``__vscode-<n>``, or for a call without an id
the ``toolCallId`` of the part paired with it by position), its ``permission
decision:`` row (from the invocation part's ``isConfirmed``) and its
``tool_result``, a ``response part <kind>:`` row per part that is neither text
nor decoration, then ONE assistant row for the whole response, and a
``response <state>:`` row when it was cancelled, failed or left waiting.
Calls never answered get the ledger's ``parser: no result recorded`` row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.text import bad_record, excerpt
from aitrail.analyzer.formats.vscode_chat import (
    IGNORED_PARTS,
    ChatRequest,
    ChatSession,
    Confirmation,
    ToolCall,
    ToolInvocation,
)
from aitrail.analyzer.view.rows import Draft

from .project import Project
from .tool_names import same_tool

SHOWN_PARTS = frozenset({"markdown", "thinking", "tool"}) | IGNORED_PARTS
STATES = {2: "cancelled", 3: "failed", 4: "waiting for input"}  # ResponseModelState; 0 pending, 1 complete


def decision_text(confirmation: Confirmation) -> str:
    """``permission decision: ...`` for a boolean or a typed (ToolConfirmKind) ``isConfirmed``."""
    kind, detail = confirmation.kind, confirmation.detail
    if kind == "setting":
        return f"permission decision: approved by setting {detail}" if detail else \
            "permission decision: approved by a setting"
    if kind == "tool scope":
        return f"permission decision: approved, always allowed for this {detail}" if detail else \
            "permission decision: approved, always allowed"
    return {"approved": "permission decision: approved", "denied": "permission decision: denied",
            "user": "permission decision: approved by the user",
            "not needed": "permission decision: no confirmation needed",
            "skipped": "permission decision: skipped"}.get(kind, f"permission decision: {kind}")


def call_id(call: ToolCall, part: ToolInvocation | None) -> str:
    """A model call's ``tool_use_id``: its id without ``__vscode-<n>``.

    A round entry with no id takes the ``toolCallId`` of the part paired with it by
    position (``ChatRequest.calls``); unpaired, it stays empty.
    """
    return call.base_id or (part.tool_call_id if part is not None else "")


def _moment(ns: int | None) -> dict:
    return {"timestamp_ns": ns, "timestamp_source": "record" if ns is not None else "none"}


def _finished(request: ChatRequest) -> int | None:
    """When the response ended: recorded, else its last model call's start, else the request's time."""
    if request.finished_ns is not None:
        return request.finished_ns
    starts = [round_.timestamp_ns for round_ in request.rounds if round_.timestamp_ns is not None]
    return max(starts, default=request.timestamp_ns)


class SessionRenderer:
    """Rows of one session; ``skip`` holds request ids a newer copy of the session already gives."""

    def __init__(self, session: ChatSession, session_id: str, project: Project, skip: Iterable[str] = ()):
        self.session = session
        self.base = {"session_id": session.session_id or session_id, "project_path": project.path}
        self.skip = frozenset(skip)
        self.ledger = BoundedLedger()  # at most call_budget.MAX_CALL_IDS ids
        self.model = ""

    def rows(self) -> Iterator[Draft]:
        """Every row of the session: its problem rows, then each request's rows, then unanswered calls."""
        yield from self.session.problems
        for request in self.session.requests:
            if request.request_id and request.request_id in self.skip:
                continue
            yield from self._request(request)
        yield from self.ledger.orphans()
        yield from self.ledger.over_limit_rows()

    def _request(self, request: ChatRequest) -> Iterator[Draft]:
        model = request.model_id or request.resolved_model
        when = _moment(request.timestamp_ns)
        columns = dict(self.base, model=model)
        if model and model != self.model:
            label = f"model: {model}" if not self.model else f"model: {self.model} -> {model}"
            yield Draft("system", label, request.model_locator or request.locator, **when, **columns)
            self.model = model
        if request.text:
            yield Draft("user", request.text, request.text_locator, **when, **columns)
        else:
            yield bad_record(request.locator, "request without message text")
        for part in request.parts:
            if part.kind == "thinking" and part.text.strip():
                yield Draft("thinking", part.text, part.locator, **when, **columns)
        yield from self._calls(request, columns)
        for part in request.parts:
            if part.kind not in SHOWN_PARTS:
                text = f"response part {part.kind}: {excerpt(part.text)}" if part.text else \
                    f"response part {part.kind}"
                yield Draft("system", text, part.locator, **when, **columns)
        done = _moment(_finished(request))
        markdown = [part for part in request.parts if part.kind == "markdown"]
        if request.markdown:
            yield Draft("assistant", request.markdown, markdown[0].locator, **done, **columns)
        if request.state in STATES:
            yield Draft("system", f"response {STATES[request.state]}", request.locator, **done, **columns)

    def _calls(self, request: ChatRequest, columns: dict) -> Iterator[Draft]:
        paired = set()
        for call, part, result in request.calls(same_tool):
            round_ = request.rounds[call.round_index] if call.round_index < len(request.rounds) else None
            when = _moment(round_.timestamp_ns if round_ and round_.timestamp_ns else request.timestamp_ns)
            use = Draft("tool_use", call.arguments, call.locator, tool_name=call.name,
                        tool_use_id=call_id(call, part), **when, **columns)
            yield use
            self.ledger.called(use)
            if part is not None:
                paired.add(id(part))
                yield from self._decision(part, use, when, columns)
            if result is not None:
                self.ledger.take(use.tool_use_id)
                yield Draft("tool_result", result[0], result[1], tool_name=call.name, tool_use_id=use.tool_use_id,
                            **when, **columns)
            elif part is not None:
                yield from self._part_result(part, use, when, columns)
        for part in request.invocations:  # parts no model call names (no Copilot metadata, another extension)
            if id(part) not in paired:
                yield from self._invocation(part, request, columns)

    def _invocation(self, part: ToolInvocation, request: ChatRequest, columns: dict) -> Iterator[Draft]:
        when = _moment(request.timestamp_ns)
        use = Draft("tool_use", part.input or part.message, part.locator, tool_name=part.tool_id,
                    tool_use_id=part.tool_call_id, **when, **columns)
        yield use
        self.ledger.called(use)
        yield from self._decision(part, use, when, columns)
        yield from self._part_result(part, use, when, columns)

    def _decision(self, part: ToolInvocation, use: Draft, when: dict, columns: dict) -> Iterator[Draft]:
        if part.confirmation is not None:
            yield Draft("system", decision_text(part.confirmation), part.confirmation.locator,
                        tool_name=use.tool_name, tool_use_id=use.tool_use_id, **when, **columns)

    def _part_result(self, part: ToolInvocation, use: Draft, when: dict, columns: dict) -> Iterator[Draft]:
        """The invocation part's own output as the result, when the part finished or shows one."""
        if not (part.output or part.is_complete):
            return
        self.ledger.take(use.tool_use_id)
        text = part.output or part.message
        if part.is_error:
            text = f"error: {text}"
        yield Draft("tool_result", text, part.locator, tool_name=use.tool_name, tool_use_id=use.tool_use_id,
                    **when, **columns)


def session_rows(session: ChatSession, session_id: str, project: Project, skip: Iterable[str] = ()) -> Iterator[Draft]:
    """The rows of ``session`` (``session_id`` when the object names none), leaving out requests in ``skip``."""
    yield from SessionRenderer(session, session_id, project, skip).rows()


def project_row(session: ChatSession, session_id: str, project: Project) -> Iterator[Draft]:
    """A ``project:`` row naming the remote host of a remote workspace (the path column cannot hold it)."""
    if project.remote:
        yield Draft("system", f"project: {project.path} on {project.where()} (from workspace.json)", "file",
                    timestamp_ns=session.creation_ns,
                    timestamp_source="record" if session.creation_ns is not None else "none",
                    session_id=session.session_id or session_id, project_path=project.path)


def superseded_row(session: ChatSession, session_id: str, project: Project, newer: str, kept: int,
                   locator: str) -> Draft:
    """The ``superseded:`` row of an older copy of a session (``kept``: its requests the newer copy lacks)."""
    count = len(session.requests)
    return Draft("system", f"superseded: older copy of session {session.session_id or session_id} "
                           f"({count} request{'' if count == 1 else 's'}, {kept} not in {newer}); "
                           f"{newer} is read as the session", locator,
                 timestamp_ns=session.last_message_ns,
                 timestamp_source="record" if session.last_message_ns is not None else "none",
                 session_id=session.session_id or session_id, project_path=project.path)
