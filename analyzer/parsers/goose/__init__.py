r"""Goose (Block; block/goose, also published as aaif-goose/goose): the terminal and desktop agent.

The row rules are those of docs/agents/goose.md. File families (under the
etcetera app directories: XDG on Linux and macOS, %APPDATA%\Block\goose on
Windows, or ``$GOOSE_PATH_ROOT/{config,data,state}``):

* ``data/sessions/sessions.db`` (Goose 1.10+, SQLite in WAL mode, schema
  versions 1 to 13): ``sessions`` (title, working directory, type, mode, model,
  token totals, todo list, recipe) and ``messages`` (``content_json``: an array
  of content blocks; tool calls and results are blocks joined by their ``id``),
  read with the -wal by the shared SQLite chat store walk
  (analyzer/formats/sqlite_chat.py); ``threads`` / ``thread_messages`` copies
  (v10+) as secondary rows (database.py, sessions.py, content.py);
* ``data/sessions/<name>.jsonl``: the legacy session files (metadata line, then
  one message per line), imported into sessions.db and left in place, so
  secondary (legacy.py);
* ``config/permission.yaml`` and ``config/config.yaml`` (settings.py). The
  keyring and its fallback ``config/secrets.yaml`` hold the provider keys and
  are never collected.

Sample records::

    messages: (41, 'msg_20260314_3_5e0b...', '20260314_3', 'assistant',
      '[{"type":"toolRequest","id":"toolu_01XY","toolCall":{"status":"success",
         "value":{"name":"developer__shell","arguments":{"command":"ls"}}}}]', 1773475345, ...)
    {"role":"user","created":1742900000,"content":[{"type":"text","text":"add a health endpoint"}]}

References: block/goose@865e4a030a crates/goose/src/session/storage.rs (create_schema, get_conversation,
add_message, replace_conversation_inner, delete_session, import_legacy), crates/goose/src/session/migrations.rs
(schema versions 1-13), crates/goose/src/conversation/message/content_types.rs and tool_types.rs (content
blocks), crates/goose/src/config/base/secrets.rs; block/goose@05132966065 crates/goose/src/conversation/
tool_result_serde.rs; block/goose@0780e228ca crates/goose/src/config/paths.rs; block/goose@0865f959f8
crates/goose/src/config/permission.rs; block/goose@5306a30bf6 crates/goose/src/config/goose_mode.rs;
block/goose@0fc5e54062 crates/goose/src/session/legacy.rs; block/goose@01a262b229
crates/goose/src/session/storage.rs (the legacy writer); block/goose@06781cc713
crates/goose/src/agents/tool_execution.rs (DECLINED_RESPONSE); block/goose@0086ae654b
crates/goose/src/session/extension_data.rs (todo.v0); research/formats-more-cli-agents.md section 4.
"""

from .database import parse_sessions_db
from .legacy import parse_legacy_session
from .settings import parse_config_yaml, parse_permission_yaml

PARSERS = (
    ("goose.sessions_db.v1", parse_sessions_db),
    ("goose.legacy_session.v1", parse_legacy_session),
    ("goose.permission.v1", parse_permission_yaml),
    ("goose.config.v1", parse_config_yaml),
)
