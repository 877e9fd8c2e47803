"""The timeline row: 17 columns, their order, and the total order of rows.

A parser yields ``Draft`` objects (content and where in the file it came
from); ``stamp`` adds the provenance columns, so no parser can forget or
mistype them. Row order (docs/timeline.md): rows with a time first, by time;
then rows without one; ties broken by agent, source member and the order in
which the parser emitted the rows of that file (which follows the file). The
same bundle therefore always gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
import struct
import time
from dataclasses import dataclass

COLUMNS = (
    "timestamp_utc", "session_id", "project_path", "git_branch", "turn_type", "model", "tool_name",
    "tool_use_id", "text", "agent", "store", "source", "source_sha256", "locator", "timestamp_source",
    "origin", "event_id",
)
TURN_TYPES = ("user", "assistant", "system", "tool_use", "tool_result", "thinking")
TIMESTAMP_SOURCES = ("record", "index", "file-mtime", "log-dir", "none")
ORIGINS = ("primary", "secondary")
# ``parser:`` rows that say a call and its result are not both in the store: the conversation is
# incomplete (cut short, refused, its result lost with a deleted file), the file itself is not
# damaged. The summary and the report count them apart from the rows of damaged records.
UNPAIRED_PREFIXES = ("parser: no result recorded for tool call ", "parser: tool result for ")



@dataclass(slots=True)
class Draft:
    """What a parser knows about one row; provenance is added by ``stamp``."""

    turn_type: str
    text: str
    locator: str
    timestamp_ns: int | None = None
    timestamp_source: str = "record"
    session_id: str = ""
    project_path: str = ""
    git_branch: str = ""
    model: str = ""
    tool_name: str = ""
    tool_use_id: str = ""
    origin: str | None = None  # None: the store's origin from the catalog
    extra: dict | None = None  # parser notes for tests; never exported


@dataclass(frozen=True)
class Provenance:
    """Where a row came from: agent, store, bundle member, its SHA-256, primary or secondary."""

    agent: str
    store: str
    source: str
    source_sha256: str
    origin: str  # the store's catalog origin mapped to primary/secondary


def over_limit(what: str, held: str, then: str, locator: str, *, session_id: str = "", project_path: str = "") -> Draft:
    """The ``parser:`` row of a reached budget: what went over, what was held, and what that does to what follows.

    Every bound on what a parser holds says so in this one form
    (``parser: <what> over the limit (<held>); <then>``, untimed; see
    docs/timeline.md "Limits of parsing"), with the row's session and project
    where the parser knows them.
    """
    return Draft("system", f"parser: {what} over the limit ({held}); {then}", locator, timestamp_source="none",
                 session_id=session_id, project_path=project_path)


def ns_from_ms(value) -> int | None:
    """Milliseconds since the epoch (int, float or digit string) to ns; None if not a time."""
    try:
        number = float(value) if not isinstance(value, (int, float)) else value
    except (TypeError, ValueError):
        return None
    if isinstance(number, bool) or number != number or not 0 < number < 1e14:
        return None
    return int(round(number * 1_000_000))


def ns_from_seconds(value) -> int | None:
    """Nanoseconds from a number of seconds (int, float or numeric string); None when it is not one."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number != number or not 0 < number < 1e11:
        return None
    return int(round(number * 1_000_000_000))


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)
_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$")


