"""chatSessions/<id>.json (generation B) and <id>.jsonl (generation C), the same session object.

Upstream reads ``<id>.jsonl`` when it exists and ``<id>.json`` only otherwise
(readSessionFromLocation): a ``.json`` beside its ``.jsonl`` is the snapshot
the session had before 1.109 rewrote it as a log, not a second session. That
``.json`` gives one ``superseded:`` row and the rows of only those requests
the log no longer holds (a request edited away since), so the session is
shown once and nothing is lost.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.mutation_log import replay_lines
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.formats.vscode_chat import ChatSession, session_from_document, session_from_log
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext, RawLine
from aitrail.analyzer.view.rows import Draft

from .project import project_of
from .render import project_row, session_rows, superseded_row

JSON_STORE, JSONL_STORE = "chat_sessions_json", "chat_sessions_jsonl"


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0]


def raw_lines(data: bytes) -> Iterator[RawLine]:
    """``data`` as RawLines, one at a time (mutation_log.split_lines' lines, never all held).

    A 64 MiB log of empty lines made 64 million RawLines as a list; the replay needs one at a time.
    """
    start, number = 0, 1
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            if start < len(data):
                yield RawLine(number, start, data[start:], False)
            return
        yield RawLine(number, start, data[start:end], True)
        start, number = end + 1, number + 1


def log_request_ids(ctx: ParseContext, source: Source) -> frozenset[str] | None:
    """The request ids of the session a ``.jsonl`` replays to (None when it cannot be read), once per worker."""
    def compute() -> frozenset[str] | None:
        try:
            session = session_from_log(replay_lines(raw_lines(ctx.read(source))))
        except MemberUnreadable:
            return None
        if session is None:
            return None
        return frozenset(request.request_id for request in session.requests if request.request_id)

    return ctx.cached(("vscode_copilot_chat.log_ids", source.member), compute)


def newer_log(ctx: ParseContext, session_id: str, folder: str) -> Source | None:
    """``<folder>/<session_id>.jsonl`` when the bundle holds it."""
    store = f"{ctx.source.agent}.{JSONL_STORE}"
    return ctx.bundle.at(ctx.source.location, f"{folder}/{session_id}.jsonl", store) if session_id else None


def rows_beside_newer(ctx: ParseContext, session: ChatSession, session_id: str, newer: Source,
                      locator: str) -> Iterator[Draft]:
    """An older copy of a session the log ``newer`` holds: a ``superseded:`` row, then requests only it has."""
    ids = log_request_ids(ctx, newer)
    if ids is None:  # the log cannot be read: this copy is the best there is
        yield from session_rows(session, session_id, project_of(ctx))
        return
    kept = [request for request in session.requests if request.request_id not in ids]
    yield superseded_row(session, session_id, project_of(ctx), newer.name, len(kept), locator)
    yield from session_rows(session, session_id, project_of(ctx), skip=ids)


def parse_chat_session_json(ctx: ParseContext) -> Iterator[Draft]:
    """A generation B session file: user, assistant, tool and permission rows per request.

    When ``<id>.jsonl`` is beside it, only a ``superseded:`` row and the requests the log lacks.
    """
    session, reason = session_from_document(ctx.data)
    if session is None:
        yield bad_file(reason)
        return
    stem = _stem(ctx.source.name)
    newer = ctx.sibling(f"{stem}.jsonl", JSONL_STORE)
    if newer is not None:
        yield from rows_beside_newer(ctx, session, stem, newer, "file")
        return
    project = project_of(ctx)
    yield from project_row(session, stem, project)
    yield from session_rows(session, stem, project)


def parse_chat_session_jsonl(ctx: ParseContext) -> Iterator[Draft]:
    """A generation C mutation log, replayed: the rows of the session as the log leaves it.

    Streamed intermediate states are overwritten in the replay and give no rows; each value
    cites the line that last wrote it. A line that cannot be applied (a torn last line among
    them) is one ``parser:`` row and the other lines are still replayed.
    """
    replay = replay_lines(ctx.lines())
    session = session_from_log(replay)
    if session is None:
        yield from replay.problems
        if not replay.problems:
            yield bad_file("no line of the log gives a session object")
    else:
        stem = _stem(ctx.source.name)
        project = project_of(ctx)
        yield from project_row(session, stem, project)
        yield from session_rows(session, stem, project)
    if replay.failure is not None:
        raise replay.failure
