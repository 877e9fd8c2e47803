"""The KAPE, UAC and ForensicArtifacts exports, read back from the files they write.

KAPE cannot run here: its targets are checked against the keys of KapeFiles'
TargetGuide.guide, read back into globs and compared with the catalog, and
matched (with KAPE's Path + FileMask + Recursive rules, written here) against
every credential sample: none may match. UAC's structure is checked in CI by
reading the files as UAC does and replaying its find commands over sample
paths; with AITRAIL_UAC_DIR naming a UAC tree the real UAC validates the files
and collects a fake root with them. ForensicArtifacts definitions are
validated by the ``artifacts`` package's own validator (PyPI) and matched,
with plaso's globstar rule, against the credential samples.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog.export import generate, kape, uac
from aitrail.collector.catalog.export.forensic_artifacts import FILE_NAME, GROUP
from aitrail.collector.catalog.export.plan import build_plan, guid, split_glob
from aitrail.collector.catalog.globs import match_path
from tests.collector.test_catalog_export_velociraptor_files import PROBE, pruned_names, samples

CATALOG = catalog_module.load()
PLAN = build_plan(CATALOG)


def credential_samples(os_name: str) -> set[tuple[str, str]]:
    """(scope, relative path) samples of every never-collected glob that exists on one OS."""
    return {(never.scope, relative) for never in PLAN.never if os_name in never.oses
            for relative in samples(never.path)}


def collected_samples(os_name: str) -> set[tuple[str, str]]:
    """(scope, relative path) samples of every collected glob that exists on one OS."""
    return {(pattern.scope, relative) for pattern in PLAN.for_os(os_name) for relative in samples(pattern.path)}


def _ci(glob: str, path: str) -> bool:
    return match_path(glob.lower(), path.lower())


# ---- KAPE ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tkape() -> dict[str, dict]:
    files = generate(CATALOG, "kape").files
    return {name: yaml.safe_load(text) for name, text in files.items() if name.endswith(".tkape")}


def test_every_target_file_has_the_templates_keys_and_the_compound_names_them_all(tkape):
    names = set(tkape)
    for name, data in tkape.items():
        assert kape.validate_target(data, names) == [], name
        assert all(target["Category"] == "Apps" for target in data["Targets"])
    members = [target["Path"] for target in tkape[kape.COMPOUND]["Targets"]]
    assert sorted(members) == sorted(names - {kape.COMPOUND})
    ids = [data["Id"] for data in tkape.values()]
    assert len(set(ids)) == len(ids)
    assert tkape["AITrailClaudeCode.tkape"]["Id"] == guid("kape:claude-code")  # uuid5 of the agent id: stable


@pytest.mark.parametrize(("change", "problem"), [
    (lambda data: data.pop("Id"), "missing 'Id'"),
    (lambda data: data.update(Id="not-a-guid"), "is not a GUID"),
    (lambda data: data.update(Owner="me"), "unknown key 'Owner'"),
    (lambda data: data["Targets"][0].pop("Path"), "Targets[0]: missing 'Path'"),
    (lambda data: data["Targets"][0].update(Recursive="yes"), "Targets[0]: Recursive is not a boolean"),
    (lambda data: data["Targets"][0].update(Path="Users\\x\\"), "is not a drive-rooted folder"),
    (lambda data: data["Targets"][0].update(Path="Nope.tkape"), "compound member 'Nope.tkape' is not a target file"),
    (lambda data: data["Targets"][0].update(FileMasks="*"), "Targets[0]: unknown key 'FileMasks'"),
])
def test_the_target_check_refuses_what_the_template_does_not_allow(tkape, change, problem):
    data = yaml.safe_load(yaml.safe_dump(tkape["AITrailCodex.tkape"]))
    change(data)
    assert any(problem in message for message in kape.validate_target(data, set(tkape))), problem


def kape_glob(target: dict) -> tuple[str, str]:
    """(scope, catalog glob) of one KAPE target entry: Path's folders, ``**`` if Recursive, FileMask or ``*``."""
    path = target["Path"]
    scope, rest = ("home", path[len(kape.HOME):]) if path.startswith(kape.HOME) else ("system", path[3:])
    folders = [folder for folder in rest.split("\\") if folder]
    return scope, "/".join([*folders, *(["**"] if target.get("Recursive") else []), target.get("FileMask", "*")])