def ns_from_iso(text) -> int | None:
    """ISO 8601 with zone (or Z) to ns since the epoch; None for anything else, including no zone."""
    if not isinstance(text, str):
        return None
    if len(text) == 24 and text[23] == "Z" and text[19] == "." and text[10] == "T" and text.isascii():
        # the shape agents write most (2026-07-02T09:14:05.201Z): the C parser alone decides it, as
        # the regular expression below would (it takes exactly these ASCII digits, then the C parser)
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            pass  # the full reading below decides, as before
        else:
            ns = ((moment - _EPOCH) // _MICROSECOND) * 1000
            if text[4] == text[7] == "-" and text[13] == text[16] == ":":
                # YYYY-MM-DDTHH:MM:SS.mmmZ is what format_timestamp writes for this time (not so a week
                # date, 2026-W27-4T...): the row about to be stamped with it is given the text as it is
                _LAST_ISO[:] = (ns, text)
            return ns
    return _ns_from_iso_any(text)


_LAST_ISO: list = [None, ""]  # the last time read in the canonical shape, and its text


def _ns_from_iso_any(text: str) -> int | None:
    """ns_from_iso for every accepted shape: the regular expression, then the C parser or the exact reading."""
    match = _ISO.match(text.strip())
    if not match or not match.group(8):
        return None
    if len(match.group(7) or "") <= 6:
        try:  # the C parser: several times faster, exact down to microseconds
            moment = dt.datetime.fromisoformat(text.strip())
            return ((moment - _EPOCH) // _MICROSECOND) * 1000
        except ValueError:
            pass  # a form the C parser does not take: the exact reading below decides
    return _ns_from_iso_text(text)


def _ns_from_iso_text(text: str) -> int | None:
    """Nanosecond-exact reading, for fractions finer than microseconds."""
    match = _ISO.match(text.strip())
    if not match or not match.group(8):
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        moment = dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                             tzinfo=dt.UTC)
    except ValueError:
        return None
    offset = 0
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        offset = sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    nanos = int((fraction or "0").ljust(9, "0"))
    seconds = int(moment.timestamp()) - offset
    return seconds * 1_000_000_000 + nanos


def format_timestamp(ns: int | None) -> str:
    """ISO 8601 UTC with Z: milliseconds, or nanoseconds when the source had finer precision."""
    if ns is None:
        return ""
    if ns == _LAST_ISO[0]:
        return _LAST_ISO[1]
    seconds, nanos = divmod(ns, 1_000_000_000)
    base = _utc_seconds(seconds)
    if nanos % 1_000_000 == 0:
        return f"{base}.{nanos // 1_000_000:03d}Z"
    return f"{base}.{nanos:09d}Z"


def _utc_seconds(seconds: int) -> str:
    day, second = divmod(seconds, 86400)
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    return f"{_day_text(day)}{hour:02d}:{minute:02d}:{second:02d}"


@functools.lru_cache(maxsize=4096)
def _day_text(day: int) -> str:
    """``YYYY-MM-DDT`` of a day since the epoch: rows come day by day, so it is made once per day."""
    moment = time.gmtime(day * 86400)
    return f"{moment.tm_year:04d}-{moment.tm_mon:02d}-{moment.tm_mday:02d}T"


def event_id(source_sha256: str, locator: str, turn_type: str, ordinal: int) -> str:
    """The row's stable id: a digest of its member's SHA-256, locator, turn type and ordinal."""
    return _sha256(f"{source_sha256}\0{locator}\0{turn_type}\0{ordinal}".encode()).hexdigest()[:32]


_sha256 = hashlib.sha256


class Stamper:
    """Stamps the drafts of one file: what every row of it shares is rendered once, not per row.

    The provenance columns and the agent/source part of the sort key are the
    same for every row of a file; rows of one record usually share its time,
    so the last time's text is kept.
    """

    __slots__ = ("provenance", "_middle", "_id_head", "_last_ns", "_last_text", "_last_head")

    def __init__(self, provenance: Provenance):
        self.provenance = provenance
        self._middle = b"".join((provenance.agent.encode(), b"\0", provenance.source.encode(), b"\0"))
        self._id_head = f"{provenance.source_sha256}\0"
        self._last_ns: int | None = None
        self._last_text, self._last_head = "", b""

    def stamp(self, draft: Draft, ordinal: int) -> tuple[bytes, tuple[str, ...]]:
        """(sort key, row) for a draft: the key is ``sort_key``'s, the last column ``event_id``'s."""
        provenance, timestamp_ns = self.provenance, draft.timestamp_ns
        if timestamp_ns is not None and not MIN_NS <= timestamp_ns <= MAX_NS:
            timestamp_ns = None  # no year 0001-9999 can say it: the row is untimed, never a crash
        if timestamp_ns is None:
            text, head = "", _UNTIMED
        else:
            if timestamp_ns != self._last_ns:
                self._last_ns, self._last_text = timestamp_ns, format_timestamp(timestamp_ns)
                self._last_head = _time_head(timestamp_ns)
            text, head = self._last_text, self._last_head
        locator, turn_type = draft.locator, draft.turn_type
        identity = _sha256(f"{self._id_head}{locator}\0{turn_type}\0{ordinal}".encode()).hexdigest()[:32]
        session_id, project, branch = draft.session_id, draft.project_path, draft.git_branch
        model, tool, call_id = draft.model, draft.tool_name, draft.tool_use_id
        if (len(session_id) > MAX_CARRIED_CHARS or len(project) > MAX_CARRIED_CHARS
                or len(branch) > MAX_CARRIED_CHARS or len(model) > MAX_CARRIED_CHARS
                or len(tool) > MAX_CARRIED_CHARS or len(call_id) > MAX_CARRIED_CHARS):
            session_id, project, branch = carried(session_id), carried(project), carried(branch)
            model, tool, call_id = carried(model), carried(tool), carried(call_id)
        row = (
            text, session_id, project, branch, turn_type, model, tool, call_id, draft.text, provenance.agent,
            provenance.store, provenance.source, provenance.source_sha256, locator,
            draft.timestamp_source if timestamp_ns is not None else "none", draft.origin or provenance.origin,
            identity,
        )
        return b"".join((head, self._middle, _ORDINAL.pack(ordinal))), row


# The columns a session-level value is carried into (a session id, a cwd, a branch, a model, a tool
# name or id) are repeated on every row of the session: a 1 MiB cwd given to 2,000 rows made a 59 KB
# bundle a 629 MB timeline. Past this length such a value is cut on every row and its full length
# named; the whole value is in the record the row's locator names.
MAX_CARRIED_CHARS = 1024


def carried(value: str) -> str:
    """A carried column's value, cut at MAX_CARRIED_CHARS with its full length named."""
    if len(value) <= MAX_CARRIED_CHARS:
        return value
    return f"{value[:MAX_CARRIED_CHARS]}… ({len(value)} characters)"


def stamp(draft: Draft, provenance: Provenance, ordinal: int) -> tuple[bytes, tuple[str, ...]]:
    """Return (sort key, row) for one draft; the row's values follow COLUMNS (a file's rows: ``Stamper``)."""
    return Stamper(provenance).stamp(draft, ordinal)


def sort_key(timestamp_ns: int | None, agent: str, source: str, ordinal: int) -> bytes:
    """The row order as bytes, so runs can be merged by plain byte comparison.

    Timed rows (0x00, time offset to unsigned) before untimed ones (0x01); then
    agent, source (NUL-terminated: NUL sorts before any character) and ordinal.
    """
    if timestamp_ns is None or not MIN_NS <= timestamp_ns <= MAX_NS:
        head = _UNTIMED
    else:
        head = _time_head(timestamp_ns)
    return b"".join((head, agent.encode(), b"\0", source.encode(), b"\0", _ORDINAL.pack(ordinal)))


# Every time a parser accepts lies in years 0001-9999 (ISO 8601's four digits; Unix ms up to 1e14
# and seconds up to 1e11 are years up to 5138), ns since the epoch from about -6.2e19 to 2.5e20: more
# than 64 bits. The key holds the time plus 2**95 in 96 bits (a 32-bit and a 64-bit part), so every
# such time sorts by plain byte comparison; 2**63 in 64 bits stopped at 2262-04-11.
MIN_NS = -62_135_596_800 * 1_000_000_000  # 0001-01-01T00:00:00Z
MAX_NS = 253_402_300_800 * 1_000_000_000 - 1  # 9999-12-31T23:59:59.999999999Z
_TIMED = struct.Struct(">BIQ")
_ORDINAL = struct.Struct(">Q")
_OFFSET = 1 << 95
_LOW = (1 << 64) - 1
_UNTIMED = _TIMED.pack(1, 0, 0)


def _time_head(timestamp_ns: int) -> bytes:
    """The key's first 13 bytes for a time within MIN_NS..MAX_NS."""
    shifted = timestamp_ns + _OFFSET
    return _TIMED.pack(0, shifted >> 64, shifted & _LOW)


def key_time(key: bytes) -> int | None:
    """The timestamp (ns) a sort key begins with; None for an untimed row (or a key too short to hold one)."""
    if len(key) < _TIMED.size:
        return None
    untimed, high, low = _TIMED.unpack_from(key)
    return None if untimed else ((high << 64) | low) - _OFFSET
