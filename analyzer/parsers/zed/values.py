"""Small readings of Zed's serde values: tool-result content, images, token usage, a thread's columns.

[src] zed-industries/zed: ``LanguageModelToolResultContent`` (crates/language_model
request.rs) is serialized externally tagged (``{"Text": "..."}``,
``{"Image": {"source": <base64 PNG>, "size": {...}}}``) and read back from a
plain string, ``{"type": "text", "text": ...}``, ``{"text": ...}``, a wrapped
or bare image, keys in any case; the newest builds keep a list of them
(db.rs builds ``content: vec![...]``). ``TokenUsage`` is ``{input_tokens,
output_tokens, cache_creation_input_tokens, cache_read_input_tokens}`` with
zero fields left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aitrail.analyzer.formats.idioms import escape_key
from aitrail.analyzer.formats.json_values import as_text, compact
from aitrail.analyzer.formats.text import base64_size
from aitrail.analyzer.view.rows import Draft

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
# credentials in a remote URL (https://user:token@host/...) never reach a row
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")


@dataclass
class Thread:
    """What every row of one thread shares: its id, project, branch, model, time, origin and locator."""

    session_id: str
    locator: str  # where the thread's JSON is: ``sqlite:threads:<rowid>/data``, ``lmdb:threads:<page>/data``
    time_ns: int | None = None  # the time its message rows carry (the thread's, not their own)
    time_source: str = "index"
    project_path: str = ""
    git_branch: str = ""
    model: str = ""
    origin: str | None = None
    extra: dict = field(default_factory=dict)

    def at(self, *parts: object) -> str:
        """The locator of a value inside the thread's JSON (a JSON pointer after the base)."""
        return self.locator + "".join(f"/{escape_key(part)}" for part in parts)

    def row(self, turn_type: str, text: str, locator: str, **columns) -> Draft:
        """A row of this thread: its columns, timed by the thread (``time_ns``/``time_source``) unless given."""
        values = {"timestamp_ns": self.time_ns, "timestamp_source": self.time_source if self.time_ns else "none",
                  "session_id": self.session_id, "project_path": self.project_path,
                  "git_branch": self.git_branch, "model": self.model, "origin": self.origin}
        values.update(columns)
        return Draft(turn_type, text, locator, **values)


def without_userinfo(url: object) -> str:
    """A remote URL with any user name or token before ``@`` withheld."""
    return _USERINFO.sub(r"\1[credentials withheld]@", as_text(url))


def image_text(image: object) -> str:
    """``[image WxH, N bytes]`` for a LanguageModelImage (its base64 ``source`` measured, never copied)."""
    if not isinstance(image, dict):
        return "[image]"
    facts = []
    size = image.get("size")
    if isinstance(size, dict) and isinstance(size.get("width"), int) and isinstance(size.get("height"), int):
        facts.append(f"{size['width']}x{size['height']}")
    if isinstance(image.get("source"), str):
        facts.append(f"{base64_size(image['source'])} bytes")
    return f"[image {', '.join(facts)}]" if facts else "[image]"


def result_text(content: object, depth: int = 0) -> str:
    """The text of a tool result's ``content``, in every form Zed writes or reads back."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and depth < 2:
        return "\n".join(result_text(item, depth + 1) for item in content)
    if isinstance(content, dict):
        lowered = {str(key).lower(): value for key, value in content.items()}
        text = lowered.get("text")
        if isinstance(text, str) and (len(content) == 1 or str(lowered.get("type", "")).lower() == "text"):
            return text
        if len(content) == 1 and "image" in lowered:
            return image_text(lowered["image"])
        if "source" in lowered:
            return image_text(content)
    return compact(content)


def token_facts(usage: object) -> str:
    """``input_tokens=.. output_tokens=.. ...`` of a TokenUsage (absent fields are zero, as serde wrote them)."""
    values = usage if isinstance(usage, dict) else {}
    return " ".join(f"{key}={as_text(values.get(key, 0))}" for key in TOKEN_FIELDS)


def model_id(model: object) -> tuple[str, str]:
    """(provider, model) of a SerializedLanguageModel ``{provider, model}``; ('', '') otherwise."""
    if not isinstance(model, dict):
        return "", ""
    provider, name = model.get("provider"), model.get("model")
    return (provider if isinstance(provider, str) else ""), (name if isinstance(name, str) else "")
