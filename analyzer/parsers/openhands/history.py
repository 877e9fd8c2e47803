"""The CLI's per-project prompt history and the task tracker's TASKS.json.

``projects/<sha256(realpath(work dir))>/prompt_history.json`` (OpenHands-CLI
stores/prompt_history.py:19-95, locations.py:26-47): a JSON array of
``{"text", "timestamp"}``, at most 100, newest last, rewritten whole on every
prompt. ``timestamp`` is ``datetime.now().isoformat()``: local time WITHOUT an
offset, never given a zone. Each prompt is a ``user`` row with the text the
conversation's own user row has (so the run drops it while its conversation
survives); only the newest is timed, by the file's mtime (the file was last
written when it was appended), the others are untimed. One
``prompt history:`` row per file keeps every prompt's local time as written.
The project is found by hashing the work directories base_state.json files
name.

``conversations/<id>/TASKS.json`` (software-agent-sdk openhands-tools
task_tracker/definition.py:251-265): the task list of the last ``plan`` call,
``[{"title", "notes", "status"}]``; one ``task:`` row per item.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import as_dict, file_mtime
from aitrail.analyzer.formats.joined_json import cached_table, first_of_each, joined_objects
from aitrail.analyzer.formats.json_values import as_text, label
from aitrail.analyzer.formats.text import bad_record, excerpt
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .facts import facts
from .paths import conversation_of
from .values import json_file

LISTED_TIMES = 200  # prompts whose local time the one summary row lists
MAX_PROJECTS = 100_000  # work directories held in the sha256 map


def parse_prompt_history(ctx: ParseContext) -> Iterator[Draft]:
    """projects/<sha256>/prompt_history.json: a user row per prompt, one row with their local times."""
    entries, problems = json_file(ctx.data, "prompt_history.json", "", kind=list)
    if not isinstance(entries, list):
        yield from problems
        return
    digest = ctx.source.directory.rsplit("/", 1)[-1]
    project = project_of(ctx, digest)
    timed, untimed = file_mtime(ctx), {"timestamp_ns": None, "timestamp_source": "none"}
    times: list[str] = []  # the first LISTED_TIMES prompts' local times; the rest are counted
    counted = 0
    for position, entry in enumerate(entries):
        text = entry.get("text") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            yield bad_record(f"json:/{position}", "a prompt history entry without a text", excerpt(as_text(entry)))
            continue
        counted += 1
        if len(times) < LISTED_TIMES:
            times.append(f"[{position}] {excerpt(as_text(entry.get('timestamp')), 64) or '(no time)'}")
        when = timed if position == len(entries) - 1 else untimed
        yield Draft("user", text, f"json:/{position}/text", project_path=project, **when)
    yield Draft("system", _summary(times, counted, project or f"the project sha256 {digest}"), "json:/",
                project_path=project, **timed)


def _summary(times: list[str], counted: int, project: str) -> str:
    listed = "; ".join(times)
    more = f"; … {counted - len(times)} more" if counted > len(times) else ""
    noun = "prompt" if counted == 1 else "prompts"
    return (f"prompt history: {counted} {noun} for {project} (local times as written, no zone; oldest first: "
            f"{listed or 'none'}{more})")


def project_of(ctx: ParseContext, digest: str) -> str:
    """The work directory whose sha256 is ``digest``, among those the conversations of this home name ('' if none)."""
    return cached_table(ctx, ("openhands", "project-digests"), lambda: _project_digests(ctx)).get(digest, "")


def _project_digests(ctx: ParseContext) -> dict[str, str]:
    directories = (label(as_dict(state.get("workspace")).get("working_dir"), 4096)
                   for _, state in joined_objects(ctx, "conversation_state"))
    return first_of_each(((_sha256(directory), directory) for directory in directories if directory), MAX_PROJECTS)


def _sha256(directory: str) -> str:
    return hashlib.sha256(directory.encode("utf-8", "surrogatepass")).hexdigest()


def parse_tasks(ctx: ParseContext) -> Iterator[Draft]:
    """conversations/<id>/TASKS.json: a ``task:`` row per item of the conversation's current task list."""
    conversation = conversation_of(ctx.source.directory)
    items, problems = json_file(ctx.data, "TASKS.json", conversation.session_id, kind=list)
    if not isinstance(items, list):
        yield from problems
        return
    columns = {"session_id": conversation.session_id, "project_path": facts(ctx, conversation).working_dir,
               **file_mtime(ctx)}
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            yield bad_record(f"json:/{position}", "a task that is not an object", excerpt(as_text(item)))
            continue
        yield Draft("system", task_text(item), f"json:/{position}", **columns)


def task_text(item: dict) -> str:
    """``task: <title> | status=<status>[ | notes=<notes>]``, as the task_tracker call rows write it."""
    notes = as_text(item.get("notes"))
    text = f"task: {as_text(item.get('title'))} | status={as_text(item.get('status'))}"
    return text + (f" | notes={notes}" if notes else "")
