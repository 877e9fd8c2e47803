"""Build the frozen collector: ``python packaging/build_frozen_collector.py [--dist DIR]``.

One folder that runs where nothing is installed: the collector alone (collect,
verify, keygen, catalog), frozen by PyInstaller ``--onedir`` with its Python,
zstandard, cryptography, click and pathspec. It runs in place, from the
removable media it was unzipped onto: unlike a one-file build, it never
unpacks itself into the subject's temporary folder. Left out: the analyzer,
PyYAML (the catalog ships parsed, as a wheel's parsed-documents.json),
XlsxWriter, msgspec, and zstandard's unused cffi backend.

Run it from a clean clone with a Python (3.11+) that has PyInstaller and the
collector's dependencies, PyYAML included (the build parses the catalog):
``pip install . pyinstaller`` in a venv is enough. It writes, under ``dist/``:

* ``aitrail-collector-<version>-<os>-<arch>/``: the executable
  ``aitrail-collector`` (``.exe`` on Windows), ``_internal/``, and the build
  manifest (collector/frozen.py BUILD_MANIFEST: what it was built from and the
  SHA-256 of every other file of the folder);
* ``<that name>.zip`` (the folder, with its Unix modes: ``unzip`` restores the
  executable bit, ``python -m zipfile -e`` does not) and ``<that name>.zip.sha256``
  (``sha256sum -c`` reads it).

It prints progress on stderr and, on stdout, one line: the executable's path.
It is not a cross-compiler: a macOS or Windows build is made by running it on
that system. Work files go to build/frozen-collector/.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
NAME = "aitrail-collector"
ENTRY = Path(__file__).resolve().parent / "frozen_entry.py"
# Modules the build leaves out, and that tests/collector/test_frozen.py checks are absent from it.
EXCLUDED = ("aitrail.analyzer", "aitrail.collector.foreign", "yaml", "_yaml", "xlsxwriter", "msgspec",
            "zstandard.backend_cffi")  # the C backend is the one zstandard loads; the cffi one is 12 MB more
BUNDLED = ("zstandard", "cryptography", "click", "pathspec")  # the collector's dependencies, versions in the manifest


class BuildError(RuntimeError):
    """The build cannot be made, or what it made is not the collector-only build."""


def say(message: str) -> None:
    """Progress, on stderr (stdout carries only the executable's path)."""
    print(f"build_frozen_collector: {message}", file=sys.stderr, flush=True)


def standalone(relative: str) -> ModuleType:
    """A standalone module of the checkout (it imports nothing of aitrail), loaded from its file."""
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def source_version() -> str:
    """``__version__`` of the checkout's collector (read, not imported: an installed aitrail may be another)."""
    tree = ast.parse((REPO / "collector" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        names = [getattr(target, "id", None) for target in getattr(node, "targets", ())]
        if isinstance(node, ast.Assign) and "__version__" in names:
            return ast.literal_eval(node.value)
    raise BuildError("collector/__init__.py has no __version__")


def platform_tag() -> tuple[str, str]:
    """(os, arch) of this machine, as the build's name gives them: linux/macos/windows, x86_64/arm64/..."""
    system = {"darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform.rstrip("0123456789"))
    machine = platform.machine().lower()
    return system, {"amd64": "x86_64", "aarch64": "arm64"}.get(machine, machine)


def build_name(version: str, system: str, arch: str) -> str:
    """The folder's (and the zip's) name."""
    return f"{NAME}-{version}-{system}-{arch}"


def stage_sources(stage: Path) -> Path:
    """Copy the collector and the catalog under stage/aitrail/ as a wheel installs them; the catalog parsed.

    The parsed catalog (parsed-documents.json) is written by the collector's
    own reader (collector/catalog/documents.py), as setup.py writes it into a
    wheel; every catalog file must be in it, since the build has no PyYAML.
    """
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(REPO / "collector", stage / "aitrail" / "collector",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    catalog = stage / "aitrail" / "catalog"
    catalog.mkdir(parents=True)
    for path in sorted((REPO / "catalog").glob("*.yaml")):
        shutil.copy2(path, catalog / path.name)
    documents = standalone("collector/catalog/documents.py")
    try:
        parsed = documents.parsed_documents(catalog)
    except ImportError as exc:
        raise BuildError(f"PyYAML is needed to parse the catalog at build time ({exc})") from exc
    unparsed = sorted(path.name for path in catalog.glob("*.yaml")) != sorted(parsed["documents"])
    if unparsed:
        raise BuildError("some catalog files did not parse (run: aitrail catalog validate); the frozen collector "
                         "could not read them")
    with open(catalog / documents.PARSED_DOCUMENTS, "w", encoding="utf-8") as handle:
        json.dump(parsed, handle, sort_keys=True, separators=(",", ":"))  # as setup.py writes it
    return catalog


def collector_modules(stage: Path) -> list[str]:
    """Every module of the staged collector, by import name (the CLI imports its commands by name)."""
    root = stage / "aitrail"
    names = []
    for path in sorted((root / "collector").rglob("*.py")):
        parts = path.relative_to(stage).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def run_pyinstaller(stage: Path, catalog: Path, work: Path) -> Path:
    """Freeze the staged collector with PyInstaller --onedir; the folder it made."""
    if importlib.util.find_spec("PyInstaller") is None:
        raise BuildError(f"PyInstaller is not installed for {sys.executable} (pip install pyinstaller)")
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--onedir", "--noupx",
               "--log-level", "WARN", "--name", NAME, "--distpath", str(work / "dist"),
               "--workpath", str(work / "pyinstaller"), "--specpath", str(work), "--paths", str(stage),
               "--add-data", f"{catalog}{os.pathsep}aitrail/catalog"]
    if sys.platform != "win32":
        command.append("--strip")  # the symbol tables are most of libpython and the extensions (80 MB to 33)
    for module in collector_modules(stage):
        if not _excluded(module):
            command += ["--hidden-import", module]
    for module in EXCLUDED:
        command += ["--exclude-module", module]
    done = subprocess.run([*command, str(ENTRY)], cwd=work, stdout=sys.stderr, check=False)
    if done.returncode != 0:
        raise BuildError(f"PyInstaller failed (exit {done.returncode})")
    return work / "dist" / NAME


def executable_name() -> str:
    """The program's file name in the folder."""
    return NAME + (".exe" if sys.platform == "win32" else "")


def pyz_modules(executable: Path) -> list[str]:
    """Every module frozen into the executable's PYZ archive (PyInstaller's own reader)."""
    from PyInstaller.archive.readers import CArchiveReader

    package = CArchiveReader(str(executable))
    return sorted(package.open_embedded_archive("PYZ.pyz").toc)


def check_contents(folder: Path, stage: Path) -> None:
    """The build holds every collector module and nothing EXCLUDED, and its folder no file of theirs."""
    modules = set(pyz_modules(folder / executable_name()))
    present = sorted(name for name in modules if _excluded(name))
    missing = sorted({name for name in collector_modules(stage) if not _excluded(name)} - modules)
    stray = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*") if _left_out_file(path, folder))
    if missing or present or stray:
        raise BuildError(f"not the collector-only build: missing {missing}, excluded but present {present}, "
                         f"files {stray}")


def _excluded(module: str) -> bool:
    """A module of EXCLUDED (``aitrail.collector.foreign`` is the workstation's import, not the subject's)."""
    return any(module == out or module.startswith(out + ".") for out in EXCLUDED)


def _left_out_file(path: Path, folder: Path) -> bool:
    """A file or folder of a left-out package (its name's leading word: yaml, _yaml, pyyaml-6.0.dist-info ...)."""
    relative = path.relative_to(folder).as_posix()
    head = re.match(r"[a-z_]*", path.name.lower()).group(0)
    return head in {"yaml", "_yaml", "pyyaml", "xlsxwriter", "msgspec"} or "aitrail/analyzer" in relative


def source_state() -> dict:
    """The commit built from, and whether the files the build takes differed from it (None without git)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    changes = git("status", "--porcelain", "--", "collector", "catalog", "packaging", "setup.py", "pyproject.toml")
    return {"git_commit": commit, "git_dirty": None if changes is None else bool(changes)}


def dependency_versions() -> dict[str, str | None]:
    """The versions of the bundled dependencies and of PyInstaller, as installed where the build ran."""
    versions: dict[str, str | None] = {}
    for name in (*BUNDLED, "pyinstaller"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_manifest(folder: Path, stage: Path, frozen: ModuleType, identity: dict) -> dict:
    """Write the build manifest into the folder: what was built, from what, and every other file's digest."""
    manifest = {
        "format": frozen.MANIFEST_FORMAT,
        **identity,
        "python": platform.python_version(),
        "dependencies": dependency_versions(),
        "excluded_modules": list(EXCLUDED),
        "source": source_state(),
        "collector_sha256": frozen.source_digest(stage / "aitrail" / "collector"),
        "built_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "files": frozen.folder_files(folder),
    }
    odd = [path for path, entry in manifest["files"].items() if "sha256" not in entry]
    if odd:  # a link would need its own handling in the zip and on the media: say so rather than guess
        raise BuildError(f"the build folder holds entries that are not regular files: {odd}")
    (folder / frozen.BUILD_MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                                encoding="utf-8")
    return manifest


def smoke_test(executable: Path) -> None:
    """The built program starts, and reads its catalog without PyYAML."""
    for args in (["--version"], ["catalog", "validate"]):
        done = subprocess.run([str(executable), *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise BuildError(f"{executable.name} {' '.join(args)} failed: {done.stdout}{done.stderr}")
        say(f"{executable.name} {' '.join(args)}: {done.stdout.strip()}")


def write_zip(folder: Path, target: Path) -> None:
    """Zip the folder under its own name, with each entry's Unix mode (unzip restores the executable bit)."""
    target.unlink(missing_ok=True)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for directory, subdirectories, names in os.walk(folder):
            subdirectories.sort()
            for name in sorted(names):
                path = Path(directory, name)
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    raise BuildError(f"{path} is not a regular file")
                # ZipInfo.from_file records st_mode in external_attr and, off Windows, create_system 3 (Unix)
                archive.write(path, Path(folder.name, path.relative_to(folder)).as_posix())


def write_checksum(target: Path, frozen: ModuleType) -> Path:
    """``<zip>.sha256`` in sha256sum's format (the digest by frozen.file_sha256, as the folder's files)."""
    checksum = target.with_name(target.name + ".sha256")
    checksum.write_text(f"{frozen.file_sha256(target)}  {target.name}\n", encoding="utf-8")
    return checksum


def build(dist: Path, work: Path) -> Path:
    """Make the folder, its zip and the zip's checksum in ``dist``; the executable's path."""
    started = time.monotonic()
    frozen = standalone("collector/frozen.py")
    version = source_version()
    system, arch = platform_tag()
    name = build_name(version, system, arch)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    stage = work / "src"
    say(f"staging the collector and the parsed catalog in {stage}")
    catalog = stage_sources(stage)
    say("freezing with PyInstaller (about a minute)")
    made = run_pyinstaller(stage, catalog, work)
    check_contents(made, stage)
    dist.mkdir(parents=True, exist_ok=True)
    folder = dist / name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.move(str(made), str(folder))
    smoke_test(folder / executable_name())
    identity = {"name": NAME, "version": version, "os": system, "arch": arch, "executable": executable_name()}
    manifest = write_manifest(folder, stage, frozen, identity)
    files = frozen.folder_files(folder)
    target = dist / f"{name}.zip"
    write_zip(folder, target)
    checksum = write_checksum(target, frozen)
    say(f"folder   {folder}: {len(files)} files, {sum(entry['size'] for entry in files.values()):,} bytes")
    say(f"         folder_sha256 {frozen.folder_digest(files)} (collection.json tool.build.folder_sha256)")
    say(f"         collector_sha256 {manifest['collector_sha256']}")
    say(f"zip      {target}: {target.stat().st_size:,} bytes; {checksum.read_text().split()[0]}")
    say(f"built in {time.monotonic() - started:.0f} s")
    return folder / executable_name()


def main(argv: list[str] | None = None) -> int:
    """Build; print the executable's path on stdout. Exit 1 on a failed build."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=REPO / "dist", help="where the folder and zip go (dist/)")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "frozen-collector",
                        help="work files (build/frozen-collector/, emptied first)")
    options = parser.parse_args(argv)
    try:
        executable = build(options.dist.resolve(), options.work.resolve())
    except BuildError as exc:
        say(f"FAILED: {exc}")
        return 1
    print(executable)
    return 0


if __name__ == "__main__":
    sys.exit(main())
