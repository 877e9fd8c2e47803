"""A sessions row of state.db: the session, its model, system prompt and end.

Columns [src] pypi hermes-agent 0.19.0 ``hermes_state.py`` ``SCHEMA_SQL``:
``id`` (``YYYYMMDD_HHMMSS_<6 hex>`` from the local start time for CLI
sessions, cli.py), ``source`` (cli, cron, a gateway platform), ``title``,
``cwd``, ``git_branch``, ``git_repo_root``, ``model``, ``model_config``
(JSON; ``_delegate_from`` marks a delegated sub-agent session),
``parent_session_id`` (delegation, branch or compression child),
``system_prompt``, ``started_at`` / ``ended_at`` (REAL Unix seconds),
``end_reason``, counters and billing columns, ``archived``,
``rewind_count``, ``profile_name``.
"""

from __future__ import annotations

from aitrail.analyzer.formats.idioms import as_dict
from aitrail.analyzer.formats.sqlite_chat import ChatTables, SessionFacts, as_text
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, ns_from_seconds

# state.db's conversations: sessions by start, their messages as Hermes reads them back
TABLES = ChatTables(sessions="sessions", session_id="id", session_order="started_at, id", messages="messages",
                    message_session="session_id", message_order="session_id, timestamp, id")
SESSION_FACTS = ("source", "cwd", "git_branch", "git_repo_root", "parent_session_id", "end_reason", "message_count",
                 "tool_call_count", "api_call_count", "profile_name", "display_name", "chat_type", "billing_provider",
                 "archived", "rewind_count", "handoff_state")


def session_rows(row: dict, locator: str) -> tuple[SessionFacts, list[Draft]]:
    """The session's facts (carried by its messages) and its own rows."""
    session_id = as_text(row.get("id"))
    model = as_text(row.get("model"))
    facts = SessionFacts(session_id, project_path=as_text(row.get("cwd")), git_branch=as_text(row.get("git_branch")),
                         model=model)
    started = {**_at(row.get("started_at")), **facts.columns()}
    rows = [Draft("system", _session_text(row), locator, **started)]
    if model:
        rows.append(Draft("system", f"model: {model} (the session's model, from state.db sessions)",
                          f"{locator}/model", **started))
    if row.get("system_prompt") not in (None, ""):
        rows.append(Draft("system", f"system prompt: {as_text(row['system_prompt'])}", f"{locator}/system_prompt",
                          **started))
    if row.get("ended_at") is not None:
        rows.append(Draft("system", f"session ended: {as_text(row.get('end_reason')) or 'no reason recorded'}",
                          f"{locator}/ended_at", **{**_at(row.get("ended_at")), **facts.columns()}))
    return facts, rows


def _at(value) -> dict:
    moment = ns_from_seconds(value)
    return {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none"}


def _session_text(row: dict) -> str:
    facts = [f"{key}={as_text(row[key])}" for key in SESSION_FACTS if row.get(key) not in (None, "", 0)]
    delegated = _delegated_from(row.get("model_config"))
    if delegated:
        facts.append(f"subagent delegated from {delegated}")
    return f"session: {as_text(row.get('title'))} ({', '.join(facts)})"


def _delegated_from(model_config) -> str:
    """The ``_delegate_from`` marker of a delegated sub-agent session ('' when none or unreadable)."""
    if not isinstance(model_config, str) or "_delegate_from" not in model_config:
        return ""
    try:
        return as_text(as_dict(decode_json(model_config)).get("_delegate_from"))
    except ValueError:
        return ""
