""".aider.chat.history.md: Aider's Markdown transcript, one run after another.

Every write of aider/io.py appends to it (``append_chat_history``, 1117-1136):
a run header ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time, no
zone; 335-336), each prompt as ``#### <line>  `` lines (``user_input``,
775-789), the model's reply between blank lines (``ai_output``, 793-795), and
Aider's own output, answers and errors as ``> <text>  `` lines (``_tool_message``,
``tool_output``, ``confirm_ask``: 807-1000). formats/markdown_history.py turns the
lines back into those writes; this module makes rows of them.

Rows (docs/agents/aider.md): a header is ``session start: aider chat started at
<time> (local time, no zone recorded)`` and opens a run, whose session_id is the
header's time as written (``#2`` after a second header of the same second);
a prompt is a ``user`` row, followed by ``prompt typed: <local time> ...`` when
the input history beside the file holds it (prompts.py), and by a ``tool_use``
row when it is a command that runs something (``/run``, ``!``, ``/test``,
``/git``, ``/web``); a reply is an ``assistant`` row, its reasoning (between
Aider's ``<thinking-content-...>`` tags, or a model's own ``<think>``) a
``thinking`` row before it; a status write is a ``model:`` row (the banner), a
``tokens generated:`` row, a ``permission decision:`` row (an answer to a
question), a ``tool_use`` row (``Applied edit to``, ``Running``), ``commit:``,
``interrupted:``, and otherwise ``output:``, consecutive output writes in one
row. The format keeps no call ids and no tool output (the catalog says
``tool_results: not_recorded``): tool rows carry no tool_use_id.
Nothing in the file is an instant: every row is untimed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.markdown_history import Shape, Write, read_markdown_log
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .prompts import TypedTimes, project_of, typed_times
from .status import (
    COMMIT,
    CONFIRMATION,
    INTERRUPT,
    MODEL_BANNER,
    decision,
    status_call,
    tokens_text,
    typed_call,
)

HEADER = re.compile(r"# aider chat started at (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
SHAPE = Shape(header=HEADER)
# The tag Aider wraps streamed reasoning in (aider/reasoning_tags.py:8, base_coder.py:1936-1947), and the tags
# models write themselves (a model's ``reasoning_tag`` setting closes Aider's opening tag: base_coder.py:1946).
REASONING_OPEN = re.compile(r"\s*<(thinking-content-[0-9a-f]{32}|think|thinking|reasoning)>")
REASONING_CLOSE = re.compile(r"</(?:thinking-content-[0-9a-f]{32}|think|thinking|reasoning)>")


class _Run:
    """What the rows of one file carry: the run (session), its model, output waiting to be written as one row."""

    def __init__(self, ctx: ParseContext, typed: TypedTimes):
        self.project = project_of(ctx)
        self.typed = typed
        self.session = ""
        self.model = ""
        self.headers: dict[str, int] = {}
        self.output: list[str] = []
        self.output_locator = ""
        self.subject = ""  # the status text written just before this one ('' after any other write)

    def row(self, turn_type: str, text: str, locator: str, **columns) -> Draft:
        return Draft(turn_type, text, locator, timestamp_source="none", session_id=self.session,
                     project_path=self.project, **columns)

    def flush_output(self) -> Iterator[Draft]:
        if self.output:
            yield self.row("system", "output: " + "\n".join(self.output), self.output_locator)
            self.output, self.output_locator = [], ""

    def start(self, when: str) -> None:
        count = self.headers.get(when, 0) + 1
        self.headers[when] = count
        self.session = when if count == 1 else f"{when}#{count}"
        self.model = ""


def parse_chat_history(ctx: ParseContext) -> Iterator[Draft]:
    """.aider.chat.history.md: rows of every run, in file order, all untimed."""
    run = _Run(ctx, typed_times(ctx))
    for item in read_markdown_log(ctx, SHAPE):
        if isinstance(item, Draft):
            yield item
            continue
        if item.kind != "status" or not _is_output(item):
            yield from run.flush_output()
        yield from _HANDLERS[item.kind](run, item)
        run.subject = item.text if item.kind == "status" else ""
    yield from run.flush_output()
    problem = run.typed.over_limit_row()
    if problem is not None:
        yield problem


def _header(run: _Run, write: Write) -> Iterator[Draft]:
    match = HEADER.fullmatch(write.lines[0])
    when = match["time"] if match else write.lines[0]
    run.start(when)
    yield run.row("system", f"session start: aider chat started at {when} (local time, no zone recorded)",
                  f"line:{write.line}")


def _user(run: _Run, write: Write) -> Iterator[Draft]:
    text, locator = write.text, f"line:{write.line}"
    if CONFIRMATION.fullmatch(text):  # io.py:870-872: an earlier all/skip answer of the group, written as a prompt
        yield run.row("system", f"auto answer: {text}", locator)
        return
    yield run.row("user", text, locator)
    typed = run.typed.take(text)
    if typed is not None:
        yield run.row("system", typed, locator)
    call = typed_call(text)
    if call is not None:
        yield run.row("tool_use", call.arguments, locator, tool_name=call.name, model=run.model)


def _reply(run: _Run, write: Write) -> Iterator[Draft]:
    text, locator = write.text.strip("\n"), f"line:{write.line}"
    opening = REASONING_OPEN.match(text)
    if opening is not None:
        closing = REASONING_CLOSE.search(text, opening.end())
        thinking = text[opening.end():closing.start() if closing else len(text)].strip()
        yield run.row("thinking", thinking, locator, model=run.model)
        text = text[closing.end():].strip() if closing else ""
        if not text:
            return
    yield run.row("assistant", text, locator, model=run.model)


def _is_output(write: Write) -> bool:
    """A status write that none of the rules below reads: plain output of Aider."""
    first = write.lines[0] if write.lines else ""
    tokens = first.startswith("Tokens: ") and tokens_text(write.text, "") is not None
    return not (MODEL_BANNER.fullmatch(first) or tokens or CONFIRMATION.fullmatch(first)
                or status_call(first) or COMMIT.fullmatch(write.text) or first == INTERRUPT)


def _status(run: _Run, write: Write) -> Iterator[Draft]:
    first, text, locator = write.lines[0] if write.lines else "", write.text, f"line:{write.line}"
    banner = MODEL_BANNER.fullmatch(first)
    if banner is not None:
        yield from _model_row(run, banner["model"], first, locator)
        return
    tokens = tokens_text(text, run.model) if first.startswith("Tokens: ") else None
    if tokens is not None:
        yield run.row("system", tokens, locator, model=run.model)
        return
    answered = decision(first, run.subject)
    if answered is not None:
        yield run.row("system", answered[0], locator, tool_name=answered[1])
        return
    call = status_call(first)
    if call is not None:
        yield run.row("tool_use", call.arguments, locator, tool_name=call.name, model=run.model)
        return
    commit = COMMIT.fullmatch(text)
    if commit is not None:
        yield run.row("system", f"commit: {commit['hash']} {commit['message']}", locator)
        return
    if first == INTERRUPT:
        yield run.row("system", "interrupted: ^C KeyboardInterrupt (the user stopped the reply)", locator)
        return
    if text.strip():
        run.output_locator = run.output_locator or locator
        run.output.append(text)


def _model_row(run: _Run, model: str, banner: str, locator: str) -> Iterator[Draft]:
    changed = f"{run.model} -> {model}" if run.model and run.model != model else model
    run.model = model
    yield run.row("system", f"model: {changed} ({banner})", locator, model=model)


_HANDLERS = {"header": _header, "user": _user, "reply": _reply, "status": _status}
