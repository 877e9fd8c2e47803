"""The direction of flow: the collector never imports the analyzer or unlisted libraries."""

from __future__ import annotations

import json
import subprocess
import sys

ALLOWED_THIRD_PARTY = {"yaml", "_yaml", "pathspec", "zstandard", "_cffi_backend", "cryptography", "click", "aitrail"}
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
