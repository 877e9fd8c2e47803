"""grok-dev's ~/.grok/grok.db (superagent-ai/grok-cli): sessions, messages, tool calls and results.

[src] The database is in WAL mode; ``ctx.sqlite()`` reads a copy with its
-wal applied, so the newest messages, still only in the -wal, are read.
``messages.message_json`` is an AI SDK ModelMessage (role system | user |
assistant | tool; content a string or parts ``text``, ``reasoning``,
``tool-call{toolCallId, toolName, input}``, ``tool-result{toolCallId,
toolName, output{type, value}}``). appendMessages writes each call and result
twice: inline in the message and again in ``tool_calls`` / ``tool_results``.
The message copy gives the rows; a ``tool_calls`` or ``tool_results`` row
gives one only when its message copy is missing, so each call is ONE
``tool_use`` row and ONE ``tool_result`` row.

Rows: per session ``session:`` and ``model:`` (and ``recap:``), per message
its turns, per compaction ``compaction:``, per usage event ``tokens
generated:``; a call never answered gets the ``parser: no result recorded``
row. Times are the ISO ``created_at`` of each row.

grok.db holds every session of the user, so what is held across its tables
has budgets (``_Held``): the sessions' projects, the calls ``tool_calls``
holds, and the model of each message's usage event. Past one, the rest is
counted, not held, and one ``parser:`` row says what the later rows lack. A
``tool_results`` row finds its call by rowid (one probe of the table's
B-tree), so nothing is held for it.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator

from aitrail.analyzer.formats.call_budget import BoundedLedger
from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.text import bad_file, bad_record, excerpt
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_iso, over_limit

from .values import as_text, block_text, compact

SESSION_FIELDS = ("mode", "status", "cwd_last", "created_at", "updated_at")
# What is held across the tables, each entry costing its text plus ENTRY_COST (its objects; measured
# 140 to 180 bytes): 32 MiB holds about 190,000 sessions' projects, 64 MiB about 400,000 stored calls
# or message models. A user's whole history of sessions has thousands of sessions and tens of
# thousands of calls; a database of ten million usage rows held them all.
SESSIONS_BUDGET = 32 * 1024 * 1024
STORED_CALLS_BUDGET = 64 * 1024 * 1024
ANSWERED_BUDGET = 64 * 1024 * 1024
MODELS_BUDGET = 64 * 1024 * 1024
ENTRY_COST = 128


class _Held(dict):
    """A join table held within the budget named ``budget`` (a constant of this module, read at call time).

    Past it the entries are counted, not held; ``row`` gives the one ``parser:`` row,
    at the first entry that did not fit.
    """

    def __init__(self, budget: str, what: str, consequence: str) -> None:
        super().__init__()
        self.budget, self.what, self.consequence = budget, what, consequence
        self.spent = 0
        self.over = 0  # entries counted, not held
        self.over_at = ""

    def put(self, key: object, value: object, text: int, locator: str, replace: bool = False) -> None:
        """Hold ``key`` -> ``value``, costing ``text`` characters plus ENTRY_COST.

        A key already held keeps its first value, unless ``replace``.
        """
        if key in self:
            if replace:
                self[key] = value
            return
        cost = text + ENTRY_COST
        if self.over or self.spent + cost > globals()[self.budget]:
            self.over_at = self.over_at or locator
            self.over += 1
            return
        self.spent += cost
        self[key] = value

    def row(self) -> Draft | None:
        """The ``parser:`` row of a budget passed (None within it)."""
        if not self.over:
            return None
        return over_limit(self.what, f"{globals()[self.budget]} bytes held, each entry costing {ENTRY_COST} more "
                          "than its text", f"{self.over} from this row on were counted, not held: {self.consequence}",
                          self.over_at)


class _Book:
    """Sessions' columns, the calls seen in messages, and the ledger joining calls to results."""

    def __init__(self):
        # session id -> its project (cwd_at_start)
        self.sessions = _Held("SESSIONS_BUDGET", "sessions", "the later sessions' messages, calls and events carry "
                                                             "no project_path (their session: rows still do)")
        self.calls = BoundedLedger()  # the calls of messages and tool_calls: at most call_budget.MAX_CALL_IDS ids
        # ledger keys whose result was given, so tool_results does not give it again
        self.answered = _Held("ANSWERED_BUDGET", "answered call ids", "the later results may be given twice, from "
                                                                      "their message and from tool_results")
        # ledger key -> tool_calls rowid (the first), for a result whose call is in no message
        self.stored = _Held("STORED_CALLS_BUDGET", "tool_calls ids", "a result whose call only those rows hold "
                                                                     "comes without its call before it")
        # (session, message seq) -> model of its usage event
        self.models = _Held("MODELS_BUDGET", "usage_events models", "the messages they name carry no model")
        self.connection: sqlite3.Connection | None = None
        self.calls_by_rowid = False  # tool_calls is a real table with rowids: a tool_results row finds its call

    def columns(self, session: str, when, seq=None) -> dict:
        """A row's columns; the model only for message ``seq``, the one its usage event names.

        sessions.model is only the current model, not the one each message used,
        so rows other than messages carry none.
        """
        model = "" if seq is None else self.models.get((session, seq), "")
        return {"timestamp_ns": ns_from_iso(when), "timestamp_source": "record", "session_id": session,
                "project_path": self.sessions.get(session, ""), "model": model}


