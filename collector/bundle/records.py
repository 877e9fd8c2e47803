"""The one-line-per-match record of files.jsonl (the vocabulary is bundle/vocabulary.py).

Every catalog match ends with exactly one outcome, and every outcome falls in
exactly one class, so ``collected + skipped + failed = matched`` holds by
construction and is checked again by verify.
"""

from __future__ import annotations

import binascii
import functools
import json
import os
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # what json.dumps(ensure_ascii=False) uses for str

from aitrail.collector.bundle.vocabulary import (  # noqa: F401 - the vocabulary, re-exported for the collector
    CHANGED,
    COLLECTED,
    DENIED,
    EXCLUDED,
    NEVER_COLLECT,
    NOT_IN_CONTAINER,
    NOT_READ_WOULD_DOWNLOAD,
    OUTCOME_CLASS,
    PARTIAL_OUTCOMES,
    READ_ERROR,
    SPECIAL,
    SYMLINK,
    TOO_LARGE,
    VANISHED,
)
from aitrail.collector.finding.plan import Target
from aitrail.collector.fs.backend import ATIME_O_NOATIME
from aitrail.collector.fs.meta import Meta, fsencode


def raw_text(raw: bytes) -> str:
    r"""Display form of raw bytes: UTF-8 where valid, \xNN escapes elsewhere."""
    return raw.decode("utf-8", "backslashreplace")


def b64(raw: bytes) -> str:
    """Base64 of raw bytes, as ASCII text (base64.b64encode's text, without its Python wrapper)."""
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


@functools.lru_cache(maxsize=256)
def _join_prefix(base: str) -> bytes:
    """What ``os.path.join(os.fsencode(base), relpath)`` puts before a relative ``relpath``."""
    raw = os.fsencode(base)
    return raw if not raw or raw.endswith(b"/") else raw + b"/"


@functools.lru_cache(maxsize=65536)
def _encoded_directory(parts: tuple[str, ...]) -> tuple[bytes, ...]:
    """The raw bytes of a directory's path components (the files of one directory share them)."""
    return tuple([fsencode(part) for part in parts])


@dataclass
class Entry:
    """One catalog match and what became of it (one line of files.jsonl)."""

    target: Target
    parts: tuple[str, ...]
    kind: str
    meta: Meta | None
    outcome: str = ""
    member: str | None = None
    sha256: str | None = None
    stored_size: int | None = None
    reason: str = ""
    error: OSError | None = None
    after: Meta | None = None
    atime_protection: str | None = None  # o_noatime | none (fs/backend.py); None: never opened for a read
    attempts: int = 0
    notes: list[str] = field(default_factory=list)
    link_target: bytes | None = None
    companion_of: str | None = None
    duplicate_of: str | None = None
    holes: list[list[int]] | None = None  # [offset, length] of each hole the read skipped (zeros stored)
    container_record: dict | None = None  # aitrail import: what the foreign tool recorded of the file (foreign/)

    # Sort key: location, raw path bytes, agent, store (deterministic order); and the path
    # below the location as raw bytes. Set once, at creation: every entry needs both
    # (3.11's cached_property takes a lock at each first access, a microsecond an entry).
    key: tuple = field(init=False, repr=False, compare=False)
    raw_relpath: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        raw = _encoded_directory(self.parts[:-1]) + (fsencode(self.parts[-1]),) if self.parts else ()
        self.key = (self.target.location.label, raw, self.target.agent, self.target.store)
        self.raw_relpath = b"/".join(raw)

    @property
    def raw_abspath(self) -> bytes:
        """The path on the subject, as raw bytes (inside the image under --root, never its mount point here)."""
        location = self.target.location
        return _join_prefix(location.subject_base or location.base) + self.raw_relpath  # relpath is never absolute

    def as_record(self) -> dict:
        """The files.jsonl line of this match."""
        target = self.target
        record: dict = {
            "agent": target.agent,
            "store": target.store,
            "role": target.store_def.role,
            "format": target.store_def.format,
            "parser": target.store_def.parser if not self.companion_of else None,
            "origin": target.store_def.origin,
            "location": target.location.label,
            "path": raw_text(relpath := self.raw_relpath),
            "path_b64": b64(relpath),
            "source_path": raw_text(abspath := self.raw_abspath),
            "source_path_b64": b64(abspath),
            "glob": target.glob if not self.companion_of else None,
            "outcome": self.outcome,
            "class": OUTCOME_CLASS[self.outcome],
            "type": self.kind,
            "member": self.member,
            "sha256": self.sha256,
            "stored_size": self.stored_size,
        }
        if self.container_record is not None:
            record["container_record"] = self.container_record
        if target.store_def.credential_tables:  # a database that holds credentials beside the evidence
            record["credential_tables"] = list(target.store_def.credential_tables)
        if target.store_def.opaque is not None:  # collected, sealed, and never readable: why
            record["opaque"] = target.store_def.opaque
        if self.meta is not None:
            record["stat"] = self.meta.as_record()
        if self.after is not None and self.meta is not None and self.after.differs_from(self.meta):
            record["stat_after"] = self.after.as_record()
        if self.atime_protection is not None:
            record["atime_protection"] = self.atime_protection
            record["o_noatime"] = self.atime_protection == ATIME_O_NOATIME  # the field before atime_protection
        if self.attempts:
            record["read_attempts"] = self.attempts
        if self.reason:
            record["reason"] = self.reason
        if self.error is not None:
            record["errno"] = self.error.errno
            record["error"] = os.strerror(self.error.errno) if self.error.errno else str(self.error)
        notes = _notes(self)
        if notes:
            record["notes"] = notes
        if self.holes:
            record["holes"] = self.holes
        if self.link_target is not None:
            record["link_target"] = raw_text(self.link_target)
            record["link_target_b64"] = b64(self.link_target)
        if self.companion_of:
            record["sqlite_companion_of"] = self.companion_of
        if self.duplicate_of:
            record["same_file_as"] = self.duplicate_of
        return record


