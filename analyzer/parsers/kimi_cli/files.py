"""Kimi CLI's small files: kimi.json, state.json, sub-agent meta.json, background tasks, user history, plans.

* ``kimi.json`` (metadata.py:17-79): ``project: <path> (kaos=..., sessions
  directory <md5>, last session <id>)`` per work directory, in the last
  session's id (it names that session: integrity's ``session missing`` when no
  file holds it), timed by the file's mtime.
* ``state.json`` / legacy ``metadata.json`` (session_state.py:12-132): the
  title, archive and plan facts as ``session:``, the approval flags, plan mode
  and extra directories as ``permission setting:`` rows, the todos as ``task:``
  rows; the file's mtime (it is rewritten whole).
* sub-agent ``meta.json`` (subagents/store.py:17-60): ``subagent: <type>:
  <description> (...)`` at ``created_at`` and ``model: <effective_model> (...)``.
* background task ``spec.json`` / ``runtime.json`` (background/models.py:28-72):
  ``background task: ...`` at ``created_at``, ``background task status: ...``
  at ``finished_at`` (else ``updated_at``), joined to the Shell call by
  ``tool_call_id``.
* ``user-history/<md5>.jsonl`` (secondary; ui/shell/prompt.py:2077-2095): one
  untimed ``user`` row per ``{"content"}`` line.
* ``plans/<slug>.md``: ``plan: <text>``, in the session whose state.json names
  the slug.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.float_seconds import ns_from_float_seconds
from aitrail.analyzer.formats.idioms import as_dict, as_list, file_mtime, settings_value
from aitrail.analyzer.formats.joined_json import cached_table, joined_document, joined_objects
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_line, bad_record, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, format_timestamp

from .paths import bucket_of, place_of, work_dir_of

MAX_PLAN_SLUGS = 100_000
APPROVAL_KEYS = ("yolo", "afk", "auto_approve_actions")


def _document(ctx: ParseContext, what: str, session_id: str = "") -> tuple[dict | None, list[Draft]]:
    """The file's JSON object, or None and the ``parser:`` row saying why not (in ``session_id``)."""
    document, problem = json_document(ctx.data, what)
    if problem is not None:
        problem.session_id = session_id
        return None, [problem]
    return (document if isinstance(document, dict) else None), []


def _seconds(value) -> str:
    """A Unix-seconds value as UTC text, or as written when it is not a time."""
    moment = ns_from_float_seconds(value)
    return format_timestamp(moment) if moment is not None else as_text(value)


def _at_seconds(value, fallback: dict) -> dict:
    moment = ns_from_float_seconds(value)
    return {"timestamp_ns": moment, "timestamp_source": "record"} if moment is not None else fallback


# -- kimi.json --------------------------------------------------------------------------------------


def parse_work_dirs(ctx: ParseContext) -> Iterator[Draft]:
    """kimi.json: one ``project:`` row per work directory, in its last session."""
    document, problems = _document(ctx, "kimi.json")
    if document is None:
        yield from problems
        return
    timed = file_mtime(ctx)
    for position, entry in enumerate(as_list(document.get("work_dirs"))):
        path = label(as_dict(entry).get("path"), 4096)
        if not path:
            yield bad_record(f"json:/work_dirs/{position}", "a work directory without a path", excerpt(as_text(entry)))
            continue
        kaos = label(entry.get("kaos"), 100) or "local"
        session = label(entry.get("last_session_id"))
        text = (f"project: {path} (kaos={kaos}, sessions directory {bucket_of(path, kaos)}, last session "
                f"{session or '(none)'})")
        yield Draft("system", text, f"json:/work_dirs/{position}", session_id=session, project_path=path, **timed)
    for key, value in document.items():
        if key != "work_dirs":
            yield Draft("system", f"setting: {key}={settings_value(value, key)} (from kimi.json)", f"json:/{key}",
                        **timed)


# -- state.json -------------------------------------------------------------------------------------


def parse_session_state(ctx: ParseContext) -> Iterator[Draft]:
    """state.json (or the legacy metadata.json): title, approval flags, plan mode, todos."""
    place = place_of(ctx.source.path)
    document, problems = _document(ctx, ctx.source.name, place.session_id)
    if document is None:
        yield from problems
        return
    columns = {"session_id": place.session_id, "project_path": work_dir_of(ctx, place.bucket), **file_mtime(ctx)}
    yield Draft("system", _session_text(document), "json:/", **columns)
    approval = as_dict(document.get("approval"))
    for key in APPROVAL_KEYS:
        if key in approval:
            yield Draft("system", f"permission setting: {key}={settings_value(approval[key], key)} (from state.json)",
                        f"json:/approval/{key}", **columns)
    for key in ("plan_mode", "additional_dirs"):
        if key in document and document[key] not in (None, []):
            yield Draft("system", f"permission setting: {key}={settings_value(document[key], key)} (from "
                                  f"{ctx.source.name})", f"json:/{key}", **columns)
    for position, todo in enumerate(as_list(document.get("todos"))):
        todo = as_dict(todo)
        yield Draft("system", f"task: {as_text(todo.get('title'))} | status={as_text(todo.get('status'))}",
                    f"json:/todos/{position}", **columns)


def _session_text(document: dict) -> str:
    title = as_text(document.get("custom_title") or document.get("title")) or "(untitled)"
    facts = []
    for key in ("title_generated", "archived", "plan_slug", "plan_session_id", "auto_archive_exempt"):
        if document.get(key) not in (None, False, ""):
            facts.append(f"{key}={as_text(document[key])}")
    for key in ("archived_at", "wire_mtime"):
        if document.get(key) is not None:
            facts.append(f"{key}={_seconds(document[key])}")
    return f"session: {title}" + (f" ({', '.join(facts)})" if facts else "")


