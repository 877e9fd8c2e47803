"""File-mtime time, pointer locators and setting values, each spelled once."""

from __future__ import annotations

import datetime as dt

from aitrail.analyzer.formats.idioms import escape_key, file_mtime, pointer, setting_value
from aitrail.analyzer.view.context import ParseContext
from tests.analyzer.fakes import FakeBundle


def test_file_mtime_names_its_source():
    bundle = FakeBundle({("codex.rollouts", "a.jsonl"): b"{}\n"})  # its files' mtime: 1_700_000_000 s
    context = ParseContext(bundle, bundle.source("a.jsonl"), {})
    assert file_mtime(context) == {"timestamp_ns": 1_700_000_000_000_000_000, "timestamp_source": "file-mtime"}


def test_pointer_escapes_tilde_before_slash():
    assert escape_key("a~/b") == "a~0~1b"
    assert pointer("projects", "/home/dev", "history", 0) == "json:/projects/~1home~1dev/history/0"
    assert pointer("sandbox_workspace_write", "network_access", scheme="toml") == \
        "toml:/sandbox_workspace_write/network_access"
    assert pointer() == "json:/"


def test_setting_values_are_compact_json_in_recorded_order():
    assert setting_value({"type": "workspace-write", "network_access": True}) == \
        '{"type":"workspace-write","network_access":true}'
    assert setting_value(["ls", "git status"]) == '["ls","git status"]'
    assert setting_value("é") == '"é"'
    assert setting_value(None) == "null"


def test_values_json_cannot_hold_are_their_text():
    assert setting_value(dt.date(2026, 7, 2)) == '"2026-07-02"'
    assert setting_value(b"\xffok") == '"\ufffdok"'
