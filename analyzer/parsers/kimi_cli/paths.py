"""Where a Kimi CLI file sits: its session, sub-agent and work directory.

Layout (metadata.py:33-40, session.py:144-175, subagents/store.py:69-100):

    <share>/sessions/<md5(work dir)>/<session uuid>/{wire.jsonl, context.jsonl, state.json, ...}
    <share>/sessions/<md5(work dir)>/<session uuid>/subagents/<agent id>/{wire.jsonl, context.jsonl, meta.json}
    <share>/sessions/<md5(work dir)>/<session uuid>.jsonl          (the first layout)
    <share>/user-history/<md5(work dir)>.jsonl

The md5 directory is ``<kaos>_<md5>`` for a non-local KAOS backend. The work
directory is found in kimi.json, whose ``work_dirs[].path`` hash to it (a
sub-agent's rows belong to its parent's session).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from aitrail.analyzer.formats.idioms import as_dict, as_list
from aitrail.analyzer.formats.joined_json import cached_table, first_of_each, joined_objects
from aitrail.analyzer.formats.json_values import label
from aitrail.analyzer.view.context import ParseContext

MAX_WORK_DIRS = 100_000  # work directories held in the md5 map


@dataclass(frozen=True)
class Place:
    """The session a file belongs to, the sub-agent if any, and its work directory's md5 directory name."""

    session_id: str
    subagent: str  # the sub-agent's agent id, '' for the session's own files
    bucket: str  # the md5 directory name (``<kaos>_<md5>`` for a non-local KAOS)
    session_dir: str  # the session's directory ('' for the first layout's single file)


def place_of(path: str, first_layout: bool = False) -> Place:
    """The place of a file by its path.

    A file of a session directory (``<md5>/<id>/wire.jsonl``), of a sub-agent
    (``<md5>/<id>/subagents/<agent>/...``) or of a background task
    (``<md5>/<id>/tasks/<task>/...``); ``first_layout`` for a
    ``<md5>/<id>.jsonl`` file.
    """
    parts = path.split("/")
    if first_layout:
        name = parts[-1]
        return Place(name[: -len(".jsonl")] if name.endswith(".jsonl") else name, "", _at(parts, -2), "")
    if len(parts) >= 5 and parts[-3] in ("subagents", "tasks"):
        return Place(parts[-4], parts[-2] if parts[-3] == "subagents" else "", _at(parts, -5), "/".join(parts[:-3]))
    return Place(_at(parts, -2), "", _at(parts, -3), "/".join(parts[:-1]))


def _at(parts: list[str], index: int) -> str:
    return parts[index] if len(parts) >= -index else ""


def bucket_of(work_dir: str, kaos: str = "local") -> str:
    """The directory name Kimi derives from a work directory (metadata.py WorkDirMeta.sessions_dir)."""
    digest = hashlib.md5(work_dir.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()
    return digest if kaos in ("", "local") else f"{kaos}_{digest}"


def work_dir_of(ctx: ParseContext, bucket: str) -> str:
    """The work directory whose md5 directory is ``bucket``, from this home's kimi.json ('' if not named there)."""
    return cached_table(ctx, ("kimi", "work-dirs"), lambda: _work_dirs(ctx)).get(bucket, "")


def _work_dirs(ctx: ParseContext) -> dict[str, str]:
    entries = (as_dict(entry) for _, document in joined_objects(ctx, "work_dirs")
               for entry in as_list(document.get("work_dirs")))
    named = ((label(entry.get("path"), 4096), label(entry.get("kaos"), 100) or "local") for entry in entries)
    return first_of_each(((bucket_of(path, kaos), path) for path, kaos in named if path), MAX_WORK_DIRS)
