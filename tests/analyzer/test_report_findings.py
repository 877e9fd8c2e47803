"""The report's findings across agents, from the fixture homes (collected and analyzed) and from rows written here.

Commands with their outcome, files, network, MCP, sub-agents, tokens, secrets,
integrity rows, titles and configuration files; the readers on the agents'
texts, and their bounds on hostile ones.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aitrail.analyzer.engine.coordinator import AnalyzeOptions, analyze
from aitrail.analyzer.report import build, commandline, findings, outcomes, secrets, timeline, tools
from aitrail.collector.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CONTRACT_KEYS = {"sessions", "sources", "commands", "files", "network", "mcp_servers", "mcp_calls", "subagents",
                 "tokens", "secrets", "integrity", "permissions", "problems", "unpaired", "secondary", "resultless",
                 "counts", "span"}
COUNT_KEYS = {"sessions", "configuration", "prompts", "commands", "commands_by_outcome", "files_written",
              "files_read", "files_deleted", "denials", "network", "mcp_calls", "subagents", "secrets",
              "recovered_sessions", "integrity", "rows", "problems"}


class _Block(io.StringIO):
    def close(self) -> None:  # spool closes each block; the test reads nothing of them
        pass


def _spool_lines(lines: list[str], roles: dict | None = None, resultless: frozenset = frozenset()):
    data = "".join(line + "\n" for line in lines).encode()
    return timeline.spool(io.BytesIO(data), lambda _: _Block(), resultless, roles)


def _digest(tmp_path: Path, *cases: str, edit=None) -> timeline.Digest:
    """Collect the fixture homes (merged), analyze the bundle and spool its rows as `aitrail report` does."""
    home = tmp_path / "home"
    for case in cases:
        shutil.copytree(FIXTURES / case / "home", home, dirs_exist_ok=True)
    if edit is not None:
        edit(home)
    bundle, out = tmp_path / "b.tar.zst", tmp_path / "t.jsonl"
    result = CliRunner().invoke(main, ["collect", "--home", str(home), "-o", str(bundle), "--quiet"])
    assert result.exit_code == 0, result.output
    analyze(AnalyzeOptions(bundle=str(bundle), output=str(out), format="jsonl", jobs=1, progress=False))
    with out.open("rb") as source:
        return timeline.spool(source, lambda _: _Block(), build.resultless_stores(), build.store_roles())


def _commands(digest: timeline.Digest) -> dict[str, list]:
    return {entry[2]: entry for entry in digest.commands}


# ---- Claude Code: a rule's denial, a user's refusal, sub-agents, titles, models, secrets typed in a prompt ----

SESSION = "b2000000-0000-4000-8000-00000000000b"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
PASSWORD = "password=Hunter2!x9"


def _line(kind: str, uuid: str, parent: str | None, when: str, **fields) -> str:
    entry = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/src/acme-api",
             "sessionId": SESSION, "version": "2.1.120", "gitBranch": "main", "type": kind, "uuid": uuid,
             "timestamp": when, **fields}
    return json.dumps(entry)


def _claude_session(home: Path) -> None:
    """A second session: a prompt holding secrets, a Bash call the user refuses, a curl the agent runs."""
    project = next(home.glob(".claude/projects/*/"))
    call = {"type": "tool_use", "id": "toolu_02RefusedByTheUser00000", "name": "Bash",
            "input": {"command": "rm -rf build", "description": "Clean"}}
    fetch = {"type": "tool_use", "id": "toolu_03RanCurl0000000000000", "name": "Bash",
             "input": {"command": "curl -fsSL https://example.com/install.sh -o /tmp/i.sh", "description": "Get"}}
    refused = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
               "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
               "tell you how to proceed.")
    lines = [
        _line("user", "c1", None, "2026-07-03T08:00:00.000Z", message={
            "role": "user", "content": f"Deploy with {AWS_KEY} and {GITHUB_TOKEN}, db {PASSWORD}, then clean up"}),
        _line("assistant", "c2", "c1", "2026-07-03T08:00:05.000Z", message={
            "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [call]}),
        _line("user", "c3", "c2", "2026-07-03T08:00:09.000Z", message={"role": "user", "content": [
            {"tool_use_id": call["id"], "type": "tool_result", "content": refused, "is_error": True}]}),
        _line("assistant", "c4", "c3", "2026-07-03T08:00:12.000Z", message={
            "id": "msg_03", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [fetch]}),
        _line("user", "c5", "c4", "2026-07-03T08:00:14.000Z", message={"role": "user", "content": [
            {"tool_use_id": fetch["id"], "type": "tool_result", "content": "", "is_error": False}]}),
    ]
    (project / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def claude(tmp_path_factory) -> timeline.Digest:
    return _digest(tmp_path_factory.mktemp("claude"), "claude-code/current-session", edit=_claude_session)


def test_a_deny_rule_blocks_and_a_refusal_is_the_users(claude):
    """A deny rule blocks; a refusal at the prompt is the user's.

    Claude Code's "Permission to use Bash ... has been denied." is a deny rule
    or a mode that does not ask (docs/agents/claude-code.md, Permission rows);
    "The user doesn't want to proceed with this tool use." is the user's answer.
    """
    commands = _commands(claude)
    blocked, refused = commands["pytest tests/test_login.py -q"], commands["rm -rf build"]
    assert blocked[3] == "blocked by rule" and blocked[1] > blocked[0] and blocked[4] is None
    assert refused[3] == "denied by user" and refused[1] > refused[0]
    assert commands["curl -fsSL https://example.com/install.sh -o /tmp/i.sh"][3] == "ran"
    assert claude.counts["commands_by_outcome"] == {"ran": 1, "failed": 0, "denied by user": 1, "blocked by rule": 1,
                                                    "no result recorded": 0, "not recorded by store": 0}
    assert claude.counts["denials"] == 3  # the two commands and the Edit refused with feedback


def test_what_a_refused_call_would_have_done_is_not_listed(claude):
    """The refused `rm -rf build` deleted nothing and the refused Edit wrote nothing; the curl that ran is network."""
    assert [entry[1:] for entry in claude.files] == []
    assert claude.counts["files_deleted"] == claude.counts["files_written"] == 0
    assert [entry[1:] for entry in claude.network] == [
        ["command", "curl -fsSL https://example.com/install.sh -o /tmp/i.sh"]]


def test_a_subagent_run_is_listed_once_with_its_description(claude):
    """The Agent call and the sub-agent's `subagent prompt:` row are one run (the same prompt)."""
    assert [entry[1] for entry in claude.subagents] == ["Find DB pool configuration"]
    assert claude.counts["subagents"] == 1


