"""The Velociraptor export: lint, the files artifact's exclusions, and the argv the client artifact runs.

No Velociraptor binary is installable here (docs/fleet-velociraptor.md), so:

* the three artifacts are linted against the field set of Velociraptor's
  artifact definition (collector/catalog/export/velociraptor_fields.json), and
  the lint is shown to refuse each mistake it checks for;
* the files artifact's pipeline is replayed in Python over sample paths
  (test_catalog_export_velociraptor_files.py);
* the argv ``Generic.Collection.AITrail`` gives ``execve`` is read out of the
  generated YAML, evaluated with the parameter values substituted, and run
  against the frozen collector (AITRAIL_FROZEN_COLLECTOR, or one built here),
  unpacked from its zip as Velociraptor's ``unzip()`` does; then the server
  artifact's verify and analyze argv are run on the bundle it wrote.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from aitrail.analyzer.outputs.export import OUTPUT_COLUMNS
from aitrail.collector import catalog as catalog_module
from aitrail.collector.catalog.export import generate, velociraptor
from aitrail.collector.catalog.export.plan import build_plan
from aitrail.collector.catalog.export.velociraptor_lint import lint_artifact, load_fields
from tests.collector.test_frozen import BUILD_SCRIPT, FROZEN_ENV
from tests.conftest import FIXTURES

CATALOG = catalog_module.load()
PLAN = build_plan(CATALOG)
CLIENT, SERVER = "Generic.Collection.AITrail.yaml", "Server.Analysis.AITrail.yaml"
FILES_BY_OS = {os_name: f"{name}.yaml" for os_name, name in velociraptor.FILES_NAMES.items()}
FILES = FILES_BY_OS["linux"]
PINNED = {name: format(index, "x") * 64 for index, name in enumerate(velociraptor.TOOL_NAMES, start=10)}
URLS = {name: f"https://releases.example/{name}.zip" for name in velociraptor.TOOL_NAMES}


@pytest.fixture(scope="module")
def exported() -> dict[str, str]:
    return generate(CATALOG, "velociraptor").files


@pytest.fixture(scope="module")
def artifacts(exported) -> dict[str, dict]:
    return {name: yaml.safe_load(text) for name, text in exported.items() if name.endswith(".yaml")}


# ---- the lint ------------------------------------------------------------------------------------------


def test_the_field_set_names_its_source():
    fields = load_fields()
    assert fields["_source"]["repository"] == "Velocidex/velociraptor"
    assert re.fullmatch(r"[0-9a-f]{40}", fields["_source"]["commit"])
    assert {"name", "tools", "sources", "parameters", "required_permissions"} <= set(fields["messages"]["Artifact"])
    assert {"expected_hash", "version", "url", "serve_locally"} <= set(fields["messages"]["Tool"])


@pytest.mark.parametrize("name", [CLIENT, *FILES_BY_OS.values(), SERVER])
def test_the_generated_artifacts_pass_the_lint(exported, name):
    report = lint_artifact(exported[name])
    assert report.errors == []
    if name != CLIENT:
        assert report.warnings == []


def test_each_artifact_fits_velociraptors_verify_limit(exported):
    # bin/verify.go: --max_length, "Maximum length of artifact to read", defaults to 100000 bytes
    yaml_files = sorted(name for name in exported if name.endswith(".yaml"))
    assert yaml_files == sorted([CLIENT, SERVER, *FILES_BY_OS.values()])
    assert all(len(text.encode()) < 100_000 for name, text in exported.items() if name.endswith(".yaml"))


def test_each_files_artifact_runs_only_on_its_os_and_holds_only_its_rows(exported):
    for os_name, name in FILES_BY_OS.items():
        artifact = yaml.safe_load(exported[name])
        info_os = {"macos": "darwin"}.get(os_name, os_name)
        assert artifact["precondition"] == f"SELECT OS FROM info() WHERE OS = '{info_os}'"
        spec = next(parameter["default"] for parameter in artifact["parameters"]
                    if parameter["name"] == "collectionSpec")
        assert {line.split(",", 1)[0] for line in spec.splitlines()[1:]} == {os_name}


def test_unpinned_tools_are_warnings_not_a_silent_pass(exported):
    warnings = lint_artifact(exported[CLIENT]).warnings
    for tool in velociraptor.TOOL_NAMES:
        assert f"tool {tool}: no url (an administrator must upload it before the artifact runs)" in warnings
        assert f"tool {tool}: no expected_hash (its download is not pinned to a SHA-256)" in warnings
    assert "NOT PINNED" in yaml.safe_load(exported[CLIENT])["description"]
    result = generate(CATALOG, "velociraptor")
    assert any("not pinned" in warning for warning in result.warnings)


def test_pinned_tools_carry_url_hash_and_version_and_lint_clean():
    result = generate(CATALOG, "velociraptor", tool_sha256=PINNED, tool_urls=URLS)
    report = lint_artifact(result.files[CLIENT])
    assert report.errors == [] and report.warnings == [] and result.warnings == []
    tools = yaml.safe_load(result.files[CLIENT])["tools"]
    assert [(tool["name"], tool["url"], tool["expected_hash"], tool["version"]) for tool in tools] == [
        (name, URLS[name], PINNED[name], PLAN.version) for name in velociraptor.TOOL_NAMES]


def _mutated(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize(("name", "old", "new", "error"), [
    (CLIENT, "type: CLIENT\n", "type: CLIENT\nraw: x\n", "'raw' is kept by the server"),
    (CLIENT, "type: CLIENT\n", "type: CLIENT\nsourcez: []\n", "'sourcez' is not a field"),
    (CLIENT, "type: CLIENT\n", "type: CLIEN\n", "type 'CLIEN' is unknown"),
    (CLIENT, "    type: multichoice\n", "    type: multichoise\n", "type 'multichoise' is unknown"),
    (CLIENT, "    serve_locally: true\n", "    serve_locally: true\n    hash: abc\n", "'hash' is kept by the server"),
    (CLIENT, "  timeout: 3600\n", "  timeout: 3600\n  wall_clock: 1\n", "'wall_clock' is not a field"),
    (CLIENT, '    version: \'0.1.0\'\n', "", "no version"),
    (CLIENT, 'ToolName="AITrail_linux_amd64"', 'ToolName="AITrail_linux_x64"', "which tools: does not declare"),
    (CLIENT, 'ToolName="AITrail_linux_amd64"', 'ToolName=Tool', "ToolName is not a string literal"),
    (CLIENT, 'argv=[Exe, "collect"', 'argv="sh -c " + [Exe, "collect"', "argv is not an array literal"),
    (CLIENT, '"--quiet"] + AgentArgs.Arg', '"--quiet"] + "--agent=x"', "continues with something other than"),
    (CLIENT, '"--quiet"] + AgentArgs.Arg', '"--quiet", format(format="%v", args=X)]', "argv's array holds"),
    (CLIENT, "  - EXECVE\n", "", "EXECVE is not in required_permissions"),
    (CLIENT, "  - FILESYSTEM_WRITE\n", "", "needs FILESYSTEM_WRITE"),
    (CLIENT, "unzip(filename=OSPath", "unzipp(filename=OSPath", "unknown plugin 'unzipp'"),
    (CLIENT, "read_file(filename=Sidecar, length=1024)", "read_file(filename=Sidecar, size=1024)",
     "read_file() has no argument 'size'"),
    (SERVER, "FROM uploads(client_id", "FROM upload_list(client_id", "unknown plugin 'upload_list'"),
    (FILES, "FROM glob(globs=Glob", "FROM glob(glob=Glob", "glob() has no argument 'glob'"),
])
def test_the_lint_refuses_each_mistake_it_checks_for(exported, name, old, new, error):
    errors = lint_artifact(_mutated(exported[name], old, new)).errors
    assert any(error in message for message in errors), errors


def test_a_shell_string_argv_is_refused():
    artifact = {"name": "X.Y", "type": "CLIENT", "required_permissions": ["EXECVE"],
                "sources": [{"query": 'SELECT * FROM execve(argv=["/bin/sh", "-c", "aitrail collect " + Args])'}]}
    errors = lint_artifact(yaml.safe_dump(artifact)).errors
    assert errors == ["sources[0].query: execve argv's array holds '+': only literals and names belong there"]


# ---- the client artifact's shape -------------------------------------------------------------------------


def test_the_client_artifact_has_one_pinned_tool_and_one_source_per_platform(artifacts):
    client = artifacts[CLIENT]
    assert client["type"] == "CLIENT" and "EXECVE" in client["required_permissions"]
    assert client["resources"]["timeout"] == 3600
    assert [tool["name"] for tool in client["tools"]] == list(velociraptor.TOOL_NAMES)
    agents = next(parameter for parameter in client["parameters"] if parameter["name"] == "Agents")
    assert agents["type"] == "multichoice" and agents["choices"] == [agent.agent for agent in CATALOG.agents]
    for source, (os_name, arch) in zip(client["sources"], velociraptor.PLATFORMS, strict=True):
        assert source["precondition"] == f"SELECT OS FROM info() WHERE OS = '{os_name}' AND Architecture = '{arch}'"
        assert f'ToolName="{velociraptor.tool_name(os_name, arch)}", IsExecutable=FALSE' in source["query"]
        assert 'then="collected with flags"' in source["query"] and "ReturnCode = 3 AS CollectedWithFlags" in source[
            "query"]
        assert 'upload(file=Bundle, name="aitrail.tar.zst")' in source["query"]
        assert 'upload(file=Sidecar, name="aitrail.tar.zst.sha256")' in source["query"]


# ---- the argv, run against the frozen collector ----------------------------------------------------------

_ARGV_TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<op>[\[\],+]))')


def evaluate_argv(expression: str, values: dict[str, object]) -> list[str]:
    """A tiny evaluator for one argv expression: ``[item, ...] (+ Name)*``, items strings or names."""
    tokens = []
    position = 0
    while position < len(expression.rstrip()):
        match = _ARGV_TOKEN.match(expression, position)
        assert match, f"cannot read the argv at {expression[position:]!r}"
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        position = match.end()

    def value(kind: str, text: str) -> object:
        return json.loads(text) if kind == "string" else values[text]  # KeyError: a name the test did not give

    argv: list[str] = []
    assert tokens[0] == ("op", "["), "argv must start with an array literal"
    index = 1
    while tokens[index] != ("op", "]"):
        kind, text = tokens[index]
        item = value(kind, text)
        assert isinstance(item, str), (text, item)
        argv.append(item)
        index += 2 if tokens[index + 1] == ("op", ",") else 1
    for (op, plus), (kind, text) in zip(tokens[index + 1::2], tokens[index + 2::2], strict=True):
        assert (op, plus) == ("op", "+") and kind == "name"
        extra = value(kind, text)
        assert isinstance(extra, list) and all(isinstance(item, str) for item in extra)
        argv += extra
    return argv


def call_arguments(query: str, call: str, argument: str) -> list[str]:
    """The text of ``argument=`` of every ``call(`` in a VQL query, in order (brackets and strings respected)."""
    found = []
    for match in re.finditer(rf"\b{call}\(", query):
        start = query.index(f"{argument}=", match.end()) + len(argument) + 1
        depth, index, quote = 0, start, None
        while True:
            char = query[index]
            if quote:
                quote = None if char == quote and query[index - 1] != "\\" else quote
            elif char == '"':
                quote = char
            elif char in "[(":
                depth += 1
            elif char in "])" and depth:
                depth -= 1
            elif char in ",)" and depth == 0:
                found.append(query[start:index])
                break
            index += 1
    return found


def test_the_tiny_evaluator_reads_what_the_artifact_writes():
    values = {"Exe": "/x/aitrail-collector", "More": ["--agent=a"]}
    assert evaluate_argv('[Exe, "collect",\n "-o", "b"] + More', values) == [
        "/x/aitrail-collector", "collect", "-o", "b", "--agent=a"]
    with pytest.raises(KeyError):
        evaluate_argv("[Unknown]", values)


@pytest.fixture(scope="module")
def frozen_zip(tmp_path_factory) -> Path:
    """The frozen collector's zip: beside AITRAIL_FROZEN_COLLECTOR's folder, or from a build made now."""
    given = os.environ.get(FROZEN_ENV)
    if given:
        program = Path(given)
    else:
        import importlib.util

        if importlib.util.find_spec("PyInstaller") is None:
            pytest.skip(f"no frozen collector: {FROZEN_ENV} is unset and PyInstaller is not installed "
                        "(pip install '.[test]' installs it)")
        work = tmp_path_factory.mktemp("frozen-build")
        done = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--dist", str(work / "dist"), "--work",
                               str(work / "work")], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-4000:]
        program = Path(done.stdout.strip().splitlines()[-1])
    archive = program.parent.with_name(program.parent.name + ".zip")
    assert archive.is_file(), f"the build's zip {archive} is not beside its folder"
    return archive


def unzip_as_velociraptor(archive: Path, directory: Path) -> list[tuple[str, Path]]:
    """vql/tools/unzip.go: every member written under the directory with mode 0700; (OriginalPath, NewPath) rows."""
    rows = []
    with zipfile.ZipFile(archive) as opened:
        for member in opened.infolist():
            if member.filename.endswith("/"):
                continue
            target = directory / member.filename
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with opened.open(member) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)
            os.chmod(target, 0o700)
            rows.append((member.filename, target))
    return rows


def test_the_client_argv_runs_the_frozen_collector_and_the_server_argv_verifies_and_analyzes(
        artifacts, frozen_zip, tmp_path):
    query = next(source["query"] for source in artifacts[CLIENT]["sources"] if source["name"] == "linux_amd64")
    work = tmp_path / "work"  # the artifact's tempdir(), also the program's working directory (cwd=WorkDir)
    work.mkdir()
    member_regex = re.search(r"WHERE OriginalPath =~ '''(.*?)'''", query).group(1)
    executables = [path for original, path in unzip_as_velociraptor(frozen_zip, work)
                   if re.search(member_regex, original)]
    assert len(executables) == 1, executables
    bundle = work / velociraptor.BUNDLE
    agents = ["claude-code", "codex", "gemini-cli"]
    [expression] = call_arguments(query, "execve", "argv")
    argv = evaluate_argv(expression, {
        "Exe": str(executables[0]), "CaseName": "CASE-7", "Examiner": "Examiner One", "Bundle": str(bundle),
        "AgentArgs.Arg": [f"--agent={agent}" for agent in agents]})
    assert argv[1:3] == ["collect", "--all-users"] and argv[-len(agents):] == [f"--agent={a}" for a in agents]
    # a test cannot create users: the demo home stands in for --all-users, everything else is the artifact's argv
    argv[argv.index("--all-users"):argv.index("--all-users") + 1] = ["--home", str(FIXTURES / "demo-home")]
    done = subprocess.run(argv, cwd=work, env={"PATH": os.environ["PATH"]}, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 3), done.stderr
    sidecar = Path(str(bundle) + ".sha256")
    assert bundle.is_file() and sidecar.is_file()
    checked = subprocess.run(["sha256sum", "-c", sidecar.name], cwd=work, capture_output=True, text=True)
    assert checked.returncode == 0 and checked.stdout.strip() == f"{bundle.name}: OK"
    # The sidecar parses with the artifact's own regex (SidecarSha256), as the upload's sha256 would be compared.
    sidecar_regex = re.search(r"regex='''(.*?)'''", query).group(1).replace("(?P<Sha256>", "(?P<sha>")
    assert re.match(sidecar_regex, sidecar.read_text()).group("sha") == hashlib.sha256(bundle.read_bytes()).hexdigest()

    server = artifacts[SERVER]["sources"][0]["query"]
    aitrail = shutil.which("aitrail", path=str(Path(sys.executable).parent)) or "aitrail"
    timeline = tmp_path / "staging" / "timeline.jsonl"
    timeline.parent.mkdir()
    values = {"AITrail": aitrail, "Bundle": str(bundle), "Timeline": str(timeline), "KeyArgs": []}
    verify, analyze = (evaluate_argv(expression, values) for expression in call_arguments(server, "execve", "argv"))
    assert verify[1] == "verify" and analyze[1] == "analyze"
    env = {"PATH": os.environ["PATH"]}
    verified = subprocess.run(verify, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    analyzed = subprocess.run(analyze, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert analyzed.returncode == 0, analyzed.stderr
    lines = timeline.read_text(encoding="utf-8").splitlines()
    assert lines
    for line in lines:
        row = json.loads(line)
        assert list(row) == list(OUTPUT_COLUMNS)
        assert row["agent"] in agents and row["case_id"] == "CASE-7"
