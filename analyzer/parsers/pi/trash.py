"""freedesktop ``.trashinfo`` files of trashed Pi sessions: when the user deleted which session file.

``/resume``'s delete (Ctrl+D) moves the file to the trash when the ``trash``
CLI is installed (docs/session.md:13-17). Each ``.trashinfo`` is
``[Trash Info]`` then ``Path=<original path, URL-encoded>`` and
``DeletionDate=<YYYY-MM-DDThh:mm:ss>`` in local time without a zone (the
freedesktop Trash specification), so the date is quoted, not used as the
row's time: the row is timed by the file's mtime, which is when the trash
wrote it.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def trash_fields(text: str) -> dict[str, str]:
    """The ``key=value`` lines of the ``[Trash Info]`` group (first value of a key wins)."""
    fields: dict[str, str] = {}
    in_group = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_group = stripped == "[Trash Info]"
        elif in_group and "=" in stripped:
            key, value = stripped.split("=", 1)
            fields.setdefault(key.strip(), value.strip())
    return fields


def parse_trash_info(ctx: ParseContext) -> Iterator[Draft]:
    """One ``session deleted:`` row per .trashinfo, with the original path and the local deletion date."""
    text = ctx.data.decode("utf-8", "replace")
    fields = trash_fields(text)
    if "Path" not in fields:
        yield bad_file(f"not a .trashinfo (no Path in a [Trash Info] group): {excerpt(text)}")
        return
    original = unquote(fields["Path"])
    date = fields.get("DeletionDate", "absent")
    name = ctx.source.name.removesuffix(".trashinfo")
    session = name.rsplit("_", 1)[-1].removesuffix(".jsonl") if "_" in name else ""
    yield Draft("system", f"session deleted: {original} (DeletionDate={date}, local time, no zone; "
                f"the file is in the trash as files/{name})", "file", session_id=session, **file_mtime(ctx))
