"""Parsing bounds (issue 8, part A): long lines, deep JSON, big documents, decompression bombs.

Each attack is scaled down by lowering the limit it meets (the limits are
module constants read at call time), so the tests run in seconds; memory is
checked with tracemalloc (Python allocations are where these attacks land).
Every test here fails on the code before the bounds: no row, a crash row, or
a peak far over the cap.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from aitrail.analyzer.view import context, decode
from tests.analyzer.fakes import FakeBundle, run
from tests.analyzer.hostile_tools import analyze_measured, collected

THREAD = "0198e2a4-7b1c-7d3e-8f40-5a6b7c8d9e01"
ROLLOUT = f".codex/sessions/2026/07/02/rollout-2026-07-02T11-14-05-{THREAD}.jsonl"
TRANSCRIPT = ".claude/projects/-home-dev-x/4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37.jsonl"
_TEXT, _LOCATOR = 8, 13
MIB = 1024 * 1024


def with_peak(compute):
    """``compute()``'s value and the peak of Python allocations while it ran (tracemalloc)."""
    tracemalloc.start()
    try:
        value = compute()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def rollout_line(text: str) -> bytes:
    return json.dumps({"timestamp": "2026-07-02T09:14:05.000Z", "type": "response_item",
                       "payload": {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text}]}}).encode() + b"\n"


def prompt(text: str) -> bytes:
    return json.dumps({"type": "user", "uuid": text, "sessionId": "s", "timestamp": "2026-07-02T09:14:05.000Z",
                       "message": {"role": "user", "content": text}}).encode() + b"\n"


def rollout(data: bytes, path: str = ROLLOUT, store: str = "codex.rollouts") -> list[tuple]:
    return run(FakeBundle({(store, path): data}), path, "codex.rollout.v1")


def texts(rows: list[tuple]) -> list[str]:
    return [row[_TEXT] for row in rows]


# -- long lines -------------------------------------------------------------------------------------------


def test_a_line_over_the_limit_is_one_row_and_the_next_lines_are_read(monkeypatch):
    monkeypatch.setattr(context, "MAX_LINE_BYTES", 4096)
    at_limit = rollout_line("x" * 4096)
    at_limit = rollout_line("x" * (4096 - (len(at_limit) - 1 - 4096)))  # exactly 4096 bytes without newline
    assert len(at_limit) == 4097
    data = rollout_line("before") + b"y" * 4097 + b"\n" + at_limit + rollout_line("after")
    rows = rollout(data)
    assert texts(rows)[0] == "before"
    assert ("parser: line too long (4097 bytes)", "line:2") in [(row[_TEXT], row[_LOCATOR]) for row in rows]
    assert texts(rows)[-2:] == ["x" * (4096 - (len(rollout_line("")) - 1)), "after"]


def test_an_unterminated_last_line_over_the_limit_is_one_row(monkeypatch):
    monkeypatch.setattr(context, "MAX_LINE_BYTES", 1000)
    rows = rollout(rollout_line("kept") + b"z" * 5000)
    assert texts(rows) == ["kept", "parser: line too long (5000 bytes)"]


def test_every_line_reader_reports_a_long_line(monkeypatch):
    """Shell history reads ctx.lines() itself: it gives the row too."""
    monkeypatch.setattr(context, "MAX_LINE_BYTES", 100)
    path = ".gemini/tmp/abc/shell_history"
    rows = run(FakeBundle({("gemini_cli.shell_history", path): b"ls\n" + b"q" * 200 + b"\npwd\n"}), path,
               "gemini_cli.shell_history.v1")
    assert texts(rows) == ["ls", "parser: line too long (200 bytes)", "pwd"]


def test_a_long_line_is_counted_not_held(monkeypatch):
    """A 48 MiB line in 64 KiB chunks: the reader holds about one chunk, not the line."""
    monkeypatch.setattr(context, "MAX_LINE_BYTES", MIB)
    chunk = b"a" * (64 * 1024)

    class Chunked(FakeBundle):
        def iter_bytes(self, source):
            yield rollout_line("before")
            for _ in range(48 * 16):
                yield chunk
            yield b"\n" + rollout_line("after")

    bundle = Chunked({("codex.rollouts", ROLLOUT): b"x"})
    rows, peak = with_peak(lambda: run(bundle, ROLLOUT, "codex.rollout.v1"))
    assert f"parser: line too long ({48 * MIB} bytes)" in texts(rows) and texts(rows)[-1] == "after"
    assert peak < 8 * MIB, f"peak {peak / MIB:.1f} MiB while skipping a 48 MiB line"


