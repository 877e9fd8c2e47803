"""The Continue session walk, on a made-up agent's stores."""

from __future__ import annotations

import json

from aitrail.analyzer.formats.continue_sessions import (
    dev_data_chat_rows,
    read_session,
    tokens_generated_rows,
    unlisted_sessions,
)
from tests.analyzer.formats.walk import context

INDEX = ("fork.index", "sessions/sessions.json")
ENTRY = {"sessionId": "s1", "title": "Fix build", "dateCreated": "1759400000000", "workspaceDirectory": "/w"}


def session(history: list, **more) -> bytes:
    return json.dumps({"sessionId": "s1", "history": history, **more}).encode()


def message(role: str, content, model: str | None = None) -> dict:
    item = {"message": {"role": role, "content": content}}
    if model:
        item["promptLogs"] = [{"completionOptions": {"model": model}}]
    return item


def session_rows(data: bytes, index: list | None = None):
    files = {("fork.sessions", "sessions/s1.json"): data}
    if index is not None:
        files[INDEX] = json.dumps(index).encode()
    return list(read_session(context(files, "sessions/s1.json"), index_store="index"))


def test_rows_take_the_index_time_and_workspace():
    found = session_rows(session([message("user", "why"), message("assistant", [{"type": "text", "text": "see"}])]),
                         [ENTRY])
    assert [(row.turn_type, row.text) for row in found] == [("user", "why"), ("assistant", "see")]
    assert {(row.timestamp_ns, row.timestamp_source, row.project_path) for row in found} == \
        {(1759400000000 * 10**6, "index", "/w")}


def test_without_an_index_the_session_has_no_time_but_keeps_its_own_workspace():
    (row,) = session_rows(session([message("user", "why")], workspaceDirectory="/own"))
    assert (row.timestamp_ns, row.project_path, row.session_id) == (None, "/own", "s1")


def test_a_model_row_when_prompt_logs_name_or_change_the_model():
    history = [message("assistant", "a", "m1"), message("assistant", "b", "m1"), message("assistant", "c", "m2")]
    assert [row.text for row in session_rows(session(history)) if row.text.startswith("model:")] == \
        ["model: m1", "model: m1 -> m2"]


def test_a_session_without_history_and_a_bad_item_are_parser_rows():
    assert session_rows(b'{"sessionId": "s1"}')[0].text.startswith("parser:")
    assert session_rows(session([42]))[0].text.startswith("parser:")


def test_an_index_entry_whose_file_is_missing_is_a_session_row():
    files = {INDEX: json.dumps([ENTRY]).encode()}
    (row,) = unlisted_sessions(context(files, INDEX[1]), sessions_store="sessions")
    assert row.text == "session: Fix build (listed in sessions.json; its session file is not in the bundle)"
    files[("fork.sessions", "sessions/s1.json")] = session([])
    assert list(unlisted_sessions(context(files, INDEX[1]), sessions_store="sessions")) == []


def test_dev_data_chat_keeps_the_last_user_block_and_the_completion():
    line = {"sessionId": "s1", "prompt": "<system>\nbe brief\n\n<user>\nwhy\n\n", "completion": "because",
            "completionOptions": {"model": "m"}}
    files = {("fork.dev_data", "dev_data/chat.jsonl"): json.dumps(line).encode() + b"\n",
             INDEX: json.dumps([ENTRY]).encode()}
    found = list(dev_data_chat_rows(context(files, "dev_data/chat.jsonl"), index_store="index"))
    assert [(row.turn_type, row.text, row.model, row.project_path) for row in found] == [
        ("user", "why", "m", "/w"), ("assistant", "because", "m", "/w")]


def test_tokens_generated_rows():
    data = b'{"model":"m","provider":"p","promptTokens":10,"generatedTokens":2}\n'
    (row,) = tokens_generated_rows(context({("fork.tokens", "dev_data/tokens_generated.jsonl"): data},
                                           "dev_data/tokens_generated.jsonl"))
    assert row.text == "tokens generated: model=m provider=p promptTokens=10 generatedTokens=2"
