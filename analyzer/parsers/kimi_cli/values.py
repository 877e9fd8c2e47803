"""Small helpers of the Kimi CLI modules: kosong content parts as text, compact JSON, short labels."""

from __future__ import annotations

from aitrail.analyzer.formats.json_values import as_text, compact
from aitrail.analyzer.formats.text import image_placeholder

MEDIA_PARTS = {"audio_url": "audio", "video_url": "video"}


def part_text(part) -> str:
    """One kosong content part as text: ``text``, a picture or clip as its placeholder, else compact JSON.

    ``{"type":"text","text"}`` -> the text; ``image_url{url}`` -> ``[image ...]``
    (a data URI is measured, never copied); ``audio_url`` / ``video_url`` ->
    ``[audio <address or size>]``; a ``think`` part is the caller's (thinking rows).
    """
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return as_text(part)
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return part["text"]
    if kind == "image_url":
        return image_placeholder(part)
    if kind in MEDIA_PARTS:
        media = part.get(kind)
        url = media.get("url") if isinstance(media, dict) else None
        shown = image_placeholder({"url": url}) if isinstance(url, str) else "[image]"
        return shown.replace("[image", f"[{MEDIA_PARTS[kind]}", 1)
    return compact(part)


def content_text(content) -> str:
    """A message's content (a string, or a list of parts) as text, parts joined by newlines."""
    if isinstance(content, list):
        return "\n".join(part_text(part) for part in content)
    return "" if content is None else part_text(content)


def is_think(part) -> bool:
    """A ``{"type": "think"}`` part (reasoning, or only its encrypted signature)."""
    return isinstance(part, dict) and part.get("type") == "think"


def think_text(part: dict) -> str:
    """The thinking of a think part; its ``encrypted`` blob is never shown."""
    think = part.get("think")
    if isinstance(think, str) and think.strip():
        return think
    return "(encrypted thinking only; no text recorded)"


def is_injected(text: str) -> bool:
    """A user-role text Kimi wrote itself: ``<system>...`` (checkpoints, notices) or ``<system-reminder>``.

    soul/message.py:19-33 wraps what the CLI adds to the user role in these tags;
    a typed prompt never carries them.
    """
    return text.lstrip().startswith(("<system>", "<system-reminder>"))
