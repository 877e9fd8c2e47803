"""The OpenCode TUI's own files in its state directory: prompt history, prompt stash, last-used models.

OpenCode keeps them under ~/.local/state/opencode, its fork Kilo CLI under ~/.local/state/kilo
(the same component, prompt/history.tsx, read in the kilo 7.7.9 binary).

* ``prompt-history.jsonl`` (secondary; the last 50 prompts, no time, no session):
  ``{"input": "...", "mode": "normal"|"shell", "parts": [...]}``. A prompt is a
  ``user`` row with the text the session's user part holds: pasted text that the
  input shows as a placeholder (``[Pasted ~3 lines]``, a text part whose
  ``source.text`` gives the placeholder's span) is put back, so a prompt whose
  session survives matches its user row and is dropped by the run; a prompt of a
  deleted session stays. A shell-mode line is a ``shell prompt:`` row (the database
  keeps a shell run as a tool part, not as user text).
* ``prompt-stash.jsonl``: ``{"input", "parts", "timestamp"}`` (ms), drafts set
  aside unsent: ``stashed prompt:`` rows at their time.
* ``model.json``: ``{"recent": [{providerID, modelID}], "favorite": [...], "variant": {...}}``:
  ``model:`` rows at the file's mtime.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, file_mtime, pointer
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.opencode_parts import text_of
from aitrail.analyzer.formats.text import bad_line, bad_record, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_ms

MAX_PASTES = 1000  # text parts expanded per prompt; a real prompt has a few


def expanded_input(entry: dict) -> str:
    """The prompt as sent: each pasted-text placeholder in ``input`` replaced by its part's text."""
    text = entry.get("input") if isinstance(entry.get("input"), str) else ""
    spans = []
    parts = entry.get("parts") if isinstance(entry.get("parts"), list) else []
    for part in parts[:MAX_PASTES]:
        part = as_dict(part)
        span = as_dict(as_dict(part.get("source")).get("text"))
        start, end, value = span.get("start"), span.get("end"), span.get("value")
        if (part.get("type") == "text" and isinstance(part.get("text"), str) and isinstance(start, int)
                and isinstance(end, int) and 0 <= start <= end <= len(text) and text[start:end] == value):
            spans.append((start, end, part["text"]))
    pieces, position = [], 0
    for start, end, replacement in sorted(spans):
        if start < position:
            continue  # overlapping spans: the first one wins
        pieces += [text[position:start], replacement]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def prompt_history_rows(ctx: ParseContext) -> Iterator[Draft]:
    """prompt-history.jsonl (secondary): a ``user`` row per prompt, a ``shell prompt:`` row per shell line."""
    yield from each_line(ctx, lambda line: _prompt_row(line, stash=False))


def prompt_stash_rows(ctx: ParseContext) -> Iterator[Draft]:
    """prompt-stash.jsonl: a ``stashed prompt:`` row per draft set aside, at its ``timestamp``."""
    yield from each_line(ctx, lambda line: _prompt_row(line, stash=True))


def _prompt_row(line: Line, stash: bool) -> Iterator[Draft]:
    if not isinstance(line.value.get("input"), str):
        yield bad_line(line.number, "no input text", line.raw)
    elif stash:
        yield Draft("system", f"stashed prompt: {expanded_input(line.value)}", line.locator,
                    timestamp_ns=ns_from_ms(line.value.get("timestamp")))
    elif line.value.get("mode") == "shell":
        yield Draft("system", f"shell prompt: {line.value['input']}", line.locator, timestamp_source="none")
    else:
        yield Draft("user", expanded_input(line.value), line.locator, timestamp_source="none")


def model_state_rows(ctx: ParseContext) -> Iterator[Draft]:
    """model.json: a ``model:`` row per recently used and favourite model, and per chosen variant."""
    document, problem = json_document(ctx.data, "model.json")
    yield from (problem,) if problem is not None else _model_rows(ctx, document)


def _model_rows(ctx: ParseContext, document: dict) -> Iterator[Draft]:
    origin = f"from {ctx.source.path}, file mtime"
    for key, label in (("recent", "recently used #{n} in the TUI"), ("favorite", "a favourite in the TUI")):
        entries = document.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            yield bad_record(pointer(key), f"{key} is not an array", text_of(entries)[:2000])
            continue
        for position, entry in enumerate(entries):
            entry = as_dict(entry)
            model = text_of(entry.get("modelID"))
            if not model:
                yield bad_record(pointer(key, position), "no modelID", text_of(entries[position])[:2000])
                continue
            name = f"{text_of(entry.get('providerID'))}/{model}"
            yield Draft("system", f"model: {name} ({label.format(n=position + 1)}; {origin})",
                        pointer(key, position), model=model, **file_mtime(ctx))
    for name, variant in as_dict(document.get("variant")).items():
        yield Draft("system", f"model: {name} variant={text_of(variant)} (variant chosen in the TUI; {origin})",
                    pointer("variant", name), model=name.split("/", 1)[-1], **file_mtime(ctx))