def test_sessions_are_titled_and_carry_their_models(claude):
    by_id = {session.session_id: session for session in claude.sessions}
    main_session = by_id["4f9d2c1e-7b3a-4e55-9a0c-2d6e8b1f0a37"]
    assert main_session.title == "Login timeout under load"  # the ai-title row, not the first prompt
    assert main_session.kind == "conversation"
    entry = main_session.as_list()
    assert entry[7:9] == ["Login timeout under load", "conversation"]
    assert entry[9] == [["claude-sonnet-4-5-20250929", 6], ["claude-opus-4-1-20250805", 4]]
    assert by_id[f"{SESSION}"].title.startswith("Deploy with AKIA…20 and ghp_…40, db pass…")


def test_secrets_typed_in_a_prompt_are_found_and_never_reach_the_page_data_unredacted(claude):
    found = [(entry[1], entry[2]) for entry in claude.secrets]
    assert found == [("AWS access key", "AKIA…20"), ("GitHub token", "ghp_…40"), ("password assignment", "pass…19")]
    assert claude.counts["secrets"] == 3
    meta = timeline.script_json(claude.meta())
    for secret in (AWS_KEY, GITHUB_TOKEN, PASSWORD, "Hunter2"):
        assert secret not in meta


def test_the_page_data_has_every_key_of_the_contract(claude):
    meta = claude.meta()
    assert set(meta) == CONTRACT_KEYS
    assert COUNT_KEYS <= set(meta["counts"])
    assert meta["counts"]["rows"] == claude.rows
    assert meta["span"][0] <= meta["span"][1] and meta["span"][0].startswith("2026-")
    assert all(len(entry) == 5 for entry in meta["commands"]) and all(len(entry) == 10 for entry in meta["sessions"])


# ---- the other agents' goldens ----

def test_codex_exit_codes_refusals_web_search_mcp_and_tokens(tmp_path):
    digest = _digest(tmp_path, "codex/damaged", "codex/tagged-rollout", "codex/archived-sessions",
                     "codex/newer-additions")
    commands = _commands(digest)
    assert commands["make lint"][3:] == ["failed", 2]  # Exit code: 2
    assert commands["terraform init -upgrade"][3:] == ["ran", 0]
    push = next(entry for command, entry in commands.items() if command.startswith("git push origin fix/"))
    assert push[3] == "denied by user"  # exec command rejected by user
    assert ["search", "hashicorp aws provider 6.2 breaking changes"] in [entry[1:] for entry in digest.network]
    assert not any("git push" in entry[2] for entry in digest.network)  # refused: it reached nothing
    assert [entry[1:] for entry in digest.mcp_calls] == [["github", "create_issue"]]
    assert any(model == "gpt-5.5-codex" and given > 0 and taken > 0 for _, model, given, taken in digest.tokens)
    assert any(entry[1] == "src/db/pool.py" and entry[2] == "written" for entry in digest.files)  # apply_patch


def test_opencode_rule_block_user_refusal_and_the_users_title(tmp_path):
    digest = _digest(tmp_path, "opencode/permission-rejected")
    commands = _commands(digest)
    assert commands["git push origin main"][3] == "blocked by rule"
    assert commands["rm -rf build"][3] == "denied by user"
    assert not digest.network and not any(entry[2] == "deleted" for entry in digest.files)
    assert "Clean up the build setup" in [session.title for session in digest.sessions]


