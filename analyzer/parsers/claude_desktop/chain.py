"""The HMAC chain of a Cowork ``audit.jsonl``, checked with the ``.audit-key`` beside it.

What it rests on ([obs], ONE community analysis of Claude Desktop 1.11847.5.0's
app.asar, an index copy whose repository is unresolved; research 1.5 and 17.2):
each record is written as ``JSON.stringify({...rest, _audit_hmac: h})`` where
``h = HMAC-SHA256(key, prevHmac || JSON.stringify(rest))`` in lower-case hex,
``rest`` the record without ``_audit_hmac``, ``prevHmac`` the previous record's
digest (the empty string before the first), and ``key`` the raw bytes of the
binary ``.audit-key`` file in the same directory. The writer resumes
``prevHmac`` from the tail of the file, so one file is one chain.

The construction implemented (and documented in docs/agents/claude-desktop.md):

* the message is the previous record's stored ``_audit_hmac`` (UTF-8 of its hex
  text) followed by the record's bytes without that member;
* "the record's bytes" are tried in three spellings, in this order, and a
  record verifies when one of them gives its digest: (1) ``line``: the line as
  written with its trailing ``,"_audit_hmac":"<hex>"`` member cut out
  textually (exactly ``JSON.stringify(rest)`` when the line was written as the
  analysis says, whatever JavaScript's number and escape spellings were);
  (2) ``compact``: Python's compact JSON of the decoded record without the
  member, keys in recorded order (the same bytes for most records; differs
  where JavaScript and Python spell a number or an escape differently);
  (3) ``sorted``: the same with keys sorted (a canonical form some chain
  writers use; not what the analysis describes). The verified row counts the
  records each spelling verified, so a real file that only verifies with (2)
  or (3) shows that the construction differs from the analysis.
* Using each record's stored predecessor digest (not a recomputed one) localises
  a finding: an edited record fails alone; a removed record makes the next one
  fail; an inserted line without a digest fails and leaves the chain where it was.

Findings: ``integrity: chain break: line N is the first record whose _audit_hmac
does not verify ...`` (at that record's time), naming every failing line up to
PER_FILE. When no record at all verifies (two records or more), the key or the
construction is not the one assumed and nothing is proved: an ``audit chain: not
verified:`` row says so instead. Without the key in the bundle: one ``audit chain:
not checked:`` row. The key's bytes, and any digest computed with them, never
reach a row.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp

KEY_FILE = ".audit-key"
KEY_STORE = "cowork_audit_key"
MAX_KEY_BYTES = 1024 * 1024  # an HMAC key of any length is valid; a larger file is not a key
FAILURES_SHOWN = 20  # failing records named one by one, as the integrity rules name 20 findings a rule per file
FORMS = ("line", "compact", "sorted")
CONSTRUCTION = ("HMAC-SHA256 keyed by the .audit-key beside it, over the previous record's _audit_hmac followed by "
                "this record without its _audit_hmac; the construction rests on one community analysis of the app")


def load_key(ctx: ParseContext) -> tuple[bytes | None, str]:
    """The key beside this audit log and '' , or None and why the chain cannot be checked."""
    source = ctx.sibling(KEY_FILE, KEY_STORE)
    if source is None:
        return None, f"no {KEY_FILE} beside this audit log is in the bundle (it is collected with the log when it " \
                     "exists); without it the HMAC chain cannot be verified"
    if source.size > MAX_KEY_BYTES:
        return None, f"{KEY_FILE} is {source.size} bytes, more than any key file the app writes"
    try:
        key = ctx.read(source)
    except MemberUnreadable:
        return None, f"{KEY_FILE} is in the bundle but could not be read"
    if not key:
        return None, f"{KEY_FILE} is empty"
    return key, ""


def _without_member(raw: bytes, digest: str) -> bytes | None:
    """The line with its trailing ``_audit_hmac`` member cut out, as JSON.stringify(rest) wrote it; None if not so."""
    line = raw.rstrip(b"\r")
    member = b'"_audit_hmac":' + json.dumps(digest, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if line.endswith(b"," + member + b"}"):
        return line[:-len(member) - 2] + b"}"
    if line == b"{" + member + b"}":
        return b"{}"
    return None


def _spellings(raw: bytes, record: dict, digest: str) -> Iterator[tuple[str, bytes]]:
    rest = {key: value for key, value in record.items() if key != "_audit_hmac"}
    textual = _without_member(raw, digest)
    if textual is not None:
        yield "line", textual
    for form, sort in (("compact", False), ("sorted", True)):
        try:
            text = json.dumps(rest, ensure_ascii=False, separators=(",", ":"), sort_keys=sort)
            yield form, text.encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
            continue  # a lone surrogate or a key order Python cannot sort: that spelling does not exist


@dataclass
class Failure:
    """A record whose digest does not verify: its line, why, and its own time."""

    number: int
    reason: str
    ns: int | None


@dataclass
class AuditChain:
    """The chain state while a file's lines are read, and the rows it gives at the end."""

    key: bytes
    previous: str = ""
    records: int = 0
    verified: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FORMS, 0))
    failures: list[Failure] = field(default_factory=list)
    failed: int = 0

    def record(self, number: int, raw: bytes, record: dict, ns: int | None) -> None:
        """Check one decoded record against its predecessor's digest."""
        self.records += 1
        digest = record.get("_audit_hmac")
        if not isinstance(digest, str) or not digest:
            self._fail(number, "it carries no _audit_hmac", ns)
            return
        form = self._verifying_form(raw, record, digest)
        if form is None:
            self._fail(number, "its _audit_hmac does not match", ns)
        else:
            self.verified[form] += 1
        self.previous = digest  # the next record was signed after this one's stored digest

    def unreadable(self, number: int, why: str) -> None:
        """A line that could not be decoded: no record to verify, so it fails; the chain stays where it was."""
        self.records += 1
        self._fail(number, why, None)

    def _verifying_form(self, raw: bytes, record: dict, digest: str) -> str | None:
        prefix = self.previous.encode("utf-8", "surrogatepass")
        for form, body in _spellings(raw, record, digest):
            expected = hmac.new(self.key, prefix + body, hashlib.sha256).hexdigest()
            if hmac.compare_digest(expected, digest.lower()) if digest.isascii() else False:
                return form
        return None

    def _fail(self, number: int, reason: str, ns: int | None) -> None:
        self.failed += 1
        if len(self.failures) < FAILURES_SHOWN:
            self.failures.append(Failure(number, reason, ns))

    def rows(self) -> Iterator[Draft]:
        """The file's one chain row: verified, a chain break at the first failing record, or not verified."""
        good = sum(self.verified.values())
        if self.records == 0:
            return
        if not self.failed:
            yield Draft("system", f"audit chain: verified: all {self.records} records verify ({self._forms()}; "
                        f"{CONSTRUCTION})", "file", timestamp_source="none")
            return
        if good == 0 and self.records > 1:
            yield Draft("system", f"audit chain: not verified: none of the {self.records} records verifies with "
                        f"the {KEY_FILE} beside this file in any of the spellings tried ({', '.join(FORMS)}): the "
                        f"key or the construction is not the one assumed, so this proves nothing about the file "
                        f"({CONSTRUCTION})", "file", timestamp_source="none")
            return
        yield self._break_row(good)

    def _break_row(self, good: int) -> Draft:
        first = self.failures[0]
        listed = ", ".join(f"line {failure.number} ({failure.reason}"
                           + (f", {format_timestamp(failure.ns)})" if failure.ns is not None else ")")
                           for failure in self.failures)
        more = f" and {self.failed - len(self.failures)} more" if self.failed > len(self.failures) else ""
        detail = (f"line {first.number} is the first record of this audit log whose _audit_hmac does not verify "
                  f"({first.reason}); {self.failed} of {self.records} records fail: {listed}{more}; {good} verify "
                  f"({self._forms()}); {CONSTRUCTION}")
        when = {"timestamp_ns": first.ns, "timestamp_source": "record"} if first.ns is not None else \
            {"timestamp_source": "none"}
        return Draft("system", f"integrity: chain break: {detail}", f"line:{first.number}", **when)

    def _forms(self) -> str:
        return ", ".join(f"{count} by the {form} spelling" for form, count in self.verified.items() if count) or \
            "none"


def not_checked_row(reason: str) -> Draft:
    """The one row of an audit log whose chain could not be checked, and why."""
    return Draft("system", f"audit chain: not checked: {reason}", "file", timestamp_source="none")
