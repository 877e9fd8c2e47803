"""ui_messages.json of a Cline task folder (and its forks'): ``ClineMessage`` events, what the user saw.

Each event has ``ts`` (ms; also its identity: partial updates rewrite the same
``ts``), ``type`` ``ask`` or ``say`` and the kind under that key, ``text`` (often
JSON), ``partial``. The walk that reads it as a transcript, or beside the API
history for what that lacks, is ``read_ui_messages``.

``partial: true``: a message that starts streaming is saved at once with
``partial: true`` and rewritten in place (same index, same ``ts``) with
``partial: false`` when it completes, or when the user cancels the stream. A file
that still holds ``partial: true`` is what a stream cut by a crash, a closed window
or a killed extension host left: the text as of the message's last save. It is a
row of its kind whose text starts ``partial: `` (PARTIAL). The assistant message is
written to the API history only after the stream, so a cut reply is in no API
message: beside the API history these rows are kept (tool asks too) unless an API
row holds the same text.

References: cline/cline@e1bdeef apps/vscode/src/shared/ExtensionMessage.ts:118-196,
apps/vscode/src/core/task/index.ts:660-760 and 826-920 (``ask``/``say`` with ``partial``),
2726-2745 (a cancelled stream's partial message saved as complete),
apps/vscode/src/core/task/message-state.ts:200-262 (every add and update saved);
RooCodeInc/Roo-Code@cb83656 src/core/task/Task.ts:1156-1163, 1285-1312, 1772-1800 (a new
partial message saved; its updates only posted to the webview), 2739-2751;
trypear/PearAI-Roo-Code@0b6df73 src/schemas/index.ts:804-880 (research/formats-vscode-family.md 5.4, 6.8).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.text import bad_record, json_document
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms

UI_FILES = ("ui_messages.json", "claude_messages.json")  # claude_messages.json: the name before Oct 2024
UI_TOOL_ASKS = ("tool", "command", "use_mcp_server", "browser_action_launch")
UI_OUTPUTS = ("command_output", "mcp_server_response", "browser_action_result")
# what the API history holds with its ids: left out of a ui_messages.json read beside it
UI_CALL_EVENTS = ("tool", "command", "use_mcp_server", "browser_action_launch", "browser_action", "command_output",
                  "mcp_server_request_started", "mcp_server_response", "browser_action_result")
PARTIAL = "partial: "  # first on every row of an event the file still marks partial (a cut stream)
_PARTIAL_FLAG = re.compile(rb'"partial"\s*:\s*true')
_SPACE = re.compile(r"\s")  # what str.split() splits at (both are Py_UNICODE_ISSPACE)
COLLAPSE_CHUNK = 1 << 16  # a piece's words cost about 20 times its characters while it is split


def ui_tool_name(ask: str, text: str) -> str:
    """The tool an ask of ui_messages.json names (its text is a JSON object for ``tool`` asks)."""
    if ask == "tool":
        try:
            return str(decode_json(text).get("tool", "tool"))
        except (ValueError, AttributeError):
            return "tool"
    return {"command": "execute_command", "use_mcp_server": "use_mcp_tool"}.get(ask, ask)


def read_ui_messages(ctx: ParseContext, base: dict, beside: Callable[[], Iterable[Draft]] | None = None,
                     partial_only: bool = False) -> Iterator[Draft]:
    """ui_messages.json: the transcript as the user saw it, or (``beside``) what the API history lacks.

    ``say task`` (or the first ``say text``) is the prompt, later ``say text`` a reply; an
    ``ask`` for a tool is a call whose id is its ``ts``, answered by the next output event
    (the last open ask). ``beside`` gives the rows of the task's API history: tool events
    and rows equal to one of its rows are then left out, except that an event the file
    still marks partial (a cut stream, which no API message holds) is kept, tool asks
    included. ``partial_only``: only those events (a fork whose ui file adds nothing else).
    Every row of a partial event starts ``partial: `` (PARTIAL).
    """
    events, problem = json_document(ctx.data, ctx.source.name, list)
    if problem is not None:
        yield problem
        return
    superseded = _superseded_partials(events)
    repeated = _repeated_keys(events, base, superseded, beside, partial_only) if beside is not None else frozenset()
    asks = BoundedLedger()  # ask ids are timestamps, not unique: joined by event
    for row, partial in _event_rows(events, base, superseded, beside is not None, partial_only, asks):
        if partial is None:  # a record that is no event
            yield row
            continue
        if beside is not None and row_key(row) in repeated:
            continue  # the API history holds the same text
        if row.turn_type == "tool_use":
            asks.called(row, key=row.locator)
        if partial:
            row.text = PARTIAL + row.text
        yield row
    yield from asks.orphans()  # ui_messages.json keeps no output for file tools
    yield from asks.over_limit_rows()


def _event_rows(events: list, base: dict, superseded: set, beside: bool, partial_only: bool,
                asks: BoundedLedger) -> Iterator[tuple[Draft, bool | None]]:
    """(row, partial) of each event to read, unmarked and before the comparison with the API history.

    A record that is no event gives its ``parser:`` row with None for ``partial``.
    """
    seen_prompt = False
    for index, event in enumerate(events):
        locator = f"json:/{index}"
        if not isinstance(event, dict) or event.get("type") not in ("ask", "say"):
            yield bad_record(locator, "not an ask or say event", json.dumps(event)[:2000]), None
            continue
        kind = event.get(event["type"]) or ""
        partial = is_partial(event)
        if (partial and _identity(event, kind) in superseded) or (partial_only and not partial):
            continue
        if beside and kind in UI_CALL_EVENTS and not partial:
            continue
        moment = {"timestamp_ns": ns_from_ms(event.get("ts")), "timestamp_source": "record", **base}
        row = _ui_row(event, kind, locator, moment, seen_prompt, asks, beside, partial)
        seen_prompt = seen_prompt or row.turn_type == "user"
        yield row, partial


def _repeated_keys(events: list, base: dict, superseded: set, api_rows: Callable[[], Iterable[Draft]],
                   partial_only: bool) -> frozenset:
    """The row keys this file's rows share with a row of the API history.

    The keys of this file's rows are collected first (one per event: the document bounds
    them), then the API rows are streamed past them: the API history's own rows are never
    held (one assistant text can be millions of XML calls, each a row).
    """
    wanted = {row_key(row) for row, partial in _event_rows(events, base, superseded, True, partial_only,
                                                           BoundedLedger()) if partial is not None}
    if not wanted:
        return frozenset()
    return frozenset(key for key in map(row_key, api_rows()) if key in wanted)


def is_partial(event: dict) -> bool:
    """Whether the file still marks this event ``partial`` (its stream never completed)."""
    return event.get("partial") is True


def holds_partial(data: bytes) -> bool:
    """Whether a ui_messages.json's bytes may hold a partial event (a cheap scan before a full read)."""
    return _PARTIAL_FLAG.search(data) is not None


