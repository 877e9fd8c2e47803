"""Warp files for the parser property tests."""

from tests.analyzer.fuzz import FuzzTarget

TARGETS = [
    FuzzTarget("warp.db.v1", "warp.warp_db", ".local/state/warp-terminal/warp.sqlite"),
]
