"""aitrail catalog export: the shared plan, glob overlap, the YAML writer, determinism and the command.

The format-specific checks are in test_catalog_export_velociraptor.py,
test_catalog_export_velociraptor_files.py and
test_catalog_export_formats.py. Catalogs other than the real one are written
here by the tests themselves.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from pathlib import Path

import pytest
import yaml

from aitrail.collector import __version__
from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog import export
from aitrail.collector.catalog.export import ExportError, generate, yamltext
from aitrail.collector.catalog.export.overlap import globs_overlap, segments_overlap
from aitrail.collector.catalog.export.plan import build_plan, oses_for
from aitrail.collector.catalog.globs import match_path
from aitrail.collector.catalog.schema import Root

CATALOG = catalog_module.load()


def write_catalog(directory: Path, stores: str, roots: str) -> Path:
    """A one-agent catalog (agent 'probe') from YAML fragments of roots and stores."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "probe.yaml").write_text(
        "schema_version: 1\nagent: probe\nname: Probe agent\nsummary: A test agent. It names no real one.\n"
        f"docs: docs/agents/probe.md\nroots:\n{roots}\nstores:\n{stores}\n", encoding="utf-8")
    return directory


PROBE_ROOTS = """  - id: home_dir
    description: The probe's directory.
    paths: [.probe, AppData/Roaming/Probe, Library/Probe]
  - id: moved
    description: Only a setting names it.
    settings: [{root: home_dir, file: settings.json, key: storage}]
  - id: relocatable
    description: Has a default and an environment variable.
    paths: [.config/probe]
    env: [{var: PROBE_HOME}]
  - id: system
    description: Machine-wide.
    scope: system
    paths: [etc/probe, ProgramData/Probe]"""
PROBE_STORES = """  - id: sessions
    root: home_dir
    include: ["sessions/{a,b}/*.jsonl"]
    role: transcript
    format: jsonl
    description: Sessions.
  - id: moved_sessions
    root: moved
    include: ["*.jsonl"]
    role: transcript
    format: jsonl
    description: Moved sessions.
  - id: config
    root: relocatable
    include: [config.json]
    role: settings
    format: json
    description: Config.
  - id: policy
    root: system
    include: [policy.json]
    role: permission_state
    format: json
    description: Policy.
  - id: token
    root: home_dir
    include: [token.json]
    role: credential
    format: json
    collect: never
    description: The login token."""


@pytest.fixture
def probe(tmp_path: Path) -> catalog_module.Catalog:
    return catalog_module.load(write_catalog(tmp_path / "catalog", PROBE_STORES, PROBE_ROOTS))


# ---- the OS of each root path ---------------------------------------------------------------------------


@pytest.mark.parametrize(("paths", "scope", "path", "expected"), [
    (("AppData/Roaming/Code",), "home", "AppData/Roaming/Code", ("windows",)),
    (("OneDrive/Documents/Cline",), "home", "OneDrive/Documents/Cline", ("windows",)),
    (("Library/Application Support/Code",), "home", "Library/Application Support/Code", ("macos",)),
    ((".Trash",), "home", ".Trash", ("macos",)),
    # collect looks in every path of a root on every home: an export collects no less
    ((".config/Code", "Library/Application Support/Code"), "home", ".config/Code", ("linux", "macos", "windows")),
    ((".local/share/opencode",), "home", ".local/share/opencode", ("linux", "macos", "windows")),
    ((".claude", ".config/claude"), "home", ".config/claude", ("linux", "macos", "windows")),
    ((".claude",), "home", ".claude", ("linux", "macos", "windows")),
    (("Documents/Cline",), "home", "Documents/Cline", ("linux", "macos", "windows")),
    ((".",), "home", ".", ("linux", "macos", "windows")),
    (("etc/codex",), "system", "etc/codex", ("linux",)),
    (("ProgramData/Codex",), "system", "ProgramData/Codex", ("windows",)),
    (("Program Files/ClaudeCode",), "system", "Program Files/ClaudeCode", ("windows",)),
    (("Library/Application Support/ClaudeCode",), "system", "Library/Application Support/ClaudeCode", ("macos",)),
])
def test_each_root_path_gets_the_oses_of_the_rule(paths, scope, path, expected):
    assert oses_for(Root(id="r", description="d", paths=paths, scope=scope), path) == expected


