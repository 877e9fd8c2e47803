"""The frozen collector (issue 29, item 3; packaging/build_frozen_collector.py, docs/collecting.md).

The build under test is AITRAIL_FROZEN_COLLECTOR (the path of its program,
as .ci/run exports it after building it once from the clean clone) or, when
that is unset, one this session builds with the repo's script (PyInstaller
must be importable: it is in the test extra). The README's own commands, from
its subject-machine section, are run as written, with only the removable
media (/media/usb) and the image (/mnt/image) put where the test has them:
the zip goes onto the media with the README's unzip command, the program
collects the demo home (as the current user's home) and a fake image from
there, with HOME, TMPDIR, XDG_* and the working directory empty (the demo
home is HOME for the live run), and each of those is compared before and
after. Its bundles verify with the wheel's (or checkout's) aitrail and
analyze to the same timeline as the bundles the installed collector makes
with the same command.

The tests at the top need no build: the frozen-only code paths run in this
process with ``sys.frozen`` set and ``sys.executable`` pointed at a folder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.collector import catalog as catalog_module
from aitrail.collector import frozen, runinfo
from aitrail.collector.catalog import documents
from aitrail.collector.catalog.schema import CatalogError
from aitrail.collector.cli import LazyGroup, main
from tests.conftest import FIXTURES, REPO, bundle_json, bundle_records

FROZEN_ENV = "AITRAIL_FROZEN_COLLECTOR"
BUILD_SCRIPT = REPO / "packaging" / "build_frozen_collector.py"
README_BUILD_TAG = "linux-x86_64"  # the build the README names; a build for another machine is named for it
MEDIA, IMAGE = "/media/usb", "/mnt/image"  # the README's placeholders, the only words of its commands replaced
LEFT_OUT = ("aitrail.analyzer", "aitrail.collector.foreign", "yaml", "_yaml", "xlsxwriter", "msgspec")


def _load_build_script():
    spec = importlib.util.spec_from_file_location("build_frozen_collector", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- without a build: the frozen code paths, in this process ----------------------------------------------


@pytest.fixture
def as_frozen(monkeypatch, tmp_path):
    """This process as a frozen build whose folder is tmp_path/build (program, _internal/, manifest)."""
    folder = tmp_path / "build"
    (folder / "_internal" / "lib").mkdir(parents=True)
    (folder / "aitrail-collector").write_bytes(b"\x7fELF program")
    (folder / "_internal" / "lib" / "libpython.so").write_bytes(b"library" * 100)
    manifest = {"format": frozen.MANIFEST_FORMAT, "name": "aitrail-collector", "collector_sha256": "ab" * 32,
                "files": frozen.folder_files(folder)}
    (folder / frozen.BUILD_MANIFEST).write_text(json.dumps(manifest))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(folder / "aitrail-collector"))
    frozen.build_identity.cache_clear()
    yield folder
    frozen.build_identity.cache_clear()


def test_a_frozen_run_records_its_build(as_frozen: Path):
    tool = runinfo.tool_info()
    build = tool["build"]
    assert tool["frozen"] is True
    assert tool["collector_sha256"] == "ab" * 32  # the build's digest of the sources it froze
    assert build["as_built"] is True and build["differences"] == []
    assert build["executable_sha256"] == hashlib.sha256(b"\x7fELF program").hexdigest()
    assert build["manifest"]["name"] == "aitrail-collector" and "files" not in build["manifest"]
    assert build["folder_files"] == 3 and build["manifest_sha256"]


@pytest.mark.skipif(not shutil.which("sha256sum") or not shutil.which("find"), reason="needs find and sha256sum")
def test_the_folder_digest_is_the_coreutils_one_the_docs_give(as_frozen: Path):
    shell = "find . -type f -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum"
    expected = subprocess.run(["sh", "-c", shell], cwd=as_frozen, capture_output=True, text=True, check=True)
    assert runinfo.tool_info()["build"]["folder_sha256"] == expected.stdout.split()[0]


def test_a_folder_that_is_not_as_built_says_what_differs(as_frozen: Path):
    (as_frozen / "_internal" / "lib" / "libpython.so").write_bytes(b"patched")
    (as_frozen / "_internal" / "sitecustomize.py").write_text("print('hello')")
    (as_frozen / "aitrail-collector").unlink()
    (as_frozen / "aitrail-collector").write_bytes(b"\x7fELF program")  # the same bytes again: not a difference
    build = runinfo.tool_info()["build"]
    assert build["as_built"] is False
    assert build["differences"] == ["changed: _internal/lib/libpython.so", "added: _internal/sitecustomize.py"]


def test_a_folder_without_its_manifest_has_no_collector_digest(as_frozen: Path):
    (as_frozen / frozen.BUILD_MANIFEST).unlink()
    tool = runinfo.tool_info()
    assert tool["collector_sha256"] is None
    assert tool["build"]["as_built"] is False and tool["build"]["manifest"] is None
    assert tool["build"]["differences"] == [f"missing: {frozen.BUILD_MANIFEST}"]


def test_an_unreadable_file_of_the_folder_is_named_not_fatal(as_frozen: Path):
    (as_frozen / "_internal" / "loop").symlink_to("loop")
    build = runinfo.tool_info()["build"]
    assert build["not_regular_files"] == ["_internal/loop"]
    assert build["differences"] == ["added: _internal/loop"]


def test_the_installed_collector_says_it_is_not_frozen():
    tool = runinfo.tool_info()
    assert tool["frozen"] is False and "build" not in tool
    assert tool["collector_sha256"] == frozen.source_digest(REPO / "collector")


def test_frozen_help_lists_only_the_collectors_commands(as_frozen: Path):
    result = CliRunner().invoke(main, ["--help"])
    commands = result.output.split("Commands:")[1]
    listed = set(re.findall(r"^  (\S+)", commands, re.M))  # a wrapped help line is indented further
    assert listed == {"catalog", "collect", "keygen", "verify"}
    assert frozen.COLLECTOR_ONLY in " ".join(result.output.split())
    assert LazyGroup.analyzer_commands() == {"analyze", "export", "extract", "report"}


@pytest.mark.parametrize("command", ["analyze", "export", "extract", "report"])
def test_an_analyzer_command_of_the_frozen_build_says_why_it_is_missing(as_frozen: Path, command: str):
    result = CliRunner().invoke(main, [command, "bundle.tar.zst"])
    assert result.exit_code == 2
    assert f"{command}: {frozen.COLLECTOR_ONLY}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_without_pyyaml_an_unparsed_catalog_file_is_a_clear_catalog_error(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml raises ImportError, as in the frozen build
    (tmp_path / "codex.yaml").write_bytes((REPO / "catalog" / "codex.yaml").read_bytes())
    with pytest.raises(CatalogError) as raised:
        catalog_module.load(tmp_path)
    assert raised.value.problems[0].startswith("codex.yaml: PyYAML is not installed")
    assert issubclass(documents.YamlUnavailable, ImportError)  # setup.py's build without PyYAML catches ImportError


# ---- the build itself ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def frozen_program(tmp_path_factory) -> Path:
    """The frozen collector's program: AITRAIL_FROZEN_COLLECTOR's, or one built now by the repo's script."""
    given = os.environ.get(FROZEN_ENV)
    if given:
        program = Path(given)
        assert program.is_file(), f"{FROZEN_ENV}={given} is not a file"
        return program
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip(f"no frozen collector to test: {FROZEN_ENV} is unset and PyInstaller is not installed "
                    "(pip install '.[test]' installs it)")
    work = tmp_path_factory.mktemp("frozen-build")
    done = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--dist", str(work / "dist"), "--work",
                           str(work / "work")], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return Path(done.stdout.strip().splitlines()[-1])