def kape_matches(target: dict, scope: str, relative: str) -> bool:
    """KAPE's rule for a file, written from TargetGuide.guide.

    The file is under Path (``*`` folder wildcards), at any depth when
    Recursive, and its name matches FileMask (all files without one); case
    is ignored, as on Windows.
    """
    target_scope, glob = kape_glob(target)
    if target_scope != scope:
        return False
    folders, mask = glob.rsplit("/", 1) if "/" in glob else ("", glob)
    parts = relative.split("/")
    prefix = [folder for folder in folders.split("/") if folder and folder != "**"]
    if len(parts) <= len(prefix) or not all(fnmatch.fnmatch(p.lower(), f.lower()) for p, f in zip(parts, prefix,
                                                                                                    strict=False)):
        return False
    below = parts[len(prefix):]
    if len(below) > 1 and not target.get("Recursive"):
        return False
    return fnmatch.fnmatch(below[-1].lower(), mask.lower())


def test_kape_targets_are_the_catalogs_windows_globs_exactly(tkape):
    written = {kape_glob(target) for name, data in tkape.items() if name != kape.COMPOUND
               for target in data["Targets"]}
    expected = set()
    for pattern in PLAN.for_os("windows"):
        segments = split_glob(kape.widened(pattern).path)  # a class in a FileMask as one '?' per class
        if segments[-1] == "**":
            segments.append("*")
        expected.add((pattern.scope, "/".join(segments)))
    assert written == expected


def test_a_class_kape_cannot_express_is_widened_never_narrowed():
    pattern = next(pattern for pattern in PLAN.for_os("windows") if "[0-9]" in pattern.glob.rpartition("/")[2])
    wide = kape.widened(pattern)
    assert "[" not in wide.path and wide.path.count("?") == pattern.path.rpartition("/")[2].count("[")
    taken = pattern.path.replace("[0-9]", "7").replace("*", "x")  # a name the catalog's glob takes
    assert fnmatch.fnmatchcase(taken, pattern.path) and fnmatch.fnmatchcase(taken, wide.path)


def test_no_kape_target_can_copy_a_credential(tkape):
    targets = [target for name, data in tkape.items() if name != kape.COMPOUND for target in data["Targets"]]
    for os_name in ("windows", "linux", "macos"):  # a Windows disk can hold any OS's dot-directories
        for scope, relative in credential_samples(os_name):
            hits = [target["Path"] for target in targets if kape_matches(target, scope, relative)]
            assert not hits, (relative, hits)
    copied = {(scope, relative) for scope, relative in collected_samples("windows")
              if any(kape_matches(target, scope, relative) for target in targets)}
    assert copied == collected_samples("windows")  # the matcher is not vacuous: every collected sample is copied


# ---- UAC ----------------------------------------------------------------------------------------------

# tclahr/uac@7376467 lib/validate_artifact.sh: the keys an entry may have, and the values of the closed ones
UAC_KEYS = {"collector", "command", "compress_output_file", "condition", "description", "exclude_file_system",
            "exclude_name_pattern", "exclude_nologin_users", "exclude_path_pattern", "file_type", "foreach",
            "ignore_date_range", "is_file_list", "max_depth", "max_file_size", "min_file_size", "modifier",
            "name_pattern", "no_group", "no_user", "output_directory", "output_file", "path_pattern", "path",
            "permissions", "redirect_stderr_to_stdout", "supported_os"}
UAC_OSES = {"all", "aix", "esxi", "freebsd", "linux", "macos", "netbsd", "netscaler", "openbsd", "solaris"}
MOUNT = "/mnt/image"
UAC_HOMES = {"linux": "/home/alice", "macos": "/Users/bob"}


@pytest.fixture(scope="module")
def uac_files() -> dict[str, str]:
    return {name: text for name, text in generate(CATALOG, "uac").files.items() if name.endswith(".yaml")}


def test_uac_files_have_uacs_structure(uac_files):
    assert sorted(uac_files) == sorted(uac.file_name(agent) for agent in CATALOG.agents)
    for name, text in uac_files.items():
        version, entries = uac.read_artifact(text)
        assert version == PLAN.version and entries, name
        for entry in entries:
            assert set(entry) <= UAC_KEYS, set(entry) - UAC_KEYS
            assert entry["collector"] == "file" and entry["description"]
            assert set(uac.list_items(entry["supported_os"])) <= {"linux", "macos"} <= UAC_OSES
            assert uac.list_items(entry["file_type"]) == ["f"] and entry["ignore_date_range"] == "true"
            assert re.match(r"(%user_home%|/)", entry["path"])
            assert "max_depth" not in entry or int(entry["max_depth"]) > 0
            assert all(item.startswith("*/") for key in ("path_pattern", "exclude_path_pattern") if key in entry
                       for item in uac.list_items(entry[key]))