SPLIT_MANY_CHUNKS = """
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))  # a bound: the linear reader needs well under a second
from aitrail.analyzer.view import context
from tests.analyzer.fakes import FakeBundle, run
context.MAX_LINE_BYTES = 64 * 1024 * 1024
class Chunked(FakeBundle):
    def iter_bytes(self, source):
        for _ in range(32 * 1024):
            yield b"b" * 1024  # 32 MiB in 1 KiB chunks, no newline
        yield b"\\n"
path = ".codex/sessions/2026/07/02/rollout-2026-07-02T11-14-05-0198e2a4-7b1c-7d3e-8f40-5a6b7c8d9e01.jsonl"
rows = run(Chunked({("codex.rollouts", path): b"x"}), path, "codex.rollout.v1")
print(rows[0][8][:40])
"""


def test_line_splitting_is_linear_in_the_number_of_chunks():
    """32k chunks without a newline: ``bytes +=`` copies ~512 GiB and never ends within the CPU cap."""
    proc = subprocess.run([sys.executable, "-c", SPLIT_MANY_CHUNKS], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("parser: unparseable line")


# -- JSON nesting ---------------------------------------------------------------------------------------------


def test_json_too_deep_is_one_row_and_the_next_record_is_read():
    path = TRANSCRIPT
    data = prompt("first") + b"[" * 100_000 + b"\n" + prompt("second")
    rows = run(FakeBundle({("claude_code.transcripts", path): data}), path, "claude_code.transcript.v1")
    assert not any("crashed" in text for text in texts(rows))
    assert "first" in texts(rows) and "second" in texts(rows)
    bad = [row for row in rows if row[_TEXT].startswith("parser: unparseable line (invalid JSON: nested deeper")]
    assert [row[_LOCATOR] for row in bad] == ["line:2"]


@pytest.mark.parametrize("depth", [150, 500, 990])
def test_values_nested_near_the_interpreter_limit_do_not_crash_a_parser(depth):
    """990 levels: plain json.loads decodes part of the way and raises RecursionError (a crash row before)."""
    deep = "[" * depth + "]" * depth
    line = ('{"type":"user","uuid":"u","sessionId":"s","timestamp":"2026-07-02T09:14:05.000Z",'
            '"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":' + deep + '}]}}\n')
    data = line.encode() + prompt("after")
    rows = run(FakeBundle({("claude_code.transcripts", TRANSCRIPT): data}), TRANSCRIPT, "claude_code.transcript.v1")
    assert not any("crashed" in text for text in texts(rows)), texts(rows)
    assert "after" in texts(rows)
    assert (any(text.startswith("parser: unparseable line (invalid JSON: nested") for text in texts(rows))
            == (depth > 190))


def test_decode_json_bounds_nesting_whatever_the_stack():
    assert decode.decode_json("[" * 150 + "]" * 150) is not None
    with pytest.raises(decode.NestedTooDeep):
        decode.decode_json("[" * 300 + "]" * 300)
    with pytest.raises(ValueError):
        decode.decode_json(b"[" * 100_000)


def test_a_deep_whole_document_is_one_row():
    path = ".gemini/settings.json"
    data = b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}"
    rows = run(FakeBundle({("gemini_cli.user_settings", path): data}), path, "gemini_cli.settings.v1")
    assert len(rows) == 1 and rows[0][_TEXT].startswith("parser: unparseable file (settings file is not JSON: nested")


@pytest.mark.parametrize("path,store,parser_id", [
    (".codex/config.toml", "codex.config", "codex.config.v1"),
    (".gemini/policies/p.toml", "gemini_cli.policies", "gemini_cli.policy.v1"),
])
def test_deep_toml_is_a_row_not_a_crash(path, store, parser_id):
    data = b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n"
    rows = run(FakeBundle({(store, path): data}), path, parser_id)
    assert rows and not any("crashed" in text for text in texts(rows)), texts(rows)
    assert any(text.startswith("parser:") for text in texts(rows))


def test_decode_json_refuses_what_would_decode_into_too_many_objects(monkeypatch):
    monkeypatch.setattr(decode, "CHECK_COST_BYTES", 1000)
    monkeypatch.setattr(decode, "MAX_DECODE_COST", 100_000)
    with pytest.raises(decode.JsonTooLarge):
        decode.decode_json("[" + ",".join(["{}"] * 2000) + "]")
    assert decode.decode_json('"' + "x" * 50_000 + '"') == "x" * 50_000  # long, but one value


# -- whole documents ---------------------------------------------------------------------------------------------


def test_a_document_over_the_limit_is_not_read(monkeypatch):
    monkeypatch.setattr(context, "MAX_DOCUMENT_BYTES", 1024)
    path = ".gemini/settings.json"
    rows = run(FakeBundle({("gemini_cli.user_settings", path): b"{" + b" " * 2046 + b"}"}), path,
               "gemini_cli.settings.v1")
    assert [(row[_TEXT], row[_LOCATOR]) for row in rows] == [
        ("parser: file too large to read whole (2048 bytes, limit 1024)", "file")]


