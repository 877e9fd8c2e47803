"""aitrail report: escaping, CSP, determinism, accounting, findings, refusal, and the page run in Chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.analyzer.report import tools
from aitrail.analyzer.report.timeline import script_json
from aitrail.collector.bundle.metadata import iter_records
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
INJECTED = "<script>document.title='pwned'</script>\"><img src=x onerror=\"document.title='pwned2'\">"
SESSION = "4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37"


def _collect(home: Path, out: Path, case: str = "C-7") -> str:
    result = CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(out), "--quiet", "--case", case])
    assert result.exit_code == 0, result.output
    return str(out)


def _report(tmp_path: Path, *bundles: str, name: str = "r.html", extra: tuple[str, ...] = ()):
    out = tmp_path / name
    result = CliRunner().invoke(main, ["report", *bundles, "-o", str(out), "--jobs", "1", *extra])
    return result, out


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """A Claude Code home with an injected prompt, and a Codex fixture home, collected once."""
    base = tmp_path_factory.mktemp("report")
    home = base / "cc-home"
    shutil.copytree(FIXTURES / "claude-code/current-session/home", home)
    transcript = next(home.glob(".claude/projects/*/*.jsonl"))
    line = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/src/acme-api",
            "sessionId": SESSION, "version": "2.1.120", "type": "user",
            "message": {"role": "user", "content": INJECTED}, "uuid": "a1000000-0000-4000-8000-0000000000ff",
            "timestamp": "2026-07-02T09:20:00.000Z"}
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    claude = _collect(home, base / "cc.tar.zst")
    codex = _collect(FIXTURES / "codex/untagged-v1/home", base / "codex.tar.zst")
    return {"claude": claude, "codex": codex, "base": base}


@pytest.fixture(scope="module")
def page(bundles):
    result, out = _report(bundles["base"], bundles["claude"], bundles["codex"], name="both.html")
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def _blocks(page: str) -> dict[str, object]:
    """The page's data blocks by id; a bundle's rows blocks (rows-N-K) joined as rows-N, in order."""
    blocks: dict[str, object] = {}
    for match in re.finditer(r'<script type="application/json" id="([a-z]+-\d+(?:-\d+)?)">(.*?)</script>', page,
                             re.S):
        name, value = match.group(1), json.loads(match.group(2))
        if name.startswith("rows-"):
            joined = "-".join(name.split("-")[:2])
            blocks.setdefault(joined, []).extend(value)
        else:
            blocks[name] = value
    return blocks


def test_injected_markup_never_appears_raw(page):
    assert "<img" not in page and "document.title='pwned'</script>" not in page
    assert page.count("<script") == 6  # the integrity rules, meta and rows of two bundles, and the page's own script
    rows = [row for key, value in _blocks(page).items() if key.startswith("rows") for row in value]
    assert INJECTED in [row[5] for row in rows]  # it is kept, as text


def test_script_json_cannot_close_its_element():
    encoded = script_json(["</script><!-- \u2028 \u2029"])
    assert "<" not in encoded and "\u2028" not in encoded and "\u2029" not in encoded
    assert json.loads(encoded) == ["</script><!-- \u2028 \u2029"]


def test_csp_allows_only_the_inline_script_and_style_by_hash(page):
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    for kind, body in (("script-src", script), ("style-src", style)):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{kind} 'sha256-{digest}'" in csp
    markup = re.sub(r'<script type="application/json".*?</script>', "", page, flags=re.S)  # the data is text
    assert not re.search(r"(src|href)=\"(?!#)", markup)  # nothing is loaded: links stay inside the page


def test_same_bundles_in_any_order_give_identical_bytes(bundles, page, tmp_path):
    result, out = _report(tmp_path, bundles["codex"], bundles["claude"])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == page


def test_accounting_numbers_are_files_jsonl_counts(bundles, page):
    with BundleReader(bundles["codex"]) as reader:
        counts = Counter()
        for _, record, _ in iter_records(reader):
            counts["matched"] += 1
            counts[record["class"]] += 1
    expected = (f'<tr><td>all agents</td><td class=n>{counts["matched"]}</td><td class=n>{counts["collected"]}</td>'
                f'<td class=n>{counts["skipped"]}</td><td class=n>{counts["failed"]}</td></tr>')
    assert expected in page


def test_findings_list_commands_with_results_and_edits(page):
    blocks = _blocks(page)
    metas = [blocks[f"meta-{n}"] for n in range(2)]
    rows = [blocks[f"rows-{n}"] for n in range(2)]
    commands = {finding[2]: (n, finding) for n, meta in enumerate(metas) for finding in meta["commands"]}
    assert "pytest tests/test_login.py -q" in commands
    assert "bash -lc 'cat webpack.config.js | head -n 40'" in commands
    n, finding = commands["bash -lc 'cat webpack.config.js | head -n 40'"]
    assert finding[1] >= 0 and rows[n][finding[1]][2] == "tool_result"
    assert rows[n][finding[1]][4] == rows[n][finding[0]][4]  # joined by tool_use_id
    assert any(meta["permissions"] for meta in metas)


def test_tool_arguments():
    assert tools.command_of('{"command": "npm test", "description": "x"}') == "npm test"
    assert tools.command_of('{"command": ["bash", "-lc", "ls"]}') == "bash -lc ls"
    assert tools.command_of("<execute_command>\n<command>npm test</command>\n</execute_command>") == "npm test"
    assert tools.command_of("git status --short\nyield_time_ms: 1000") == "git status --short\nyield_time_ms: 1000"
    assert tools.paths_of('{"file_path": "/home/alice/a.py", "old_string": "x"}') == ["/home/alice/a.py"]
    assert tools.paths_of("*** Begin Patch\n*** Update File: src/a.py\n*** Add File: b.md\n") == ["src/a.py", "b.md"]
    assert tools.paths_of("<write_to_file>\n<path>NOTES.md</path>\n</write_to_file>") == ["NOTES.md"]
    assert tools.paths_of("[[[[") == []


def test_a_bundle_that_fails_verification_is_refused_unless_forced(bundles, tmp_path):
    broken = tmp_path / "broken.tar.zst"
    data = bytearray(Path(bundles["codex"]).read_bytes())
    data[len(data) // 3] ^= 0xFF
    broken.write_bytes(bytes(data))
    result, out = _report(tmp_path, str(broken))
    assert result.exit_code == 1 and not out.exists()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _dom(url: str) -> str:
    proc = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                           "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False)
    return proc.stdout


@pytest.mark.skipif(_chromium() is None, reason="no chromium binary on this machine")
def test_chromium_renders_sessions_and_findings_and_runs_no_injected_script(page, bundles):
    out = bundles["base"] / "both.html"
    blocks = _blocks(page)
    number = next(n for n in range(2) if any(s[1] == SESSION for s in blocks[f"meta-{n}"]["sessions"]))
    session = next(i for i, s in enumerate(blocks[f"meta-{number}"]["sessions"]) if s[1] == SESSION)
    dom = _dom(f"file://{out}#s{number}-{session}")
    assert "<title>aitrail report</title>" in dom  # the injected script would have set it
    assert "The login endpoint times out under load. Find the cause." in dom
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom  # shown as text
    assert "<img" not in dom
    findings = _dom(f"file://{out}#f{number}-commands")
    assert "$ pytest tests/test_login.py -q" in findings and 'class="pair"' in findings


def test_a_forced_report_of_a_failed_bundle_says_failed(bundles, tmp_path):
    broken = tmp_path / "broken.tar.zst"
    data = bytearray(Path(bundles["claude"]).read_bytes())
    data[len(data) // 3] ^= 0xFF
    broken.write_bytes(bytes(data))
    result, out = _report(tmp_path, str(broken), extra=("--force",))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "VERIFICATION FAILED for 1 of 1 bundles" in page and "THIS BUNDLE FAILED VERIFICATION" in page
    assert '<span class="bad">FAILED</span>' in page


CREDENTIAL_HOMES = {  # fixture homes that hold credentials beside the evidence, and values that must never show
    "cursor-ide/credentials": ("eyJhbGciOiJIUzI1NiJ9", "alice.liddell@example.com", "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2",
                               "claudeKey"),
    "cursor-cli/cli-config": ("alice.lindqvist@example.com", "user_01J9ZK4Q7M2XW8N3T5R6", "Alice Lindqvist"),
    "pi/settings-trust": ("PIFIXTURESECRET", "PIFIXTUREREFRESH", "PIFIXTURELOCALKEY", "Sup3rS3cret",
                          "7f3c2a91-04be-4d55"),
}


@pytest.mark.parametrize("case", sorted(CREDENTIAL_HOMES))
def test_no_credential_or_account_identity_reaches_the_report(case, tmp_path):
    home = Path(__file__).resolve().parents[2] / "fixtures" / case / "home"
    bundle = _collect(home, tmp_path / "b.tar.zst")
    result, out = _report(tmp_path, bundle)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "aitrail report" in page
    for secret in CREDENTIAL_HOMES[case]:
        assert secret not in page, f"{secret} from {case} is in the report"


@pytest.mark.skipif(_chromium() is None, reason="no chromium binary on this machine")
def test_chromium_renders_every_findings_list(tmp_path):
    """Writes, permissions, parser problems and secondary-only sessions, each opened by its link, after the JS ran."""
    home = tmp_path / "home"
    for case in ("vscode-copilot-chat/confirmations", "pi/damaged", "continue/dev-data"):
        shutil.copytree(FIXTURES / case / "home", home, dirs_exist_ok=True)
    result, out = _report(tmp_path, _collect(home, tmp_path / "b.tar.zst"))
    assert result.exit_code == 0, result.output
    expected = {
        "written": "/home/alice/src/infra/outputs.tf",  # copilot_createFile
        "permissions": "permission decision: approved by setting chat.tools.terminal.autoApprove",
        "problems": "parser: unparseable line (torn last line, no newline",
        "secondary": "2c4e6a80-9b1d-4f3e-8a5c-7d9e1f3a5b7c",  # a Continue session known only from dev_data
    }
    for kind, text in expected.items():
        dom = _dom(f"file://{out}#f0-{kind}")
        rendered = re.sub(r"<script\b.*?</script>", "", dom, flags=re.DOTALL)  # the page's data blocks hold it too
        assert text in rendered, f"the {kind} list does not show {text!r}"
    assert "/home/alice/src/infra/outputs.tf" not in re.sub(r"<script\b.*?</script>", "", _dom(f"file://{out}"),
                                                            flags=re.DOTALL), "lists are built only when opened"


def test_each_bundle_is_verified_once(bundles, tmp_path, monkeypatch):
    """check_bundles verifies; analyze takes that result for the same file instead of hashing it again."""
    from aitrail.analyzer.engine import verifying
    from aitrail.analyzer.report import build

    calls = []

    def counted(original):
        def verify(path, *args, **kwargs):
            calls.append(path)
            return original(path, *args, **kwargs)
        return verify

    monkeypatch.setattr(build, "verify", counted(build.verify))
    monkeypatch.setattr(verifying.verify_module, "begin", counted(verifying.verify_module.begin))
    result, out = _report(tmp_path, bundles["claude"], bundles["codex"])
    assert result.exit_code == 0, result.output
    assert sorted(calls) == sorted([bundles["claude"], bundles["codex"]])


def test_a_digest_given_as_verified_spares_only_that_file(bundles, tmp_path):
    from aitrail.analyzer.engine.coordinator import AnalyzeOptions, NotVerified, analyze
    from aitrail.collector.verify import sha256_of_file

    broken = tmp_path / "broken.tar.zst"
    data = bytearray(Path(bundles["codex"]).read_bytes())
    data[len(data) // 3] ^= 0xFF
    broken.write_bytes(bytes(data))
    with pytest.raises(NotVerified):  # the digest of another file: verified as always, and refused
        analyze(AnalyzeOptions(bundle=str(broken), output=str(tmp_path / "a.jsonl"), format="jsonl", jobs=1,
                               progress=False, verified_sha256=sha256_of_file(bundles["codex"])))
    assert not (tmp_path / "a.jsonl").exists()
    good = analyze(AnalyzeOptions(bundle=bundles["codex"], output=str(tmp_path / "b.jsonl"), format="jsonl", jobs=1,
                                  progress=False, verified_sha256=sha256_of_file(bundles["codex"])))
    assert good.verified and good.rows > 0


def test_the_page_separates_damage_from_unpaired_calls_and_knows_stores_that_keep_no_results(tmp_path):
    """Cursor CLI's JSONL transcripts never record results: the page says so for their calls, apart from damage."""
    cursor = _collect(FIXTURES / "cursor-cli/jsonl-transcripts/home", tmp_path / "cursor.tar.zst")
    damaged = _collect(FIXTURES / "grok/damaged/home", tmp_path / "grok.tar.zst")
    result, out = _report(tmp_path, cursor, damaged)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    blocks = _blocks(page)
    by_host = {}
    for number in range(2):
        meta, rows = blocks[f"meta-{number}"], blocks[f"rows-{number}"]
        sources = [source[0] for source in meta["sources"]]
        by_host[number] = (meta, rows, sources)
    cursor_meta = next(meta for meta, _, sources in by_host.values() if any("agent-transcripts" in s for s in sources))
    grok_meta = next(meta for meta, _, sources in by_host.values() if any(".grok/" in s for s in sources))
    assert cursor_meta["resultless"] and all("agent-transcripts" in cursor_meta["sources"][index][0]
                                             for index in cursor_meta["resultless"])
    assert not grok_meta["resultless"] and grok_meta["problems"] and grok_meta["unpaired"]
    assert "result not recorded by this store" in page  # the script's text for such a call
    assert "No result recorded: tool calls without a result" in page
    assert "Parser problems: damaged or unreadable records" in page


