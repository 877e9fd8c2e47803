"""``state/openclaw.sqlite``, the shared control-plane database: only its exec approvals are read.

The database holds registries, approvals, plugin state, cron jobs, ACP
replay, sub-agent runs and many other tables (docs/reference/database-schemas/layout.md),
and credentials: MCP OAuth tokens (``mcp_oauth_stores``), device and gateway
tokens, the secret store, and the auth profiles moved into
``config_machine_state`` (OpenClaw's own list, ``src/state/secret-state-tables.ts``,
npm openclaw 2026.9.6 ``dist/backup-git-*.mjs``; the catalog's
``credential_tables``). Of all its tables only ``exec_approvals_config`` is
read here, column by column: ``config_key``, ``raw_json`` (the exec approvals
document, its ``socket.token`` withheld) and ``updated_at_ms``; the row
shapes of the others are not established from source, so they are collected,
not parsed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import escape_key
from aitrail.analyzer.formats.sqlite_values import oversize_rows
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_ms

from .settings import approval_rows

APPROVAL_COLUMNS = ("config_key", "raw_json", "updated_at_ms")


def parse_state_db(ctx: ParseContext) -> Iterator[Draft]:
    """state/openclaw.sqlite: the ``permission setting:`` rows of its exec approvals document."""
    yield from each_database_row(ctx, lambda connection: _database_rows(ctx, connection))


def _database_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "exec_approvals_config"):
        # every state database has schema_meta; exec approvals exist only once configured
        if not sqlite_safe.is_real_table(connection, "schema_meta"):
            yield bad_file(f"{ctx.source.name}: no schema_meta or exec_approvals_config table")
        return
    for row in sqlite_safe.table_rows(connection, "exec_approvals_config", "exec_approvals_config rows",
                                      APPROVAL_COLUMNS, "1 ORDER BY config_key"):
        where = f"sqlite:exec_approvals_config:{row.get('_rowid')}"
        yield from oversize_rows(row, where)
        yield from _document(row, where)


def _document(row: dict, where: str) -> Iterator[Draft]:
    raw = row.get("raw_json")
    if raw is None:
        return
    try:
        document = decode_json(raw if isinstance(raw, str) else bytes(raw).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, TypeError) as exc:
        yield bad_record(f"{where}/raw_json", f"not JSON: {exc}")  # no excerpt: the document holds a token
        return
    if not isinstance(document, dict):
        yield bad_record(f"{where}/raw_json", f"a JSON {type(document).__name__}, not an object")
        return
    ns = ns_from_ms(row.get("updated_at_ms"))
    times = {"timestamp_ns": ns, "timestamp_source": "record"} if ns is not None else {"timestamp_source": "none"}

    def locate(*parts) -> str:
        return f"{where}/raw_json/" + "/".join(escape_key(part) for part in parts)

    yield from approval_rows(document, f"state/openclaw.sqlite, exec_approvals_config row {row.get('config_key')}, "
                                       "timed by updated_at_ms", locate, times)