def replay_find(entry: dict[str, str], home: str, files: set[str]) -> set[str]:
    r"""UAC's find for one entry (lib/build_find_command.sh) over absolute paths under MOUNT.

    ``-maxdepth``, then ``\\( -path EXCLUDE ... \\) -prune -o`` (a pruned directory hides all below it),
    then ``\\( -path PATTERN ... \\)`` and ``-type f``; ``-path`` is fnmatch without FNM_PATHNAME, so
    ``*`` also matches ``/`` (Python's fnmatchcase is the same).
    """
    start = MOUNT + entry["path"].replace("%user_home%", home).replace('"', "")
    depth = int(entry.get("max_depth", 0)) or None
    excludes = uac.list_items(entry.get("exclude_path_pattern", "[]"))
    patterns = uac.list_items(entry["path_pattern"])
    found = set()
    for path in files:
        if not path.startswith(start + "/"):
            continue
        below = path[len(start) + 1:].split("/")
        if depth is not None and len(below) > depth:
            continue
        walked = [start + "/" + "/".join(below[:count]) for count in range(1, len(below) + 1)]
        if any(fnmatch.fnmatchcase(step, exclude) for step in [start, *walked] for exclude in excludes):
            continue
        if any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns):
            found.add(path)
    return found


def _below_entry_path(pattern) -> str:
    """A pattern's glob below its UAC entry's path: a root path's wildcard segments come first (uac._literal_base)."""
    literal, wild = uac._literal_base(pattern.base)
    segments = [] if pattern.base == "." else pattern.base.split("/")
    return "/".join([*segments[len(segments) - wild:], pattern.glob]) if wild else pattern.glob


def test_uacs_find_over_sample_paths_never_lists_a_credential_and_finds_every_collected_file(uac_files):
    dirs = pruned_names(PLAN)
    for os_name, home in UAC_HOMES.items():
        def absolute(scope: str, relative: str) -> str:
            return MOUNT + (home if scope == "home" else "") + "/" + relative  # noqa: B023 (used in this loop)

        credentials = {absolute(scope, relative) for scope, relative in credential_samples(os_name)}
        collected = {absolute(pattern.scope, relative) for pattern in PLAN.for_os(os_name)
                     for relative in samples(pattern.path, dirs)}
        files = credentials | collected
        found: set[str] = set()
        for text in uac_files.values():
            for entry in uac.read_artifact(text)[1]:
                if os_name not in uac.list_items(entry["supported_os"]):
                    continue
                hits = replay_find(entry, home, files)
                assert not hits & credentials, sorted(hits & credentials)[:3]
                if "max_depth" in entry:  # no '**': exactly the catalog's matches, nothing a '*' spans into
                    start = MOUNT + entry["path"].replace("%user_home%", home).replace('"', "") + "/"
                    globs = [_below_entry_path(pattern) for pattern in PLAN.for_os(os_name)
                             if MOUNT + (home if pattern.scope == "home" else "") + "/" + uac._literal_base(
                                 pattern.base)[0] + "/" == start
                             or uac._literal_base(pattern.base)[0] == "." and start == MOUNT + home + "/"]
                    assert all(any(_ci(glob, hit[len(start):]) for glob in globs) for hit in hits)
                found |= hits
        unpruned = {absolute(pattern.scope, relative) for pattern in PLAN.for_os(os_name)
                    for relative in samples(pattern.path)
                    if not any(_ci(prune.path + "/**", relative) for prune in PLAN.prunes
                               if (prune.agent, prune.root, prune.base) == (pattern.agent, pattern.root, pattern.base))}
        assert unpruned - credentials <= found, sorted(unpruned - credentials - found)[:3]
        assert len(collected - found) > 50  # the files below pruned directories stay behind


def test_a_uac_glob_that_reaches_a_credential_still_never_lists_it(tmp_path):
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "probe.yaml").write_text(PROBE, encoding="utf-8")
    probe = catalog_module.load(tmp_path / "catalog")
    [text] = [text for name, text in generate(probe, "uac").files.items() if name.endswith(".yaml")]
    home = UAC_HOMES["linux"]
    names = ("token.json", "keys/a.pem", "sessions/s.jsonl", "cache/c.bin", "x/token.json", "d/e/f.txt")
    files = {f"{MOUNT}{home}/.probe/{name}" for name in names}
    found = set().union(*(replay_find(entry, home, files) for entry in uac.read_artifact(text)[1]))
    # x/token.json is not the catalogued .probe/token.json: it is collected, as aitrail collect would
    assert found == {f"{MOUNT}{home}/.probe/{name}" for name in ("sessions/s.jsonl", "d/e/f.txt", "x/token.json")}


