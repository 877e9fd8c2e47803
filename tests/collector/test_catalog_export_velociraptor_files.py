"""The Velociraptor export's no-binary artifacts, ``<OS>.Collection.AITrailFiles``, replayed in Python.

No Velociraptor can run here, so its pipeline is replayed over sample paths
of every glob of the catalog on Linux, macOS and Windows: the collectionSpec
rows' brace groups expanded as ``glob.ExpandBraces`` does, matched as
Velociraptor's glob matches (``glob/glob.go``, ``Velocidex/velociraptor@cd02ac66``),
then ``WHERE NOT OSPath =~ NeverCollect`` and the row's ``Prune``. What it keeps
must be exactly what aitrail's catalog collects, and never a credential. The
sample helpers here are shared with test_catalog_export_formats.py.
"""

from __future__ import annotations

import csv
import re

import pytest
import yaml

from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog.export import generate, velociraptor
from aitrail.collector.catalog.export.plan import build_plan, split_glob
from aitrail.collector.catalog.globs import match_path
from aitrail.collector.catalog.globs import path_regex as catalog_path_regex
from aitrail.collector.catalog.globs import split_segments as catalog_split

CATALOG = catalog_module.load()
PLAN = build_plan(CATALOG)
FILES_BY_OS = {os_name: f"{name}.yaml" for os_name, name in velociraptor.FILES_NAMES.items()}


@pytest.fixture(scope="module")
def artifacts() -> dict[str, dict]:
    return {name: yaml.safe_load(text) for name, text in generate(CATALOG, "velociraptor").files.items()
            if name.endswith(".yaml")}


# ---- the files artifact --------------------------------------------------------------------------------

# Velocidex/velociraptor@cd02ac66 artifacts/definitions/Generic/Collectors/File.yaml: its two sources' columns
FILE_COLLECTOR_SOURCES = {
    "All Matches Metadata": ["Created", "Changed", "LastAccessed", "Modified", "Size", "SourceFile"],
    "Uploads": ["CopiedOnTimestamp", "SourceFile", "DestinationFile", "FileSize", "SourceFileSha256", "Created",
                "Changed", "Modified", "LastAccessed"],
}


def _select_columns(text: str) -> tuple[list[str], str]:
    """(column names, the FROM source's first word) of ``SELECT ... FROM x``: ``expr AS Name`` or a bare name."""
    columns, source = re.split(r"\sFROM\s", text, maxsplit=1)
    parts, depth, current = [], 0, ""
    for char in columns:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.split(" AS ")[-1].strip() for part in parts], source.split()[0]


def final_columns(query: str) -> list[str]:
    """The columns of a query's last statement; ``SELECT * FROM name`` is followed to ``LET name <= SELECT``."""
    columns, source = _select_columns(query.rsplit("\nSELECT ", 1)[1])
    if columns == ["*"]:
        columns, _ = _select_columns(query.split(f"LET {source} <= SELECT ", 1)[1])
    return columns


@pytest.mark.parametrize("name", FILES_BY_OS.values())
def test_the_files_artifact_has_generic_collectors_files_sources_columns_and_upload(artifacts, name):
    files = artifacts[name]
    sources = {source["name"]: source["query"] for source in files["sources"]}
    assert list(sources) == list(FILE_COLLECTOR_SOURCES)
    for name, columns in FILE_COLLECTOR_SOURCES.items():
        assert final_columns(sources[name]) == columns, name
    assert "upload(file=SourceFile, accessor=Accessor, mtime=Modified) AS Upload" in sources["Uploads"]
    assert "WHERE NOT IsDir\n      AND NOT OSPath =~ NeverCollect" in sources["All Matches Metadata"]


def samples(glob: str, dirs: tuple[str, ...] = ()) -> list[str]:
    """Concrete relative paths a brace-free glob matches: ``**`` as no directory, as two, and as each of ``dirs``."""
    paths = [[]]
    segments = split_glob(glob)
    for index, segment in enumerate(segments):
        if segment == "**":
            tail = ["f"] if index == len(segments) - 1 else []
            paths = [path + extra + tail for path in paths for extra in ([], ["d1", "d2"], *([name] for name in dirs))]
            continue
        name = re.sub(r"\[!([^\]]*)\]", lambda m: next(c for c in "zq_" if c not in m.group(1)), segment)
        name = re.sub(r"\[([^\]]*)\]", lambda m: m.group(1)[0], name)
        paths = [path + [name.replace("*", "x").replace("?", "q")] for path in paths]
    return ["/".join(path) for path in paths]


def pruned_names(plan) -> tuple[str, ...]:
    """The literal directory names of every pruned glob (node_modules, cache ...), for samples to walk into."""
    return tuple(sorted({segment for prune in plan.prunes for segment in split_glob(prune.glob)
                         if segment != "**" and not any(char in segment for char in "*?[")}))


