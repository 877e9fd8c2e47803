"""OpenClaw's transcripts are Pi session entries: the shared walk (analyzer/formats/pi_session.py), OpenClaw's way.

Two differences from pi's files, both from OpenClaw's own reader
(``normalizeLoadedFileEntry`` and ``appendResetBoundary``, npm openclaw
2026.9.6 ``dist/session-manager-codec-*.mjs``, ``dist/session-manager-*.mjs``):

* an assistant or toolResult message may hold its content as a plain string
  (or a toolResult as one block object), which OpenClaw reads as one text
  block; so does this walk, so the text is an ``assistant`` / ``tool_result``
  row rather than a "reply with no content";
* a ``reset`` entry (``/new`` or ``/reset`` in a kept session: a fresh history
  window, optionally keeping messages from ``firstKeptEntryId``) is a
  ``history reset:`` row.

``DatabaseWalk`` reads entries that are rows of a table (or lines of an archive
held in a row): its rows name a row by its locator (``sqlite:<table>:<rowid>``)
and ``row N`` in their words; an entry without a time of its own takes the
row's ``created_at`` (epoch ms).
"""

from __future__ import annotations

from aitrail.analyzer.formats import pi_session
from aitrail.analyzer.formats.pi_content import text_field


class OpenClawWalk(pi_session.PiSessionWalk):
    """The Pi walk with OpenClaw's string contents and reset entries."""

    def message_of(self, entry: dict) -> object:
        """The message, its content as OpenClaw reads it (a string or one block object becomes a block list)."""
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("assistant", "toolResult"):
            return message
        content = message.get("content")
        if isinstance(content, str):
            return {**message, "content": [{"type": "text", "text": content}]}
        if message.get("role") == "toolResult" and isinstance(content, dict):
            return {**message, "content": [content]}
        return message

    def entry_text(self, entry: dict) -> str:
        """Pi's entry texts, and ``history reset:`` for OpenClaw's reset boundary."""
        if entry.get("type") == "reset":
            kept = text_field(entry, "firstKeptEntryId")
            return (f"history reset: {text_field(entry, 'reason') or 'no reason recorded'} (a fresh history window"
                    + (f"; messages kept from entry {kept})" if kept else ")"))
        return super().entry_text(entry)


class DatabaseWalk(OpenClawWalk):
    """The walk over entries held in a database: ``where(number)`` is each entry's locator."""

    def __init__(self, session_id: str, where, words: str = "row", container: str = "this session's rows") -> None:
        super().__init__(session_id)
        self.where, self.words, self.container = where, words, container

    def place(self, number: int) -> str:
        """The locator of the entry numbered ``number`` (a rowid, or a line of an archive)."""
        return self.where(number)

    def span(self, first: int, last: int) -> str:
        """``row N`` / ``rows N-M`` (or ``line``)."""
        return f"{self.words} {first}" if first == last else f"{self.words}s {first}-{last}"
