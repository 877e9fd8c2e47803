"""PearAI's output channel log (secondary): Settings:/Completion: writes between separator lines."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from aitrail.analyzer.context import ParseContext
from aitrail.analyzer.formats.continue_sessions import last_user_block
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.rows import Draft

SEPARATOR = "=" * 74
RULE = "#" * 44
_LOG_SESSION = re.compile(r"(?:^|/)logs/(\d{8}T\d{6})/")


def parse_output_log(ctx: ParseContext) -> Iterator[Draft]:
    """The PearAI output channel log (secondary): each Settings:/Completion: write as rows.

    A request's last user block is a user row and its completion the assistant row; a
    ``model:`` row where the Settings name a new model. Time is the editor session's start
    from the logs/<stamp>/ folder, when the bundle records the subject's time zone.
    """
    text = ctx.data.decode("utf-8", "replace")
    lines = text.split("\n")
    moment = {"timestamp_ns": _log_session_ns(ctx), "timestamp_source": "log-dir"}
    records, preamble = _log_records(lines)
    if preamble and any(line.strip(" \t\r") for line in preamble[1]):
        yield bad_record(f"line:{preamble[0]}", "text before the first record separator", "\n".join(preamble[1]))
    model, request = None, None
    for start, body in records:
        head = body[0] if body else ""
        if head == "Settings:":
            parsed = _request(body)
            if parsed is None:
                yield bad_record(f"line:{start}", "Settings: write with no # rule (cut off mid-write)", "\n".join(body))
                continue
            if request is not None:
                yield from _request_rows(request, None, moment)
            settings, prompt = parsed
            new_model = settings.get("model")
            if new_model and new_model != model:
                label = f"model: {new_model}" if model is None else f"model: {model} -> {new_model}"
                yield Draft("system", label, f"line:{start}", model=new_model, **moment)
                model = new_model
            request = (start, prompt, new_model or "")
        elif head == "Completion:":
            reply = "\n".join(body[1:]).strip("\n")
            yield from _request_rows(request, (start, reply), moment)
            request = None
        else:
            yield bad_record(f"line:{start}", "a write that starts with neither Settings: nor Completion:",
                             "\n".join(body))
    if request is not None:
        yield from _request_rows(request, None, moment)


def _log_records(lines: list[str]) -> tuple[list[tuple[int, list[str]]], tuple[int, list[str]] | None]:
    """Records after each pair of separator lines, with the line number of their first line."""
    records: list[tuple[int, list[str]]] = []
    preamble: list[str] = []
    current: list[str] | None = None
    index = 0
    while index < len(lines):
        if lines[index] == SEPARATOR and index + 1 < len(lines) and lines[index + 1] == SEPARATOR:
            current = []
            records.append((index + 3, current))
            index += 2
            continue
        (preamble if current is None else current).append(lines[index])
        index += 1
    return records, ((1, preamble) if preamble else None)


def _request(body: list[str]) -> tuple[dict, str] | None:
    settings: dict[str, str] = {}
    for position, line in enumerate(body[1:], start=1):
        if line == RULE:
            return settings, "\n".join(body[position + 1:]).strip("\n")
        key, separator, value = line.partition(": ")
        if separator:
            settings[key.strip()] = value.strip()
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
