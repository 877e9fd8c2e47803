"""brain/<uuid>/ artifacts: task.md, implementation_plan.md, walkthrough.md, and their ``.resolved*`` versions.

The agent writes these Markdown "artifacts" for a conversation and keeps
earlier versions beside them as ``<name>.resolved``, ``<name>.resolved.<n>``
[obs: cli-continues ``BRAIN_ARTIFACT_BASE_FILES``, ``findBrainArtifactPath``: the
newest by mtime is the current one]. Each file is one row, at its
modification time (it records no time of its own), in its conversation:
``task list:``, ``plan:`` or ``walkthrough:`` and the whole text. The versions
are a secondary store: a version equal to the current file adds no row.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.whole_text import file_body
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from .project import conversation_of, project_of

PREFIXES = {"task.md": "task list", "implementation_plan.md": "plan", "walkthrough.md": "walkthrough"}


def artifact_prefix(name: str) -> str:
    """The row prefix for an artifact file name (its base name before ``.resolved``); 'artifact' otherwise."""
    return PREFIXES.get(name.split(".resolved", 1)[0], "artifact")


def parse_artifact(ctx: ParseContext) -> Iterator[Draft]:
    """One ``<prefix>: <text>`` row for the artifact, at the file's mtime, in its conversation."""
    body, problem = file_body(ctx)
    if problem is not None:
        yield problem
        return
    if not body:
        return
    conversation = conversation_of(ctx)
    # a version's row reads like the current file's (its source column names the version), so one
    # equal to the current text is dropped by the run as a repeat
    yield Draft("system", f"{artifact_prefix(ctx.source.name)}: {body}", "file", session_id=conversation,
                project_path=project_of(ctx, conversation), **file_mtime(ctx))