def _identity(event: dict, kind: object) -> tuple:
    """(ts, type, kind): what names one message of the file (hashable whatever a hostile file holds)."""
    ts = event.get("ts")
    return (ts if isinstance(ts, (int, float, str)) and not isinstance(ts, bool) else None, event["type"],
            kind if isinstance(kind, str) else None)


def _superseded_partials(events: list) -> set:
    """The (ts, type, kind) of partial events that a complete event also has: older copies of it.

    Cline and Roo rewrite a message in place, so a file holds one of the two; a file that
    holds both (a copy, a merge) has the complete one stand for the message. Only the
    partial events' identities are held (none in most files), at most one small tuple an event.
    """
    partials = {_identity(event, event.get(event["type"]) or "") for event in _events(events) if is_partial(event)}
    if not partials:
        return set()
    return {identity for event in _events(events) if not is_partial(event)
            if (identity := _identity(event, event.get(event["type"]) or "")) in partials}


def _events(events: list) -> Iterator[dict]:
    """The entries that are ask or say events."""
    return (event for event in events if isinstance(event, dict) and event.get("type") in ("ask", "say"))


def _ui_row(event: dict, kind: str, locator: str, moment: dict, seen_prompt: bool, asks: BoundedLedger,
            beside: bool, partial: bool = False) -> Draft:
    """One event's row, unmarked; a tool ask's row is registered as a call by the caller once it is kept."""
    text = str(event.get("text") or "")
    is_prompt = kind == "task" or (kind == "text" and not seen_prompt and not partial)  # a prompt never streams
    if event["type"] == "say" and is_prompt:
        return Draft("user", text, locator, **moment)
    if event["type"] == "say" and kind == "text":
        return Draft("assistant", text, locator, **moment)
    if kind == "user_feedback":
        return Draft("user", text, locator, **moment)
    if kind == "reasoning":
        return Draft("thinking", text, locator, **moment)
    if event["type"] == "ask" and kind in UI_TOOL_ASKS:
        return Draft("tool_use", text, locator, tool_name=ui_tool_name(kind, text),
                     tool_use_id=str(event.get("ts", "")), **moment)
    if kind in UI_OUTPUTS:
        call = asks.take_last()
        return Draft("tool_result", text, locator, tool_name=call.tool_name if call else "",
                     tool_use_id=call.tool_use_id if call else "", **moment)
    if kind in ("completion_result", "followup") and (event["type"] == "say" or text):
        return Draft("assistant", text, locator, **moment)  # an empty ask is the "start a new task?" prompt
    if beside and kind == "api_req_started":
        text = _without_request(text)  # the request is the API history's user message again
    return Draft("system", f"ui {event['type']} {kind}: {text}", locator, **moment)


def _without_request(text: str) -> str:
    try:
        info = decode_json(text)
    except ValueError:
        return text
    if not isinstance(info, dict):
        return text
    return json.dumps({key: value for key, value in info.items() if key != "request"}, ensure_ascii=False)


def row_key(row: Draft) -> tuple[str, str]:
    """What makes two rows the same evidence: turn type and text with whitespace runs collapsed."""
    return row.turn_type, collapsed(row.text)


def collapsed(text: str) -> str:
    """``" ".join(text.split())``, a piece of about COLLAPSE_CHUNK characters at a time.

    ``split`` makes an object of every word: 64 MiB of two-letter words held about
    1.3 GB at once. Pieces cut at whitespace split into the same words.
    """
    if len(text) <= COLLAPSE_CHUNK:
        return " ".join(text.split())
    pieces, start = [], 0
    while start < len(text):
        end = start + COLLAPSE_CHUNK
        if end < len(text):
            space = _SPACE.search(text, end)  # never cut a word: the piece ends at the next whitespace
            end = space.start() if space else len(text)
        piece = " ".join(text[start:end].split())
        if piece:
            pieces.append(piece)
        start = end
    return " ".join(pieces)


def ask_times(ctx: ParseContext) -> list[int] | None:
    """The ms times of the tool asks of the ui_messages.json beside this file; None if none is readable."""
    source = ctx.sibling("ui_messages.json")
    if source is None:
        return None
    try:
        events = decode_json(ctx.read(source))
    except (MemberUnreadable, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(events, list):
        return None
    # one int per tool ask, each smaller than the ask's own decoded object (which the document bounds)
    return sorted(event["ts"] for event in events
                  if isinstance(event, dict) and event.get("type") == "ask" and event.get("ask") in UI_TOOL_ASKS
                  and not is_partial(event) and isinstance(event.get("ts"), int)
                  and not isinstance(event.get("ts"), bool))