def _key(session: str, call_id: str) -> str:
    return f"{session}\0{call_id}"


def parse_dev_db(ctx: ParseContext) -> Iterator[Draft]:
    """grok.db (with its -wal): every session's turns, one tool_use and one tool_result per call."""
    book = _Book()
    yield from each_database_row(ctx, lambda connection: _database_rows(ctx, connection, book))
    yield from book.calls.orphans()  # also after a failed read: the calls read before it are still open
    yield from book.calls.over_limit_rows()
    yield from _over(book.answered)


def _table(connection: sqlite3.Connection, table: str, order: str = "") -> Iterator[dict]:
    """A real table's rows, streamed (none when the table is missing or not an ordinary table)."""
    if not sqlite_safe.is_real_table(connection, table):
        return iter(())
    where = f"1 ORDER BY {order}" if order else ""
    return sqlite_safe.table_rows(connection, table, f"{table} rows", where=where)


def _clean(row: dict, locator: str) -> Iterator[Draft]:
    """A row per value too long to read; the value is left out of the row's other columns."""
    for column, value in list(row.items()):
        if isinstance(value, sqlite_safe.Oversize):
            yield bad_record(f"{locator}/{column}", f"value too long to read ({value.describe()})")
            row[column] = None


def _database_rows(ctx: ParseContext, connection: sqlite3.Connection, book: _Book) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "messages"):
        yield bad_file(f"{ctx.source.name}: no messages table")
        return
    book.connection = connection
    for row in _table(connection, "sessions", "rowid"):
        yield from _session_rows(row, book)
    yield from _over(book.sessions)
    _load_joins(connection, book)
    yield from _over(book.stored)
    yield from _over(book.models)
    for row in _table(connection, "messages", "session_id, seq"):
        yield from _message_rows(row, book)
    for row in _table(connection, "tool_calls", "rowid"):
        yield from _stored_call(row, book)
    for row in _table(connection, "tool_results", "rowid"):
        yield from _stored_result(row, book)
    for row in _table(connection, "compactions", "rowid"):
        yield from _compaction(row, book)
    for row in _table(connection, "usage_events", "rowid"):
        yield from _usage(row, book)


def _over(held: _Held) -> Iterator[Draft]:
    row = held.row()
    if row is not None:
        yield row


def _load_joins(connection: sqlite3.Connection, book: _Book) -> None:
    """Read before the messages: which calls tool_calls holds, and the model of each message's usage event."""
    if sqlite_safe.is_real_table(connection, "tool_calls"):
        book.calls_by_rowid = _has_rowid(connection, "tool_calls")
        for row in sqlite_safe.table_rows(connection, "tool_calls", "tool_calls ids", ("session_id", "tool_call_id")):
            _remember_call(row, book)
    if sqlite_safe.is_real_table(connection, "usage_events"):
        for row in sqlite_safe.table_rows(connection, "usage_events", "usage_events models",
                                          ("session_id", "message_seq", "source", "model")):
            if row.get("source") == "message" and isinstance(row.get("message_seq"), int):
                # interned: a session's id and a model name repeat on every row, held once each
                session, model = sys.intern(as_text(row.get("session_id"))), sys.intern(as_text(row.get("model")))
                key = (session, row["message_seq"])
                # the last usage row of a message wins, as it always did
                book.models.put(key, model, len(session) + len(model), f"sqlite:usage_events:{row.get('_rowid')}",
                                replace=True)


def _has_rowid(connection: sqlite3.Connection, table: str) -> bool:
    """False for a WITHOUT ROWID table (its rows cannot be found by rowid)."""
    try:
        connection.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
    except sqlite3.OperationalError:
        return False
    return True


