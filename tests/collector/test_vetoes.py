"""Credential globs grouped by first segment answer exactly as one case-insensitive regex of them all."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.catalog.globs import path_regex
from aitrail.collector.finding.vetoes import NeverGlobs

# Names that fold onto each other under re.IGNORECASE, ASCII or not: Kelvin sign and k,
# long s and s, dotless i and i, capital I with dot and i, sharp s.
FIRST = st.sampled_from([".claude", ".Claude", ".CLAUDE", ".config", "AppData", "appdata", ".\u212aube", ".kube",
                         ".\u017fsh", ".ssh", ".\u0131", ".i", "\u0130", "I", "stra\u00dfe", "*", "a*", "**",
                         ".c?aude", "[.]claude"])
REST = st.sampled_from(["auth.json", "AUTH.JSON", ".credentials.json", "x", "**", "*.json", "sub", "\u212aey"])
PATH_PART = st.sampled_from([".claude", ".CLAUDE", ".config", "APPDATA", "appdata", ".\u212aube", ".kube", ".KUBE",
                             ".\u017fsh", ".ssh", ".SSH", ".\u0131", ".i", ".I", "\u0130", "i", "strasse",
                             "stra\u00dfe", "auth.json", "AUTH.json.bak", ".credentials.json", "x", "sub", "key"])


def _one_regex(variants: list[tuple[str, ...]]) -> re.Pattern[str]:
    body = "|".join(path_regex(segments) for segments in variants)
    return re.compile(f"(?:{body})\\Z", re.DOTALL | re.IGNORECASE)


@settings(max_examples=400, deadline=None)
@given(globs=st.lists(st.tuples(FIRST, st.lists(REST, max_size=2)), min_size=1, max_size=6),
       paths=st.lists(st.lists(PATH_PART, min_size=1, max_size=4), min_size=1, max_size=8))
def test_grouped_globs_match_what_one_regex_matches(globs, paths):
    variants = sorted({(first, *rest) for first, rest in globs})
    grouped, whole = NeverGlobs(variants), _one_regex(variants)
    for parts in paths:
        path = "/".join(parts)
        assert grouped.match(path) is (whole.match(path) is not None), (variants, path)


@pytest.mark.parametrize("glob_first, path_first", [
    (".ssh", ".\u017fsh"), (".kube", ".\u212aube"), (".i", ".\u0131"), ("i", "\u0130"), (".\u212aube", ".kube"),
    (".\u017fsh", ".SSH"), (".Claude", ".cLAUDE"),
])
def test_names_the_regex_folds_together_find_each_other(glob_first, path_first):
    variants = [(glob_first, "auth.json")]
    path = f"{path_first}/AUTH.json"
    assert _one_regex(variants).match(path)  # the regex folds them: so must the groups
    assert NeverGlobs(variants).match(path)


def test_a_group_is_compiled_only_when_a_path_needs_it():
    grouped = NeverGlobs([(".claude", ".credentials.json"), (".codex", "auth.json"), ("*", "secret")])
    assert grouped.match(".claude/.CREDENTIALS.json") and not grouped.match(".claude/projects/p/s.jsonl")
    assert grouped.match("anything/secret") and not grouped.match(".codex/auth.json.bak")
    assert sorted(key for key in grouped._compiled if key is not None) == [".claude", ".codex", "anything"]