HOMES = {"linux": ["/home/alice", "/root"], "macos": ["/Users/bob", "/var/root"], "windows": ["C:\\Users\\carol"]}


def absolute(os_name: str, scope: str, relative: str) -> list[str]:
    if os_name == "windows":
        bases = HOMES["windows"] if scope == "home" else ["C:"]
        return [base + "\\" + relative.replace("/", "\\") for base in bases]
    bases = HOMES[os_name] if scope == "home" else [""]
    return [f"{base}/{relative}" for base in bases]


def _ci_match(glob: str, path: str) -> bool:
    return match_path(glob.lower(), path.lower())


def ends_with_never(relative: str) -> bool:
    """A path that ends (at a directory boundary) with some never-collected glob: what the regex drops."""
    parts = relative.split("/")
    return any(_ci_match(never.path, "/".join(parts[start:])) for never in PLAN.never for start in range(len(parts)))


def test_the_never_collect_regex_matches_every_credential_on_every_os_and_nothing_else():
    regex = re.compile(velociraptor.never_regex(PLAN))
    checked = 0
    for never in PLAN.never:
        for os_name in never.oses:
            for relative in samples(never.path):
                for path in absolute(os_name, never.scope, relative):
                    assert regex.search(path), path
                    checked += 1
    assert checked > 300
    for pattern in PLAN.collect[::7]:
        for relative in samples(pattern.path):
            for path in absolute(pattern.oses[0], pattern.scope, relative):
                assert bool(regex.search(path)) == ends_with_never(relative), path


GROUPING = re.compile(r"^(.+)[{]([^{}]+)[}](.*)$", re.S)  # glob/glob.go _GROUPING_PATTERN


def expand_braces(pattern: str, out: list[str]) -> list[str]:
    """Velociraptor's glob.ExpandBraces (glob/glob.go): the last group first, alternatives split on commas."""
    match = GROUPING.match(pattern)
    if match:
        for item in match.group(2).split(","):
            expand_braces(match.group(1) + item + match.group(3), out)
    elif pattern not in out:
        out.append(pattern)
    return out


def components(path: str) -> str:
    """A path as '/'-joined components (either separator, empty ones dropped), as Velociraptor's glob sees it."""
    return "/".join(part for part in re.split(r"[\\/]", path) if part)


def velociraptor_glob_regex(glob: str) -> str:
    """Velociraptor's glob over components (glob/glob.go) as a regex, for ``components()`` of a path.

    Case is ignored by the caller; ``*`` stays within a component; ``**`` is 0
    to 30 directories before something and 1 to 30 components at the end
    (``/foo/**`` does not match ``/foo``).
    """
    parts = components(glob).split("/")
    out = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(r"(?:[^/]+/){0,29}[^/]+" if last else r"(?:[^/]+/){0,30}")
            continue
        body = re.escape(part).replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
        body = re.sub(r"\\\[(!?)(.*?)\\\]", lambda m: "[" + ("^" if m.group(1) else "") + m.group(2).replace("\\", "")
                      + "]", body)
        out.append(body + ("" if last else "/"))
    return "".join(out)


def _catalog_regex(globs: list[str], suffix: bool = False) -> re.Pattern:
    """The catalog's own matcher (collector/catalog/globs.py path_regex) for several globs, case ignored."""
    body = "|".join(catalog_path_regex(catalog_split(glob)) for glob in globs)
    return re.compile(("(?:^|/)" if suffix else "^") + f"(?:{body})\\Z", re.I | re.S)


def sample_tree(plan) -> dict[str, set[str]]:
    """Per OS, absolute sample paths of every collected and never-collected glob, some inside pruned directories."""
    tree: dict[str, set[str]] = {os_name: set() for os_name in HOMES}
    dirs = pruned_names(plan)
    for pattern in (*plan.collect, *plan.never):
        for os_name in pattern.oses:
            for relative in samples(pattern.path, dirs):
                tree[os_name].update(absolute(os_name, pattern.scope, relative))
    return tree


def replay_files_artifacts(artifacts: dict[str, dict], tree: dict[str, set[str]]) -> dict[str, set[str]]:
    """What each OS's files artifact keeps of that OS's part of the tree."""
    return {os_name: replay_files_artifact(artifacts[FILES_BY_OS[os_name]], {os_name: files})[os_name]
            for os_name, files in tree.items()}