def readme_blocks() -> list[str]:
    """The ```bash blocks of README.md's subject-machine section, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## On a subject machine\n", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^```(\w*)$", section, re.M).group(1) == "bash", "the section must start with the frozen one"
    return re.findall(r"^```bash\n(.*?)^```$", section, re.M | re.S)


def readme_commands(block: int, program: Path, media: Path, image: Path | None = None) -> list[str]:
    """The README's commands of one block, with the media and image where the test has them."""
    local = program.parent.name.split("-", 3)[-1]  # <os>-<arch> of the build under test
    commands = []
    for line in readme_blocks()[block].splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        line = line.replace(README_BUILD_TAG, local).replace(MEDIA, str(media))
        commands.append(line.replace(IMAGE, str(image)) if image else line)
    return commands


def test_the_readme_names_the_build_this_script_makes():
    script = _load_build_script()
    name = script.build_name(script.source_version(), "linux", "x86_64")
    assert name == f"aitrail-collector-{script.source_version()}-{README_BUILD_TAG}"
    subject, workstation = readme_blocks()
    assert shlex.split(subject.splitlines()[0])[:2] == [f"{MEDIA}/{name}/aitrail-collector", "collect"]
    assert f"sha256sum -c {name}.zip.sha256" in workstation and f"unzip -q {name}.zip -d {MEDIA}" in workstation