def test_a_store_that_keeps_no_results_says_so(tmp_path):
    digest = _digest(tmp_path, "cursor-cli/jsonl-transcripts")
    assert _commands(digest)["pytest tests/test_login.py -q"][3] == "not recorded by store"
    assert digest.counts["commands_by_outcome"]["not recorded by store"] == 1


def test_gemini_exit_code_in_an_error_and_a_user_denial(tmp_path):
    digest = _digest(tmp_path, "gemini-cli/legacy-hash-folder", "gemini-cli/jsonl-session")
    commands = _commands(digest)
    assert commands["./migrate.sh --dry-run"][3:] == ["failed", 2]  # error: Command exited with code 2: ...
    assert commands["rm -rf node_modules && npm ci"][3] == "denied by user"  # Reason: User denied execution.
    titles = {session.title for session in digest.sessions}
    assert "Fix case-sensitive import that breaks the CI build" in titles  # session update: summary="..."


def test_cline_mcp_servers_with_their_auto_approve_state_and_an_mcp_call(tmp_path):
    digest = _digest(tmp_path, "cline/mcp-settings", "cline/xml-era")
    servers = [entry[1:] for entry in digest.mcp_servers]
    assert ["github", 'autoApprove=["get_file_contents","search_issues"] (from cline_mcp_settings.json, file mtime)'
            ] in servers
    assert {server for server, _ in servers} == {"filesystem", "github", "postgres", "docs"}
    assert [entry[1:] for entry in digest.mcp_calls] == [["github", "create_issue"]]


def test_vscode_confirmations_give_each_outcome(tmp_path):
    digest = _digest(tmp_path, "vscode-copilot-chat/confirmations")
    commands = _commands(digest)
    assert commands["terraform plan -var-file=staging.tfvars"][3] == "ran"
    assert commands["terraform destroy"][3] == "denied by user"
    assert commands["terraform init -upgrade"][3] == "denied by user"  # skipped at the confirmation
    assert ["/home/alice/src/infra/outputs.tf", "written"] in [entry[1:] for entry in digest.files]
    assert ["/home/alice/src/infra/main.tf", "read"] in [entry[1:] for entry in digest.files]


def test_pi_records_an_exit_code(tmp_path):
    digest = _digest(tmp_path, "pi/v3-branches")
    assert _commands(digest)["git stash list"][3:] == ["ran", 0]  # [exit code 0]


def test_settings_files_are_configuration_not_conversations(tmp_path):
    digest = _digest(tmp_path, "claude-code/settings", "claude-code/branch-compact")
    kinds = {session.session_id: session.kind for session in digest.sessions}
    settings = [sid for sid in kinds if sid.startswith("file:") and sid.endswith("settings.json")]
    assert settings and all(kinds[sid] == "configuration" for sid in settings)
    assert kinds["7c1e5b20-3d4f-4a6b-8c9d-0e1f2a3b4c5d"] == "conversation"
    assert digest.counts["configuration"] == sum(kind == "configuration" for kind in kinds.values())
    assert digest.counts["sessions"] + digest.counts["configuration"] == len(digest.sessions)


# ---- rows written here: what the fixtures cannot show, and the bounds ----

def _row(turn: str, text: str = "", **fields) -> str:
    row = {"timestamp_utc": "2026-07-01T10:00:00.000Z", "session_id": "s1", "project_path": "/p", "git_branch": "",
           "turn_type": turn, "model": "", "tool_name": "", "tool_use_id": "", "text": text, "agent": "claude-code",
           "store": "claude-code.transcripts", "source": "data/home/.claude/projects/p/s1.jsonl",
           "source_sha256": "0" * 64, "locator": "line:1", "timestamp_source": "record", "origin": "primary"}
    row.update(fields)
    return json.dumps(row)


def test_a_result_or_a_decision_before_its_call_still_settles_the_outcome():
    digest = _spool_lines([
        _row("tool_result", "Exit code: 3\nOutput:\n", tool_name="shell_command", tool_use_id="a"),
        _row("system", "permission decision: denied by a permission rule (not asked)", tool_name="bash",
             tool_use_id="b"),
        _row("tool_use", "make test", tool_name="shell_command", tool_use_id="a"),
        _row("tool_use", '{"command": "git push"}', tool_name="bash", tool_use_id="b"),
        _row("tool_use", '{"command": "ls"}', tool_name="bash", tool_use_id="c"),
    ])
    assert [entry[1:] for entry in digest.commands] == [[0, "make test", "failed", 3],
                                                        [-1, "git push", "blocked by rule", None],
                                                        [-1, "ls", "no result recorded", None]]
    assert digest.counts["denials"] == 1


def test_integrity_rows_are_listed_by_rule():
    digest = _spool_lines([_row("system", "integrity: clock jump: line:5 is 3 hours before line:4"),
                           _row("system", "integrity: session missing: history names s9"),
                           _row("user", "integrity: typed by the user is not a finding")])
    assert digest.integrity == [[0, "clock jump"], [1, "session missing"]]
    assert digest.counts["integrity"] == 2


