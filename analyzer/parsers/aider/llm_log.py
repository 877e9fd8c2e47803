"""The LLM history (``--llm-history-file``, e.g. ``.aider.llm.history``): every request to the model and its reply.

Off unless the option is given (aider/args.py:296-300). ``log_llm_history``
(aider/io.py:754-766) appends a record header ``<ROLE> <local time>``, the
role ``TO LLM`` or ``LLM RESPONSE`` and the time ``datetime.now().isoformat(
timespec="seconds")`` (local, no zone), then the content: a request is the
message list as ``format_messages`` renders it (``-------`` between messages,
every line ``<ROLE> <text>``: aider/utils.py:105-137, called at
aider/coders/base_coder.py:1793), a reply every line ``ASSISTANT <text>``
(``format_content``, base_coder.py:1823-1826).

Rows: ``model request: sent at <time> (local time, no zone):`` then the
request as written, and ``model completion: received at <time> (local time,
no zone):`` then the reply without its ``ASSISTANT`` prefixes; untimed (the
time has no zone). Text before the first header, or a record over its
budget, is a ``parser:`` row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, over_limit

from .prompts import project_of

RECORD = re.compile(r"(?P<role>TO LLM|LLM RESPONSE) (?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)")
REPLY_PREFIX = "ASSISTANT "
RECORD_BUDGET = 64 * 1024 * 1024  # characters of one record held; past it its lines are counted


class _Record:
    """The record being read: its header, its first line and its content so far."""

    def __init__(self, role: str, when: str, line: int):
        self.role, self.when, self.line = role, when, line
        self.lines: list[str] = []
        self.held = 0
        self.over = 0

    def add(self, text: str) -> Draft | None:
        """Hold a content line; the ``parser:`` row when the record passes its budget (first time only)."""
        if self.held + len(text) > RECORD_BUDGET:
            self.over += 1
            if self.over == 1:
                return over_limit("model log record", f"{RECORD_BUDGET} characters",
                                  "its later lines were counted, not read", f"line:{self.line}")
            return None
        self.lines.append(text)
        self.held += len(text) + 1
        return None

    def text(self) -> str:
        if self.role == "TO LLM":
            return f"model request: sent at {self.when} (local time, no zone):\n" + "\n".join(self.lines)
        reply = [line[len(REPLY_PREFIX):] if line.startswith(REPLY_PREFIX) else line.removeprefix("ASSISTANT")
                 for line in self.lines]
        return f"model completion: received at {self.when} (local time, no zone):\n" + "\n".join(reply)


def parse_llm_history(ctx: ParseContext) -> Iterator[Draft]:
    """One ``model request:`` or ``model completion:`` row per record, untimed."""
    project = project_of(ctx)
    record: _Record | None = None
    stray = 0  # lines before the first header
    for item in ctx.lines():
        if isinstance(item, Draft):
            yield item
            continue
        try:
            text = item.raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as exc:
            yield bad_line(item.number, f"not UTF-8 at byte {exc.start}", item.raw)
            continue
        header = RECORD.fullmatch(text)
        if header is not None:
            if record is not None:
                yield _row(record, project)
            record = _Record(header["role"], header["time"], item.number)
        elif record is not None:
            problem = record.add(text)
            if problem is not None:
                yield problem
        elif item.raw.strip():
            stray += 1
            if stray == 1:
                yield bad_line(item.number, "text before the first record header", item.raw)
        if not item.terminated:
            yield bad_line(item.number, "torn last line, no newline; kept in its record", item.raw)
    if record is not None:
        yield _row(record, project)


def _row(record: _Record, project: str) -> Draft:
    return Draft("system", record.text(), f"line:{record.line}", timestamp_source="none", project_path=project)
