"""MCP settings: every file shape, approval lists with pointers, and no secret in any output."""

from __future__ import annotations

import dataclasses
import json

import pytest

from aitrail.analyzer.formats import mcp_settings as mcp
from aitrail.analyzer.view.rows import Draft

SECRETS = ("ghp_SECRETTOKEN123", "sk-live-abcdef", "Bearer eyJhbGci", "hunter2", "q-token-999", "s3cr3t-value")

ROO = {"mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github", "--token", "hunter2"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_SECRETTOKEN123"},
               "alwaysAllow": ["get_file_contents", "search_code"], "disabled": False},
    "remote.example": {"type": "streamable-http", "url": "https://u:s3cr3t-value@mcp.example.com:8443/mcp?key=q-token-999#x",
                       "headers": {"Authorization": "Bearer eyJhbGci"}, "alwaysAllow": [], "disabled": True,
                       "disabledTools": ["delete_repo"]},
    "env-wrapped": {"command": "env OPENAI_API_KEY=sk-live-abcdef node server.js",
                    "args": ["--api-key=sk-live-abcdef", "sk-live-abcdef", "--verbose"]},
}}


def everything(servers, problems) -> str:
    return json.dumps([dataclasses.asdict(server) for server in servers] + [dataclasses.asdict(p) for p in problems])


def test_roo_shape_rows_and_pointers():
    servers, problems = mcp.read_mcp_settings(json.dumps(ROO).encode())
    assert problems == []
    github, remote, wrapped = servers
    assert [(s.server, s.value, s.locator) for s in github.settings] == [
        ("github", '{"command":"npx","args":["-y","@modelcontextprotocol/server-github","--token","<redacted>"],'
                   '"env":["GITHUB_PERSONAL_ACCESS_TOKEN"]}', "json:/mcpServers/github"),
        ("github", '["get_file_contents","search_code"]', "json:/mcpServers/github/alwaysAllow"),
        ("github", "false", "json:/mcpServers/github/disabled")]
    assert github.settings[1].assignment == 'mcpServers[github].alwaysAllow=["get_file_contents","search_code"]'
    assert (github.approval_key, github.approved_tools, github.disabled) == ("alwaysAllow", ["get_file_contents",
                                                                                            "search_code"], False)
    assert remote.url == "https://mcp.example.com:8443/mcp" and remote.header_keys == ["Authorization"]
    assert [s.assignment for s in remote.settings] == [
        'mcpServers[remote.example]={"type":"streamable-http","url":"https://mcp.example.com:8443/mcp",'
        '"headers":["Authorization"]}',
        "mcpServers[remote.example].alwaysAllow=[]", "mcpServers[remote.example].disabled=true",
        'mcpServers[remote.example].disabledTools=["delete_repo"]']
    assert wrapped.command == "env OPENAI_API_KEY=<redacted> node server.js"
    assert wrapped.args == ["--api-key=<redacted>", "<redacted>", "--verbose"]
    assert wrapped.approved_tools is None and len(wrapped.settings) == 1


def test_no_secret_appears_in_any_output():
    servers, problems = mcp.read_mcp_settings(json.dumps(ROO).encode())
    text = everything(servers, problems)
    for secret in SECRETS:
        assert secret not in text


def test_cline_auto_approve_and_legacy_transport_type():
    data = {"mcpServers": {"fs": {"command": "node", "args": ["fs.js"], "autoApprove": ["read_file"],
                                  "transportType": "stdio", "timeout": 60}}}
    [server], _ = mcp.read_mcp_settings(json.dumps(data).encode())
    assert (server.transport, server.approval_key) == ("stdio", "autoApprove")
    assert server.settings[1].assignment == 'mcpServers[fs].autoApprove=["read_file"]'
    assert server.settings[1].locator == "json:/mcpServers/fs/autoApprove"


def test_vscode_mcp_json_is_jsonc_with_servers_and_inputs():
    data = b"""{
      // servers for this profile
      "inputs": [{"type": "promptString", "id": "tok", "password": true}],
      "servers": {"a/b": {"type": "stdio", "command": "uvx", "args": ["srv"], "env": {"TOKEN": "${input:tok}"},},},
    }"""
    [server], problems = mcp.read_mcp_settings(data)
    assert problems == [] and server.locator == "json:/servers/a~1b"
    assert server.settings[0].assignment == (
        'servers[a/b]={"type":"stdio","command":"uvx","args":["srv"],"env":["TOKEN"]}')
    assert "${input:tok}" not in everything([server], [])