UAC_TREE = os.environ.get("AITRAIL_UAC_DIR")


def _fake_root(root: Path) -> dict[str, bytes]:
    """A Linux home (home/alice) and a macOS one (Users/bob), each with agent files and a credential."""
    files = {
        "home/alice/.claude/projects/-src/s1.jsonl": b'{"type":"user"}\n',
        "home/alice/.claude/history.jsonl": b"{}\n",
        "home/alice/.claude/.credentials.json": b'{"token":"SECRET-ALICE"}',
        "home/alice/.codex/history.jsonl": b"{}\n",
        "home/alice/.codex/auth.json": b'{"key":"SECRET-CODEX"}',
        "Users/bob/.claude/projects/-w/s2.jsonl": b'{"type":"user"}\n',
        "Users/bob/.claude/.credentials.json": b'{"token":"SECRET-BOB"}',
        "Users/bob/Library/Application Support/Cursor/User/globalStorage/state.vscdb": b"SQLite format 3\0",
        "Users/bob/.cursor/mcp.json": b'{"key":"SECRET-MCP"}',
        "Users/bob/.cursor/argv.json": b"{}",
    }
    for relative, data in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    (root / "etc").mkdir()
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/bash\n"
                                         "bob:x:1001:1001::/Users/bob:/bin/zsh\n")
    return files


@pytest.mark.skipif(not UAC_TREE, reason="AITRAIL_UAC_DIR does not name a UAC tree (no registry ships UAC; see "
                                         "docs/catalog-export.md for the round trip's commands)")
