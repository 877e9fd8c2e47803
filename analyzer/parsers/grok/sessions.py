"""Grok Build's per-project and per-session side files.

* ``sessions/<encoded cwd>/prompt_history.jsonl`` (secondary):
  ``{timestamp (ns ISO), session_id, prompt, is_bash}``. A prompt is a ``user``
  row written as chat_history writes it, so a prompt whose session survives is
  dropped by the run and one of a deleted or rewound session stays. A shell
  prompt (``is_bash`` true) is ``shell command (is_bash): <prompt>``: the flag
  is kept, and chat_history is not known to record it as a prompt.
* ``<session>/summary.json``: ``session: <title> (cwd=<cwd>)`` (the text
  session_search.sqlite writes too), ``summary:``, ``model:`` and a
  ``session metadata:`` row; git metadata gives the branch (the remote URL is
  never shown: it can carry a token).
* ``<session>/subagents/<id>/meta.json``: ``subagent:`` and ``subagent prompt:``.
* ``<session>/plan.md``: one ``plan:`` row; ``hunk_records.jsonl``: ``edit:`` rows.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.jsonl import Line, each_line
from aitrail.analyzer.formats.text import bad_file, bad_line
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft, ns_from_iso

from .paths import project_of, session_of
from .values import any_time, as_text, json_file

ASCII_SPACE = " \t\n\r\x0b\x0c"

# -- prompt_history.jsonl ----------------------------------------------------------------------


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """prompt_history.jsonl (secondary): one user row per prompt, at its own time, in its session."""
    project = project_of(ctx)
    yield from each_line(ctx, lambda line: _prompt_row(line, project))


def _prompt_row(line: Line, project: str) -> Iterator[Draft]:
    record = line.value
    prompt = record.get("prompt")
    if not isinstance(prompt, str):
        yield bad_line(line.number, "no prompt text", line.raw)
        return
    text = f"shell command (is_bash): {prompt}" if record.get("is_bash") is True else prompt
    yield Draft("user", text, line.locator, timestamp_ns=ns_from_iso(record.get("timestamp")),
                session_id=as_text(record.get("session_id")), project_path=project)


# -- summary.json ------------------------------------------------------------------------------


def session_row_text(title: str, cwd: str) -> str:
    """The ``session:`` row summary.json and session_search.sqlite both write (so repeats are dropped)."""
    return f"session: {title} (cwd={cwd})"


def _branch(git) -> str:
    if isinstance(git, dict):
        return as_text(git.get("branch") or git.get("git_branch"))
    return ""


@json_file("summary.json")
def parse_session_summary(ctx: ParseContext, document: dict) -> Iterator[Draft]:
    """summary.json: the session's title, summary, current model and metadata."""
    cwd = as_text(document.get("cwd")) or project_of(ctx)
    columns = {"session_id": as_text(document.get("id")) or session_of(ctx), "project_path": cwd,
               "git_branch": _branch(document.get("git")) or as_text(document.get("git_branch")),
               "model": as_text(document.get("current_model_id"))}
    created, updated = any_time(document.get("created_at")), any_time(document.get("updated_at"))
    at_created = {"timestamp_ns": created, "timestamp_source": "record"} if created else file_mtime(ctx)
    at_updated = {"timestamp_ns": updated, "timestamp_source": "record"} if updated else at_created
    title = as_text(document.get("generated_title"))
    yield Draft("system", session_row_text(title, cwd), "json:/generated_title", **columns, **at_created)
    facts = [f"{key}={as_text(document[key])}" for key in ("num_messages", "agent_name", "created_at", "updated_at")
             if document.get(key) not in (None, "")]
    yield Draft("system", f"session metadata: {', '.join(facts)} (summary.json)", "file", **columns, **at_updated)
    if document.get("session_summary"):
        yield Draft("system", f"summary: {as_text(document['session_summary'])}", "json:/session_summary",
                    **columns, **at_updated)
    if columns["model"]:
        yield Draft("system", f"model: {columns['model']} (the session's current model, from summary.json)",
                    "json:/current_model_id", **columns, **at_updated)


# -- subagents/<id>/meta.json ------------------------------------------------------------------


@json_file("meta.json")
def parse_subagent_meta(ctx: ParseContext, document: dict) -> Iterator[Draft]:
    """A delegated sub-agent: what it was asked (its prompt is written by the parent model) and how it ended."""
    started = any_time(document.get("started_at"))
    columns = {"session_id": as_text(document.get("parent_session_id")) or session_of(ctx),
               "project_path": as_text(document.get("child_cwd")) or project_of(ctx),
               "model": as_text(document.get("effective_model_id"))}
    when = {"timestamp_ns": started, "timestamp_source": "record"} if started else file_mtime(ctx)
    calls = document.get("tool_calls")
    facts = [f"{key}={as_text(document[key])}" for key in
             ("subagent_id", "child_session_id", "status", "turns", "duration_ms", "completed_at",
              "effective_context_source", "resumed_from", "fork_copy_error") if document.get(key) not in (None, "")]
    if isinstance(calls, list):
        facts.append(f"tool_calls={len(calls)}")
    kind, description = as_text(document.get("subagent_type")), as_text(document.get("description"))
    yield Draft("system", f"subagent: {kind}: {description} ({', '.join(facts)})", "file", **columns, **when)
    if isinstance(document.get("prompt"), str):
        yield Draft("system", f"subagent prompt: {document['prompt']}", "json:/prompt", **columns, **when)


# -- plan.md and hunk_records.jsonl ------------------------------------------------------------


def _utf8(data: bytes) -> tuple[str, Draft | None]:
    """The file's text, or the ``parser: unparseable file`` row that says where it stops being UTF-8."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", bad_file(f"plan.md is not UTF-8 at byte {exc.start}")


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """plan.md: the session's plan as one ``plan:`` row at the file's mtime (it is rewritten in place)."""
    text, problem = _utf8(ctx.data)
    if problem is not None:
        yield problem
        return
    body = text.strip(ASCII_SPACE)  # only ASCII space: a control character is content, and gives the row
    if body:
        yield Draft("system", f"plan: {body}", "file", session_id=session_of(ctx),
                    project_path=project_of(ctx), **file_mtime(ctx))


def parse_hunk_records(ctx: ParseContext) -> Iterator[Draft]:
    """hunk_records.jsonl: one ``edit:`` row per changed hunk (no time is recorded: the file's mtime)."""
    columns = {"session_id": session_of(ctx), "project_path": project_of(ctx), **file_mtime(ctx)}
    yield from each_line(ctx, lambda line: _hunk_row(line, columns))


def _hunk_row(line: Line, columns: dict) -> Iterator[Draft]:
    record = line.value
    path = as_text(record.get("filePath"))
    if not path:
        yield bad_line(line.number, "no filePath", line.raw)
        return
    facts = [f"{key}={as_text(record[key])}" for key in ("authorType", "promptIndex", "eventType")
             if record.get(key) not in (None, "")]
    text = (f"edit: {path} lines {as_text(record.get('hunkStart'))}-{as_text(record.get('hunkEnd'))} "
            f"(+{as_text(record.get('linesAdded'))} -{as_text(record.get('linesRemoved'))}; {', '.join(facts)})")
    yield Draft("system", text, line.locator, **columns)
