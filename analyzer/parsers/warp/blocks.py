"""blocks: the terminal blocks of commands Warp's agent ran, with their output and exit code.

[src] A block is written from ``SerializedBlock`` (app/src/persistence/block_list.rs:296-330;
app/src/terminal/model/block/serialized_block.rs:93-200): ``stylized_command`` and
``stylized_output`` are the bytes with their terminal escape sequences (output
cut to 5000 lines, MAX_SERIALIZED_STYLIZED_OUTPUT_LINES), ``pwd``,
``git_branch`` (the git head, under its legacy name) and ``git_branch_name``
(from 2026-03-23), ``exit_code``, ``did_execute``, ``start_ts`` and
``completed_ts`` (UTC). ``ai_metadata`` is JSON of ``SerializedAIMetadata``:
``requested_command_action_id`` (older builds: ``action_id``, a serde alias),
``conversation_id``, ``subagent_task_id``, ``long_running_control_state``,
``has_agent_written_to_block``. At most 100 blocks per pane are kept, and a
pane's blocks are deleted with the pane.

Only blocks with ``ai_metadata`` are read: they belong to an agent
conversation. A block with an action id is the agent's ``run_shell_command``
call (the tool's name in the protocol, warp.multi_agent.v1 ToolCall): a
``tool_use`` row with the command, joined by the action id to a ``tool_result``
row with the output and ``[exit code N]`` from the same record. A block with
no action id is a ``terminal block (no agent action):`` system row. Escape
sequences are removed from the text (the bytes stay in the bundle): they would
otherwise reach an examiner's terminal from a CSV.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from aitrail.analyzer.formats.json_values import compact, label
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

from .tables import has_column, read_table, text_value, when

SHELL_TOOL = "run_shell_command"
# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST, or to the end), and two-byte escapes; then C0 controls
# other than tab and newline. Each alternative is a run of one character class: linear on any input.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# tables that held each exchange's AI output in Warp builds of 2024-08 to 2025-11 (migrations
# 2024-08-05 add_ai_exchanges_table, 2024-08-20 split_ai_exchanges_table, 2025-11-19 remove_persisted_ai_blocks)
LEGACY_OUTPUT_TABLES = ("ai_blocks", "ai_exchanges")


def terminal_text(value) -> str:
    """A stylized command or output as plain text: escape sequences and control characters removed."""
    text = text_value(value).replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def block_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """The rows of every block that carries ai_metadata."""
    if not has_column(connection, "blocks", "ai_metadata"):
        return  # missing_columns has said so; without it no block can be tied to the agent
    for row, problems in read_table(connection, "blocks", where='"ai_metadata" IS NOT NULL'):
        yield from problems
        yield from _block(row)


def _block(row: dict) -> Iterator[Draft]:
    locator = f"sqlite:blocks:{row.get('_rowid')}"
    try:
        metadata = decode_json(text_value(row.get("ai_metadata")))
    except (ValueError, UnicodeDecodeError) as exc:
        yield bad_record(f"{locator}/ai_metadata", f"ai_metadata is not JSON: {exc}", text_value(row["ai_metadata"]))
        return
    if not isinstance(metadata, dict):
        if metadata is not None:
            yield bad_record(f"{locator}/ai_metadata", "ai_metadata is not a JSON object", compact(metadata))
        return
    action = label(metadata.get("requested_command_action_id"), 1024) or label(metadata.get("action_id"), 1024)
    columns = {"session_id": label(metadata.get("conversation_id"), 1024), "project_path": text_value(row.get("pwd")),
               "git_branch": label(row.get("git_branch_name")) or label(row.get("git_branch"))}
    command, result = terminal_text(row.get("stylized_command")), _result_text(row)
    if not action:
        yield Draft("system", f"terminal block (no agent action): {command}\n{result}", locator,
                    **columns, **when(row.get("start_ts")))
        return
    yield Draft("tool_use", command, f"{locator}/stylized_command", tool_name=SHELL_TOOL, tool_use_id=action,
                **columns, **when(row.get("start_ts")))
    finished = row.get("completed_ts") or row.get("start_ts")
    yield Draft("tool_result", result, f"{locator}/stylized_output", tool_name=SHELL_TOOL, tool_use_id=action,
                **columns, **when(finished))


def _result_text(row: dict) -> str:
    """The output, then what is known of how the command ended."""
    output = terminal_text(row.get("stylized_output")).rstrip("\n")
    if row.get("did_execute") in (0, False):
        ending = "[not executed]"
    elif row.get("completed_ts") is None:
        ending = "[no completion recorded: still running when the block was written]"
    else:
        ending = f"[exit code {text_value(row.get('exit_code'))}]"
    return f"{output}\n{ending}" if output else ending


def legacy_output_rows(connection: sqlite3.Connection) -> Iterator[Draft]:
    """One ``parser:`` row per legacy AI-output table present: how many rows, and that they were not read."""
    for table in LEGACY_OUTPUT_TABLES:
        if not sqlite_safe.is_real_table(connection, table):
            continue
        count = next(sqlite_safe.rows(connection, f'SELECT count(*) FROM "{table}"', (), f"{table} count"), (0,))[0]
        yield Draft("system", f"parser: table {table} holds {count} rows not read: the AI output of each exchange "
                              "in Warp builds of 2024-08 to 2025-11, in a format the source read does not show",
                    f"sqlite:{table}", timestamp_source="none")