def replay_files_artifact(artifact: dict, tree: dict[str, set[str]]) -> dict[str, set[str]]:
    """What one files artifact keeps of the tree: brace expansion, glob, WHERE NOT NeverCollect, the row's Prune."""
    spec = list(csv.DictReader(next(parameter["default"] for parameter in artifact["parameters"]
                                    if parameter["name"] == "collectionSpec").splitlines()))
    query = artifact["sources"][0]["query"]
    never = re.compile(re.search(r"LET NeverCollect <= '''(.*?)'''", query).group(1))
    kept: dict[str, set[str]] = {}
    for os_name, files in tree.items():
        kept[os_name] = set()
        for row in (row for row in spec if row["OS"] == os_name):
            glob = ("C:" + row["Glob"]) if os_name == "windows" else row["Glob"]
            matcher = re.compile("(?:" + "|".join(velociraptor_glob_regex(expanded)
                                                  for expanded in expand_braces(glob, [])) + r")\Z", re.I | re.S)
            kept[os_name] |= {path for path in files if matcher.match(components(path)) and not never.search(path)
                              and not (row["Prune"] and re.search(row["Prune"], path))}
    return kept


def _relative(os_name: str, path: str) -> list[tuple[str, str]]:
    """(scope, relative path) readings of a sample path: under one of the OS's homes, or from the root."""
    readings = []
    parts = components(path)
    for home in HOMES[os_name]:
        if parts.lower().startswith(components(home).lower() + "/"):
            readings.append(("home", parts[len(components(home)) + 1:]))
    root = "C:/" if os_name == "windows" else ""
    if parts.startswith(root):
        readings.append(("system", parts[len(root):]))
    return readings


def expected_files(plan, tree: dict[str, set[str]]) -> dict[str, set[str]]:
    """What aitrail's catalog says the files artifact keeps of the tree.

    A path is kept when a collected glob of its OS matches it and it is not
    below a pruned directory of that glob's root, unless it ends with a
    never-collected glob (the exclusion is not anchored to the homes).
    """
    ends_with_never = _catalog_regex([never.path for never in plan.never], suffix=True)
    expected: dict[str, set[str]] = {}
    for os_name, files in tree.items():
        groups: dict[tuple, list[str]] = {}
        for pattern in plan.for_os(os_name):
            prunes = tuple(sorted(prune.path + "/**" for prune in plan.prunes if (prune.agent, prune.root, prune.base)
                                  == (pattern.agent, pattern.root, pattern.base)))
            groups.setdefault((pattern.scope, prunes), []).append(pattern.path)
        matchers = [(scope, _catalog_regex(globs), _catalog_regex(list(prunes)) if prunes else None)
                    for (scope, prunes), globs in groups.items()]
        expected[os_name] = {
            path for path in files for scope, relative in _relative(os_name, path)
            if not ends_with_never.search(relative)
            and any(group_scope == scope and globs.match(relative) and not (pruned and pruned.match(relative))
                    for group_scope, globs, pruned in matchers)}
    return expected


def test_the_files_artifact_keeps_exactly_what_the_catalog_collects_and_never_a_credential(artifacts):
    tree = sample_tree(PLAN)
    kept, expected = replay_files_artifacts(artifacts, tree), expected_files(PLAN, tree)
    for os_name in HOMES:
        credentials = {path for pattern in PLAN.never if os_name in pattern.oses for relative in samples(pattern.path)
                       for path in absolute(os_name, pattern.scope, relative)}
        assert credentials and not kept[os_name] & credentials
        assert kept[os_name] == expected[os_name], (sorted(kept[os_name] - expected[os_name])[:3],
                                                    sorted(expected[os_name] - kept[os_name])[:3])
        assert len(kept[os_name]) > 1000
        assert len(tree[os_name] - kept[os_name] - credentials) > 100  # pruned directories' files among them


PROBE = """schema_version: 1
agent: probe
name: Probe agent
summary: A test agent.
docs: docs/agents/probe.md
roots:
  - id: home_dir
    description: The probe's directory.
    paths: [.probe]
    exclude: [cache]
stores:
  - id: everything
    root: home_dir
    include: ["**"]
    role: transcript
    format: jsonl
    description: Everything under the directory.
  - id: token
    root: home_dir
    include: [token.json, "keys/*.pem"]
    role: credential
    format: json
    collect: never
    description: The login token.
"""


def test_a_glob_that_reaches_a_credential_still_never_uploads_it(tmp_path):
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "probe.yaml").write_text(PROBE, encoding="utf-8")
    probe = catalog_module.load(tmp_path / "catalog")
    plan = build_plan(probe)
    artifacts = {name: yaml.safe_load(text) for name, text in generate(probe, "velociraptor").files.items()
                 if name.endswith(".yaml")}
    names = ("token.json", "Token.JSON", "keys/a.pem", "sessions/s.jsonl", "cache/c.bin", "x/token.json")
    tree = {os_name: {path for name in names for path in absolute(os_name, "home", ".probe/" + name)}
            for os_name in HOMES}
    kept = replay_files_artifacts(artifacts, tree)
    for os_name in HOMES:
        assert {relative for path in kept[os_name] for _, relative in _relative(os_name, path)[:1]} == {
            ".probe/sessions/s.jsonl", ".probe/x/token.json"}  # x/token.json is not the catalogued .probe/token.json
        assert kept[os_name] == expected_files(plan, tree)[os_name]
