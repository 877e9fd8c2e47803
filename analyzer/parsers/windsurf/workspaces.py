"""workspaceStorage id -> project path, from each ``User/workspaceStorage/<id>/workspace.json`` of the bundle.

The summary keys of the global state name the window's workspaceStorage id; its
``workspace.json`` (written once, when the folder is made) names the folder
(formats/vscode_workspace.py reads it).
"""

from __future__ import annotations

from aitrail.analyzer.formats.vscode_workspace import workspace_target
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext

MAP_STORE = "workspace_map"


def workspace_projects(ctx: ParseContext) -> dict[str, str]:
    """Workspace id (the folder name) -> the path its workspace.json names; read once per worker."""
    def load() -> dict[str, str]:
        found: dict[str, str] = {}
        for source in ctx.related(MAP_STORE):
            folder = source.directory.rsplit("/", 1)[-1]
            if source.name != "workspace.json" or not folder or folder in found:
                continue
            try:
                target, _ = workspace_target(ctx.read(source))
            except MemberUnreadable:
                continue
            if target is not None and target.path:
                found[folder] = target.path
        return found

    return ctx.cached(("windsurf.workspace_projects",), load)  # type: ignore[return-value]
