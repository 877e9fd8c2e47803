"""Package list for setuptools, and the analyzer's hot modules compiled by mypyc where it can be.

ADR 0001 installs the folders collector/, analyzer/ and catalog/ as
aitrail.collector, aitrail.analyzer and aitrail.catalog. setuptools' own
``packages.find`` cannot add the ``aitrail.`` prefix to what it finds under a
mapped folder, so the subpackages are found here; a hand-written list once
left the parsers out of the wheel.

ADR 0006: the modules in COMPILED (the per-line and per-row path of the
analyzer) are compiled to C extensions by mypyc when mypyc and a C compiler
are at hand; the same .py files are installed beside them and are what runs
wherever the build could not compile them, or with AITRAIL_PURE_PYTHON=1 at
run time. The collector is never compiled: it goes onto subject machines.
Build without compiling: AITRAIL_PURE_PYTHON=1 pip install .

The build also writes aitrail/catalog/parsed-documents.json, the catalog's
YAML files parsed by the collector's own reader (collector/catalog/documents.py),
which a run uses for every file whose digest it records.
"""

import importlib.util
import json
import os
import shutil
import sys

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

MAPPED = {"aitrail.collector": "collector", "aitrail.analyzer": "analyzer", "aitrail.catalog": "catalog"}

# Where a run of the Claude Code and Codex bench corpora spends its Python time (docs/performance.md).
# A module here must not be patched by a test from outside (mypyc calls its functions directly).
COMPILED = (
    "analyzer/view/rows.py",
    "analyzer/outputs/export.py",
    "analyzer/view/context.py",
    "analyzer/formats/jsonl.py",
    "analyzer/formats/text.py",
    "analyzer/formats/calls.py",
    "analyzer/parsers/claude_code/transcript.py",
    "analyzer/parsers/claude_code/entries.py",
    "analyzer/parsers/claude_code/content.py",
    "analyzer/engine/dispatch.py",
    "analyzer/formats/idioms.py",
    "analyzer/parsers/codex/rollout.py",
    "analyzer/parsers/codex/items.py",
    "analyzer/parsers/codex/pairing.py",
    "analyzer/formats/crc32c.py",  # LevelDB's record and block checksums: 7x compiled (docs/performance.md)
)
STAGE = os.path.join("build", "mypyc-src")  # the sources under their import names, aitrail/analyzer/...

packages = []
for name, folder in MAPPED.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))


class OptionalBuildExt(build_ext):
    """build_ext that leaves the pure-Python modules in place when the compiled ones cannot be built."""

    def run(self):
        """Build the extensions; on failure say so and go on without them."""
        if self.inplace:  # an editable install: the .py files in the checkout run, so that edits take effect
            print("aitrail: editable install, the analyzer runs as pure Python", file=sys.stderr)
            return
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers: the .py files are installed and run instead
            self._skip(exc)

    def build_extension(self, ext):
        """Build one extension; on failure say so and go on without it."""
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._skip(exc)

    @staticmethod
    def _skip(exc):
        print(f"aitrail: compiled analyzer modules not built ({exc}); the pure-Python modules will run",
              file=sys.stderr)


class BuildPyWithParsedCatalog(build_py):
    """build_py that also writes the catalog's parsed documents beside its YAML (collector/catalog/documents.py)."""

    def run(self):
        """Copy the packages, then parse the catalog with the collector's own reader and write the result."""
        super().run()
        if self.editable_mode:  # the checkout's catalog is read from its YAML
            return
        spec = importlib.util.spec_from_file_location("catalog_documents",
                                                      os.path.join("collector", "catalog", "documents.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        try:
            parsed = module.parsed_documents("catalog")
        except ImportError as exc:  # pyyaml missing (a build without isolation): every run reads the YAML
            print(f"aitrail: catalog not pre-parsed ({exc}); it will be read from its YAML", file=sys.stderr)
            return
        target = os.path.join(self.build_lib, "aitrail", "catalog", module.PARSED_DOCUMENTS)
        with open(target, "w", encoding="utf-8") as handle:
            json.dump(parsed, handle, sort_keys=True, separators=(",", ":"))


def _stage_sources() -> list[str]:
    """Copy the analyzer and collector under aitrail/ so that mypy names their modules aitrail.analyzer...."""
    shutil.rmtree(STAGE, ignore_errors=True)
    for name, folder in MAPPED.items():
        if folder != "catalog":
            shutil.copytree(folder, os.path.join(STAGE, *name.split(".")),
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    return [os.path.join(STAGE, "aitrail", path) for path in COMPILED]


def compiled_modules() -> list:
    """The extensions mypyc makes of COMPILED, or none (AITRAIL_PURE_PYTHON=1, or mypyc not installed or failing)."""
    if os.environ.get("AITRAIL_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("aitrail: mypyc is not installed; the analyzer is installed as pure Python", file=sys.stderr)
        return []
    try:
        paths = _stage_sources()
        os.environ["MYPYPATH"] = STAGE
        return mypycify(["--config-file", "pyproject.toml", "--explicit-package-bases", *paths],
                        opt_level="3", group_name="aitrail_analyzer")
    except BaseException as exc:  # mypy reports a type error by SystemExit: build pure Python instead
        if isinstance(exc, KeyboardInterrupt):
            raise
        print(f"aitrail: mypyc could not compile the analyzer ({exc!r}); installed as pure Python",
              file=sys.stderr)
        return []


setup(packages=packages, package_dir=dict(MAPPED), ext_modules=compiled_modules(),
      cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithParsedCatalog})
