"""Kilo's shared agent board: the notes a Task's sessions post to each other (``board_post``).

``kilo_board`` has one row per root session that a board was opened for
(``objective``, message counts); ``kilo_board_message`` one row per post:
``{board_root_session_id, seq, time_created (ms), sender_session_id, recipient
(a session id or ALL), type (INFO, ASK, RESULT, HOLD, VETO), body, reply_to,
source_message_id, source_call_id}``. The board is on by default
(KILO_EXPERIMENTAL_SHARED_AGENT_BOARD defaults to true in kilo 7.7.9). A post is
also the input of its ``board_post`` tool call; the board row adds who it went
to and keeps the sender's session, so both are given.

Rows: ``board: <objective> (...)`` per board at its creation, in the root session;
``board message: <TYPE> from <sender> to <recipient>: <body> (...)`` per post, at
its time, in the sender's session. Both tables cascade with their root session.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.opencode_parts import text_of
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.rows import Draft, ns_from_ms

BOARD_COLUMNS = ("root_session_id", "objective", "objective_message_id", "message_count", "cleared_seq",
                 "time_created", "time_updated")
MESSAGE_COLUMNS = ("id", "board_root_session_id", "seq", "time_created", "sender_session_id", "recipient", "type",
                   "body", "reply_to", "source_message_id", "source_call_id")


def board_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """A ``board:`` row per board, then a ``board message:`` row per post, boards and posts in order."""
    if sqlite_safe.is_real_table(connection, "kilo_board"):
        for board in sqlite_safe.table_rows(connection, "kilo_board", "kilo_board rows", BOARD_COLUMNS,
                                            "1 ORDER BY time_created, root_session_id"):
            yield from _board(board)
    if sqlite_safe.is_real_table(connection, "kilo_board_message"):
        for post in sqlite_safe.table_rows(connection, "kilo_board_message", "kilo_board_message rows",
                                           MESSAGE_COLUMNS, "1 ORDER BY board_root_session_id, seq"):
            yield from _post(post)


def _board(board: dict) -> Iterator[Draft]:
    locator = f"sqlite:kilo_board:{board.get('_rowid')}"
    yield from oversize_rows(board, locator)
    root = text_of(board.get("root_session_id"))
    details = [f"root session {root}", f"messages={text_of(board.get('message_count'))}"]
    if board.get("cleared_seq"):
        details.append(f"cleared up to seq {text_of(board.get('cleared_seq'))}")
    yield Draft("system", f"board: {text_of(board.get('objective'))} ({', '.join(details)})", locator,
                timestamp_ns=ns_from_ms(board.get("time_created")), session_id=root)


def _post(post: dict) -> Iterator[Draft]:
    locator = f"sqlite:kilo_board_message:{post.get('_rowid')}"
    yield from oversize_rows(post, locator)
    details = [f"board {text_of(post.get('board_root_session_id'))} seq {text_of(post.get('seq'))}"]
    if post.get("reply_to"):
        details.append(f"reply to {text_of(post.get('reply_to'))}")
    if post.get("source_call_id"):
        details.append(f"posted by tool call {text_of(post.get('source_call_id'))}")
    head = (f"board message: {text_of(post.get('type'))} from {text_of(post.get('sender_session_id'))} "
            f"to {text_of(post.get('recipient'))}")
    yield Draft("system", f"{head}: {text_of(post.get('body'))} ({'; '.join(details)})", locator,
                timestamp_ns=ns_from_ms(post.get("time_created")),
                session_id=text_of(post.get("sender_session_id")))