def _session_rows(row: dict, book: _Book) -> Iterator[Draft]:
    locator = f"sqlite:sessions:{as_text(row.get('_rowid'))}"
    yield from _clean(row, locator)
    session, project = as_text(row.get("id")), as_text(row.get("cwd_at_start"))
    book.sessions.put(session, project, len(session) + len(project), locator, replace=True)  # the later row wins
    def columns_at(when) -> dict:  # the session's own rows carry its project even past SESSIONS_BUDGET
        return {**book.columns(session, when), "project_path": project}

    columns = columns_at(row.get("created_at"))
    facts = ", ".join(f"{key}={as_text(row[key])}" for key in SESSION_FIELDS if row.get(key) not in (None, ""))
    yield Draft("system", f"session: {as_text(row.get('title'))} ({facts})", locator, **columns)
    if row.get("model"):  # the current model: true at updated_at, not necessarily at creation
        model = as_text(row["model"])
        yield Draft("system", f"model: {model} (the session's current model, from grok.db sessions)",
                    f"{locator}/model", **{**columns_at(row.get("updated_at")), "model": model})
    if row.get("recap_text"):
        yield Draft("system", f"recap: {as_text(row['recap_text'])} (recap_model={as_text(row.get('recap_model'))})",
                    f"{locator}/recap_text", **columns_at(row.get("recap_updated_at")))


def _message_rows(row: dict, book: _Book) -> Iterator[Draft]:
    locator = f"sqlite:messages:{as_text(row.get('_rowid'))}"
    yield from _clean(row, locator)
    session = as_text(row.get("session_id"))
    columns = book.columns(session, row.get("created_at"), row.get("seq"))
    try:
        message = decode_json(as_text(row.get("message_json")))
    except ValueError as exc:
        yield bad_record(locator, f"message_json is not JSON: {exc}", as_text(row.get("message_json")))
        return
    if not isinstance(message, dict):
        yield bad_record(locator, "message_json is not an object", as_text(row.get("message_json")))
        return
    role = as_text(message.get("role") or row.get("role"))
    content = message.get("content")
    if not isinstance(content, list):
        yield _plain_turn(role, block_text(content), locator, columns)
        return
    for position, part in enumerate(content):
        yield from _part_rows(role, part, f"{locator}/{position}", session, columns, book)


def _plain_turn(role: str, text: str, locator: str, columns: dict) -> Draft:
    if role in ("user", "assistant"):
        return Draft(role, text, locator, **columns)
    if role == "system":  # appendSystemMessage: notes grok-dev adds to the transcript, not typed
        return Draft("system", f"system message: {text}", locator, **columns)
    return Draft("system", f"message ({role}): {text}", locator, **columns)


def _part_rows(role: str, part, locator: str, session: str, columns: dict, book: _Book) -> Iterator[Draft]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text" or isinstance(part, str):
        yield _plain_turn(role, part if isinstance(part, str) else as_text(part.get("text")), locator, columns)
    elif kind == "reasoning":
        yield Draft("thinking", as_text(part.get("text")), locator, **columns)
    elif kind == "tool-call":
        draft = Draft("tool_use", compact(part.get("input", {})), locator, tool_name=as_text(part.get("toolName")),
                      tool_use_id=as_text(part.get("toolCallId")), **columns)
        book.calls.called(draft, _key(session, draft.tool_use_id))
        yield draft
    elif kind == "tool-result":
        yield from _result_rows(session, as_text(part.get("toolCallId")), as_text(part.get("toolName")),
                                _output_text(part.get("output")), locator, columns, book)
    else:
        yield Draft("system", f"message part ({as_text(kind)}): {excerpt(compact(part))}", locator, **columns)


def _output_text(output) -> str:
    """An AI SDK tool output ``{type, value}``: text values as they are, JSON ones as compact JSON."""
    if not isinstance(output, dict):
        return as_text(output)
    value = output.get("value")
    if isinstance(value, dict) and isinstance(value.get("output"), str) and set(value) <= {"success", "output"}:
        return value["output"]  # the {success, output} every grok-dev tool returns
    return value if isinstance(value, str) else compact(value)


def _result_rows(session: str, call_id: str, name: str, text: str, locator: str, columns: dict,
                 book: _Book) -> Iterator[Draft]:
    key = _key(session, call_id)
    if not book.calls.was_called(key) and book.connection is not None:
        yield from _call_from_table(key, book)
    call = book.calls.take(key)
    book.answered.put(key, None, len(key), locator)
    yield Draft("tool_result", text, locator, tool_name=name or (call.tool_name if call else ""),
                tool_use_id=call_id, **columns)
    if call is None and not book.calls.was_called(key):  # in no message and not in tool_calls either
        yield Draft("system", f"parser: tool result for {name or call_id} with no tool call before it", locator,
                    tool_name=name, tool_use_id=call_id, **columns)


