"""Rows the coordinator adds once every file is parsed: the bundle-wide integrity findings.

Each is stamped with the provenance of the file it is about (the index that
names a missing session, the file no parser read), numbered per file from
BUNDLE_ROW_ORDINALS on, so its event id depends on that file alone.
"""

from __future__ import annotations

import itertools
from collections import Counter

from aitrail.analyzer.engine.dispatch import provenance as dispatch_provenance
from aitrail.analyzer.engine.unparsed import Unparsed
from aitrail.analyzer.engine.worker import StoreStats, Worker
from aitrail.analyzer.integrity import sessions as integrity_sessions
from aitrail.analyzer.view.rows import stamp

# ordinals of the bundle-wide rows stamped with a file's provenance: past any file's own rows, so their
# event ids and sort keys never equal one of that file's
BUNDLE_ROW_ORDINALS = 1 << 48


def integrity_rows(worker: Worker, notes: integrity_sessions.SessionNotes, unparsed: list[Unparsed],
                    stats: dict[tuple[str, str], StoreStats]) -> list[tuple[bytes, tuple]]:
    """The bundle-wide integrity rows (sessions named and not held, files no parser read), stamped and counted."""
    found = itertools.chain(
        integrity_sessions.missing_rows(notes, worker.bundle, worker.holding),
        integrity_sessions.not_parsed_rows(worker.bundle, unparsed))
    stamped, given = [], Counter()
    for source, draft in found:  # numbered per file: a row's event id does not depend on other files' rows
        ordinal = BUNDLE_ROW_ORDINALS + given[(source.member, source.store)]
        given[(source.member, source.store)] += 1
        stamped.append(stamp(draft, dispatch_provenance(source), ordinal))
        stats.setdefault((source.agent, source.store), StoreStats(source.agent, source.store)).add_rows(1, 0, 0, 1)
    return stamped
