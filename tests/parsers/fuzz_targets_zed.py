"""Zed files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

TARGETS = [
    FuzzTarget("zed.threads_db.v1", "zed.threads_db", ".local/share/zed/threads/threads.db"),
    FuzzTarget("zed.legacy_threads.v1", "zed.legacy_threads", ".local/share/zed/threads/threads-db.1.mdb/data.mdb"),
    FuzzTarget("zed.settings.v1", "zed.settings", ".config/zed/settings.json"),
]
