"""What the property tests feed each parser: one FuzzTarget per (parser id, file name).

Each agent lists its targets in ``tests/parsers/fuzz_targets_<agent>.py`` as
``TARGETS = [FuzzTarget(...), ...]``; tests/analyzer/test_parsers_fuzz.py
collects them all and checks that every registered parser id has one.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

import tests.parsers


@dataclass(frozen=True)
class FuzzTarget:
    parser_id: str
    store: str
    path: str  # home-relative path of the file under test (its name matters to some parsers)
    jsonl: bool = False  # every non-blank line must be cited by some row
    context: dict = field(default_factory=dict, hash=False, compare=False)  # {(store, path): bytes} for joins

    @property
    def name(self) -> str:
        return f"{self.parser_id}:{self.path.rsplit('/', 1)[-1]}"


def all_targets() -> list[FuzzTarget]:
    targets: list[FuzzTarget] = []
    for module in pkgutil.iter_modules(tests.parsers.__path__):
        if module.name.startswith("fuzz_targets_"):
            targets.extend(importlib.import_module(f"tests.parsers.{module.name}").TARGETS)
    return targets
