"""Property tests: the new family shapes never raise on any input (beyond jsonc's documented ValueError)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from aitrail.analyzer.formats import mcp_settings, vscode_chat, vscode_workspace
from aitrail.analyzer.formats.jsonc import load_jsonc
from aitrail.analyzer.formats.mutation_log import replay_lines, split_lines

KEYS = st.sampled_from(["requests", "response", "result", "metadata", "toolCallRounds", "toolCalls", "toolCallResults",
                        "message", "text", "value", "kind", "isConfirmed", "resultDetails", "output", "modelState",
                        "mcpServers", "servers", "mcp", "alwaysAllow", "autoApprove", "env", "args", "url", "folder",
                        "workspace", "configuration", "entries", "type", "id", "k", "v", "i", "0", "thinking"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**40), st.floats(allow_nan=True),
                    st.text(max_size=20), st.sampled_from(["toolInvocationSerialized", "thinking", "file:///a",
                                                           "vscode-remote://wsl%2Bx/a", "embed", "__vscode-1"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(KEYS, inner, max_size=5)), max_leaves=40)
ENTRIES = st.fixed_dictionaries({"kind": st.integers(-1, 4), "k": st.lists(st.one_of(KEYS, st.integers(0, 3)),
                                                                           max_size=5), "v": VALUES},
                                optional={"i": st.one_of(st.integers(-1, 5), SCALARS)})


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_documents_never_raise(value):
    data = json.dumps(value).encode()
    vscode_chat.session_from_document(data)
    vscode_workspace.workspace_target(data)
    vscode_chat.sessions_from_array(value, "sqlite:ItemTable:1")
    vscode_chat.session_index(value)
    mcp_settings.read_mcp_settings(data)
    if isinstance(value, dict):
        session = vscode_chat.normalise_session(value, "B", vscode_chat.json_pointer)
        for request in session.requests:
            request.calls()
            _ = request.markdown


@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRIES, max_size=12), st.binary(max_size=30))
def test_logs_never_raise(entries, tail):
    data = json.dumps({"kind": 0, "v": {"requests": []}}).encode() + b"\n"
    data += b"".join(json.dumps(entry).encode() + b"\n" for entry in entries) + tail
    replay = replay_lines(split_lines(data))
    session = vscode_chat.session_from_log(replay)
    if session is not None:
        for request in session.requests:
            request.calls()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_bytes_never_raise(data):
    vscode_chat.session_from_document(data)
    vscode_workspace.workspace_target(data)
    mcp_settings.read_mcp_settings(data)
    replay_lines(split_lines(data))
    try:
        load_jsonc(data)
    except ValueError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[],:"/*\\ \n\tab1', max_size=80))
def test_jsonc_only_raises_value_error(text):
    try:
        load_jsonc(text)
    except ValueError:
        pass