@dataclass
class Media:
    """The removable media after the README's unzip: the program on it, and where the build's zip came from."""

    path: Path
    program: Path
    source: Path  # the build's own folder, beside its zip in dist/


@pytest.fixture(scope="module")
def media(frozen_program: Path, tmp_path_factory) -> Media:
    """Unzip the build's zip onto a fresh 'stick' with the README's own command, after sha256sum -c."""
    folder = frozen_program.parent
    checkout = tmp_path_factory.mktemp("workstation")
    (checkout / "dist").mkdir()
    for suffix in (".zip", ".zip.sha256"):
        made = folder.with_name(folder.name + suffix)
        assert made.is_file(), f"the build's {made.name} is not beside its folder"
        shutil.copy2(made, checkout / "dist" / made.name)
    stick = tmp_path_factory.mktemp("usb")
    for command in readme_commands(1, frozen_program, stick):  # the workstation's: sha256sum -c, unzip
        subprocess.run(["bash", "-c", command], cwd=checkout, check=True, timeout=120)
    return Media(stick, stick / folder.name / frozen_program.name, folder)


def test_unzip_restores_the_programs_executable_bit_and_every_file(media: Media):
    assert os.stat(media.program).st_mode & stat.S_IXUSR
    unzipped, built = frozen.folder_files(media.program.parent), frozen.folder_files(media.source)
    assert unzipped == built


def snapshot(root: Path, with_atime: bool = False) -> dict[str, tuple]:
    """Every entry under root (root itself as '.'): mode, size, mtime (and atime), never following links.

    Directories are listed with O_NOATIME, so that taking the snapshot does
    not move the access times it records (the test owns what it snapshots).
    """
    entries: dict[str, tuple] = {}

    def visit(path: Path, key: str) -> None:
        status = os.lstat(path)
        entries[key] = (status.st_mode, status.st_size, status.st_mtime_ns) + (
            (status.st_atime_ns,) if with_atime else ())
        if stat.S_ISDIR(status.st_mode):
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOATIME", 0))
            try:
                names = sorted(os.listdir(fd))
            finally:
                os.close(fd)
            for name in names:
                visit(path / name, name if key == "." else f"{key}/{name}")

    visit(root, ".")
    return entries


@dataclass
class Run:
    """One collection by the README's command: what it printed, and the snapshots taken around it."""

    done: subprocess.CompletedProcess
    bundle: Path
    before: dict[str, dict]
    after: dict[str, dict]


