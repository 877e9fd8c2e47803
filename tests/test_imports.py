"""The direction of flow: the collector never imports the analyzer or unlisted libraries."""

from __future__ import annotations

import json
import subprocess
import sys

# typing_extensions: pathspec imports it when it is installed (pathspec/_typing.py), as the test extras install it
ALLOWED_THIRD_PARTY = {"yaml", "_yaml", "pathspec", "zstandard", "_cffi_backend", "cryptography", "click", "aitrail",
                       "typing_extensions"}
# compiled internals of those dependencies (PyYAML's Cython, cryptography's Rust bindings) and pip's editable finder
ALLOWED_PREFIXES = ("_cython_", "cython_runtime", "_openssl", "_rust", "__editable__")

PROBE = """
import json, sys
before = set(sys.modules)
import aitrail.collector.cli
from click.testing import CliRunner
# run real commands so lazily imported modules are counted too
runner = CliRunner()
runner.invoke(aitrail.collector.cli.main, ["catalog", "list"])
runner.invoke(aitrail.collector.cli.main, ["collect", "--dry-run", "--home", sys.argv[1]])
runner.invoke(aitrail.collector.cli.main, ["verify", "/nonexistent"])
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_collector_imports_only_the_standard_library_and_its_dependencies(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, check=True)
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not [name for name in loaded if name.startswith("aitrail.analyzer")]
    top_level = {name.split(".")[0] for name in loaded}
    foreign = sorted(name for name in top_level - set(sys.stdlib_module_names) - ALLOWED_THIRD_PARTY - {"__main__"}
                     if not name.startswith(ALLOWED_PREFIXES))
    assert not foreign, f"the collector imported {foreign}"


HELP_PROBE = """
import json, sys
from click.testing import CliRunner
import aitrail.collector.cli
result = CliRunner().invoke(aitrail.collector.cli.main, ["--help"])
print(json.dumps({"output": result.output, "modules": sorted(m for m in sys.modules if m.startswith("aitrail"))}))
"""


def test_aitrail_help_loads_nothing_from_the_analyzer():
    proc = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, check=True)
    probe = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not [name for name in probe["modules"] if name.startswith("aitrail.analyzer")], probe["modules"]
    assert "analyze" in probe["output"] and "collect" in probe["output"]


def test_the_lazy_short_help_is_the_commands_own():
    import importlib

    from aitrail.collector.cli import LazyGroup

    for name, (module, attribute) in LazyGroup.lazy.items():
        command = getattr(importlib.import_module(module), attribute)
        assert LazyGroup.lazy_help[name] == command.get_short_help_str(limit=200), name


def test_verify_loads_neither_the_planner_nor_the_walker():
    probe = "import sys, aitrail.collector.verify; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    walking = {"aitrail.collector.finding.plan", "aitrail.collector.finding.walk", "aitrail.collector.collect"}
    assert not walking & set(loaded)


ANALYZER_MAY_IMPORT = ("aitrail.collector.catalog", "aitrail.collector.bundle", "aitrail.collector.verify",
                       "aitrail.collector.verify.frames", "aitrail.collector.verify.structure",
                       "aitrail.collector.verify.signer_pin")


def test_the_analyzer_imports_from_the_collector_only_what_adr_0001_lists():
    import ast

    from tests.conftest import REPO

    found = set()
    for path in (REPO / "analyzer").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):  # from a.b import c: a.b.c (c may be a module or a name in a.b)
                names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module else []
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                names = []
            found.update((name, path.name) for name in names if name.startswith("aitrail.collector"))
    outside = sorted((name, where) for name, where in found
                     if not any(name == allowed or name.startswith(allowed + ".") for allowed in ANALYZER_MAY_IMPORT))
    assert not outside, f"the analyzer imports collector internals: {outside}"
