"""The compiled analyzer modules (ADR 0006) give the bytes the pure-Python ones give, on hostile input too.

mypyc checks declared types at run time and binds names differently from the
interpreter (an exception name shared by two ``except`` clauses once turned a
parser's crash row into a crash of the run); the same source must still give
the same timeline. Each fixture transcript of Claude Code and Codex is turned
into a hostile one: every field, to three levels down, replaced in turn by a
value of every JSON type. Both builds analyze the same bundle.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO

AITRAIL = [sys.executable, "-m", "aitrail.collector.cli"]
REPLACEMENTS = (None, True, 0, -1, 1.5, 10**30, "", "x,\"y\"\n", [], [1, "a"], {}, {"type": "text"})
TRANSCRIPTS = {  # fixture agent: the home's folder its transcripts are under
    "claude-code": ".claude/projects",
    "codex": ".codex/sessions",
}


def _compiled_list() -> list[str]:
    """setup.py's COMPILED: the modules a build compiles (read, not imported: importing setup.py builds)."""
    for node in ast.parse((REPO / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and [target.id for target in node.targets] == ["COMPILED"]:
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no COMPILED list")


COMPILED = _compiled_list()


def _paths(value, prefix=(), depth=3):
    """Every key path into nested objects and arrays, to ``depth`` levels."""
    if depth == 0:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key), depth - 1)


def _replaced(value, path, new):
    copy = json.loads(json.dumps(value))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


def hostile_lines(data: bytes) -> bytes:
    """The file's lines, then every line again with one field replaced by each value of REPLACEMENTS."""
    out = [data.rstrip(b"\n")]
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        for path in _paths(record):
            out.extend(json.dumps(_replaced(record, path, new)).encode() for new in REPLACEMENTS)
    return b"\n".join(out) + b"\n"


def _is_compiled(module: str) -> bool:
    probe = f"import importlib; print(importlib.import_module({module!r}).__file__)"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                           env={**os.environ, "AITRAIL_PURE_PYTHON": "0"}, cwd="/")
    return not found.stdout.strip().endswith(".py")


def _module_name(path: str) -> str:
    return "aitrail." + path.removesuffix(".py").replace("/", ".")


@pytest.fixture(scope="module")
def hostile_bundle(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("hostile")
    home = work / "home"
    written = 0
    for agent, folder in TRANSCRIPTS.items():
        for source in sorted(FIXTURES.glob(f"{agent}/*/home/{folder}/**/*.jsonl")):
            case = source.relative_to(FIXTURES / agent).parts[0]
            relative = source.relative_to(FIXTURES / agent / case / "home")
            target = home / relative.parent / f"{case}-{relative.name}" if agent == "codex" else home / relative
            if target.exists():  # two cases with the same session file: keep both
                target = target.with_name(f"{case}-{target.name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(hostile_lines(source.read_bytes()))
            written += 1
    assert written >= 10, "the fixtures' transcripts were not found"
    bundle = work / "hostile.tar.zst"
    subprocess.run([*AITRAIL, "collect", "--home", str(home), "-o", str(bundle), "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    return bundle


def _analyze(bundle: Path, out: Path, pure: bool) -> bytes:
    env = {**os.environ, "AITRAIL_PURE_PYTHON": "1" if pure else "0"}
    subprocess.run([*AITRAIL, "analyze", str(bundle), "-o", str(out), "--quiet"], check=True, env=env)
    return out.read_bytes()


def test_the_pure_python_switch_loads_every_module_from_its_source():
    names = [_module_name(path) for path in COMPILED]
    probe = f"import importlib; print(all(importlib.import_module(n).__file__.endswith('.py') for n in {names!r}))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                           env={**os.environ, "AITRAIL_PURE_PYTHON": "1"}, cwd="/")
    assert found.stdout.strip() == "True"


def test_compiled_and_pure_python_give_the_same_timeline_of_hostile_transcripts(hostile_bundle, tmp_path):
    if not _is_compiled(_module_name(COMPILED[0])):
        if os.environ.get("CI") == "true":  # CI's machine has the compiler: a pure build there is a build error
            pytest.fail("the analyzer was installed as pure Python: see the build's 'aitrail:' message")
        pytest.skip("the analyzer is installed as pure Python here (no compiler at build time): nothing to compare")
    compiled = _analyze(hostile_bundle, tmp_path / "compiled.csv", pure=False)
    pure = _analyze(hostile_bundle, tmp_path / "pure.csv", pure=True)
    assert compiled == pure
    assert b"parser: crashed" not in compiled, "a hostile field made a parser crash"
    assert compiled.count(b"\n") > 20_000, "the hostile transcripts gave rows"
