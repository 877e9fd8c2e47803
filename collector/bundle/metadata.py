"""A bundle's metadata members, read under their limits and checked against their schema.

Used by verify and by the analyzer, so that both refuse the same things. Every
function here either returns checked data or names the problem; none lets a
malformed member through to code that would trip over its types. The limits
are in layout.py and docs/bundle-format.md ("Limits").
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import json
import re
from collections.abc import Callable, Iterator

import zstandard

from aitrail.collector.bundle import layout
from aitrail.collector.bundle import vocabulary as oc
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader, Member

# none required: uid and gid are null where a foreign tool recorded no owner (aitrail import of a Windows
# collection), mtime_ns where it recorded no time for a file (KAPE's deduplicated files); each must be a number
# in range where it is given
_STAT_INTS: tuple[str, ...] = ()
# every integer field a stat may hold, and the range a real one has: extract and the bodyfile use them
# (a re-sealed ``atime_ns: [1]`` or ``10**30`` stopped extract with a traceback)
_STAT_RANGES = {
    "atime_ns": (-(1 << 63), 1 << 63), "mtime_ns": (-(1 << 63), 1 << 63), "ctime_ns": (-(1 << 63), 1 << 63),
    "btime_ns": (-(1 << 63), 1 << 63), "uid": (0, 1 << 32), "gid": (0, 1 << 32), "size": (0, 1 << 63),
    "ino": (0, 1 << 64), "dev": (0, 1 << 64), "nlink": (0, 1 << 32),
}
_OPTIONAL_TEXT = ("parser", "origin", "format", "location", "path", "role", "sqlite_companion_of", "sha256",
                  "link_target_b64")


def member_within_limit(member: Member) -> str | None:
    """Why a tag member is too large (or the wrong size) to be read, or None."""
    limit = layout.metadata_limit(member.name)
    if limit is None or member.type != "file":
        return None
    if member.name == layout.SIGNATURE:
        if member.size != layout.SIGNATURE_SIZE:
            return f"{member.name}: {member.size} bytes, an Ed25519 signature is exactly {layout.SIGNATURE_SIZE}"
        return None
    if member.size > limit:
        return f"{member.name}: {member.size} bytes, over the limit of {limit}"
    return None


def read_member(reader: BundleReader, name: str) -> bytes:
    """A whole tag member, refused over its limit, checked against the index digest."""
    member = reader.member(name)
    problem = member_within_limit(member)
    if problem:
        raise BundleFormatError(problem)
    try:
        data = reader.read_data(name)
    except zstandard.ZstdError as exc:
        raise BundleFormatError(f"{name}: zstd frame is damaged ({exc})") from exc
    if hashlib.sha256(data).hexdigest() != member.sha256:
        raise BundleFormatError(f"{name}: SHA-256 does not match the index")
    return data


def iter_lines(reader: BundleReader, name: str, line_max: int) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` of a member, streamed; a line over ``line_max`` is ``(number, None)``.

    Memory is bounded by line_max whatever the member's size. The bytes are
    hashed as they go by and a mismatch with the index raises at the end, so a
    caller that consumes every line has read exactly the indexed bytes.
    """
    member = reader.member(name)
    problem = member_within_limit(member)
    if problem:
        raise BundleFormatError(problem)
    hasher = hashlib.sha256()
    pending = bytearray()
    number, overlong = 0, False
    try:
        for chunk in reader.iter_data(member):
            hasher.update(chunk)
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                number += 1
                if overlong or len(pending) + end - start > line_max:
                    yield number, None
                else:
                    yield number, bytes(pending) + chunk[start:end]
                pending.clear()
                overlong, start = False, end + 1
            if not overlong:
                pending += chunk[start:]
                if len(pending) > line_max:
                    overlong = True
                    pending.clear()
    except zstandard.ZstdError as exc:
        raise BundleFormatError(f"{name}: zstd frame is damaged ({exc})") from exc
    if pending or overlong:
        yield number + 1, None if overlong else bytes(pending)
    if hasher.hexdigest() != member.sha256:
        raise BundleFormatError(f"{name}: SHA-256 does not match the index")


