"""Decoding untrusted JSON (and TOML) within bounds of nesting and memory.

``json.loads`` recurses once per nesting level: a line of 100k ``[`` raises
RecursionError, and a value nested just under the interpreter's limit decodes
but then crashes the first recursive walk over it (``json.dumps``, a content
flattener). ``decode_json`` (and ``decode_toml``) decodes at most MAX_NESTING levels and turns every
failure into a ValueError, which every parser already reports as one
``parser:`` row for that line or file, so the next line is still read.

Decoded JSON can take ~25 times its text in Python objects (``[{},{},...]``);
texts over CHECK_COST_BYTES have their cost estimated from bracket and comma
counts first, and are refused past MAX_DECODE_COST.

Speed: where msgspec is installed, ``decode_json`` first tries its decoder
(three to four times as fast as ``json.loads`` on agent transcripts) under a
recursion limit a few levels *lower* than the standard path's, and takes its
value only when it succeeds. On any failure (a syntax error, a lone
surrogate escape, ``NaN``, an integer of more than 4300 digits or a number
out of float range, a byte-order mark, non-UTF-8 bytes, deeper nesting) the
standard path decides, with its own error text. So every value is the one
``json.loads`` gives and every refusal the one it gives
(tests/analyzer/formats/test_decode.py compares them); msgspec only makes
the common case fast.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

MAX_NESTING = 200  # levels of arrays/objects; real agent records nest a few dozen at most
TOML_FRAMES = 400  # tomllib spends about three frames per level: about 130 levels of TOML
CHECK_COST_BYTES = 4 * 1024 * 1024  # below this the worst case (~25x) is small enough not to check
MAX_DECODE_COST = 256 * 1024 * 1024  # estimated bytes of decoded objects, per JSON text
_CONTAINER_COST = 200  # a dict with a key or two (184 bytes) and the slot that holds it
_VALUE_COST = 64  # a short string (50 bytes and more) or float and its slot, per comma

T = TypeVar("T")

try:  # the analyzer's fast path; without it every text takes the standard path below
    from msgspec.json import Decoder as _FastDecoder
    from msgspec.json import encode as _fast_encode
except ImportError:  # pragma: no cover - msgspec is a dependency; this keeps a bare install working
    _FastDecoder = _fast_encode = None
_FAST = _FastDecoder().decode if _FastDecoder is not None else None
# levels the fast path allows: fewer than the standard path's MAX_NESTING, so that a value it takes is
# one the standard path takes too (the margin covers the standard path's own Python frames)
FAST_NESTING = MAX_NESTING - 8
_MISSING = object()


class NestedTooDeep(ValueError):
    """The text nests deeper than allowed (MAX_NESTING levels of JSON, TOML_FRAMES of TOML parsing)."""


class JsonTooLarge(ValueError):
    """The text would decode into more than MAX_DECODE_COST bytes of objects."""


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@contextmanager
def nesting_limit(levels: int = MAX_NESTING) -> Iterator[None]:
    """Lower the recursion limit to ``levels`` frames above the caller while a recursive decoder runs.

    CPython 3.11's json and tomllib count one recursion per nesting level, so
    this bounds the depth of what they return; the limit is restored after.
    """
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(min(previous, _stack_depth() + levels))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def bounded(decode: Callable[..., T], *args, levels: int = MAX_NESTING) -> T:
    """``decode(*args)`` with nesting bounded; NestedTooDeep instead of RecursionError."""
    try:
        with nesting_limit(levels):
            return decode(*args)
    except RecursionError as exc:
        raise NestedTooDeep(f"nested deeper than {levels} levels") from exc


def decode_toml(text: str) -> dict:
    """``tomllib.loads(text)`` with nesting bounded; TOMLDecodeError or NestedTooDeep (ValueErrors) on failure."""
    import tomllib  # 3.11+; callers check for it

    try:
        with nesting_limit(TOML_FRAMES):
            return tomllib.loads(text)
    except RecursionError as exc:
        raise NestedTooDeep("nested too deep") from exc


def _openers(text: str | bytes) -> int:
    """Arrays and objects a text can open at most (its ``[`` and ``{``); asked of every files.jsonl record."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def _commas(text: str | bytes) -> int:
    return text.count(b"," if isinstance(text, bytes) else ",")


def decode_cost(text: str | bytes) -> int:
    """The estimated bytes of objects decoding ``text`` makes (what MAX_DECODE_COST limits per text)."""
    return len(text) + _CONTAINER_COST * _openers(text) + _VALUE_COST * _commas(text)


def canonical_json(value: object) -> bytes:
    """UTF-8 JSON of a decoded value with keys sorted: equal bytes exactly when the values are equal.

    For keys of sets and digests, never for output. msgspec writes NaN and
    infinities as ``null``, which would make them equal to a null: any text
    holding ``null`` is written again by ``json.dumps``, which spells them
    apart.
    """
    if _fast_encode is not None:
        try:
            encoded = _fast_encode(value, order="sorted")
        except (TypeError, ValueError, OverflowError):
            encoded = b"null"  # not its to write: json.dumps below decides
        if b"null" not in encoded:
            return encoded
    return json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")


def stack_depth() -> int:
    """Frames on the stack here: computed once per file, it saves ``decode_json`` a walk per line."""
    return _stack_depth() - 1


def _fast_decode(text: str | bytes, depth: int | None) -> object:
    """The msgspec value of ``text`` within FAST_NESTING levels, or _MISSING (the standard path decides)."""
    if depth is None and _openers(text) < FAST_NESTING:
        # fewer openers than levels allowed: it cannot nest too deep, and the stack is not walked
        try:
            return _FAST(text)
        except (ValueError, RecursionError):  # a RecursionError: the caller is already deep; as below
            return _MISSING
    previous = sys.getrecursionlimit()
    try:
        # +2: this frame and decode_json's, above the caller whose depth was given
        sys.setrecursionlimit(min(previous, (_stack_depth() if depth is None else depth + 2) + FAST_NESTING))
    except RecursionError:  # already deeper than that: the standard path says so
        return _MISSING
    try:
        return _FAST(text)
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError are ValueErrors
        return _MISSING
    finally:
        sys.setrecursionlimit(previous)


def decode_json(text: str | bytes, loads: Callable[[str | bytes], object] = json.loads,
                depth: int | None = None) -> object:
    """``loads(text)`` within MAX_NESTING levels and MAX_DECODE_COST; ValueError on any failure.

    ``depth``: the caller's ``stack_depth()``, when it decodes many texts from
    the same place (a JSONL reader), so that it is not measured per text.
    """
    if _FAST is not None and loads is json.loads and len(text) <= CHECK_COST_BYTES:
        value = _fast_decode(text, depth)
        if value is not _MISSING:
            return value
    return _standard_decode(text, loads)


def json_loads(text: str | bytes) -> object:
    """``json.loads(text)`` exactly (its values, its errors, its depth): msgspec first, json.loads on any failure.

    For a caller that must keep json.loads's own behaviour, with no bound
    of its own (the bundle's files.jsonl, whose reader checks its records).
    """
    if _FAST is not None and len(text) <= CHECK_COST_BYTES:
        value = _fast_decode(text, None)  # within FAST_NESTING levels: deeper, json.loads decides how deep
        if value is not _MISSING:
            return value
    return json.loads(text)


def decode_json_utf8(data: bytes, depth: int | None = None) -> object:
    """``decode_json(data.decode("utf-8"))``: the same value, the same exceptions, without the copy to str.

    A JSONL line is tried as bytes first; only where that fails is it decoded
    to text (UnicodeDecodeError for bytes that are not UTF-8) and decoded the
    standard way.
    """
    if _FAST is not None and len(data) <= CHECK_COST_BYTES:
        value = _fast_decode(data, depth)
        if value is not _MISSING:
            return value
    return _standard_decode(data.decode("utf-8"), json.loads)


def _standard_decode(text: str | bytes, loads: Callable[[str | bytes], object]) -> object:
    """The stdlib path: cost estimate, bracket count, bounded recursion, depth check."""
    openers = _openers(text)  # counted once, for the cost and the depth both
    if len(text) > CHECK_COST_BYTES:
        cost = len(text) + _CONTAINER_COST * openers + _VALUE_COST * _commas(text)
        if cost > MAX_DECODE_COST:
            raise JsonTooLarge(f"too many values to decode (about {cost} bytes of objects, limit {MAX_DECODE_COST})")
    if openers < MAX_NESTING - 20:
        try:
            return loads(text)  # cannot nest deep enough to matter: no stack walk
        except RecursionError as exc:  # a caller already deep in the stack
            raise NestedTooDeep(f"nested too deep for the stack ({exc})") from exc
    value = bounded(loads, text)
    if _C_RECURSION and _deeper_than(value, MAX_NESTING):
        raise NestedTooDeep(f"nested deeper than {MAX_NESTING} levels")
    return value


def decode_json_at(text: str, position: int) -> tuple[object, int]:
    """``JSONDecoder().raw_decode(text, position)`` (one value of a longer text) within MAX_NESTING; ValueError."""
    value, end = bounded(_DECODER.raw_decode, text, position)
    if _C_RECURSION and _deeper_than(value, MAX_NESTING):
        raise NestedTooDeep(f"nested deeper than {MAX_NESTING} levels")
    return value, end


_DECODER = json.JSONDecoder()


# From Python 3.12 the C json decoder counts its recursion against a C stack limit of
# its own (3.13 decodes 5000 levels), so the recursion limit no longer bounds it: the
# decoded value's depth is measured instead, without recursion.
_C_RECURSION = sys.version_info >= (3, 12)


def _deeper_than(value: object, limit: int) -> bool:
    """True when arrays/objects nest more than ``limit`` levels inside ``value`` (iterative)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
