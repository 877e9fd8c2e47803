"""The outcome vocabulary of files.jsonl, shared by the collector, verify and the analyzer.

It names what became of each catalog match and the class each outcome counts
in (``collected + skipped + failed = matched``). It imports nothing, so the
readers of a bundle (verify, the analyzer) never load the collector's planner
or walker to learn it.
"""

from __future__ import annotations

COLLECTED = "collected"
CHANGED = "changed_during_read"
SYMLINK = "symlink"
EXCLUDED = "excluded"
NEVER_COLLECT = "never_collect"
TOO_LARGE = "too_large"
SPECIAL = "special_file"
# A cloud placeholder (macOS SF_DATALESS: iCloud Drive, File Provider): its bytes are not on the
# disk and a read would make the provider download them, so it is never opened (not a partial run:
# nothing failed, the collector chose not to change the subject).
NOT_READ_WOULD_DOWNLOAD = "not_read_would_download"
DENIED = "permission_denied"
VANISHED = "vanished"
READ_ERROR = "read_error"
# aitrail import (collector/foreign/): the foreign tool listed the file (a copy log, a bodyfile, upload
# metadata) but its container holds no bytes for it; the evidence is not whole, as after a failed read.
NOT_IN_CONTAINER = "not_in_container"

OUTCOME_CLASS = {
    COLLECTED: "collected",
    CHANGED: "collected",
    SYMLINK: "collected",
    EXCLUDED: "skipped",
    NEVER_COLLECT: "skipped",
    TOO_LARGE: "skipped",
    SPECIAL: "skipped",
    NOT_READ_WOULD_DOWNLOAD: "skipped",
    DENIED: "failed",
    VANISHED: "failed",
    READ_ERROR: "failed",
    NOT_IN_CONTAINER: "failed",
}

# Outcomes that make a run partial (exit 3): the bundle is sound, the evidence is not whole.
PARTIAL_OUTCOMES = {CHANGED, DENIED, VANISHED, READ_ERROR, NOT_IN_CONTAINER}