def test_lists_are_capped_and_counts_stay_exact(monkeypatch):
    monkeypatch.setattr(findings, "LIST_MAX", 3)
    lines = []
    for number in range(10):
        lines.append(_row("tool_use", json.dumps({"command": f"rm -rf out{number}"}), tool_name="Bash",
                          tool_use_id=f"t{number}"))
        if number % 2:
            lines.append(_row("tool_result", "The user doesn't want to proceed with this tool use.",
                              tool_name="Bash", tool_use_id=f"t{number}"))
    digest = _spool_lines(lines)
    assert len(digest.commands) == 3 and digest.counts["commands"] == 10
    assert digest.counts["commands_by_outcome"]["denied by user"] == 5
    assert digest.counts["commands_by_outcome"]["no result recorded"] == 5
    assert digest.counts["files_deleted"] == 5 and len(digest.files) <= 3  # the refused deletions withdrawn


def test_record_and_file_times_are_kept_apart():
    digest = _spool_lines([
        _row("user", "a", timestamp_utc="2026-07-01T10:00:00.000Z"),
        _row("user", "b", timestamp_utc="2026-07-02T10:00:00.000Z", timestamp_source="index"),
        _row("system", "permission setting: x=1", timestamp_utc="2026-12-01T00:00:00.000Z",
             timestamp_source="file-mtime", session_id="", store="claude-code.user_settings",
             source="data/home/.claude/settings.json"),
        _row("user", "c", timestamp_utc="2026-07-03T10:00:00.000Z", timestamp_source="record"),
    ], roles={"claude-code.transcripts": "transcript", "claude-code.user_settings": "permission_state"})
    assert digest.activity_record == {("claude-code", "2026-07-01"): 1, ("claude-code", "2026-07-02"): 1,
                                      ("claude-code", "2026-07-03"): 1}
    assert digest.activity_file == {("claude-code", "2026-12-01"): 1}
    assert digest.span == ["2026-07-01T10:00:00.000Z", "2026-07-03T10:00:00.000Z"]
    assert [session.kind for session in digest.sessions] == ["conversation", "configuration"]
    assert digest.counts["sessions"] == 1 and digest.counts["configuration"] == 1


def test_tokens_are_summed_per_session_and_model():
    digest = _spool_lines([
        _row("system", "tokens generated: model=gpt-5 input_tokens=10 cached_input_tokens=0 output_tokens=2"),
        _row("system", "tokens generated: model=gpt-5 input=5 output=1 reasoning=0 (step finish: stop)"),
        _row("system", "tokens generated: model=gpt-5 none recorded (rate_limits: {})"),
        _row("system", "task: Fix it | tokensIn=100 tokensOut=7 totalCost=0.01 modelId=claude-x"),
    ])
    assert digest.tokens == [[0, "claude-x", 100, 7], [0, "gpt-5", 15, 3]]


def test_a_first_prompt_titles_a_session_on_one_line_and_an_agent_title_wins():
    long_prompt = "x" * 300
    digest = _spool_lines([_row("user", "first line\nsecond"), _row("user", long_prompt, session_id="s2"),
                           _row("system", "title: Renamed (custom-title)", session_id="s2")])
    assert [session.title for session in digest.sessions] == ["first line", "Renamed"]
    digest = _spool_lines([_row("user", long_prompt)])
    assert digest.sessions[0].title == "x" * 119 + "…"


# ---- the readers ----

