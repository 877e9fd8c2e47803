"""A settings value whose key names a credential never reaches a row, in any settings parser (issue 27).

Pi's settings parser wrote ``apiKey`` and ``githubToken`` values into rows.
Every settings and config parser is fed a document that sets, beside ordinary
settings, credential-keyed values at the top level and nested; no row may
quote them, and the rows still say the key was set.
"""

from __future__ import annotations

import json

import pytest

from aitrail.analyzer.formats.idioms import credential_key, settings_value
from tests.analyzer.fakes import FakeBundle, drafts
from tests.analyzer.fuzz import all_targets

SECRETS = ("sk-ant-SECRET-TOP-1111", "ghp_SECRET-NESTED-2222", "hunter2-SECRET-3333", "Bearer SECRET-4444")
DOCUMENT = {"apiKey": SECRETS[0], "theme": "dark", "model": "gpt-5",
            "providers": {"github": {"githubToken": SECRETS[1], "url": "https://example.com"}},
            "db": {"password": SECRETS[2]}, "headers": {"Authorization": SECRETS[3]},
            "general": {"apiKey": SECRETS[0]}, "mcp": {"x": {"env": {"API_KEY": SECRETS[0]}}}}
TOML = ('api_key = "sk-ant-SECRET-TOP-1111"\nmodel = "gpt-5"\n[model_providers.corp]\n'
        'api_key = "ghp_SECRET-NESTED-2222"\nbase_url = "https://example.com"\n[profiles.p]\n'
        'password = "hunter2-SECRET-3333"\n')
# MCP settings files have their own redaction (formats/mcp_settings.py)
SETTINGS_TARGETS = [target for target in all_targets() if "mcp" not in target.parser_id
                    and any(word in target.parser_id for word in ("settings", "config"))]


@pytest.mark.parametrize("target", SETTINGS_TARGETS, ids=lambda target: target.name)
def test_no_settings_parser_quotes_a_credential(target):
    data = TOML.encode() if target.path.endswith(".toml") else json.dumps(DOCUMENT).encode()
    files = {**dict(target.context), (target.store, target.path): data}
    rows = drafts(FakeBundle(files), target.path, target.parser_id)
    for row in rows:
        assert not any(secret in row.text for secret in SECRETS), (target.parser_id, row.text)


def test_settings_value_withholds_by_key_at_any_depth_and_keeps_the_rest():
    assert settings_value("sk-1", "apiKey") == "[withheld: a credential, 4 characters]"
    assert settings_value("x", "providers.github.githubToken").startswith("[withheld")
    shown = settings_value({"apiKey": "sk-1", "maxTokens": 5, "tokenLimit": 9, "name": "n"})
    assert "sk-1" not in shown and '"maxTokens":5' in shown and '"tokenLimit":9' in shown and '"name":"n"' in shown
    assert not credential_key("maxTokens") and not credential_key("autoApprove") and credential_key("API_KEY")
