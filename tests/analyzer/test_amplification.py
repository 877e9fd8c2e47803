"""Output bombs: a value a bundle repeats into many rows never makes the timeline many times the bundle.

The red-team reproductions of issue 27: a Codex rollout whose session_meta
``cwd`` is 1 MiB, then 2,000 prompts (each row carried that cwd: a 59 KB
bundle gave a 629 MB CSV); one Claude Code line with a 1 MiB ``cwd`` and 300
tool calls; a history line naming one large paste many times. Each timeline
must stay within a small multiple of the bundle's decompressed payload.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write_tree

SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
HUGE = "/" + "d" * (1024 * 1024)


def timeline_size(cli, home: Path, tmp_path: Path) -> tuple[int, int]:
    """(bytes of the CSV timeline, bytes of the files collected)."""
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.csv"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    result = cli("analyze", bundle, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    payload = sum(path.stat().st_size for path in home.rglob("*") if path.is_file())
    return out.stat().st_size, payload


def test_a_huge_codex_cwd_is_not_written_on_every_prompt(cli, tmp_path: Path):
    lines = [{"timestamp": "2026-07-02T09:00:00.000Z", "type": "session_meta",
              "payload": {"id": SESSION, "timestamp": "2026-07-02T09:00:00.000Z", "cwd": HUGE,
                          "originator": "codex_cli_rs", "cli_version": "0.40.0"}}]
    lines += [{"timestamp": f"2026-07-02T09:{number // 60:02d}:{number % 60:02d}.000Z", "type": "response_item",
               "payload": {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": f"p{number}"}]}}
              for number in range(2000)]
    home = write_tree(tmp_path / "home", {
        f".codex/sessions/2026/07/02/rollout-2026-07-02T09-00-00-{SESSION}.jsonl":
            "".join(json.dumps(line) + "\n" for line in lines)})
    size, payload = timeline_size(cli, home, tmp_path)
    assert size < 8 * payload, (size, payload)  # was about 2,000 copies of the cwd: 2 GB


def test_a_huge_claude_cwd_is_not_written_on_every_tool_call(cli, tmp_path: Path):
    calls = [{"type": "tool_use", "id": f"toolu_{number:04d}", "name": "Bash", "input": {"command": "ls"}}
             for number in range(300)]
    line = {"type": "assistant", "uuid": "a1", "sessionId": SESSION, "cwd": HUGE,
            "timestamp": "2026-07-02T09:00:00.000Z",
            "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": calls}}
    home = write_tree(tmp_path / "home", {f".claude/projects/-x/{SESSION}.jsonl": json.dumps(line) + "\n"})
    size, payload = timeline_size(cli, home, tmp_path)
    assert size < 8 * payload, (size, payload)


def test_one_paste_named_many_times_is_put_back_within_a_budget(cli, tmp_path: Path, monkeypatch):
    from aitrail.analyzer.parsers.claude_code import history

    monkeypatch.setattr(history, "PASTE_BUDGET_CHARS", 300_000)
    placeholders = " ".join(f"[Pasted text #{number}]" for number in range(1, 201))
    pasted = {str(number): {"id": number, "type": "text", "contentHash": "feedbeef"} for number in range(1, 201)}
    line = {"display": placeholders, "pastedContents": pasted, "timestamp": 1783249320000, "sessionId": SESSION}
    home = write_tree(tmp_path / "home", {".claude/history.jsonl": json.dumps(line) + "\n",
                                          ".claude/paste-cache/feedbeef.txt": "x" * 100_000})
    size, payload = timeline_size(cli, home, tmp_path)
    assert size < 8 * payload, (size, payload)  # was 200 copies of the paste in one row
    text = (tmp_path / "t.csv").read_text()
    assert "parser: pasted text over the limit (300000 characters" in text