def test_a_document_larger_than_files_jsonl_says_is_counted_not_held(monkeypatch):
    """files.jsonl is untrusted too: the bytes are counted as they come, past the limit nothing is kept."""
    monkeypatch.setattr(context, "MAX_DOCUMENT_BYTES", MIB)

    class Lying(FakeBundle):
        def iter_bytes(self, source):
            for _ in range(64):
                yield b" " * MIB

    path = ".gemini/settings.json"
    bundle = Lying({("gemini_cli.user_settings", path): b"{}"})  # size 2 in its Source
    rows, peak = with_peak(lambda: run(bundle, path, "gemini_cli.settings.v1"))
    assert texts(rows) == [f"parser: file too large to read whole ({64 * MIB} bytes, limit {MIB})"]
    assert peak < 8 * MIB


# -- .jsonl.zst ---------------------------------------------------------------------------------------------------


def bomb(size: int) -> bytes:
    compressor = zstandard.ZstdCompressor(level=19)
    return compressor.compress(rollout_line("before")) + compressor.compress(b"\0" * size)


def test_a_zst_bomb_is_decompressed_in_bounded_steps_up_to_the_cap(monkeypatch):
    monkeypatch.setattr(context, "MAX_DECOMPRESSED_BYTES", 8 * MIB)
    monkeypatch.setattr(context, "MAX_LINE_BYTES", MIB)
    data = bomb(64 * MIB)
    assert len(data) < 64 * 1024
    rows, peak = with_peak(lambda: rollout(data, ROLLOUT + ".zst", "codex.rollouts_compressed"))
    assert texts(rows)[0] == "before"
    assert texts(rows)[-1] == ("parser: decompressed content over the limit (8388608 bytes); "
                               "the rest of the file was not read")
    assert peak < 40 * MIB, f"peak {peak / MIB:.0f} MiB decompressing a 64 MiB bomb"


def test_a_zst_within_the_cap_is_read_whole():
    data = zstandard.ZstdCompressor().compress(b"".join(rollout_line(f"m{n}") for n in range(3000)))
    rows = rollout(data, ROLLOUT + ".zst", "codex.rollouts_compressed")
    assert texts(rows) == [f"m{n}" for n in range(3000)]


@pytest.mark.parametrize("path,store,parser_id", [
    (".codex/config.toml", "codex.config", "codex.config.v1"),
    (".codex/rules/default.rules", "codex.rules", "codex.rules.v1"),
    (".gemini/policies/p.toml", "gemini_cli.policies", "gemini_cli.policy.v1"),
])
def test_a_config_file_over_its_tighter_limit_is_not_parsed(monkeypatch, path, store, parser_id):
    """TOML and Starlark trees cost tens of times their text: a smaller cap than for JSON documents."""
    monkeypatch.setattr(context, "MAX_CONFIG_BYTES", 1000)
    rows = run(FakeBundle({(store, path): b"# padding\n" * 200}), path, parser_id)
    assert texts(rows) == ["parser: file too large to read whole (2000 bytes, limit 1000)"]


# -- end to end: collected for real, analyzed in a child whose peak RSS is measured ------------------------------


def write(path: Path, chunks) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        for chunk in chunks:
            handle.write(chunk)


def test_a_collected_rollout_with_an_80_mb_line_is_read_around_it(cli, tmp_path):
    """Before: the line was held and copied (about 4 times its size at peak); now it is counted."""
    bundle = collected(cli, tmp_path, lambda home: write(home / ROLLOUT, [
        rollout_line("before"), *([b"a" * MIB] * 80), b"\n", rollout_line("after")]))
    peak, rows = analyze_measured(bundle, tmp_path / "t.csv")
    assert peak < 150 * 1024, f"analyze peak {peak / 1024:.0f} MiB"
    # untimed rows sort last; the rollout's file time (the test's clock) is after its last record
    assert [row for row in rows if not row.startswith("integrity: written after last record: ")] == [
        "before", "after", f"parser: line too long ({80 * MIB} bytes)"]
    assert len(rows) == 4


def test_a_collected_sparse_settings_file_over_the_document_limit_is_not_read(cli, tmp_path):
    def build(home: Path) -> None:
        path = home / ".gemini/settings.json"
        path.parent.mkdir(parents=True)
        with open(path, "wb") as handle:
            handle.truncate(100 * MIB)

    peak, rows = analyze_measured(collected(cli, tmp_path, build), tmp_path / "t.csv")
    assert peak < 150 * 1024, f"analyze peak {peak / 1024:.0f} MiB"
    assert rows == [f"parser: file too large to read whole ({100 * MIB} bytes, limit {64 * MIB})"]


def test_a_collected_zst_bomb_is_streamed(cli, tmp_path):
    """A few KB expanding to 512 MiB of NULs: before, one decompress call returned all of it."""
    path = ROLLOUT + ".zst"
    bundle = collected(cli, tmp_path, lambda home: write(home / path, [bomb(512 * MIB)]))
    peak, rows = analyze_measured(bundle, tmp_path / "t.csv")
    assert peak < 150 * 1024, f"analyze peak {peak / 1024:.0f} MiB"
    assert rows[0] == "before" and rows[-1] == f"parser: line too long ({512 * MIB} bytes)"
