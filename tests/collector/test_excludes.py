"""Catalog excludes: braces expanded, and the quick literal-runs test never changes an answer."""

from __future__ import annotations

from pathlib import Path

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.collector.finding.expand import _ExcludeSpec
from tests.conftest import bundle_records, write_tree

CATALOG = """\
schema_version: 1
agent: braces
name: Braces agent
summary: Test-only agent whose root exclude has braces.
docs: docs/agents/braces.md
roots:
  - id: home_dir
    description: The agent's directory.
    paths: [.braces]
    exclude: ["{sessions,teams}/*/checkpoints", "teams/{a,b}*/cache"]
stores:
  - id: sessions
    root: home_dir
    include: ["sessions/**/*.jsonl"]
    role: transcript
    format: jsonl
    description: JSONL transcripts, any depth.
  - id: teams
    root: home_dir
    include: ["teams/**"]
    role: memory
    format: json
    description: Anything under teams/.
"""


def test_an_exclude_with_braces_prunes_every_alternative(cli, tmp_path: Path):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "braces.yaml").write_text(CATALOG)
    home = write_tree(tmp_path / "alice", {
        ".braces/sessions/p1/s.jsonl": "{}\n",
        ".braces/sessions/p1/checkpoints/c.jsonl": "checkpoint\n",
        ".braces/teams/t1/notes.json": "{}",
        ".braces/teams/t1/checkpoints/big.json": "checkpoint",
        ".braces/teams/alpha/cache/x.json": "cache",
        ".braces/teams/zeta/cache/x.json": "kept: no alternative names zeta",
    })
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--catalog", catalog, "--home", home, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    got = {record["path"]: record for record in bundle_records(out)}
    assert got[".braces/sessions/p1/s.jsonl"]["outcome"] == "collected"
    assert got[".braces/teams/t1/notes.json"]["outcome"] == "collected"
    assert got[".braces/teams/zeta/cache/x.json"]["outcome"] == "collected"
    for pruned, rule in ((".braces/sessions/p1/checkpoints", ".braces/sessions/*/checkpoints"),
                         (".braces/teams/t1/checkpoints", ".braces/teams/*/checkpoints"),
                         (".braces/teams/alpha/cache", ".braces/teams/a*/cache")):
        assert got[pruned]["outcome"] == "excluded"
        assert rule in got[pruned]["reason"]
        assert not [path for path in got if path.startswith(pruned + "/")]
    assert ".braces/sessions/p1/checkpoints/c.jsonl" not in got
    assert ".braces/teams/t1/checkpoints/big.json" not in got


SEGMENT = st.sampled_from(["a", "b", "ab", "*", "a*", "*b", "a*b", "?", "?b", "[ab]", "a[!a]b", "**", "x.json",
                           "*.json", "c", "c ", "a\\*"])
NAME = st.sampled_from(["a", "b", "ab", "ba", "c", "x.json", "y.json", "abc", "aab", "a*", "c "])


def _reference_rule(patterns: tuple[str, ...], candidate: str) -> str | None:
    if not patterns or not pathspec.GitIgnoreSpec.from_lines(patterns).match_file(candidate):
        return None
    for pattern in patterns:
        if pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(candidate):
            return pattern.lstrip("/")
    return None


@settings(max_examples=1000, deadline=None)
@given(
    patterns=st.lists(st.lists(SEGMENT, min_size=1, max_size=4), max_size=3),
    anchored=st.booleans(),
    path=st.lists(NAME, min_size=1, max_size=5),
    is_dir=st.booleans(),
)
def test_the_literal_runs_shortcut_gives_pathspec_s_answer(patterns, anchored, path, is_dir):
    texts = tuple(("/" if anchored else "") + "/".join(segments) for segments in patterns)
    spec = _ExcludeSpec(texts, texts)
    relpath = "/".join(path)
    candidate = relpath + "/" if is_dir else relpath
    expected = _reference_rule(texts, candidate)
    assert spec.rule_for(relpath, is_dir) == expected
    assert spec.refined_out(relpath, is_dir) is (expected is not None)
