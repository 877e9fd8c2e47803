"""Where a Grok Build file sits: the URL-encoded project directory and the session directory.

Grok Build keys sessions by working directory: ``sessions/<URL-encoded absolute
cwd>/<session uuid v7>/...`` and ``sessions/<URL-encoded cwd>/prompt_history.jsonl``.
The project path is that directory name URL-decoded; the session id is the
session directory's name. Both come from the member's path, never from a guess.
"""

from __future__ import annotations

from urllib.parse import unquote

from aitrail.analyzer.view.context import ParseContext


def _parts(ctx: ParseContext) -> list[str]:
    return ctx.source.path.split("/")


def _after_sessions(ctx: ParseContext) -> list[str]:
    """The path components below the last ``sessions`` directory ([] when there is none)."""
    parts = _parts(ctx)
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] == "sessions":
            return parts[index + 1:]
    return []


def decode_project(name: str) -> str:
    """A URL-encoded directory name as the path it encodes (``%2Fhome%2Falice`` -> ``/home/alice``)."""
    return unquote(name)


def project_of(ctx: ParseContext) -> str:
    """The project path of a file under ``sessions/<encoded cwd>/`` ('' when the path has no such part)."""
    below = _after_sessions(ctx)
    return decode_project(below[0]) if len(below) >= 2 else ""


def session_of(ctx: ParseContext) -> str:
    """The session id of a file under ``sessions/<encoded cwd>/<session>/`` ('' otherwise)."""
    below = _after_sessions(ctx)
    return below[1] if len(below) >= 3 else ""


def session_key(path: str) -> str:
    """The session directory name of a chat_history.jsonl path (for joins by session id)."""
    parts = path.split("/")
    return parts[-2] if len(parts) >= 2 else ""
