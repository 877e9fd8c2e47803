"""Lazy regexes over subject-typed text were quadratic (issue 8): the scans that replace them.

A prompt of 40,000 ``<command-name>`` took three minutes in the Claude Code
command-tag regex; ``<environment_context>`` repeated did the same in Codex's
cwd lookup, and unclosed ``/*`` in a JSONC settings file in the comment
stripper. The replacements must give the regexes' results and finish a far
larger input well within a CPU cap (a bound, not a timing: the quadratic
versions need hours).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys

from aitrail.analyzer.formats.scan import search_after, tag_pairs

OLD_COMMAND_TAG = re.compile(r"<(command-name|command-args)>(.*?)</\1>", re.DOTALL)
OLD_ENVIRONMENT_CWD = re.compile(r"<environment_context>.*?<cwd>([^<]+)</cwd>", re.DOTALL)
PIECES = ["<command-name>", "</command-name>", "<command-args>", "</command-args>", "x", " ", "<",
          "<environment_context>", "<cwd>", "</cwd>", "/a", "\n"]


def random_texts(count: int):
    generator = random.Random(8)
    for _ in range(count):
        yield "".join(generator.choice(PIECES) for _ in range(generator.randint(0, 40)))


def test_tag_pairs_gives_what_the_regex_gave():
    for text in random_texts(20_000):
        assert tag_pairs(text, ("command-name", "command-args")) == OLD_COMMAND_TAG.findall(text), text


def test_search_after_gives_what_the_regex_gave():
    cwd = re.compile(r"<cwd>([^<]+)</cwd>")
    for text in random_texts(20_000):
        old, new = OLD_ENVIRONMENT_CWD.search(text), search_after(text, "<environment_context>", cwd)
        assert (old and old.group(1)) == (new and new.group(1)), text


HOSTILE = """
import json, resource
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
from aitrail.analyzer.parsers.codex import rollout as codex_rollout
from aitrail.analyzer.parsers.gemini_cli.projects import load_jsonc
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.parsers.codex.pairing import Repeats
from tests.analyzer.fakes import FakeBundle, run
n = 200_000
path = ".claude/projects/-home-dev-x/4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl"
line = json.dumps({"type": "user", "uuid": "u", "sessionId": "s", "timestamp": "2026-07-02T09:14:05.000Z",
                   "message": {"role": "user", "content": "<command-name>" * n}}) + "\\n"
rows = run(FakeBundle({("claude_code.transcripts", path): line.encode()}), path, "claude_code.transcript.v1")
assert rows, rows
rollout = "sessions/2026/07/02/rollout-2026-07-02T09-14-05-4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl"
bundle = FakeBundle({("codex.rollouts", rollout): b""})
context = ParseContext(bundle, bundle.source(rollout), {})
reader = codex_rollout.RolloutReader(context, Repeats(context))
item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>" * n}]}
reader.learn_cwd(item)
assert reader.project == ""
try:
    load_jsonc(b"/* a" * n)
except ValueError:
    pass
print("done")
"""


def test_hostile_tag_runs_are_scanned_in_linear_time():
    proc = subprocess.run([sys.executable, "-c", HOSTILE], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr[-2000:]


def test_the_reports_tag_scan_gives_what_its_regex_gave_in_linear_time():
    """command_of/paths_of's ``<command>``/``<path>`` fallback: 144 KB of openings took the regex 23 s."""
    from aitrail.analyzer.report.tools import command_of, paths_of, tag_text

    old = {key: re.compile(rf"<{key}>(.*?)</{key}>", re.DOTALL) for key in ("command", "path")}
    generator = random.Random(9)
    pieces = ["<command>", "</command>", "<path>", "</path>", "x", " ", "<", "\n"]
    for _ in range(20_000):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(0, 30)))
        for key, regex in old.items():
            match = regex.search(text)
            assert tag_text(text, key) == (match.group(1).strip() if match else None), text
    script = ("import resource; resource.setrlimit(resource.RLIMIT_CPU, (20, 20))\n"
              "from aitrail.analyzer.report.tools import command_of, paths_of\n"
              "text = '<command>' * 110_000 + '<path>' * 110_000\n"
              "assert command_of(text) == text and paths_of(text) == []\nprint('done')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr[-2000:]
    assert command_of("run <command>ls -la</command>") == "ls -la" and paths_of("<path> a.py </path>") == ["a.py"]
