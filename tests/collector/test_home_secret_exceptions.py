"""An agent's own tree inside a home secret's tree (vetoes.HOME_SECRET_EXCEPTIONS).

Amazon Q keeps its agents, prompts and MCP file in ~/.aws/amazonq; the rest
of ~/.aws (credentials, config, SSO and CLI token caches) is the user's
secret. The exception opens that one tree and nothing else: a sibling that
looks like it (``amazonq-backup``), a credential under the tree's name, or a
hard link inside it to ``~/.aws/credentials`` is still never opened.
"""

from __future__ import annotations

import os
from pathlib import Path

from aitrail.collector.finding.vetoes import HOME_SECRET_EXCEPTIONS, HOME_SECRETS
from tests.conftest import all_decompressed, bundle_records, write_tree

AWS = b"[default]\naws_secret_access_key = wJalrXUtnFEMI/EXCEPTION-TEST\n"
SSO = b'{"accessToken": "aoa-EXCEPTION-SSO-TOKEN"}\n'
MCP = b'{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}}\n'
AGENT = b'{"name": "reviewer", "tools": ["fs_read"], "allowedTools": ["fs_read"]}\n'


def aws_home(tmp_path: Path) -> Path:
    home = write_tree(tmp_path / "home", {
        ".aws/credentials": AWS,
        ".aws/sso/cache/0123abcd.json": SSO,
        ".aws/amazonq/mcp.json": MCP,
        ".aws/amazonq/cli-agents/reviewer.json": AGENT,
    })
    (home / ".aws/amazonq/prompts").mkdir(parents=True)
    os.link(home / ".aws/credentials", home / ".aws/amazonq/prompts/review.md")
    return home


def test_the_exception_is_one_agent_tree_below_a_secret_tree():
    assert HOME_SECRET_EXCEPTIONS == (".aws/amazonq/**",)
    assert ".aws/**" in HOME_SECRETS


def test_amazon_q_files_under_aws_are_collected_and_the_aws_secrets_are_not(cli, tmp_path: Path):
    home = aws_home(tmp_path)
    out = tmp_path / "b.tar.zst"
    result = cli("collect", "--home", home, "-o", out, "--agent", "amazon-q", "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    records = {record["path"]: record for record in bundle_records(out)}
    assert records[".aws/amazonq/mcp.json"]["outcome"] == "collected"
    assert records[".aws/amazonq/cli-agents/reviewer.json"]["outcome"] == "collected"
    linked = records[".aws/amazonq/prompts/review.md"]
    assert linked["outcome"] == "never_collect" and "hard link to the secret" in linked["reason"]
    assert linked["member"] is None
    payload = all_decompressed(out)
    assert MCP in payload and AGENT in payload
    assert AWS not in payload and SSO not in payload
    # the SSO cache is catalogued as Amazon Q's credential store: named, never opened
    assert records[".aws/sso/cache/0123abcd.json"]["outcome"] == "never_collect"
    assert records[".aws/sso/cache/0123abcd.json"]["member"] is None
    assert ".aws/credentials" not in records