def test_bidi_and_control_characters_are_shown_as_visible_escapes(tmp_path):
    """A project named with a right-to-left override (``\u202efdp.exe`` shows as ``exe.pdf``) is shown escaped."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude-code/current-session/home", home)
    transcript = next(home.glob(".claude/projects/*/*.jsonl"))
    line = {"type": "user", "sessionId": SESSION, "cwd": "/home/alice/\u202efdp.exe", "uuid": "b1",
            "timestamp": "2026-07-02T09:21:00.000Z",
            "message": {"role": "user", "content": "open \u202efdp.exe\x1b[2J"}}
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    result, out = _report(tmp_path, _collect(home, tmp_path / "b.tar.zst"))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "\u202e" not in page and "\x1b" not in page
    rows = _blocks(page)["rows-0"]
    assert any(cell == "open \\u202efdp.exe\\u001b[2J" for row in rows for cell in row)


def test_a_bundles_rows_are_split_into_blocks_the_browser_can_parse(tmp_path, monkeypatch):
    """No rows block may near a browser's string limit: past BLOCK_CHARS the rows go on in another block."""
    from aitrail.analyzer.report import timeline

    monkeypatch.setattr(timeline, "BLOCK_CHARS", 2000)
    result, out = _report(tmp_path, _collect(FIXTURES / "codex/tagged-rollout/home", tmp_path / "b.tar.zst"))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    ids = re.findall(r'<script type="application/json" id="(rows-0-\d+)">(.*?)</script>', page, re.S)
    assert len(ids) > 3 and [name for name, _ in ids] == [f"rows-0-{k}" for k in range(len(ids))]
    assert all(len(text) <= 2000 or text.count('],[') == 0 for _, text in ids)  # one row may be a block alone
    monkeypatch.setattr(timeline, "BLOCK_CHARS", 16 * 1024 * 1024)
    result, whole = _report(tmp_path, str(tmp_path / "b.tar.zst"), name="whole.html")
    assert _blocks(page)["rows-0"] == _blocks(whole.read_text(encoding="utf-8"))["rows-0"]


