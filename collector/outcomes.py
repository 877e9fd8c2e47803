"""The one-line-per-match record of files.jsonl (the vocabulary is bundle/vocabulary.py).

Every catalog match ends with exactly one outcome, and every outcome falls in
exactly one class, so ``collected + skipped + failed = matched`` holds by
construction and is checked again by verify.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from functools import cached_property

from aitrail.collector.bundle.vocabulary import (  # noqa: F401 - the vocabulary, re-exported for the collector
    CHANGED,
    COLLECTED,
    DENIED,
    EXCLUDED,
    NEVER_COLLECT,
    OUTCOME_CLASS,
    PARTIAL_OUTCOMES,
    READ_ERROR,
    SPECIAL,
    SYMLINK,
    TOO_LARGE,
    VANISHED,
)
from aitrail.collector.fsmeta import Meta
from aitrail.collector.plan import Target


def raw_text(raw: bytes) -> str:
    r"""Display form of raw bytes: UTF-8 where valid, \xNN escapes elsewhere."""
    return raw.decode("utf-8", "backslashreplace")


def b64(raw: bytes) -> str:
    """Base64 of raw bytes, as ASCII text."""
    return base64.b64encode(raw).decode("ascii")


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
    noatime: bool | None = None
    attempts: int = 0
    notes: list[str] = field(default_factory=list)
    link_target: bytes | None = None
    companion_of: str | None = None
    duplicate_of: str | None = None

    @cached_property
    def key(self) -> tuple:
        """Sort key: location, raw path bytes, agent, store (deterministic order)."""
        return (self.target.location.label, tuple(os.fsencode(part) for part in self.parts),
                self.target.agent, self.target.store)

    @cached_property
    def raw_relpath(self) -> bytes:
        """The path below the location, as raw bytes."""
        return b"/".join(self.key[1])

    @property
    def raw_abspath(self) -> bytes:
        """The path on the subject, as raw bytes."""
        return os.path.join(os.fsencode(self.target.location.base), self.raw_relpath)

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
        if self.meta is not None:
            record["stat"] = self.meta.as_record()
        if self.after is not None and self.meta is not None and self.after.differs_from(self.meta):
            record["stat_after"] = self.after.as_record()
        if self.noatime is not None:
            record["o_noatime"] = self.noatime
        if self.attempts:
            record["read_attempts"] = self.attempts
        if self.reason:
            record["reason"] = self.reason
        if self.error is not None:
            record["errno"] = self.error.errno
            record["error"] = os.strerror(self.error.errno) if self.error.errno else str(self.error)
        if self.notes:
            record["notes"] = self.notes
        if self.link_target is not None:
            record["link_target"] = raw_text(self.link_target)
            record["link_target_b64"] = b64(self.link_target)
        if self.companion_of:
            record["sqlite_companion_of"] = self.companion_of
        if self.duplicate_of:
            record["same_file_as"] = self.duplicate_of
        return record


def count(entries: list[Entry]) -> dict:
    """Per-class and per-outcome counts; the accounting rule holds by construction."""
    by_outcome: dict[str, int] = {}
    by_class = {"collected": 0, "skipped": 0, "failed": 0}
    for entry in entries:
        by_outcome[entry.outcome] = by_outcome.get(entry.outcome, 0) + 1
        by_class[OUTCOME_CLASS[entry.outcome]] += 1
    return {"matched": len(entries), **by_class, "by_outcome": dict(sorted(by_outcome.items()))}