def _remember_call(row: dict, book: _Book) -> None:
    """A tool_calls row, first pass: its rowid by call (for a result whose call message is lost)."""
    key = _key(as_text(row.get("session_id")), as_text(row.get("tool_call_id")))
    if isinstance(row.get("_rowid"), int):
        book.stored.put(key, row["_rowid"], len(key), f"sqlite:tool_calls:{row['_rowid']}")


def _call_key(book: _Book, rowid: object) -> str | None:
    """The ledger key of the tool_calls row ``rowid`` (a tool_results row's ``tool_call_row_id``), or None."""
    if isinstance(rowid, float) and rowid.is_integer():
        rowid = int(rowid)  # the id as a REAL: it named the row as the integer does
    if not isinstance(rowid, int) or isinstance(rowid, bool) or not book.calls_by_rowid or book.connection is None:
        return None
    for row in sqlite_safe.table_rows(book.connection, "tool_calls", "tool_calls row", ("session_id", "tool_call_id"),
                                      "rowid = ?", (rowid,)):
        return _key(as_text(row.get("session_id")), as_text(row.get("tool_call_id")))
    return None


def _stored_call(row: dict, book: _Book) -> Iterator[Draft]:
    """A tool_calls row, second pass: a tool_use row only when no message holds the call."""
    locator = f"sqlite:tool_calls:{as_text(row.get('_rowid'))}"
    yield from _clean(row, locator)
    session, call_id = as_text(row.get("session_id")), as_text(row.get("tool_call_id"))
    key = _key(session, call_id)
    if book.calls.was_called(key):
        return
    draft = Draft("tool_use", as_text(row.get("args_json")), locator, tool_name=as_text(row.get("tool_name")),
                  tool_use_id=call_id, **book.columns(session, row.get("started_at")))
    if key not in book.answered:  # its result came first (its rowid was not held): not left open
        book.calls.called(draft, key)
    yield draft


def _call_from_table(key: str, book: _Book) -> Iterator[Draft]:
    """The stored call of a result whose call message is missing, given before the result."""
    rowid = book.stored.get(key)
    if rowid is None or book.connection is None:
        return
    for row in sqlite_safe.table_rows(book.connection, "tool_calls", "tool_calls row", where="rowid = ?",
                                      parameters=(rowid,)):
        yield from _stored_call(row, book)


def _stored_result(row: dict, book: _Book) -> Iterator[Draft]:
    """A tool_results row: a row only when no tool message holds that result."""
    locator = f"sqlite:tool_results:{as_text(row.get('_rowid'))}"
    yield from _clean(row, locator)
    key = _call_key(book, row.get("tool_call_row_id"))
    if key is None:
        yield bad_record(locator, "tool result of no recorded tool call", compact({k: as_text(v) for k, v in
                                                                                  row.items()}))
        return
    if key in book.answered:
        return
    session, call_id = key.split("\0", 1)
    name = book.calls.called_name(key)
    success = "" if row.get("success") in (None, 1) else " (success=0)"
    yield from _result_rows(session, call_id, name, as_text(row.get("output_json")) + success, locator,
                            book.columns(session, row.get("created_at")), book)


def _compaction(row: dict, book: _Book) -> Iterator[Draft]:
    locator = f"sqlite:compactions:{as_text(row.get('_rowid'))}"
    yield from _clean(row, locator)
    text = (f"compaction: messages before seq {as_text(row.get('first_kept_seq'))} replaced by this summary "
            f"(tokens_before={as_text(row.get('tokens_before'))}): {as_text(row.get('summary'))}")
    yield Draft("system", text, locator, **book.columns(as_text(row.get("session_id")), row.get("created_at")))


def _usage(row: dict, book: _Book) -> Iterator[Draft]:
    locator = f"sqlite:usage_events:{as_text(row.get('_rowid'))}"
    yield from _clean(row, locator)
    counts = " ".join(f"{key}={as_text(row.get(key))}" for key in
                      ("input_tokens", "output_tokens", "total_tokens", "cost_micros"))
    text = (f"tokens generated: model={as_text(row.get('model'))} {counts} (source={as_text(row.get('source'))}, "
            f"message seq {as_text(row.get('message_seq'))})")
    columns = book.columns(as_text(row.get("session_id")), row.get("created_at"))
    yield Draft("system", text, locator, **{**columns, "model": as_text(row.get("model"))})