def hermetic_env(base: Path, home: Path | None) -> tuple[dict, Path, dict[str, Path]]:
    """An environment of PATH, LANG, HOME (home, or an empty folder) and TMPDIR and XDG_* empty folders of base.

    Also the working directory, empty. Nothing else of this process's
    environment is passed on (no catalog overrides such as CODEX_HOME).
    """
    names = ("TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
             "CWD", *(() if home else ("HOME",)))
    empty = {name: base / name.lower() for name in names}
    for path in empty.values():
        path.mkdir(parents=True)
    env = {name: str(path) for name, path in empty.items() if name != "CWD"}
    env |= {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", **({"HOME": str(home)} if home else {})}
    return env, empty["CWD"], empty


def run_readme_command(command: str, program_argv: list[str], output_dir: Path, base: Path, home: Path | None,
                       evidence: Path, watch_atimes: bool) -> Run:
    """Run one README command (its program replaced by program_argv, its output into output_dir), watched.

    Watched: output_dir, the evidence (its access times too when
    watch_atimes), every empty folder of the environment, the build's folder,
    and the system temporary folder's _MEI* (where a one-file build unpacks).
    """
    argv = shlex.split(command)
    output = Path(argv[argv.index("-o") + 1])
    output = output_dir / output.name
    argv[argv.index("-o") + 1] = str(output)
    env, cwd, empty = hermetic_env(base, home)
    watched = {"output": output_dir, "evidence": evidence, **{name: path for name, path in empty.items()}}
    if program_argv[0] != sys.executable:
        watched["build"] = Path(program_argv[0]).parent

    def take() -> dict[str, dict]:
        shots = {name: snapshot(path, with_atime=name == "evidence" and watch_atimes) for name, path in watched.items()}
        shots["system temp _MEI"] = {path.name: () for path in Path("/tmp").glob("_MEI*")}
        return shots

    before = take()
    done = subprocess.run([*program_argv, *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return Run(done, output, before, take())


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("subject") / "alice"
    shutil.copytree(FIXTURES / "demo-home", home, symlinks=True)
    return home


@pytest.fixture(scope="module")
def fake_image(tmp_path_factory) -> Path:
    """A mounted image's root: home/alice/.claude from a Claude Code fixture, and a host name."""
    root = tmp_path_factory.mktemp("image")
    source = FIXTURES / "claude-code" / "current-session" / "home" / ".claude"
    shutil.copytree(source, root / "home" / "alice" / ".claude", symlinks=True)
    (root / "etc").mkdir()
    (root / "etc" / "hostname").write_text("fake-image\n")
    return root


@pytest.fixture(scope="module")
def runs(media: Media, demo_home: Path, fake_image: Path, tmp_path_factory) -> dict[str, Run]:
    """The README's two commands, by the frozen program from the media and by the installed collector."""
    live, image = readme_commands(0, media.program, media.path, fake_image)
    assert shlex.split(live)[0] == str(media.program) and shlex.split(image)[0] == str(media.program)
    installed = [sys.executable, "-m", "aitrail.collector.cli"]
    found = {}
    # Access times are watched in the live home (the collector opens every file and directory there with
    # O_NOATIME). Not in the image: finding its homes lists home/, Users/ and its root without O_NOATIME
    # (collector/image/, the installed collector alike), which moves their access times on an image mounted
    # read-write; its paths, sizes and modification times are watched.
    watch_atimes = hasattr(os, "O_NOATIME")  # without it the snapshot's own listing would move them
    for label, command, home, evidence in (("live", live, demo_home, demo_home),
                                           ("image", image, None, fake_image)):
        found[f"frozen {label}"] = run_readme_command(
            command, [str(media.program)], media.path, tmp_path_factory.mktemp(f"frozen-{label}"), home, evidence,
            watch_atimes and label == "live")
        found[f"installed {label}"] = run_readme_command(
            command, installed, tmp_path_factory.mktemp("installed-out"), tmp_path_factory.mktemp(f"installed-{label}"),
            home, evidence, False)
    return found


@pytest.mark.parametrize("label", ["frozen live", "frozen image", "installed live", "installed image"])
def test_the_readme_command_collects(runs: dict[str, Run], label: str):
    run = runs[label]
    assert run.done.returncode == 0, run.done.stderr
    assert "Traceback" not in run.done.stderr
    assert run.bundle.is_file() and Path(f"{run.bundle}.sha256").is_file()


def aitrail(*args: str | Path) -> subprocess.CompletedProcess:
    """The installed (wheel or checkout) aitrail, on the workstation."""
    return subprocess.run([sys.executable, "-m", "aitrail.collector.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_the_live_bundle_verifies_under_the_fingerprint_it_printed(runs: dict[str, Run]):
    run = runs["frozen live"]
    fingerprint = re.search(r"^signer\s+(sha256:[0-9a-f]{64})$", run.done.stdout, re.M).group(1)
    done = aitrail("verify", run.bundle, "--public-key", fingerprint, "--require-signature")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "VALID"


def test_the_image_bundle_verifies(runs: dict[str, Run]):
    done = aitrail("verify", runs["frozen image"].bundle)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("VALID")
    records = bundle_records(runs["frozen image"].bundle)
    files = {record["path"] for record in records if record["outcome"] == "collected"}
    assert any(path.endswith("4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl") for path in files), files


@pytest.mark.parametrize("label", ["live", "image"])
@pytest.mark.parametrize("output_format", ["csv", "jsonl"])
def test_the_frozen_bundle_analyzes_to_the_installed_collectors_timeline(runs: dict[str, Run], tmp_path: Path,
                                                                         label: str, output_format: str):
    timelines = []
    for maker in ("frozen", "installed"):
        bundle = runs[f"{maker} {label}"].bundle
        out = tmp_path / f"{maker}.{output_format}"
        done = aitrail("analyze", bundle, "-o", out, "--format", output_format, "--quiet")
        assert done.returncode == 0, done.stderr
        own = hashlib.sha256(bundle.read_bytes()).hexdigest()
        text = out.read_bytes()
        assert own.encode() in text  # the normalisation below replaces something
        # The bundle_sha256 column is the digest of the bundle file itself. Two collections of one home differ
        # in their run ids, times, per-collection signing key and output path (all in collection.json), so their
        # bundles' bytes, and that digest, necessarily differ. No other column of the timeline depends on the
        # collection, so nothing else is normalised.
        timelines.append(text.replace(own.encode(), b"<bundle_sha256>"))
    assert timelines[0] == timelines[1]


@pytest.mark.parametrize("label", ["live", "image"])
def test_the_frozen_collector_writes_nothing_but_its_bundle(runs: dict[str, Run], label: str):
    run = runs[f"frozen {label}"]
    for name, before in run.before.items():
        after = run.after[name]
        if name == "output":  # the media: the bundle and its .sha256 appear, and the folder's mtime moves
            added = sorted(set(after) - set(before))
            assert added == sorted([run.bundle.name, f"{run.bundle.name}.sha256"]), added
            assert not set(before) - set(after)
            assert [key for key in before if before[key] != after[key]] in ([], ["."])
        else:
            assert after == before, f"{name} changed"
    assert run.before["build"], "the build folder was watched"


def test_collection_json_says_frozen_and_names_the_build(runs: dict[str, Run], media: Media):
    tool = bundle_json(runs["frozen live"].bundle, "aitrail/collection.json")["tool"]
    build = tool["build"]
    files = frozen.folder_files(media.program.parent)
    manifest = json.loads((media.program.parent / frozen.BUILD_MANIFEST).read_bytes())
    assert tool["frozen"] is True
    assert build["as_built"] is True and build["differences"] == []
    assert build["executable_sha256"] == hashlib.sha256(media.program.read_bytes()).hexdigest()
    assert build["folder_sha256"] == frozen.folder_digest(files)
    assert build["folder_files"] == len(files) and build["not_regular_files"] == []
    assert build["folder"] == str(media.program.parent)
    assert build["manifest"] == {key: value for key, value in manifest.items() if key != "files"}
    # the sources the build froze are the checkout's (CI builds them from the clean clone it tests)
    assert tool["collector_sha256"] == manifest["collector_sha256"] == runinfo.collector_digest()
    installed = bundle_json(runs["installed live"].bundle, "aitrail/collection.json")["tool"]
    assert installed["frozen"] is False and "build" not in installed
    assert installed["collector_sha256"] == tool["collector_sha256"]


def test_the_build_holds_the_collector_and_none_of_what_it_leaves_out(frozen_program: Path):
    pytest.importorskip("PyInstaller", reason="PyInstaller reads the build's PYZ archive")
    from PyInstaller.archive.readers import CArchiveReader

    modules = set(CArchiveReader(str(frozen_program)).open_embedded_archive("PYZ.pyz").toc)
    assert {"aitrail.collector.cli", "aitrail.collector.collect_cli", "aitrail.collector.frozen",
            "aitrail.collector.bundle.seal", "cryptography", "zstandard", "click", "pathspec"} <= modules
    assert not [name for name in modules if any(name == out or name.startswith(out + ".") for out in LEFT_OUT)]
    files = [path.relative_to(frozen_program.parent).as_posix().lower() for path in frozen_program.parent.rglob("*")]
    assert any(path.startswith("_internal/zstandard/backend_c") for path in files)
    assert any(path.startswith("_internal/cryptography/hazmat/bindings/_rust") for path in files)
    assert not [path for path in files if re.search(r"(^|/)(_?yaml|pyyaml|xlsxwriter|msgspec)|aitrail/analyzer", path)]
    assert sorted(path.name for path in (frozen_program.parent / "_internal" / "aitrail" / "catalog").iterdir()) == \
        sorted([documents.PARSED_DOCUMENTS, *(path.name for path in (REPO / "catalog").glob("*.yaml"))])


def test_the_frozen_program_refuses_analyzer_commands_clearly(media: Media):
    for command in ("analyze", "report"):
        done = subprocess.run([str(media.program), command, "x.tar.zst"], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2
        assert f"{command}: {frozen.COLLECTOR_ONLY}" in done.stderr and "Traceback" not in done.stderr
    listed = subprocess.run([str(media.program), "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "collect " in listed and "  analyze " not in listed


def test_the_frozen_program_names_a_catalog_file_it_cannot_read(media: Media, tmp_path: Path):
    catalog = tmp_path / "catalog"
    shutil.copytree(media.program.parent / "_internal" / "aitrail" / "catalog", catalog)
    edited = (catalog / "pi.yaml").read_text().replace("\nname: ", "\nname: edited ", 1)
    (catalog / "pi.yaml").write_text(edited)
    done = subprocess.run([str(media.program), "collect", "--dry-run", "--catalog", str(catalog), "--home",
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "pi.yaml: PyYAML is not installed" in done.stderr and "Traceback" not in done.stderr
    assert "codex.yaml" not in done.stderr  # the files the build parsed are read without it