def test_a_system_path_without_a_rule_is_refused_not_guessed():
    with pytest.raises(ExportError, match="no OS rule for the system path 'opt/agent'"):
        oses_for(Root(id="r", description="d", paths=("opt/agent",), scope="system"), "opt/agent")


def test_the_plan_joins_paths_expands_braces_and_keeps_scope(probe):
    plan = build_plan(probe)
    sessions = {(pattern.path, pattern.oses) for pattern in plan.collect if pattern.store == "sessions"}
    assert sessions == {(f"{base}/sessions/{branch}/*.jsonl", oses)
                        for base, oses in ((".probe", ("linux", "macos", "windows")),
                                           ("AppData/Roaming/Probe", ("windows",)), ("Library/Probe", ("macos",)))
                        for branch in "ab"}
    policy = {(pattern.scope, pattern.path) for pattern in plan.collect if pattern.store == "policy"}
    assert policy == {("system", "etc/probe/policy.json"), ("system", "ProgramData/Probe/policy.json")}
    assert not [pattern for pattern in plan.collect if pattern.store in ("moved_sessions", "token")]


def test_roots_only_an_env_or_a_setting_names_are_listed_not_dropped(probe):
    notes = {note.root: note for note in build_plan(probe).roots}
    assert notes["moved"].exported is False and notes["moved"].settings == ("<home_dir>/settings.json: storage",)
    assert notes["moved"].stores == ("moved_sessions",)
    assert notes["relocatable"].exported is True and notes["relocatable"].env == ("$PROBE_HOME",)
    readme = generate(probe, "uac").files["README.md"]
    assert "not exportable: `probe` root `moved` (stores moved_sessions) is set by a setting " in readme
    assert "default paths only: `probe` root `relocatable` may also be moved by $PROBE_HOME" in readme


def test_the_exclusions_are_every_agents_credentials_even_when_one_agent_is_exported():
    plan = build_plan(CATALOG, ["pi"])
    assert {pattern.agent for pattern in plan.collect} == {"pi"}
    everyone = {agent.agent for agent in CATALOG.agents
                if any(store.collect == "never" for store in agent.stores)}
    assert {pattern.agent for pattern in plan.never} == everyone
    assert all(pattern.role == "credential" for pattern in plan.never)


def test_every_store_exclude_of_the_catalog_is_another_stores_include():
    assert build_plan(CATALOG).uncovered_store_excludes == ()


def test_an_uncovered_store_exclude_is_named_in_the_notes(tmp_path):
    stores = PROBE_STORES.replace('include: ["sessions/{a,b}/*.jsonl"]',
                                  'include: ["sessions/{a,b}/*.jsonl"]\n    exclude: ["sessions/a/x.jsonl"]')
    probe = catalog_module.load(write_catalog(tmp_path / "c", stores, PROBE_ROOTS))
    readme = generate(probe, "kape").files["README.md"]
    assert "`probe.sessions: sessions/a/x.jsonl`" in readme


# ---- glob overlap ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("left", "right"), [
    (".claude/**", ".claude/.credentials.json"),
    (".claude/*.json", ".claude/.credentials.json"),
    (".claude/*", ".claude/.credentials.json"),
    ("**", ".codex/auth.json"),
    (".claude/projects/**/x.jsonl", ".claude/**/x.jsonl"),
    ("a/**/b/*.x", "a/q/r/b/c.x"),
    ("a/[0-9]x", "a/*"),
    ("a/[!0-9]x", "a/bx"),
    ("a/?.json", "a/k.json"),
    (".Claude/Token.json", ".claude/token.JSON"),  # case is ignored: Windows, macOS, KAPE and plaso ignore it
    ("a/[!a]", "a/A"),  # 'A' is outside the class, and is 'a' where case is ignored
    ("sessions/*.key", "sessions/*.k*"),
])
def test_globs_that_share_a_path_overlap(left, right):
    assert globs_overlap(left, right) and globs_overlap(right, left)


