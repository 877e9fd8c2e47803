"""Row idioms every agent spells the same: file-mtime time, JSON-pointer locators, setting values.

* ``file_mtime(ctx)``: the time columns of a row whose only time is the file's
  modification time (standing settings, trackers, saved chats).
* ``pointer(*parts, scheme="json")``: a locator into a document, RFC 6901
  escaping (``~`` as ``~0``, ``/`` as ``~1``): ``json:/projects/~1home~1dev``.
* ``setting_value(value)``: the value in a ``permission setting:`` (and
  ``setting:``) row: compact JSON, keys in the order the file recorded them
  (what the user or the tool wrote, not a normalised form), non-ASCII kept, and
  what JSON cannot hold (TOML dates and times, SQLite BLOBs) as its text.
"""

from __future__ import annotations

import json
import re

from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import ns_from_iso, ns_from_ms, ns_from_seconds

EPOCH_MS_FROM = 1e11  # an epoch number at or over this is milliseconds (1973 on); under it, seconds (to year 5138)


def file_mtime(ctx: ParseContext) -> dict:
    """``timestamp_ns`` and ``timestamp_source`` for a row timed by its file's mtime (``none`` where none is recorded).

    An imported file whose tool recorded no time for it (a KAPE deduplicated
    copy: collector/foreign/) has a null mtime: its row is untimed, never 1970.
    """
    mtime = ctx.source.mtime_ns
    return {"timestamp_ns": mtime, "timestamp_source": "file-mtime" if mtime is not None else "none"}


def escape_key(key) -> str:
    """One reference token of a JSON pointer (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer(*parts, scheme: str = "json") -> str:
    """A locator into a parsed document, e.g. ``pointer("projects", "/home/dev")`` -> ``json:/projects/~1home~1dev``.

    Args:
        *parts: the keys and array indexes from the document's root.
        scheme: what the document is (``json``, ``toml``).
    """
    return f"{scheme}:/" + "/".join(escape_key(part) for part in parts)


def as_dict(value) -> dict:
    """``value`` if it is a JSON object, else an empty one (a subject-written field of the wrong shape)."""
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def plain(value) -> str:
    """What JSON cannot hold (SQLite BLOBs, TOML dates and times) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def setting_value(value) -> str:
    """A setting's value as ``permission setting:`` rows write it: compact JSON, recorded key order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=plain)


# A settings key that names a credential (apiKey, githubToken, client_secret, password, authorization,
# a bearer or session token, a private key): its value never reaches a row, in any settings parser;
# the row says a value was there and how long it was. Transcripts are not filtered: a secret an
# agent or user typed into a conversation is evidence.
_CREDENTIAL_KEY = re.compile(
    r"(api[_-]?key|apikey|token|secret|passw(or)?d|passphrase|credential|authorization|bearer|cookie|"
    r"private[_-]?key|access[_-]?key|session[_-]?key|signing[_-]?key)$", re.IGNORECASE)


def credential_key(key: object) -> bool:
    """True when a settings key (its last dotted part) names a credential."""
    return isinstance(key, str) and bool(_CREDENTIAL_KEY.search(key.rsplit(".", 1)[-1].strip("[]\"' ")))


def settings_value(value, key: str = "") -> str:
    """``setting_value`` for a settings file: a credential's value (by its key, at any depth) withheld."""
    if credential_key(key) and _secret_like(value):
        return _withheld(value)
    return setting_value(_without_credentials(value))


def _secret_like(value) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) and value != ""


def _withheld(value) -> str:
    return f"[withheld: a credential, {len(str(value))} characters]"


def _without_credentials(value, depth: int = 0):
    """A copy of ``value`` whose credential-keyed values are withheld (iterative depth is bounded by decode)."""
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {key: (_withheld(item) if credential_key(key) and _secret_like(item)
                      else _without_credentials(item, depth + 1)) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_credentials(item, depth + 1) for item in value]
    return value


def epoch_ns(value, numeric_text: bool = False) -> int | None:
    """An ISO 8601 text with its zone, or an epoch number read by its size (seconds under 1e11, else ms); else None.

    For stores that write one field in several units across versions (Grok,
    Kiro, Augment, Trae). ``numeric_text``: a text of digits is a number too.
    A text without a zone is not a time here.
    """
    if isinstance(value, str):
        moment = ns_from_iso(value)
        if moment is not None or not numeric_text:
            return moment
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return ns_from_seconds(value) if value < EPOCH_MS_FROM else ns_from_ms(value)
