"""OpenCode-schema session and todo rows as both generations write them: database columns, or Session.Info JSON.

The legacy JSON is mapped onto the database's column names first (as the 1.2
migration maps it, json-migration.ts), so a session reads the same from either store.
"""

from __future__ import annotations

import re

from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.opencode_parts import text_of
from aitrail.analyzer.view.rows import format_timestamp, ns_from_ms

_VERSION = re.compile(r"^(\d+)\.(\d+)")


def is_native(version) -> bool:
    """Whether a session was created by 1.2 or later (its rows were written to the database, not copied)."""
    match = _VERSION.match(version) if isinstance(version, str) else None
    return match is None or (int(match.group(1)), int(match.group(2))) >= (1, 2)


def session_columns(info: dict) -> dict:
    """A legacy Session.Info object under the database's column names."""
    summary, times = as_dict(info.get("summary")), as_dict(info.get("time"))
    return {
        "id": info.get("id"), "project_id": info.get("projectID"), "parent_id": info.get("parentID"),
        "slug": info.get("slug"), "directory": info.get("directory"), "title": info.get("title"),
        "version": info.get("version"), "share_url": as_dict(info.get("share")).get("url"),
        "summary_additions": summary.get("additions"), "summary_deletions": summary.get("deletions"),
        "summary_files": summary.get("files"), "permission": info.get("permission"),
        "time_created": times.get("created"), "time_updated": times.get("updated"),
        "time_archived": times.get("archived"),
    }


def session_text(columns: dict, where: str) -> str:
    """``session metadata: <title> (slug=..., version=..., ...; from <where>)``."""
    # agent and model: session columns of later schemas (Kilo CLI 7.x), absent from OpenCode 1.2's
    fields = [f"{key}={text_of(columns.get(key))}" for key in ("slug", "version", "directory", "project_id", "agent",
                                                                "model") if columns.get(key) not in (None, "")]
    if columns.get("parent_id"):
        fields.append(f"parent (sub-agent of)={text_of(columns['parent_id'])}")
    if columns.get("share_url"):
        fields.append(f"shared at={text_of(columns['share_url'])}")
    changes = [f"{key.removeprefix('summary_')}={text_of(columns[key])}"
               for key in ("summary_additions", "summary_deletions", "summary_files") if columns.get(key) is not None]
    if changes:
        fields.append("changes " + " ".join(changes))
    for key in ("time_updated", "time_archived"):
        moment = format_timestamp(ns_from_ms(columns.get(key)))
        if moment:
            fields.append(f"{key.removeprefix('time_')}={moment}")
    return f"session metadata: {text_of(columns.get('title'))} ({', '.join(fields)}; from {where})"


def todo_text(todo: dict) -> str:
    """``task: <content> | status=... priority=...`` for a todo row or a legacy todo item."""
    return (f"task: {text_of(todo.get('content'))} | status={text_of(todo.get('status'))} "
            f"priority={text_of(todo.get('priority'))}")