# -- files.jsonl, rendered fast ------------------------------------------------------
#
# ``json.dumps(entry.as_record(), sort_keys=True, ensure_ascii=False)`` is the
# definition of a line; building the dict and sorting and encoding it cost
# about 35 us an entry. The renderer below writes the same text from fixed
# pieces: the keys in sorted order (checked below), the values a target shares
# encoded once per target. tests/collector/test_files_record.py holds the two
# equal on generated entries.

_KEY_ORDER = ("agent", "atime_protection", "class", "container_record", "errno", "error", "format", "glob", "holes",
              "link_target", "link_target_b64", "location", "member", "notes", "o_noatime", "origin", "outcome",
              "parser", "path", "path_b64", "read_attempts", "reason", "role", "same_file_as", "sha256", "source_path",
              "source_path_b64", "sqlite_companion_of", "stat", "stat_after", "store", "stored_size", "type")
assert list(_KEY_ORDER) == sorted(_KEY_ORDER)
_STAT_TEXT = ('{"atime_ns": %d, "btime_ns": %s, "ctime_ns": %d, "dev": %d, "gid": %d, "ino": %d, "mode": "%o", '
              '"mtime_ns": %d, "nlink": %d, "size": %d, "uid": %d}')
_INTS_ONLY = {int}


def _notes(entry: Entry) -> list[str]:
    """The entry's notes, and the platform's word on its error (fs/backend.py PrivacyRefused: TCC named).

    Taken from the error where it is recorded, so every refusal gets it however it reached the entry
    (the walk's listing, its lstat, the capture's open).
    """
    note = getattr(entry.error, "platform_note", None)
    return [*entry.notes, note] if note else entry.notes


def _value(value) -> str:
    """A JSON value as json.dumps writes it (the types a record holds; anything else through json)."""
    if value.__class__ is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    if value.__class__ is int:
        return int.__repr__(value)
    if value is True or value is False:
        return "true" if value else "false"
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _stat_text(meta: Meta) -> str:
    """``Meta.as_record`` as json.dumps writes it; %d and %o equal JSON's text for ints only, so only ints take it."""
    numbers = (meta.atime_ns, meta.ctime_ns, meta.dev, meta.gid, meta.ino, meta.mode, meta.mtime_ns, meta.nlink,
               meta.size, meta.uid)
    if set(map(type, numbers)) != _INTS_ONLY:
        return json.dumps(meta.as_record(), sort_keys=True, ensure_ascii=False)
    atime, ctime, dev, gid, ino, mode, mtime, nlink, size, uid = numbers
    return _STAT_TEXT % (atime, _value(meta.btime_ns), ctime, dev, gid, ino, mode, mtime, nlink, size, uid)


