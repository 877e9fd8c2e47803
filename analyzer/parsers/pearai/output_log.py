"""PearAI's output channel log (secondary): Settings:/Completion: writes between separator lines."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from aitrail.analyzer.formats.continue_prompts import last_user_block
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

SEPARATOR = "=" * 74
RULE = "#" * 44
_LOG_SESSION = re.compile(r"(?:^|/)logs/(\d{8}T\d{6})/")


def parse_output_log(ctx: ParseContext) -> Iterator[Draft]:
    """The PearAI output channel log (secondary): each Settings:/Completion: write as rows.

    A request's last user block is a user row and its completion the assistant row; a
    ``model:`` row where the Settings name a new model. Time is the editor session's start
    from the logs/<stamp>/ folder, when the bundle records the subject's time zone.

    The log is read one write at a time, each by its place in the text: a list of its
    lines took eight bytes a line twice over (64 MiB of empty lines, 1 GB).
    """
    text = ctx.data.decode("utf-8", "replace")
    moment = {"timestamp_ns": _log_session_ns(ctx), "timestamp_source": "log-dir"}
    model, request = None, None
    for kind, start, body in _log_records(text):
        if kind == "preamble":
            if body.strip(" \t\r\n"):
                yield bad_record(f"line:{start}", "text before the first record separator", body)
            continue
        head, _, rest = body.partition("\n")
        if head == "Settings:":
            parsed = _request(rest)
            if parsed is None:
                yield bad_record(f"line:{start}", "Settings: write with no # rule (cut off mid-write)", body)
                continue
            if request is not None:
                yield from _request_rows(request, None, moment)
            new_model, prompt = parsed
            if new_model and new_model != model:
                label = f"model: {new_model}" if model is None else f"model: {model} -> {new_model}"
                yield Draft("system", label, f"line:{start}", model=new_model, **moment)
                model = new_model
            request = (start, prompt, new_model or "")
        elif head == "Completion:":
            yield from _request_rows(request, (start, rest.strip("\n")), moment)
            request = None
        else:
            yield bad_record(f"line:{start}", "a write that starts with neither Settings: nor Completion:", body)
    if request is not None:
        yield from _request_rows(request, None, moment)


def _lines(text: str) -> Iterator[tuple[int, int, int]]:
    """(number, start, end) of each line of ``text`` split at newlines (the last one may be empty)."""
    number, start = 1, 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield number, start, len(text)
            return
        yield number, start, end
        number, start = number + 1, end + 1


def _log_records(text: str) -> Iterator[tuple[str, int, str]]:
    """(``preamble`` or ``record``, first line number, text) of each write between separator pairs.

    A write starts after two separator lines in a row; the text before the first pair is
    the preamble. Only where the current write starts and ends is held, never its lines.
    """
    kind, number, span = "preamble", 1, None  # span: (start, end) of the lines taken so far
    pending = None  # a separator line that may be the first of a pair: (start, end)
    for line, start, end in _lines(text):
        separator = end - start == len(SEPARATOR) and text.startswith(SEPARATOR, start)
        if pending is not None and separator:  # a pair: the write before it ends, the next starts after it
            if kind == "record" or span is not None:
                yield kind, number, text[span[0]:span[1]] if span else ""
            kind, number, span, pending = "record", line + 1, None, None
            continue
        if pending is not None:  # a lone separator line is text of the write
            span = (span[0] if span else pending[0], pending[1])
            pending = None
        if separator:
            pending = (start, end)
            continue
        span = (span[0] if span else start, end)
    if pending is not None:
        span = (span[0] if span else pending[0], pending[1])
    if kind == "record" or span is not None:
        yield kind, number, text[span[0]:span[1]] if span else ""


def _request(rest: str) -> tuple[str | None, str] | None:
    """(model, prompt) of a Settings: write's text after its first line; None without the ``#`` rule.

    The settings are ``key: value`` lines up to the rule; only ``model`` is used, so only it is kept.
    """
    model, start = None, 0
    while start <= len(rest):
        end = rest.find("\n", start)
        end = len(rest) if end < 0 else end
        line = rest[start:end]
        if line == RULE:
            return model, rest[end + 1:].strip("\n")
        key, separator, value = line.partition(": ")
        if separator and key.strip() == "model":
            model = value.strip()
        start = end + 1
    return None


def _request_rows(request, completion, moment: dict) -> Iterator[Draft]:
    if request is None:
        if completion is not None:
            start, reply = completion
            yield Draft("system", f"model completion: {reply}", f"line:{start}", **moment)
        return
    start, prompt, model = request
    user = last_user_block(prompt)
    if user is not None:
        yield Draft("user", user, f"line:{start}", model=model, **moment)
        if completion is not None:
            yield Draft("assistant", completion[1], f"line:{completion[0]}", model=model, **moment)
        return
    yield Draft("system", f"model request: {prompt}", f"line:{start}", model=model, **moment)
    if completion is not None:
        yield Draft("system", f"model completion: {completion[1]}", f"line:{completion[0]}", model=model, **moment)


def _log_session_ns(ctx: ParseContext) -> int | None:
    """The editor session's start, from logs/<YYYYMMDDTHHMMSS>/ (local time).

    Only converted to UTC when the bundle was collected live on the subject, so
    that the recorded time zone is the subject's; otherwise no time is given.
    """
    match = _LOG_SESSION.search(ctx.source.path)
    collection = ctx.collection or {}
    if not match or collection.get("mode") not in ("current-user", "all-users"):
        return None
    offset = (collection.get("time_zone") or {}).get("utc_offset_seconds")
    if not isinstance(offset, int):
        return None
    zone = dt.timezone(dt.timedelta(seconds=offset))
    local = dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=zone)
    return int(local.timestamp()) * 1_000_000_000
