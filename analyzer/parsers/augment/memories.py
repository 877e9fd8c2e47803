"""``Augment-Memories``: the plain-text memories the agent keeps per workspace and reads into every request.

One file per workspace, ``<workspaceStorage>/<id>/Augment.vscode-augment/Augment-Memories``
(Markdown text, rewritten in place) [obs, community extractors and recovery guides]:
one ``memories:`` row with its whole text, at the file's modification time
(the file records no time of its own), with the workspace's project.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.whole_text import file_body
from aitrail.analyzer.formats.workspace_storage import folder_project
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft


def parse_memories(ctx: ParseContext) -> Iterator[Draft]:
    """The memories file as one ``memories:`` row (an empty file gives none)."""
    text, problem = file_body(ctx)
    if problem is not None:
        yield problem
        return
    if text:
        yield Draft("system", f"memories: {text}", "file", project_path=folder_project(ctx), **file_mtime(ctx))