def test_uac_validates_the_files_and_collects_a_fake_root_without_its_credentials(tmp_path):
    out = tmp_path / "export"
    agents = ("claude-code", "codex", "cursor-ide")
    files = generate(CATALOG, "uac", agents).files
    out.mkdir()
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    artifacts = sorted(str(path) for path in out.glob("*.yaml"))
    for artifact in artifacts:
        done = subprocess.run(["./uac", "--validate-artifact", artifact], cwd=UAC_TREE, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    broken = out / "broken.yml"
    broken.write_text(files[uac.file_name(CATALOG.agent("codex"))].replace("collector: file", "collector: copy", 1))
    assert subprocess.run(["./uac", "--validate-artifact", str(broken)], cwd=UAC_TREE, capture_output=True).returncode
    root = tmp_path / "root"
    planted = _fake_root(root)
    collected: dict[str, bytes] = {}
    for os_name in ("linux", "macos"):
        destination = tmp_path / f"out-{os_name}"
        destination.mkdir()
        done = subprocess.run(["./uac", "-u", "-a", ",".join(artifacts), "--mount-point", str(root), "-s", os_name,
                               str(destination)], cwd=UAC_TREE, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        [archive] = destination.glob("uac-*.tar.gz")
        with tarfile.open(archive) as opened:
            for member in opened.getmembers():
                if member.isfile():
                    collected[f"{os_name}:{member.name}"] = opened.extractfile(member).read()
    names = {key.split(":", 1)[1] for key in collected}
    assert {"[root]/home/alice/.claude/projects/-src/s1.jsonl", "[root]/home/alice/.claude/history.jsonl",
            "[root]/home/alice/.codex/history.jsonl", "[root]/Users/bob/.claude/projects/-w/s2.jsonl",
            "[root]/Users/bob/Library/Application Support/Cursor/User/globalStorage/state.vscdb",
            "[root]/Users/bob/.cursor/argv.json"} <= names
    assert not [name for name in names if "credentials" in name or name.endswith(("auth.json", "mcp.json"))]
    for secret in (data for relative, data in planted.items() if b"SECRET" in data):
        assert not [key for key, data in collected.items() if secret in data], secret
    assert not any(b"SECRET" in data for data in collected.values())


# ---- ForensicArtifacts ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def definitions_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fa") / FILE_NAME
    path.write_text(generate(CATALOG, "forensic-artifacts").files[FILE_NAME], encoding="utf-8")
    return path


def test_the_artifacts_validator_accepts_the_definitions_with_no_warning(definitions_file):
    import artifacts  # noqa: F401 - the test extra installs it: its absence fails here, never skips
    done = subprocess.run([sys.executable, "-m", "artifacts.scripts.validator", str(definitions_file)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [f"Validating definitions in: {definitions_file}", "SUCCESS"]
    assert done.stderr == ""  # the validator logs every warning to stderr


def test_the_validator_would_warn_about_what_the_export_avoids(definitions_file, tmp_path):
    pytest.importorskip("artifacts")
    text = definitions_file.read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("%%users.appdata%%", "%%users.userprofile%%\\AppData\\Roaming", 1), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "artifacts.scripts.validator", str(bad)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "FAILURE" in done.stdout and "%%users.appdata%%" in done.stderr


def read_definitions(path: Path) -> list:
    from artifacts import reader, registry

    definitions = list(reader.YamlArtifactsReader().ReadFile(str(path)))
    known = registry.ArtifactDefinitionsRegistry()
    for definition in definitions:
        known.RegisterDefinition(definition)
    assert known.GetUndefinedArtifacts() == set()
    return definitions


def fa_glob(path: str) -> tuple[str, str]:
    """(scope, catalog-style glob) of a ForensicArtifacts path; ``**10`` read back as ``**``."""
    replacements = (("%%users.homedir%%/", "home", ""), ("%%users.appdata%%\\", "home", "AppData/Roaming/"),
                    ("%%users.localappdata%%\\", "home", "AppData/Local/"), ("%%users.userprofile%%\\", "home", ""),
                    ("%%environ_programdata%%\\", "system", "ProgramData/"),
                    ("%%environ_programfiles%%\\", "system", "Program Files/"), ("/", "system", ""))
    for prefix, scope, replacement in replacements:
        if path.startswith(prefix):
            return scope, (replacement + path[len(prefix):].replace("\\", "/")).replace("**10", "**")
    raise AssertionError(f"unexpected path {path!r}")


def plaso_matches(glob: str, relative: str) -> bool:
    """Plaso's reading of a path (plaso/engine/path_helper.py ExpandGlobStars).

    ``**`` is 1 to 10 ``*`` directories, never zero; each segment is an
    fnmatch glob, case ignored (FindSpec(case_sensitive=False)).
    """
    segments = glob.split("/")
    if "**" in segments:
        index = segments.index("**")
        return any(plaso_matches("/".join(segments[:index] + ["*"] * depth + segments[index + 1:]), relative)
                   for depth in range(1, 11))
    parts = relative.split("/")
    return len(parts) == len(segments) and all(fnmatch.fnmatch(part.lower(), segment.lower())
                                               for part, segment in zip(parts, segments, strict=True))


def test_the_definitions_are_sorted_grouped_and_cover_the_catalog_without_a_credential(definitions_file):
    pytest.importorskip("artifacts")
    definitions = read_definitions(definitions_file)
    names = [definition.name for definition in definitions]
    assert names == sorted(names, key=str.lower) and GROUP in names
    group = next(definition for definition in definitions if definition.name == GROUP)
    assert sorted(group.sources[0].names) == sorted(name for name in names if name != GROUP)
    by_os: dict[str, set[tuple[str, str]]] = {"Linux": set(), "Darwin": set(), "Windows": set()}
    for definition in definitions:
        for source in definition.sources:
            if source.type_indicator == "FILE":
                [fa_os] = source.supported_os
                by_os[fa_os].update(fa_glob(path) for path in source.paths)
    for os_name, fa_os in (("linux", "Linux"), ("macos", "Darwin"), ("windows", "Windows")):
        globs = by_os[fa_os]
        for scope, relative in credential_samples(os_name) | credential_samples("linux"):
            assert not [glob for glob_scope, glob in globs if glob_scope == scope and plaso_matches(glob, relative)], (
                relative)
        for scope, relative in collected_samples(os_name):
            if len(relative.split("/")) <= 12:  # plaso's globstar goes 10 directories deep
                assert any(glob_scope == scope and plaso_matches(glob, relative) for glob_scope, glob in globs), (
                    os_name, relative)


def test_a_definitions_file_is_one_yaml_stream_with_the_header_first():
    text = generate(CATALOG, "forensic-artifacts").files[FILE_NAME]
    assert text.startswith(PLAN.header("forensic-artifacts"))
    assert len(list(yaml.safe_load_all(io.StringIO(text)))) == len(CATALOG.agents) + 1