@pytest.mark.parametrize(("text", "flags", "code"), [
    ("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok", outcomes.RESULT, 0),  # codex tagged-rollout
    ("Exit code: 1\nWall time: 3.4 seconds\nOutput:\nFAILED", outcomes.RESULT | outcomes.FAILED, 1),
    ('app.py\nmetadata: {"duration_seconds":0.1,"exit_code":0}', outcomes.RESULT, 0),  # codex untagged-v1
    ("error: Command exited with code 2: psql: error", outcomes.RESULT | outcomes.FAILED, 2),  # gemini
    ("stash@{0}: WIP\n\n[exit code 0]", outcomes.RESULT, 0),  # pi v3-branches
    ('{"output":"","exitCode":0,"rejected":false}', outcomes.RESULT, 0),  # cursor-ide damaged-bubble
    ('{"status":"error","message":"The tool execution failed"}', outcomes.RESULT | outcomes.FAILED, None),  # roo
    ("Tool [execute_command] was not executed because a tool has already been used", outcomes.RESULT | outcomes.FAILED,
     None),
    ("[tool error] boom", outcomes.RESULT | outcomes.FAILED, None),  # pi
    ("exec command rejected by user", outcomes.RESULT | outcomes.USER, None),  # codex tagged-rollout
    ("aborted\nmetadata: {}", outcomes.RESULT | outcomes.USER, None),  # codex legacy-ts-json
    ("The user denied this operation.", outcomes.RESULT | outcomes.USER, None),  # cline feedback
    ('{"status":"denied","feedback":"use apply_diff"}', outcomes.RESULT | outcomes.USER, None),  # roo
    ("Permission denied by user", outcomes.RESULT | outcomes.USER, None),  # continue cn-session
    ("The user skipped the tool call.\nIf the tool call", outcomes.RESULT | outcomes.USER, None),  # continue
    ("error: [Operation Cancelled] Reason: User denied execution.", outcomes.RESULT | outcomes.USER, None),  # gemini
    ("The user rejected permission to use this specific tool call.", outcomes.RESULT | outcomes.USER, None),
    ("The user chose not to run this command.", outcomes.RESULT | outcomes.USER, None),  # vscode
    ("(rejected: no output recorded)", outcomes.RESULT | outcomes.USER, None),  # cursor-ide
    ("Permission to use Bash with command ls has been denied.", outcomes.RESULT | outcomes.RULE, None),  # claude
    ("The user has specified a rule which prevents you from using this specific tool call. [...]",
     outcomes.RESULT | outcomes.RULE, None),  # opencode
    ("Command blocked by security policy", outcomes.RESULT | outcomes.RULE, None),  # continue
    ("12 passed in 3.41s", outcomes.RESULT, None),
])
def test_result_texts_of_the_agents(text, flags, code):
    assert outcomes.read_result(text) == (flags, code)


def test_decisions_and_settling():
    assert outcomes.read_decision("permission decision: denied with feedback") == outcomes.DECIDED_USER
    assert outcomes.read_decision("permission decision: skipped") == outcomes.DECIDED_USER
    assert outcomes.read_decision("permission decision: denied by a permission rule (not asked)") == \
        outcomes.DECIDED_RULE
    assert outcomes.read_decision("permission decision: approved with feedback") == 0
    assert outcomes.read_decision("permission setting: x=denied") == 0
    assert outcomes.settle(outcomes.RESULT | outcomes.FAILED | outcomes.DECIDED_USER) == "denied by user"
    assert outcomes.settle(outcomes.RESULT | outcomes.USER | outcomes.RULE) == "blocked by rule"
    assert outcomes.settle(outcomes.RESULTLESS) == "not recorded by store"
    assert outcomes.settle(0) == "no result recorded"
    assert outcomes.settle(outcomes.RESULT) == "ran"


def test_command_lines():
    assert commandline.network_uses("cd x && curl -s https://a.example/x | sh") == ["curl -s https://a.example/x"]
    assert commandline.network_uses("bash -lc 'git push origin main'") == ["git push origin main"]
    assert commandline.network_uses("sudo -u deploy npm install left-pad; git status") == ["npm install left-pad"]
    assert commandline.network_uses("git commit -m 'curl is mentioned'; echo wget") == []
    assert commandline.deleted_paths("rm -rf -- build 'my dir' && git rm -r vendor/x") == [
        "build", "my dir", "vendor/x"]
    assert commandline.deleted_paths("FOO=1 /bin/rm a\\ b") == ["a b"]
    assert commandline.deleted_paths("echo rm x; grep rm y") == []


def test_the_quick_split_equals_the_character_loop():
    generator = random.Random(31)
    alphabet = ["a", "rm", " ", "\t", ";", "&&", "|", "\n", "(", ")", "`", "-r", "x/y", "=", "curl"]
    for _ in range(5000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 30)))
        assert commandline._split(text) == commandline._split_quoted(text), text


def test_tool_argument_readers():
    assert tools.mcp_call("mcp__github__get_file_contents", "{}") == ("github", "get_file_contents")
    assert tools.mcp_call("mcp__github.create_issue", "{}") == ("github", "create_issue")
    assert tools.mcp_call("use_mcp_tool", "<use_mcp_tool>\n<server_name>gh</server_name>\n<tool_name>t</tool_name>"
                                          "\n</use_mcp_tool>") == ("gh", "t")
    assert tools.mcp_call("Read", "{}") is None
    assert tools.mcp_server("permission setting: mcpServers.github.trust=true (from .gemini/settings.json, x)") == \
        ("github", "trust=true (from .gemini/settings.json, x)")
    assert tools.target_of('{"action":{"type":"search","query":"q1"}}') == "q1"
    assert tools.target_of('{"input":"{\\"query\\":\\"q2\\"}","name":"x"}') == "q2"
    assert tools.target_of('{"url":"https://a.example","prompt":"p"}') == "https://a.example"
    assert tools.title_of("cursor-ide", "composer: Clean build dir | mode=agent status=completed") == "Clean build dir"
    assert tools.title_of("cursor-ide", "composer: no composerData row; its bubbles remain") is None
    assert tools.title_of("cursor-ide", "chat tab: (untitled)") is None
    assert tools.title_of("opencode", "session metadata: Totals off (tests) (slug=a, v=1)") == "Totals off (tests)"
    assert tools.title_of("gemini-cli", 'session metadata: projectHash="x" startTime="y"') is None
    assert tools.deleted_path("file deleted by the agent: src/a.py (from ai-code-tracking.db)") == "src/a.py"
    assert tools.file_actions("*** Begin Patch\n*** Delete File: old.py\n*** Add File: new.py\n") == [
        ("old.py", "deleted"), ("new.py", "written")]
    assert tools.command_of('{"commands": ["ls", "wc -l x"]}') == "ls\nwc -l x"
    assert tools.unmarked('condensed: partial: {"path":"a"}') == '{"path":"a"}'