@pytest.mark.parametrize(("left", "right"), [
    (".claude/*.md", ".claude/.credentials.json"),
    (".claude/projects/*/*.jsonl", ".claude/.credentials.json"),
    (".claude/*/x", ".claude/x"),
    ("a/**/b", "a/c"),
    ("a/[0-9]x", "a/[!0-9]x"),
    ("a/*.json", "a/*.toml"),
    ("a/[!aA]", "a/a"),
    ("backups/**", "sessions/*.key"),
])
def test_globs_that_share_no_path_do_not(left, right):
    assert not globs_overlap(left, right) and not globs_overlap(right, left)


def _case_variants(name: str):
    return ("".join(letters) for letters in itertools.product(*({char.lower(), char.upper()} for char in name)))


def test_segment_overlap_agrees_with_the_catalogs_matcher_on_concrete_names_case_ignored():
    names = ["a", "ab", "abc", "x.json", ".creds.json", "a1", "9z", "state_5.sqlite", "state_.sqlite", "B"]
    segments = ["*", "a*", "*.json", "?b*", "[0-9]*", "[!a]*", "[!aA]*", "state_*.sqlite", ".c*", "a?", "[a-c]"]
    for segment in segments:
        for name in names:
            expected = any(match_path(segment, variant) for variant in _case_variants(name))
            assert segments_overlap(segment, name) == expected, (segment, name)


# ---- the YAML writer ------------------------------------------------------------------------------------


def test_the_yaml_writer_round_trips_every_kind_of_scalar_it_writes():
    document = {"name": "Generic.Collection.AITrail", "block": "SELECT *\n  FROM info()\n", "strip": "a\nb",
                "words": ["Y", "N", "yes", "off", "null", "~", "1.0", "0x1", "3", "-", "--agent", "[]", "{}", "%x%",
                          "a: b", "a #b", "it's", 'say "x"', "C:\\Users\\%user%\\", " lead", "tab\there", "ümlaut"],
                "number": 3, "float": 1.0, "flag": False, "empty": [],
                "nested": [{"name": "x", "choices": ["a", "b"]}]}
    assert yaml.safe_load(yamltext.dump(document)) == document


# ---- determinism, headers, the command ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_an_export_is_the_same_bytes_each_time_with_no_date_and_a_header_naming_version_and_digest(fmt):
    first, second = generate(CATALOG, fmt).files, generate(CATALOG, fmt).files
    assert first == second
    stamp = f"aitrail {__version__} from catalog sha256:{CATALOG.digest}"
    for name, text in first.items():
        assert stamp in text.splitlines()[0], name
        catalog_text = b"".join(data for _, data in CATALOG.raw_files).decode()
        for date in re.findall(r"(?:19|20)\d\d-\d\d-\d\d", text):  # only the catalog's own words carry dates
            assert date in catalog_text, f"{name} carries the date {date}"


def test_the_digest_in_the_header_follows_the_catalog(probe, tmp_path):
    before = generate(probe, "forensic-artifacts").files
    path = probe.directory / "probe.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Policy.", "Policy, changed."), encoding="utf-8")
    changed = catalog_module.load(probe.directory)
    after = generate(changed, "forensic-artifacts").files
    assert changed.digest != probe.digest
    assert changed.digest in after["README.md"] and probe.digest not in after["README.md"]
    assert before.keys() == after.keys()


def test_the_command_writes_the_files_and_prints_each_one(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("catalog", "export", "--format", "kape", "-o", out, "--agent", "codex", "--agent", "claude-code")
    assert result.exit_code == 0, result.output
    printed = [line.removeprefix("wrote ") for line in result.stdout.splitlines()]
    assert sorted(Path(line).name for line in printed) == sorted(p.name for p in out.iterdir())
    assert sorted(p.name for p in out.iterdir()) == ["AITrail.tkape", "AITrailClaudeCode.tkape", "AITrailCodex.tkape",
                                                     "README.md"]
    expected = generate(CATALOG, "kape", ("codex", "claude-code")).files
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == expected
    again = cli("catalog", "export", "--format", "kape", "-o", out, "--agent", "codex", "--agent", "claude-code")
    assert again.exit_code == 0
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.iterdir()} == {
        name: hashlib.sha256(text.encode()).hexdigest() for name, text in expected.items()}


