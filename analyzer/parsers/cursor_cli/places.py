"""Where a Cursor CLI file sits: its session, its project directory name, and the project path they prove.

Transcripts sit under ``projects/<name>/agent-transcripts/``, where ``<name>`` is the
working directory with its separators written as ``-`` (``/home/alice/src/acme-api``
→ ``home-alice-src-acme-api``): lossy, since a ``-`` of the path reads the same. A
session's store.db sits under ``chats/<md5 of the working directory>/<session>/``.
When both exist for one session the path is recovered exactly: of the paths the
dashed name can stand for (each ``-`` a separator or a dash), the one whose MD5 is
the bucket's name. Nothing else is guessed: without both, the project path is empty.
"""

from __future__ import annotations

import hashlib
import itertools

from aitrail.analyzer.view.context import ParseContext

MAX_DASHES = 14  # 2**14 candidate paths at most per name: real paths have a handful of dashes


def parts_of(path: str) -> list[str]:
    """The path's segments (the bundle's paths use ``/``)."""
    return [part for part in path.split("/") if part]


def transcript_place(path: str) -> tuple[str, str, str]:
    """(session id, dashed project name, sub-agent name or '') of a file under ``agent-transcripts/``.

    ``<session>/<session>.jsonl`` → the session; ``<session>/subagents/<agent>.jsonl`` →
    the parent session and the agent; a flat ``<id>.jsonl`` or ``<id>.txt`` → its stem.
    """
    parts = parts_of(path)
    if "agent-transcripts" not in parts:
        return _stem(parts[-1]) if parts else "", "", ""
    index = parts.index("agent-transcripts")
    project = parts[index - 1] if index > 0 else ""
    below = parts[index + 1:]
    if len(below) >= 3 and below[-2] == "subagents":
        return below[0], project, _stem(below[-1])
    if len(below) >= 2:
        return below[0], project, ""
    return (_stem(below[0]) if below else ""), project, ""


def project_name(path: str) -> str:
    """The dashed ``projects/<name>`` directory a file sits in ('' if none)."""
    parts = parts_of(path)
    return parts[parts.index("projects") + 1] if "projects" in parts[:-1] else ""


def chat_place(path: str) -> tuple[str, str]:
    """(session id, md5 bucket) of ``chats/<bucket>/<session>/store.db``."""
    parts = parts_of(path)
    if len(parts) >= 3 and parts[-4:-3] == ["chats"]:
        return parts[-2], parts[-3]
    return (parts[-2] if len(parts) >= 2 else ""), (parts[-3] if len(parts) >= 3 else "")


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def resolve(dashed: str, bucket: str) -> str:
    """The absolute path whose dashed form is ``dashed`` and whose MD5 hex is ``bucket``; '' if none is.

    Bounded: names with more than MAX_DASHES dashes are not tried.
    """
    bucket = bucket.lower()
    pieces = dashed.split("-")
    if not dashed or len(pieces) - 1 > MAX_DASHES or len(bucket) != 32:
        return ""
    for joints in itertools.product("/-", repeat=len(pieces) - 1):
        candidate = "/" + pieces[0] + "".join(joint + piece for joint, piece in zip(joints, pieces[1:], strict=True))
        if hashlib.md5(candidate.encode("utf-8", "surrogatepass")).hexdigest() == bucket:
            return candidate
    return ""


def _buckets(ctx: ParseContext) -> dict[str, str]:
    """Session id → md5 bucket, from the chat stores in the bundle."""
    found: dict[str, str] = {}
    for source in sorted(ctx.related("chat_stores"), key=lambda source: source.member):
        session, bucket = chat_place(source.path)
        found.setdefault(session, bucket)
    return found


def _dashed_names(ctx: ParseContext) -> dict[str, str]:
    """Session id → dashed project name, from the transcripts in the bundle."""
    found: dict[str, str] = {}
    for store in ("transcripts", "text_transcripts"):
        for source in sorted(ctx.related(store), key=lambda source: source.member):
            session, project, _ = transcript_place(source.path)
            found.setdefault(session, project)
    return found


def project_for(ctx: ParseContext, session: str, dashed: str = "", bucket: str = "") -> str:
    """The project path of a session, proven by its dashed name and its chat bucket together ('' if not)."""
    if not bucket:
        bucket = ctx.cached(("cursor_cli.buckets",), lambda: _buckets(ctx)).get(session, "")
    if not dashed:
        dashed = ctx.cached(("cursor_cli.dashed",), lambda: _dashed_names(ctx)).get(session, "")
    if not (dashed and bucket):
        return ""
    return ctx.cached(("cursor_cli.resolve", dashed, bucket), lambda: resolve(dashed, bucket))