@pytest.mark.skipif(_chromium() is None, reason="no chromium binary on this machine")
def test_chromium_joins_a_bundles_rows_blocks_and_shows_unpaired_and_resultless_calls(tmp_path, monkeypatch):
    """Rows in many blocks open as one conversation; a Cursor transcript call says its store keeps no results."""
    from aitrail.analyzer.report import timeline

    monkeypatch.setattr(timeline, "BLOCK_CHARS", 600)
    bundle = _collect(FIXTURES / "cursor-cli/jsonl-transcripts/home", tmp_path / "b.tar.zst")
    result, out = _report(tmp_path, bundle)
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert len(re.findall(r'id="rows-0-\d+"', page)) >= 3
    meta = _blocks(page)["meta-0"]
    session = next(index for index, entry in enumerate(meta["sessions"])
                   if entry[1] == "7e1b9c40-2f6d-4a8e-b3c5-91d0e4a6f213")
    dom = _dom(f"file://{out}#s0-{session}")
    assert "result not recorded by this store" in dom and 'class="pair"' in dom


def test_a_known_absence_is_named_on_the_page(tmp_path):
    """An agent whose current versions keep their threads on a server (catalog `absences`): named, not 'no activity'."""
    bundle = _collect(FIXTURES / "amp/server-threads/home", tmp_path / "b.tar.zst")
    result, out = _report(tmp_path, bundle)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<h3>Known absences</h3>" in page and "<b>amp</b>" in page and "Sourcegraph" in page
    claude = _collect(FIXTURES / "claude-code/current-session/home", tmp_path / "c.tar.zst")
    _, other = _report(tmp_path, claude, name="c.html")
    assert "Known absences" not in other.read_text()