@pytest.mark.parametrize(("text", "kinds"), [
    ("my key is AKIAIOSFODNN7EXAMPLE ok", ["AWS access key"]),
    ("token glpat-abcdefghij0123456789xy here", ["GitLab token"]),
    ("xoxb-1234567890-abcdefghij", ["Slack token"]),
    ("sk-ant-api03-" + "Ab1" * 10, ["Anthropic API key"]),
    ("use sk-proj-" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2", ["OpenAI API key"]),
    ("AIza" + "B" * 30 + "12345", ["Google API key"]),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", ["JWT"]),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=", ["private key"]),
    ("curl -H 'Authorization: Bearer abc123def456ghi789jkl0'", ["bearer token"]),
    ("export API_KEY=9f8e7d6c5b4a3f2e1d0c", ["token assignment"]),
    ("the password: hunter2 is weak", ["password assignment"]),
    ("password: string, token: required", []),  # one lower-case word: a type or a placeholder
    ("set password=Hunter2!x", ["password assignment"]),
    ("the token: string argument and the sk-learn skeleton", []),
    ("ghp_short and AKIA1234", []),
])
def test_secret_patterns(text, kinds):
    assert [kind for kind, _ in secrets.find_secrets(text)] == kinds
    for _, shown in secrets.find_secrets(text):
        assert "…" in shown and len(shown.split("…")[0]) == 4


def test_redacted_text_replaces_each_secret():
    text = f"a {AWS_KEY} b {GITHUB_TOKEN} c"
    assert secrets.redacted_text(text) == "a AKIA…20 b ghp_…40 c"


HOSTILE = r"""
import resource
resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
from aitrail.analyzer.report import commandline, outcomes, secrets, tools
M = 1 << 20
texts = ["sk-" * (M // 3), "eyJ" * (M // 3), ("eyJ" + "a" * 3000 + ".") * 300, "ghp_" + "a" * M,
         "password=" * (M // 9), "Bearer " * (M // 7), ("bearer " + "a1" * 1500) * 300, "-----BEGIN " * (M // 11),
         "xoxb-" * (M // 5), "token=" * (M // 6), "AKIA" * (M // 4), "'" * M, "a'b\"c\\d e;f|" * (M // 12),
         "Permission to use " + "x" * M, "a\n" * M + "metadata: " + "{" * 5000, "session: " + "(" * M + ")" * M,
         'session update: summary="' + "\\u" * M, "tokens generated: " + "a=1 " * M, "*** Update File: " * (M // 17)]
for text in texts * 3:
    secrets.find_secrets(text)
    secrets.redacted_text(text)
    commandline.effects(text)
    outcomes.read_result(text)
    for agent in ("cursor-ide", "gemini-cli", "codex"):
        tools.title_of(agent, text)
    tools.tokens_of(text), tools.mcp_server(text), tools.file_actions(text), tools.target_of(text)
print("done")
"""