# -- sub-agents and background tasks ----------------------------------------------------------------


def parse_subagent_meta(ctx: ParseContext) -> Iterator[Draft]:
    """subagents/<agent>/meta.json: the sub-agent (type, description, status) and its model."""
    place = place_of(ctx.source.path)
    document, problems = _document(ctx, "meta.json", place.session_id)
    if document is None:
        yield from problems
        return
    columns = {"session_id": place.session_id, "project_path": work_dir_of(ctx, place.bucket)}
    when = _at_seconds(document.get("created_at"), file_mtime(ctx))
    facts = [f"agent_id={as_text(document.get('agent_id')) or place.subagent}"]
    facts += [f"{key}={as_text(document[key])}" for key in ("status", "last_task_id") if document.get(key)]
    facts += [f"{key}={_seconds(document[key])}" for key in ("updated_at",) if document.get(key) is not None]
    text = (f"subagent: {as_text(document.get('subagent_type'))}: {as_text(document.get('description'))} "
            f"({', '.join(facts)})")
    yield Draft("system", text, "json:/", **columns, **when)
    spec = as_dict(document.get("launch_spec"))
    model = label(spec.get("effective_model"), 300)
    if model:
        override = label(spec.get("model_override"), 300)
        how = f"model_override={override}" if override else "the sub-agent type's default"
        yield Draft("system", f"model: {model} (sub-agent {place.subagent}, {how}; from meta.json)",
                    "json:/launch_spec/effective_model", model=model, **columns, **when)


def parse_background_task(ctx: ParseContext) -> Iterator[Draft]:
    """tasks/<id>/spec.json and runtime.json: what a background task ran, and how it ended."""
    place = place_of(ctx.source.path)
    document, problems = _document(ctx, ctx.source.name, place.session_id)
    if document is None:
        yield from problems
        return
    columns = {"session_id": place.session_id, "project_path": work_dir_of(ctx, place.bucket)}
    if ctx.source.name == "runtime.json":
        yield from _runtime_rows(ctx, document, columns)
        return
    shown = [f"{key}={as_text(document[key])}" for key in ("cwd", "shell_name", "timeout_s", "owner_role")
             if document.get(key) not in (None, "")]
    what = as_text(document.get("command")) or as_text(document.get("description"))
    text = (f"background task: {as_text(document.get('kind'))} {what} (id={as_text(document.get('id'))}; "
            f"description={as_text(document.get('description'))}" + "".join(f"; {fact}" for fact in shown) + ")")
    yield Draft("system", text, "json:/", tool_use_id=label(document.get("tool_call_id")), **columns,
                **_at_seconds(document.get("created_at"), file_mtime(ctx)))


def _runtime_rows(ctx: ParseContext, document: dict, columns: dict) -> Iterator[Draft]:
    facts = [f"{key}={as_text(document[key])}" for key in ("exit_code", "interrupted", "timed_out", "failure_reason")
             if document.get(key) not in (None, "", False)]
    facts += [f"{key}={_seconds(document[key])}" for key in ("started_at", "finished_at")
              if document.get(key) is not None]
    when = _at_seconds(document.get("finished_at"), _at_seconds(document.get("updated_at"), file_mtime(ctx)))
    text = f"background task status: {as_text(document.get('status'))}" + (f" ({', '.join(facts)})" if facts else "")
    yield Draft("system", text, "json:/status", tool_use_id=_spec_call(ctx), **columns, **when)


def _spec_call(ctx: ParseContext) -> str:
    """The tool_call_id of the task's spec.json beside this runtime.json ('' when it cannot be read)."""
    document = joined_document(ctx, ctx.sibling("spec.json", "background_tasks"))
    return label(document.get("tool_call_id")) if isinstance(document, dict) else ""


# -- user history and plans -------------------------------------------------------------------------


def parse_user_history(ctx: ParseContext) -> Iterator[Draft]:
    """user-history/<md5>.jsonl: one untimed ``user`` row per prompt typed in that work directory."""
    bucket = ctx.source.name[: -len(".jsonl")] if ctx.source.name.endswith(".jsonl") else ctx.source.name
    project = work_dir_of(ctx, bucket)
    def prompt(line: Line) -> Iterator[Draft]:
        content = line.value.get("content")
        if isinstance(content, str):
            yield Draft("user", content, line.locator, project_path=project, timestamp_source="none")
        else:
            yield bad_line(line.number, "a history line without a content text", line.raw)
    yield from each_line(ctx, prompt)


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """plans/<slug>.md: the plan's Markdown, in the session whose state.json names the slug."""
    text = ctx.data.decode("utf-8", "replace")
    slug = ctx.source.name[: -len(".md")] if ctx.source.name.endswith(".md") else ctx.source.name
    session, project = _plan_sessions(ctx).get(slug, ("", ""))
    yield Draft("system", f"plan: {text}", "file", session_id=session, project_path=project, **file_mtime(ctx))


def _plan_sessions(ctx: ParseContext) -> dict[str, tuple[str, str]]:
    return cached_table(ctx, ("kimi", "plan-slugs"), lambda: _read_plan_slugs(ctx))


def _read_plan_slugs(ctx: ParseContext) -> dict[str, tuple[str, str]]:
    table: dict[str, tuple[str, str]] = {}
    for source, document in joined_objects(ctx, "session_state"):
        if source.name != "state.json" or len(table) >= MAX_PLAN_SLUGS:
            continue
        slug = label(document.get("plan_slug"))
        if slug:
            place = place_of(source.path)
            table.setdefault(slug, (place.session_id, work_dir_of(ctx, place.bucket)))
    return table