def test_the_command_says_which_velociraptor_tools_are_not_pinned(cli, tmp_path):
    result = cli("catalog", "export", "--format", "velociraptor", "-o", tmp_path / "vr",
                 "--tool-sha256", "AITrail_linux_amd64=" + "a" * 64, "--tool-url", "AITrail_linux_amd64=https://x/y.zip")
    assert result.exit_code == 0
    assert ("warning: tools without --tool-sha256 (not pinned; an administrator must pin them): AITrail_linux_arm64, "
            "AITrail_darwin_amd64, AITrail_darwin_arm64") in result.stderr
    assert "tool AITrail_darwin_arm64: no url" in result.stderr and "tool AITrail_linux_amd64:" not in result.stderr


def test_a_directory_that_cannot_be_written_is_named_not_a_traceback(cli, tmp_path):
    (tmp_path / "file").write_text("x")
    result = cli("catalog", "export", "--format", "uac", "-o", tmp_path / "file" / "out")
    assert result.exit_code == 1 and "cannot write into" in result.stderr


def test_the_commands_format_list_is_the_packages(cli):
    result = cli("catalog", "export", "--help")
    choices = re.search(r"\[([a-z|-]+)\]", " ".join(result.output.split())).group(1).split("|")
    assert choices == list(export.FORMATS)


@pytest.mark.parametrize(("args", "message"), [
    (["--format", "uac", "--agent", "nobody"], "unknown agent(s): nobody"),
    (["--format", "kape", "--tool-sha256", "AITrail_linux_amd64=" + "0" * 64], "only apply to --format velociraptor"),
    (["--format", "velociraptor", "--tool-sha256", "AITrail_linux_amd64=XYZ"], "is not 64 lowercase hex digits"),
    (["--format", "velociraptor", "--tool-sha256", "AITrail_plan9_mips=" + "0" * 64],
     "unknown tool 'AITrail_plan9_mips'"),
    (["--format", "velociraptor", "--tool-url", "AITrail_linux_amd64=ftp://x/y.zip"], "is not an http(s) URL"),
])
def test_what_cannot_be_exported_is_named_and_exits_1(cli, tmp_path, args, message):
    result = cli("catalog", "export", "-o", tmp_path / "out", *args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_malformed_name_value_option_is_a_usage_error(cli, tmp_path):
    result = cli("catalog", "export", "--format", "velociraptor", "-o", tmp_path, "--tool-url", "AITrail_linux_amd64")
    assert result.exit_code == 2 and "takes NAME=VALUE" in result.output


@pytest.mark.parametrize("fmt", ["kape", "forensic-artifacts"])
def test_a_format_without_exclusions_refuses_a_glob_that_could_copy_a_credential(tmp_path, fmt):
    stores = PROBE_STORES.replace('include: ["sessions/{a,b}/*.jsonl"]', 'include: ["sessions/**", "*.json"]')
    probe = catalog_module.load(write_catalog(tmp_path / "c", stores, PROBE_ROOTS))
    with pytest.raises(ExportError, match=r"probe\.sessions's glob '\.probe/\*\.json' can match the never-collected "
                                          r"probe\.token \(\.probe/token\.json\)"):
        generate(probe, fmt)
    for excluding in ("velociraptor", "uac"):  # formats with exclusions export it, excluding the token
        assert generate(probe, excluding).files


def test_a_glob_kape_cannot_express_is_named(tmp_path):
    stores = PROBE_STORES.replace('include: ["sessions/{a,b}/*.jsonl"]', 'include: ["s[0-9]/x.jsonl"]')
    probe = catalog_module.load(write_catalog(tmp_path / "c", stores, PROBE_ROOTS))
    with pytest.raises(ExportError, match=r"KAPE cannot express the folder 's\[0-9\]' of probe\.sessions's glob "
                                          r"'\.probe/s\[0-9\]/x\.jsonl'"):
        generate(probe, "kape")


def test_two_globstars_are_refused_by_forensic_artifacts(tmp_path):
    stores = PROBE_STORES.replace('include: ["sessions/{a,b}/*.jsonl"]', 'include: ["s/**/t/**/x.jsonl"]')
    probe = catalog_module.load(write_catalog(tmp_path / "c", stores, PROBE_ROOTS))
    with pytest.raises(ExportError, match="one globstar per path; '.probe/s/\\*\\*/t/\\*\\*/x.jsonl' has 2"):
        generate(probe, "forensic-artifacts")