def load_json(data: bytes, name: str):
    """JSON of a metadata member; any decoding problem (nesting too deep included) is named."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise BundleFormatError(f"{name}: not valid JSON ({str(exc)[:200]})") from None


# -- files.jsonl -----------------------------------------------------------------------


def iter_records(reader: BundleReader, loads: Callable[[bytes], object] = json.loads,
                 ) -> Iterator[tuple[int, dict | None, str | None]]:
    """``(line number, record, problem)`` for every line of files.jsonl; exactly one of the two is None.

    Raises BundleFormatError when the member cannot be read at all or has more
    records than FILES_JSONL_RECORDS_MAX. ``loads``: a decoder that gives
    exactly what ``json.loads`` gives and raises what it raises (the
    analyzer's is faster: formats/decode.py ``json_loads``).
    """
    for number, line in iter_lines(reader, layout.FILES_JSONL, layout.FILES_JSONL_LINE_MAX):
        if number > layout.FILES_JSONL_RECORDS_MAX:
            raise BundleFormatError(f"{layout.FILES_JSONL}: more than {layout.FILES_JSONL_RECORDS_MAX} records")
        if line is None:
            yield number, None, f"line {number} is longer than {layout.FILES_JSONL_LINE_MAX} bytes"
            continue
        try:
            record = loads(line)
        except (ValueError, RecursionError) as exc:
            yield number, None, f"line {number} is not JSON ({str(exc)[:120]})"
            continue
        problem = record_problem(record)
        if problem:
            yield number, None, f"line {number} is not a valid record ({problem})"
        else:
            yield number, record, None


def record_problem(record) -> str | None:
    """What is wrong with one files.jsonl record against docs/bundle-format.md section 4, or None."""
    if not isinstance(record, dict):
        return f"a {type(record).__name__}, not an object"
    for key in ("agent", "store"):
        if not isinstance(record.get(key), str):
            return f"{key} is not a string"
    if not isinstance(record.get("outcome"), str) or record["outcome"] not in oc.OUTCOME_CLASS:
        return f"unknown outcome {_short(record.get('outcome'))}"
    member = record.get("member")
    if member is not None and not (isinstance(member, str) and layout.is_safe_member_name(member)):
        return f"member {_short(member)} is not a member name"
    for key in _OPTIONAL_TEXT:
        if not isinstance(record.get(key), (str, type(None))):
            return f"{key} is not a string"
    size = record.get("stored_size")
    if size is not None and (type(size) is not int or size < 0):
        return f"stored_size {_short(size)} is not a size"
    if record.get("link_target_b64") is not None and _b64(record["link_target_b64"]) is None:
        return "link_target_b64 is not base64"
    for key in ("stat", "stat_after"):
        problem = stat_problem(record.get(key))
        if problem:
            return f"{key}: {problem}"
    return None


def stat_problem(stat) -> str | None:
    """What is wrong with a recorded stat (null is allowed), or None."""
    if stat is None:
        return None
    if not isinstance(stat, dict):
        return f"a {type(stat).__name__}, not an object"
    mode = stat.get("mode")
    if not isinstance(mode, str) or layout.OCTAL_MODE.fullmatch(mode) is None:
        return f"mode {_short(mode)} is not an octal string"
    for key in _STAT_INTS:
        if type(stat.get(key)) is not int:
            return f"{key} {_short(stat.get(key))} is not an integer"
    if "mtime_ns" not in stat:  # null is "not recorded" (an import); absent is a damaged or forged record
        return "mtime_ns is missing"
    for key, (low, high) in _STAT_RANGES.items():
        value = stat.get(key)
        if value is None and key not in _STAT_INTS:
            continue  # not recorded (btime_ns where the platform gave none)
        if type(value) is not int:
            return f"{key} {_short(value)} is not an integer"
        if not low <= value < high:
            return f"{key} {_short(value)} is out of range"
    return None


def link_target(record: dict) -> bytes:
    """The raw link target of a checked record."""
    return _b64(record.get("link_target_b64") or "") or b""


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _short(value) -> str:
    return repr(value)[:80]


# -- collection.json ---------------------------------------------------------------------

COUNT_KEYS = ("matched", "collected", "skipped", "failed")


def load_collection(reader: BundleReader) -> dict:
    """collection.json, read under its limit and checked; raises BundleFormatError naming the problem."""
    value = load_json(read_member(reader, layout.COLLECTION_JSON), layout.COLLECTION_JSON)
    problem = collection_problem(value)
    if problem:
        raise BundleFormatError(f"{layout.COLLECTION_JSON}: {problem}")
    return value


def collection_problem(value) -> str | None:
    """What is wrong with collection.json against docs/bundle-format.md section 5, or None."""
    if not isinstance(value, dict):
        return f"a {type(value).__name__}, not an object"
    counts = value.get("counts")
    if not isinstance(counts, dict) or any(type(counts.get(key)) is not int for key in COUNT_KEYS):
        return f"counts is not an object of integers {', '.join(COUNT_KEYS)}"
    signer = value.get("signer")
    if signer is not None and not (isinstance(signer, dict) and isinstance(signer.get("public_key_pem"), str)):
        return "signer is neither null nor an object with public_key_pem"
    for key in ("started_utc", "finished_utc"):
        if key in value and not _utc_time(value[key]):
            return f"{key} {_short(value[key])} is not a UTC time YYYY-MM-DDTHH:MM:SS[.ffffff]Z"
    return None


_UTC_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


def _utc_time(value) -> bool:
    """A collection time as collect writes it, and a real date (outputs use it for untimed rows)."""
    if not isinstance(value, str) or _UTC_TIME.fullmatch(value) is None:
        return False
    try:
        datetime.datetime.fromisoformat(value[:19])
    except ValueError:
        return False
    return True