def test_hostile_texts_are_read_in_bounded_time():
    """Each reader on megabyte texts made to defeat it finishes well within a CPU cap (a bound, not a timing)."""
    result = subprocess.run([sys.executable, "-c", HOSTILE], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "done", result.stderr[-2000:]


SIXTY_THOUSAND = r"""
import io, json, resource
resource.setrlimit(resource.RLIMIT_CPU, (40, 40))
from aitrail.analyzer.report import timeline
lines = []
for i in range(60_000):
    kind, call = i % 6, "t%d" % (i - i % 6)
    command = json.dumps({"command": "curl -s https://x/%d && rm -rf b%d" % (i, i)})
    row = {"timestamp_utc": "2026-07-01T10:00:%02d.000Z" % (i % 60), "session_id": "s%d" % (i // 150),
           "turn_type": ["user", "tool_use", "tool_result", "assistant", "system", "thinking"][kind],
           "tool_name": "Bash" if kind in (1, 2) else "", "tool_use_id": call if kind in (1, 2) else "",
           "text": ["please run it, token=Ab12Cd34Ef56", command, "Exit code: 0\nok", "done " * 40,
                    "permission decision: approved", "hmm"][kind],
           "agent": "claude-code", "store": "claude-code.transcripts", "source": "s%d.jsonl" % (i // 150),
           "source_sha256": "0" * 64, "locator": "line:%d" % i, "timestamp_source": "record", "origin": "primary"}
    lines.append(json.dumps(row))
class Block(io.StringIO):
    def close(self): pass
digest = timeline.spool(io.BytesIO(("\n".join(lines) + "\n").encode()), lambda _: Block())
assert digest.rows == 60_000 and digest.counts["commands"] == 10_000 and digest.counts["network"] == 10_000
assert digest.counts["commands_by_outcome"]["ran"] == 10_000 and digest.counts["secrets"] == 10_000
print("done")
"""


def test_sixty_thousand_rows_are_digested_within_a_cpu_bound():
    result = subprocess.run([sys.executable, "-c", SIXTY_THOUSAND], capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0 and result.stdout.strip() == "done", result.stderr[-2000:]


def test_a_session_spans_its_records_and_a_file_of_system_rows_is_configuration():
    """A file-time row does not stretch a session; a file of system rows without a session id is configuration.

    An integrity finding at a file's time would reach the collection day; a state database's keys are a file.
    """
    digest = _spool_lines([
        _row("user", "a", timestamp_utc="2026-07-01T10:00:00.000Z"),
        _row("system", "integrity: written after last record: ...", timestamp_utc="2026-12-03T08:00:00.000Z",
             timestamp_source="file-mtime"),
        _row("system", "setting: theme=dark", session_id="", store="pearai.global_state",
             source="data/home/.config/PearAI/User/globalStorage/state.vscdb", timestamp_source="none",
             timestamp_utc=""),
        _row("system", "integrity: not parsed: documentary store", session_id="", store="pearai.logs",
             source="data/home/x.log", timestamp_source="file-mtime", timestamp_utc="2026-12-03T08:00:00.000Z"),
    ], roles={"claude-code.transcripts": "transcript", "pearai.global_state": "state_db", "pearai.logs": "log"})
    sessions = {session.session_id: session.as_list() for session in digest.sessions}
    assert sessions["s1"][3:5] == ["2026-07-01T10:00:00.000Z", "2026-07-01T10:00:00.000Z"]
    assert sessions["s1"][8] == "conversation"
    state = sessions["file:data/home/.config/PearAI/User/globalStorage/state.vscdb"]
    log = sessions["file:data/home/x.log"]
    assert state[8] == log[8] == "configuration"
    assert log[3:5] == ["2026-12-03T08:00:00.000Z", "2026-12-03T08:00:00.000Z"]  # no record time: its file time


@pytest.mark.parametrize("text, outcome, code", [
    ("ok\n<exited with exit code 2>", "failed", 2),  # Copilot CLI
    ("<system>ERROR: Command failed with exit code: 1.</system>", "failed", 1),  # Kimi CLI
    ("built\n(Command exited with code 0)", "ran", 0),  # OpenClaw
    ("done\n[exit code 3]", "failed", 3),  # OpenHands
    ("error: [denied] The user rejected this tool call. User feedback: no", "denied by user", None),  # Copilot CLI
    ("[tool error] Exec denied (allowlist miss): rm -rf /", "blocked by rule", None),  # OpenClaw
    ("<user_cancellation>User cancelled the operation.</user_cancellation>", "denied by user", None),  # Vibe
])
def test_the_issue_32_agents_outcome_texts_are_read(text, outcome, code):
    flags, exit_code = outcomes.read_result(text)
    assert (outcomes.settle(flags), exit_code) == (outcome, code)


@pytest.mark.parametrize("decision, outcome", [
    ("permission decision: denied by a rule (execution_denied)", "blocked by rule"),  # Qwen Code
    ("permission decision: denied by a hook: policy", "blocked by rule"),  # OpenHands
    ("permission decision: denied by the autonomy level (not asked)", "blocked by rule"),  # Factory Droid
    ("permission decision: cancelled by the user (refused at the prompt, or interrupted)", "denied by user"),  # Droid
])
def test_the_issue_32_agents_decisions_are_read(decision, outcome):
    assert outcomes.settle(outcomes.read_decision(decision)) == outcome


def test_crush_exit_code_and_hook_block_and_qoder_refusal_are_read():
    assert outcomes.exit_code("built\nExit code 2") == 2
    assert outcomes.settle(outcomes.read_result("error: Tool call blocked by hook. Reason: policy")[0]) == \
        "blocked by rule"
    assert outcomes.settle(outcomes.read_decision("permission decision: blocked by a PreToolUse hook (not asked): x")) \
        == "blocked by rule"
    assert outcomes.settle(outcomes.read_result("User rejected tool use.")[0]) == "denied by user"


@pytest.mark.parametrize("text, outcome, code", [
    ('{"exit_status":"1","stdout":"2 failed, 40 passed\\n","stderr":""}', "failed", 1),  # Amazon Q, Kiro
    ('[tool error] {"exit_status":"2","stdout":"","stderr":"no tests"}', "failed", 2),  # Kiro, an error result
    ('{"exit_status":"0","stdout":"ok","stderr":""}', "ran", 0),
    ('{"exit_status":"--1"}', "ran", None),  # not a number: no exit code invented
    ("[tool error] Tool use was cancelled by the user", "denied by user", None),  # Amazon Q, Kiro
    ("Tool call was rejected by the user.", "denied by user", None),  # Void
    ("invalid params: Invalid parameters: command must be a string.", "failed", None),  # Void
    ('[tool error] Command "cargo test" failed with exit code 101.\ntest totals ... FAILED', "failed", 101),  # Zed
    ("[status ERROR] pytest: 1 failed, 4 passed (exit code 1)", "failed", None),  # Antigravity
    ("[status CANCELED]", "failed", None),  # Antigravity: a step that did not finish did not run as asked
    ("FAILURES! Tests: 4, Assertions: 9, Failures: 1.\n(status FAILED)", "failed", None),  # JetBrains AI
    ("kill: (4242) - Operation not permitted\n[exit code 1]", "failed", 1),  # Warp
])
def test_the_issue_33_agents_outcome_texts_are_read(text, outcome, code):
    flags, exit_code = outcomes.read_result(text)
    assert (outcomes.settle(flags), exit_code) == (outcome, code)


@pytest.mark.parametrize("tool, server, name", [
    ("mcp--github--get_issue", "github", "get_issue"),  # Kilo Code
    ("@github/get_issue", "github", "get_issue"),  # Amazon Q, Kiro
    ("mcp:github:create_issue", "github", "create_issue"),  # Zed
])
def test_the_issue_33_agents_mcp_tool_names_are_read(tool, server, name):
    assert tools.mcp_call(tool, "{}") == (server, name)
    assert tools.mcp_call("@", "{}") is None and tools.mcp_call("mcp----x", "{}") is None


def test_amazon_q_refusals_mcp_call_and_an_exit_status_in_an_error(tmp_path):
    digest = _digest(tmp_path, "amazon-q/compaction-transcript")
    commands = _commands(digest)
    assert commands["mv picklist.py pick_list.py"][3] == "denied by user"
    assert commands["git mv picklist.py pick_list.py && pnpm test"][3:] == ["failed", 1]
    assert commands["npm i -g pnpm"][3] == "denied by user"
    assert [entry[1:] for entry in digest.mcp_calls] == [["github", "get_issue"]]


def test_zed_exit_code_deleted_path_fetch_and_titles(tmp_path):
    digest = _digest(tmp_path, "zed/threads-current", "zed/threads-generations")
    assert _commands(digest)["cargo test"][3:] == ["failed", 101]
    files = [entry[1:] for entry in digest.files]
    assert ["ledger/src/old_totals.rs", "deleted"] in files and ["src/header.rs", "read"] in files
    assert ["fetch", "https://docs.rs/toml"] in [entry[1:] for entry in digest.network]
    assert "Fix rounding in totals" in {session.title for session in digest.sessions}


def test_kilo_code_mcp_call_and_a_refusal(tmp_path):
    digest = _digest(tmp_path, "kilo-code/native-task")
    assert ["github", "get_issue"] in [entry[1:] for entry in digest.mcp_calls]
    refused = _digest(tmp_path / "xml", "kilo-code/xml-custom-storage")
    assert _commands(refused)["npm test"][3] == "denied by user"


def test_void_uris_are_paths_and_a_rejection_is_the_users(tmp_path):
    digest = _digest(tmp_path, "void/threads-wal")
    assert _commands(digest)["rm -rf build dist ~/.cache"][3] == "denied by user"
    files = [entry[1:] for entry in digest.files]
    assert ["/home/jo/app/.env", "read"] in files and ["/home/jo/app/src/utils.ts", "written"] in files


def test_jetbrains_file_lists_and_a_coalesced_command(tmp_path):
    digest = _digest(tmp_path, "jetbrains-ai/ai-assistant")
    assert "./vendor/bin/phpunit tests/CsvParserTest.php" in _commands(digest)  # the `(N updates ...)` note cut
    files = [entry[1:] for entry in digest.files]
    assert ["tests/CsvParserTest.php", "read"] in files and ["src/CsvParser.php", "written"] in files
    assert ["src/OldCsv.php", "deleted"] in files
    assert "Fix the failing CsvParserTest" in {session.title for session in digest.sessions}


def test_kiro_reads_name_their_operations_and_tokens_are_summed(tmp_path):
    digest = _digest(tmp_path, "kiro/cli-sessions")
    assert ["/home/lee/proj/api/server.py", "read"] in [entry[1:] for entry in digest.files]
    assert _commands(digest)["pytest -q"][3:] == ["failed", 2]
    assert any(model == "claude-sonnet-4.6" and given > 0 and taken > 0 for _, model, given, taken in digest.tokens)


def test_warp_exit_codes_and_titles(tmp_path):
    digest = _digest(tmp_path, "warp/agent-session-wal")
    commands = _commands(digest)
    assert commands["lsof -i :8080"][3:] == ["ran", 0] and commands["kill 4242"][3:] == ["failed", 1]
    assert "Port 8080 busy" in {session.title for session in digest.sessions}
