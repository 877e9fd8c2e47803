"""A session directory's side files: workspace.yaml, plan.md and the todos of session.db.

* ``workspace.yaml`` (npm @github/copilot 1.0.56 app.js schema ``tRs``, written
  by the ``yaml`` package's ``stringify``): ``session: <name> (cwd=…,
  repository=…, branch=…)`` when the session has a title (``name``; older files
  ``summary``), the same text session-store.db gives, and ``session metadata:``
  with the other keys, at ``updated_at``.
* ``plan.md``: one ``plan:`` row at the file's mtime (it is rewritten in place).
* ``session.db`` (``todos`` and ``todo_deps``): one ``task:`` row per todo.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import yaml

from aitrail.analyzer.formats.database import each_database_row
from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file, bad_record, excerpt
from aitrail.analyzer.formats.whole_text import file_body
from aitrail.analyzer.view import sqlite_safe
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import bounded
from aitrail.analyzer.view.rows import Draft, over_limit

from .values import as_text, at, label, session_of

META_KEYS = ("id", "git_root", "host_type", "client_name", "user_named", "summary_count", "created_at", "updated_at",
             "remote_steerable", "mc_task_id", "mc_session_id", "mc_last_event_id", "chronicle_sync_dismissed")
SCALARS = (str, int, float, bool)


def session_row_text(title: str, cwd: str, repository: str, branch: str) -> str:
    """The ``session:`` text workspace.yaml and session-store.db both write (so a repeat is dropped)."""
    return f"session: {title} (cwd={cwd}, repository={repository}, branch={branch})"


def _yaml_mapping(ctx: ParseContext) -> tuple[dict | None, Draft | None]:
    """The top-level mapping of workspace.yaml, nesting bounded, or the ``parser:`` row saying why not."""
    try:
        document = bounded(yaml.safe_load, ctx.config_data().decode("utf-8"))
    except UnicodeDecodeError as exc:
        return None, bad_file(f"workspace.yaml is not UTF-8 at byte {exc.start}")
    except (yaml.YAMLError, ValueError) as exc:  # NestedTooDeep is a ValueError
        return None, bad_file(f"workspace.yaml is not YAML: {excerpt(str(exc), 200)}")
    if not isinstance(document, dict):
        return None, bad_file(f"workspace.yaml is a YAML {type(document).__name__}, not a mapping")
    return document, None


def _scalar(document: dict, key: str) -> str:
    """A top-level scalar as text; a container (which could be an alias bomb) is never expanded."""
    value = document.get(key)
    if isinstance(value, SCALARS):
        return as_text(value)
    return value.isoformat() if hasattr(value, "isoformat") else ""


def parse_workspace(ctx: ParseContext) -> Iterator[Draft]:
    """workspace.yaml: the session's title, folder and branch, and its other metadata."""
    document, problem = _yaml_mapping(ctx)
    if problem is not None:
        yield problem
        return
    values = {key: _scalar(document, key) for key in ("cwd", "repository", "branch", "name", "summary", *META_KEYS)}
    columns = {"session_id": values["id"] or session_of(ctx), "project_path": values["cwd"],
               "git_branch": values["branch"]}
    when = at(values["updated_at"] or values["created_at"], ctx)
    title = values["name"] or values["summary"]
    if title:
        yield Draft("system", session_row_text(title, values["cwd"], values["repository"], values["branch"]),
                    "yaml:/name" if values["name"] else "yaml:/summary", **columns, **when)
    known = ", ".join(f"{key}={values[key]}" for key in META_KEYS if values[key])
    yield Draft("system", f"session metadata: {known} (workspace.yaml)", "file", **columns, **when)


def parse_plan(ctx: ParseContext) -> Iterator[Draft]:
    """plan.md: the session's plan as one ``plan:`` row at the file's mtime."""
    body, problem = file_body(ctx)
    if problem is not None:
        yield problem
    elif body:
        yield Draft("system", f"plan: {body}", "file", session_id=session_of(ctx), **file_mtime(ctx))


TODO_COLUMNS = ("id", "title", "description", "status", "created_at", "updated_at")


def parse_session_todos(ctx: ParseContext) -> Iterator[Draft]:
    """session.db: one ``task:`` row per todo (title, status, description, what it waits for), at its updated_at."""
    yield from each_database_row(ctx, lambda connection: _todo_rows(ctx, connection))


def _todo_rows(ctx: ParseContext, connection: sqlite3.Connection) -> Iterator[Draft]:
    if not sqlite_safe.is_real_table(connection, "todos"):  # the CLI creates it before any use of the file
        yield bad_file(f"{ctx.source.name}: no todos table")
        return
    depends, cut = _dependencies(connection)
    session = session_of(ctx)
    if cut:
        yield over_limit("todo_deps rows", f"{MAX_DEPENDENCIES} read", "the dependencies after them are not named "
                         "on the task rows", "sqlite:todo_deps", session_id=session)
    for row in sqlite_safe.table_rows(connection, "todos", "todos rows", TODO_COLUMNS):
        locator = f"sqlite:todos:{as_text(row.get('_rowid'))}"
        over = [column for column, value in row.items() if isinstance(value, sqlite_safe.Oversize)]
        if over:
            yield bad_record(locator, f"value too long to read in {', '.join(over)}")
            continue
        todo = label(row.get("id"))
        parts = [f"task: {as_text(row.get('title'))}", f"status={as_text(row.get('status'))}"]
        if row.get("description"):
            parts.append(f"description={as_text(row['description'])}")
        if depends.get(todo):
            parts.append(f"depends_on={','.join(depends[todo])}")
        parts.append(f"id={todo}")
        yield Draft("system", " | ".join(parts), locator, session_id=session,
                    **at(row.get("updated_at") or row.get("created_at"), ctx))


MAX_DEPENDENCIES = 100_000  # todo_deps rows held to name each todo's prerequisites


def _dependencies(connection: sqlite3.Connection) -> tuple[dict[str, list[str]], bool]:
    """Each todo's prerequisites (todo_deps), and whether MAX_DEPENDENCIES cut the reading short."""
    if not sqlite_safe.is_real_table(connection, "todo_deps"):
        return {}, False
    found: dict[str, list[str]] = {}
    for count, row in enumerate(sqlite_safe.table_rows(connection, "todo_deps", "todo_deps rows",
                                                       ("todo_id", "depends_on"))):
        if count >= MAX_DEPENDENCIES:
            return found, True
        todo, prerequisite = label(row.get("todo_id")), label(row.get("depends_on"))
        if todo and prerequisite:
            found.setdefault(todo, []).append(prerequisite)
    return found, False