class RecordRenderer:
    """Renders files.jsonl lines; caches what the entries of one target share."""

    def __init__(self):
        self._targets: dict[tuple[int, bool], tuple[str, ...]] = {}  # id(target) + companion -> pieces

    def _target_pieces(self, target: Target, companion: bool) -> tuple[str, ...]:
        key = (id(target), companion)  # the entries hold their targets alive while this renderer is used
        pieces = self._targets.get(key)
        if pieces is None:
            store_def = target.store_def
            pieces = self._targets[key] = (
                f'{{"agent": {_value(target.agent)}',
                f', "format": {_value(store_def.format)}, "glob": {_value(None if companion else target.glob)}',
                f', "location": {_value(target.location.label)}',
                f', "origin": {_value(store_def.origin)}',
                f', "parser": {_value(None if companion else store_def.parser)}',
                f', "role": {_value(store_def.role)}',
                f', "store": {_value(target.store)}',
            )
        return pieces

    def line(self, entry: Entry) -> str:
        """One line of files.jsonl, without its newline: the text json.dumps gives for ``entry.as_record()``."""
        agent, format_glob, location, origin, parser, role, store = self._target_pieces(entry.target,
                                                                                       bool(entry.companion_of))
        relpath, abspath = entry.raw_relpath, entry.raw_abspath
        out = [agent]
        if entry.atime_protection is not None:
            out += [', "atime_protection": ', encode_basestring(entry.atime_protection)]
        out += [', "class": ', encode_basestring(OUTCOME_CLASS[entry.outcome])]
        if entry.container_record is not None:
            out += [', "container_record": ', _value(entry.container_record)]
        if entry.target.store_def.credential_tables:
            out += [', "credential_tables": ', _value(list(entry.target.store_def.credential_tables))]
        if entry.error is not None:
            errno = entry.error.errno
            out += [', "errno": ', _value(errno), ', "error": ',
                    encode_basestring(os.strerror(errno) if errno else str(entry.error))]
        out.append(format_glob)
        if entry.holes:
            out += [', "holes": ', _value(entry.holes)]
        if entry.link_target is not None:
            out += [', "link_target": ', encode_basestring(raw_text(entry.link_target)),
                    ', "link_target_b64": ', encode_basestring(b64(entry.link_target))]
        out += [location, ', "member": ', _value(entry.member)]
        notes = _notes(entry) if entry.error is not None else entry.notes
        if notes:
            out += [', "notes": ', _value(notes)]
        if entry.atime_protection is not None:
            out += [', "o_noatime": ', "true" if entry.atime_protection == ATIME_O_NOATIME else "false"]
        if entry.target.store_def.opaque is not None:
            out += [', "opaque": ', _value(entry.target.store_def.opaque)]
        out += [origin, ', "outcome": ', _value(entry.outcome), parser,
                ', "path": ', encode_basestring(raw_text(relpath)), ', "path_b64": ', encode_basestring(b64(relpath))]
        if entry.attempts:
            out += [', "read_attempts": ', _value(entry.attempts)]
        if entry.reason:
            out += [', "reason": ', _value(entry.reason)]
        out.append(role)
        if entry.duplicate_of:
            out += [', "same_file_as": ', _value(entry.duplicate_of)]
        out += [', "sha256": ', _value(entry.sha256), ', "source_path": ', encode_basestring(raw_text(abspath)),
                ', "source_path_b64": ', encode_basestring(b64(abspath))]
        if entry.companion_of:
            out += [', "sqlite_companion_of": ', _value(entry.companion_of)]
        if entry.meta is not None:
            out += [', "stat": ', _stat_text(entry.meta)]
            if entry.after is not None and entry.after.differs_from(entry.meta):
                out += [', "stat_after": ', _stat_text(entry.after)]
        out += [store, ', "stored_size": ', _value(entry.stored_size), ', "type": ', _value(entry.kind), "}"]
        return "".join(out)


def count(entries: list[Entry]) -> dict:
    """Per-class and per-outcome counts; the accounting rule holds by construction."""
    by_outcome: dict[str, int] = {}
    by_class = {"collected": 0, "skipped": 0, "failed": 0}
    for entry in entries:
        by_outcome[entry.outcome] = by_outcome.get(entry.outcome, 0) + 1
        by_class[OUTCOME_CLASS[entry.outcome]] += 1
    return {"matched": len(entries), **by_class, "by_outcome": dict(sorted(by_outcome.items()))}
