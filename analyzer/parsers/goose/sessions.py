"""A sessions row of sessions.db: the session, its model, mode, tokens, todo list and recipe.

Columns [src] block/goose@865e4a030a crates/goose/src/session/storage.rs
``create_schema``: ``id`` (``YYYYMMDD_<n>``, UTC date), ``name`` (the title,
generated or set by the user: ``user_set_name``), ``description``,
``session_type`` (user, scheduled, sub_agent, hidden, acp), ``working_dir``,
``created_at`` / ``updated_at`` (SQLite UTC text, or RFC 3339 for sessions
imported from legacy files), ``extension_data`` (JSON: ``todo.v0.content`` is
the session's todo list, session/extension_data.rs), token columns,
``recipe_json``, ``provider_name`` and ``model_config_json`` (v6+),
``goose_mode`` (v8+: auto, approve, smart_approve, chat; config/goose_mode.rs),
``archived_at``, ``project_id`` (v12+), ``thread_id`` (v10+).

Times: the ``session:`` row is at ``created_at``; what the row holds of the
session's present state (model, mode, token totals, todo list) is true as of
``updated_at``, and those rows are at that time.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, setting_value
from aitrail.analyzer.formats.sqlite_chat import SessionFacts, as_text, ns_from_sqlite_text
from aitrail.analyzer.formats.text import bad_record
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft

SESSION_FACTS = ("created_at", "description", "session_type", "goose_mode", "working_dir", "provider_name",
                 "schedule_id", "user_set_name", "updated_at", "archived_at", "project_id", "thread_id")
TOKEN_COLUMNS = ("input_tokens", "output_tokens", "total_tokens", "accumulated_input_tokens",
                 "accumulated_output_tokens", "accumulated_total_tokens", "accumulated_cost")


def session_rows(row: dict, locator: str) -> tuple[SessionFacts, list[Draft]]:
    """The session's facts (carried by its messages) and its own rows."""
    session_id = as_text(row.get("id"))
    model_config, problems = _json_column(row, "model_config_json", locator)
    model = as_text(as_dict(model_config).get("model_name"))
    facts = SessionFacts(session_id, project_path=as_text(row.get("working_dir")), model=model)
    created, updated = _at(row.get("created_at"), facts), _at(row.get("updated_at"), facts)
    rows = [*problems, Draft("system", _session_text(row), locator, **created)]
    if model:
        provider = as_text(row.get("provider_name"))
        rows.append(Draft("system", f"model: {model} (provider={provider}; the session's model as of updated_at, "
                                    "from sessions.model_config_json)", f"{locator}/model_config_json", **updated))
    if row.get("goose_mode") not in (None, ""):
        rows.append(Draft("system", f"permission setting: goose_mode={setting_value(as_text(row['goose_mode']))} "
                                    f"(session {session_id} as of updated_at, from sessions.db)",
                          f"{locator}/goose_mode", **updated))
    rows.extend(_token_rows(row, locator, updated))
    rows.extend(_extension_rows(row, locator, updated))
    rows.extend(_recipe_rows(row, locator, created))
    return facts, rows


def _at(value, facts: SessionFacts) -> dict:
    """The time columns of a row at a session's ``created_at`` / ``updated_at`` text, with its facts."""
    moment = ns_from_sqlite_text(value)
    return {"timestamp_ns": moment, "timestamp_source": "record" if moment is not None else "none",
            **facts.columns()}


def _session_text(row: dict) -> str:
    facts = ", ".join(f"{key}={as_text(row[key])}" for key in SESSION_FACTS if row.get(key) not in (None, ""))
    return f"session: {as_text(row.get('name'))} ({facts})"


def _json_column(row: dict, column: str, locator: str) -> tuple[object, list[Draft]]:
    raw = as_text(row.get(column))
    if raw in ("", "null"):
        return None, []
    try:
        return decode_json(raw), []
    except ValueError as exc:
        return None, [bad_record(f"{locator}/{column}", f"{column} is not JSON: {exc}", raw)]


def _token_rows(row: dict, locator: str, at: dict) -> Iterator[Draft]:
    counts = [f"{key}={as_text(row[key])}" for key in TOKEN_COLUMNS if row.get(key) not in (None, "")]
    if counts:
        model = at.get("model", "")
        yield Draft("system", f"tokens generated: model={model} {' '.join(counts)} (session totals as of "
                              "updated_at, from sessions.db)", f"{locator}/tokens", **at)


def _extension_rows(row: dict, locator: str, at: dict) -> Iterator[Draft]:
    """The todo list (``todo.v0``) a session's extension data keeps, as Goose last saved it."""
    data, problems = _json_column(row, "extension_data", locator)
    yield from problems
    todo = as_dict(as_dict(data).get("todo.v0"))
    content = todo.get("content")
    if isinstance(content, str) and content.strip():
        yield Draft("system", f"task: {content} (the session's todo list as of updated_at, from "
                              "sessions.extension_data todo.v0)", f"{locator}/extension_data/todo.v0", **at)


def _recipe_rows(row: dict, locator: str, at: dict) -> Iterator[Draft]:
    """The recipe a session was started from (title, instructions, prompt) and the values the user gave it."""
    for column in ("recipe_json", "user_recipe_values_json"):
        recipe, problems = _json_column(row, column, locator)
        yield from problems
        if recipe is not None:
            label = "recipe" if column == "recipe_json" else "recipe values"
            yield Draft("system", f"{label}: {setting_value(recipe)}", f"{locator}/{column}", **at)