def test_settings_json_mcp_servers_and_no_mcp_at_all():
    [server], _ = mcp.read_mcp_settings(b'{"mcp": {"servers": {"x": {"url": "http://localhost:3000/sse"}}}}')
    assert server.settings[0].assignment == 'mcp.servers[x]={"url":"http://localhost:3000/sse"}'
    assert mcp.read_mcp_settings(b'{"editor.fontSize": 12}') == ([], [])


@pytest.mark.parametrize("data, locator, reason", [
    (b"{", "file", "not JSON"),
    (b"[1]", "file", "a JSON list"),
    (b'{"mcpServers": []}', "json:/mcpServers", "not an object"),
    (b'{"mcpServers": {"a": "ghp_SECRETTOKEN123"}}', "json:/mcpServers/a", "server entry is not an object"),
    (b'{"mcpServers": {"a": {"command": "x", "alwaysAllow": "all"}}}', "json:/mcpServers/a/alwaysAllow",
     "alwaysAllow is not an array"),
    (b'{"mcpServers": {"a": "' + b"x" * 100 + b'\xff"}}', "file", "not UTF-8"),
])
def test_problem_rows_never_quote_the_file(data, locator, reason):
    _servers, problems = mcp.read_mcp_settings(data)
    [problem] = problems
    assert isinstance(problem, Draft) and problem.locator == locator and reason in problem.text
    assert "ghp_" not in problem.text and "xxxx" not in problem.text


def test_deep_json_is_a_row_not_an_exception():
    _servers, [problem] = mcp.read_mcp_settings(b"[" * 10000 + b"]" * 10000)
    assert problem.locator == "file"


def test_non_string_items_and_hostile_values_are_dropped_not_raised():
    data = {"mcpServers": {"a": {"command": 5, "args": "nope", "env": ["K"], "alwaysAllow": ["t", 3, None],
                                 "disabled": "yes", "url": "http://[::1/x"}}}
    [server], problems = mcp.read_mcp_settings(json.dumps(data).encode())
    assert problems == [] and server.approved_tools == ["t"] and server.disabled is None
    assert (server.command, server.args, server.env_keys, server.url) == ("", [], [], "<redacted>")


@pytest.mark.parametrize("url, safe", [
    ("https://mcp.example.com/sse?token=abc", "https://mcp.example.com/sse"),
    ("http://user:pw@localhost:3000/mcp", "http://localhost:3000/mcp"),
    ("not a url", "<redacted>"),
])
def test_safe_url(url, safe):
    assert mcp.safe_url(url) == safe


def test_redact_args_keeps_ordinary_arguments():
    assert mcp.redact_args(["-y", "pkg", "--port", "8080", "--client-secret", "--next"]) == [
        "-y", "pkg", "--port", "8080", "--client-secret", "--next"]
    assert mcp.redact_args(["--auth", "xyz", "ghp_abc", "AKIAABCDEFGHIJKL", "plain"]) == [
        "--auth", "<redacted>", "<redacted>", "<redacted>", "plain"]


def test_a_url_argument_keeps_neither_its_password_nor_its_query():
    args = ["--dsn", "postgresql://app:pw-777@db.local:5432/app?sslmode=require&password=pw-888", "http://plain.org/x"]
    assert mcp.redact_args(args) == ["--dsn", "postgresql://<redacted>@db.local:5432/app", "http://plain.org/x"]


def test_setting_rows_are_permission_settings_at_the_file_mtime_then_the_problems():
    from tests.analyzer.formats.walk import context

    data = {"mcpServers": {"gh": {"command": "npx", "env": {"TOKEN": "ghp_SECRETTOKEN123"},
                                  "autoApprove": ["get_issue"]}, "bad": 3}}
    ctx = context({("fork.mcp", "settings/mcp.json"): json.dumps(data).encode()}, "settings/mcp.json")
    found = list(mcp.setting_rows(ctx, "mcp.json"))
    assert [row.text for row in found] == [
        'permission setting: mcpServers[gh]={"command":"npx","env":["TOKEN"]} (from mcp.json, file mtime)',
        'permission setting: mcpServers[gh].autoApprove=["get_issue"] (from mcp.json, file mtime)',
        "parser: unparseable record (server entry is not an object)"]
    assert {row.timestamp_source for row in found[:2]} == {"file-mtime"}
