"""Crush ``sessions`` rows: what each session is (top level, sub-agent run, title helper), its todos and totals.

Child sessions carry ``parent_session_id``: an agent tool run has the id
``<assistant message id>$$<tool call id>``, a title helper ``title-<parent>``,
an older task session the tool call id itself (internal/session/session.go:110-135,
350-362). A session keeps running totals (``prompt_tokens``,
``completion_tokens``, ``cost``) and its todo list as JSON ``[{content, status,
active_form}]`` (session.go:19-38).

What the walk holds per session until its messages are read (``SessionBook``):
whether it is a child session, its totals and last update, each within
BOOK_BYTES; the sessions past it are read without them (one ``parser:`` row).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.text import bad_record, excerpt
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, format_timestamp, over_limit

from .parts import text_of
from .times import crush_ns

AGENT_RUN_SEPARATOR = "$$"
TITLE_PREFIX = "title-"
BOOK_BYTES = 32 * 1024 * 1024  # a real database has hundreds of sessions, under 200 bytes each here
ENTRY_OVERHEAD = 160


@dataclass
class Totals:
    """A session's running token totals and cost, with the time its row last changed."""

    prompt: object
    completion: object
    cost: object
    updated_ns: int | None
    child: bool
    locator: str
    read: bool = False  # its messages were read (its totals row is then given after them)


class SessionBook:
    """Session id -> Totals, within BOOK_BYTES; the sessions past it are counted, not held."""

    def __init__(self) -> None:
        self.entries: dict[str, Totals] = {}
        self.spent = 0
        self.missed = 0
        self.first_missed = ""

    def hold(self, session_id: str, totals: Totals, locator: str) -> None:
        """Keep a session's totals unless the book is full."""
        cost = len(session_id) + ENTRY_OVERHEAD
        if self.spent + cost > BOOK_BYTES:
            self.missed += 1
            self.first_missed = self.first_missed or locator
            return
        self.spent += cost
        self.entries[session_id] = totals

    def is_child(self, session_id: str) -> bool:
        """Whether a held session has a parent (an unknown one counts as top level)."""
        held = self.entries.get(session_id)
        return held.child if held else False

    def full_rows(self) -> Iterator[Draft]:
        """The one ``parser:`` row of a full book."""
        if self.missed:
            yield over_limit("sessions", f"{BOOK_BYTES} bytes of session ids and totals held for their messages",
                             f"{self.missed} sessions from here on were not held: their prompts read as typed by the "
                             "person even in a sub-agent run, and their totals rows are not given", self.first_missed)


def session_kind(session_id: str, parent: str) -> str:
    """What a session is, from its id and parent (session.go:110-135, 350-362)."""
    if not parent:
        return "top-level session"
    if AGENT_RUN_SEPARATOR in session_id:
        message, _, call = session_id.partition(AGENT_RUN_SEPARATOR)
        return f"sub-agent run of tool call {call} (assistant message {message}) in session {parent}"
    if session_id.startswith(TITLE_PREFIX):
        return f"title generation for session {parent}"
    return f"sub-agent run of tool call {session_id} in session {parent} (older layout: the session id is the call id)"


def run_call(session_id: str, parent: str) -> str:
    """The tool call a child session ran for ('' for a top-level session or a title helper)."""
    if not parent or session_id.startswith(TITLE_PREFIX):
        return ""
    return session_id.partition(AGENT_RUN_SEPARATOR)[2] if AGENT_RUN_SEPARATOR in session_id else session_id


def session_rows(row: dict, locator: str) -> Iterator[Draft]:
    """The ``session metadata:`` row, a ``subagent:`` row for an agent run, and the ``task:`` rows of its todos."""
    session_id, parent = text_of(row.get("id")), text_of(row.get("parent_session_id"))
    created, updated = crush_ns(row.get("created_at")), crush_ns(row.get("updated_at"))
    base = {"session_id": session_id, "timestamp_ns": created,
            "timestamp_source": "record" if created is not None else "none"}
    facts = [f"id={session_id}", session_kind(session_id, parent), f"messages={text_of(row.get('message_count'))}"]
    if updated is not None:
        facts.append(f"updated={format_timestamp(updated)}")
    summary = text_of(row.get("summary_message_id"))
    if summary:
        facts.append(f"summarized by message {summary}")
    yield Draft("system", f"session metadata: {text_of(row.get('title'))} ({'; '.join(facts)})", locator, **base)
    call = run_call(session_id, parent)
    if call:
        yield Draft("system", f"subagent: session {session_id} is the run of tool call {call}; its rows carry that "
                              "session id", locator, tool_use_id=call, **{**base, "session_id": parent})
    yield from _todo_rows(row.get("todos"), f"{locator}/todos", session_id, updated)


def _todo_rows(value, locator: str, session_id: str, updated: int | None) -> Iterator[Draft]:
    if value is None or value == "":
        return
    try:
        todos = decode_json(value if isinstance(value, (str, bytes)) else text_of(value))
    except (ValueError, UnicodeDecodeError) as exc:
        yield bad_record(locator, f"todos are not JSON: {exc}", text_of(value))
        return
    if not isinstance(todos, list):
        yield bad_record(locator, "todos are not a JSON array", text_of(todos))
        return
    # the list is stored whole at each change; the session row's updated_at is its last change or later
    when = {"timestamp_ns": updated, "timestamp_source": "record" if updated is not None else "none"}
    for position, todo in enumerate(todos):
        item = as_dict(todo)
        if not item:
            yield bad_record(f"{locator}/{position}", "todo is not an object", text_of(todo))
            continue
        yield Draft("system", f"task: {text_of(item.get('content'))} | status={text_of(item.get('status'))} "
                              f"active_form={excerpt(text_of(item.get('active_form')), 500)} (as of the session's "
                              "last update)", f"{locator}/{position}", session_id=session_id, **when)


def totals_of(row: dict, locator: str) -> Totals:
    """The totals a sessions row (at ``locator``) holds."""
    return Totals(row.get("prompt_tokens"), row.get("completion_tokens"), row.get("cost"),
                  crush_ns(row.get("updated_at")), bool(text_of(row.get("parent_session_id"))), locator)


def totals_row(session_id: str, totals: Totals, model: str) -> Draft | None:
    """``tokens generated: model=<m> input=<prompt> output=<completion> cost=<cost> (session totals)``; None if none."""
    counts = [totals.prompt, totals.completion, totals.cost]
    if all(value in (None, 0, 0.0, "") for value in counts):
        return None
    text = (f"tokens generated: model={model} input={text_of(totals.prompt)} output={text_of(totals.completion)} "
            f"cost={text_of(totals.cost)} (session totals, as of its last update)")
    when = totals.updated_ns
    return Draft("system", text, totals.locator, session_id=session_id, model=model, timestamp_ns=when,
                 timestamp_source="record" if when is not None else "none")
