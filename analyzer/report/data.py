"""What a bundle says about itself: collection.json, files.jsonl accounting, the verification result.

Everything here is read from an untrusted bundle: values are checked for
their type before use and lists shown in the report are capped
(``LIST_MAX``), while their counts stay exact.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from aitrail.collector.bundle.metadata import iter_records, load_collection
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader

LIST_MAX = 500  # entries of one accounting list written into the page; the count is always exact
CLASSES = ("collected", "skipped", "failed")


@dataclass
class Verification:
    """The verify result the report shows: ok, problems, signature state, signer fingerprint."""

    ok: bool
    problems: list[str]
    signature: str
    signed: bool
    pinned: bool
    warnings: list[str]
    fingerprint: str = ""  # computed from the key the signature verified under; never the bundle's own text


@dataclass
class Accounting:
    """files.jsonl counted per agent and class, with the notable files listed (capped)."""

    per_agent: dict[str, Counter] = field(default_factory=dict)
    never_collected: list[dict] = field(default_factory=list)
    too_large: list[dict] = field(default_factory=list)
    not_downloaded: list[dict] = field(default_factory=list)  # cloud placeholders, never opened (macOS SF_DATALESS)
    failures: list[dict] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # never_collect / too_large / not_read_would_download / failed
    bad_records: list[str] = field(default_factory=list)

    def totals(self) -> Counter:
        """matched, collected, skipped, failed over every agent."""
        total: Counter = Counter()
        for counter in self.per_agent.values():
            total.update(counter)
        return total


def text(value) -> str:
    """A bundle value as display text: strings as they are, numbers printed, anything else empty."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def section(collection: dict, key: str) -> dict:
    """``collection[key]`` when it is an object, else an empty one."""
    value = collection.get(key)
    return value if isinstance(value, dict) else {}


def read_collection(reader: BundleReader) -> tuple[dict, str | None]:
    """collection.json and the problem that kept it from being read (then an empty object)."""
    try:
        return load_collection(reader), None
    except (BundleFormatError, OSError) as exc:
        return {}, str(exc)


def _entry(record: dict) -> dict:
    """The few fields of one files.jsonl record the report lists."""
    stat = record.get("stat") if isinstance(record.get("stat"), dict) else {}
    return {"agent": text(record.get("agent")), "path": text(record.get("source_path")) or text(record.get("path")),
            "outcome": text(record.get("outcome")), "reason": text(record.get("reason")),
            "errno": text(record.get("errno")), "error": text(record.get("error")), "size": text(stat.get("size"))}


def _note(accounting: Accounting, key: str, target: list[dict], record: dict) -> None:
    accounting.counts[key] += 1
    if len(target) < LIST_MAX:
        target.append(_entry(record))


def read_accounting(reader: BundleReader) -> Accounting:
    """Count every files.jsonl record per agent and class; list credentials, too-large files, placeholders, failures."""
    accounting = Accounting()
    try:
        for _number, record, problem in iter_records(reader):
            if record is None:
                if len(accounting.bad_records) < LIST_MAX:
                    accounting.bad_records.append(problem or "")
                continue
            counter = accounting.per_agent.setdefault(text(record.get("agent")), Counter())
            counter["matched"] += 1
            kind = text(record.get("class"))
            counter[kind if kind in CLASSES else "unknown class"] += 1
            outcome = record.get("outcome")
            if outcome == "never_collect":
                _note(accounting, "never_collect", accounting.never_collected, record)
            elif outcome == "too_large":
                _note(accounting, "too_large", accounting.too_large, record)
            elif outcome == "not_read_would_download":
                _note(accounting, "not_read_would_download", accounting.not_downloaded, record)
            elif kind == "failed":
                _note(accounting, "failed", accounting.failures, record)
    except (BundleFormatError, OSError) as exc:
        accounting.bad_records.append(f"files.jsonl: {exc}")
    accounting.per_agent = dict(sorted(accounting.per_agent.items()))
    return accounting
