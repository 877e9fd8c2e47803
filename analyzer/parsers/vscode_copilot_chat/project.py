"""Which project a file belongs to: the ``workspace.json`` of its workspaceStorage folder.

A file under ``User/workspaceStorage/<id>/`` (chat sessions, the workspace
state.vscdb, the extension's transcripts) belongs to the folder or
``.code-workspace`` that ``<id>/workspace.json`` (or ``meta.json``) names
(formats/vscode_workspace.py). Empty-window sessions
(``globalStorage/emptyWindowChatSessions``) belong to none.
"""

from __future__ import annotations

from dataclasses import dataclass

from aitrail.analyzer.formats.vscode_workspace import WorkspaceTarget, workspace_target
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext

WORKSPACE_MAP = "workspace_map"
_MARK = "workspaceStorage/"


@dataclass(frozen=True)
class Project:
    """The project path of a workspaceStorage folder, and where it runs when that is not this machine."""

    path: str = ""
    remote: str = ""  # wsl, ssh-remote, dev-container, ...
    host: str = ""

    def where(self) -> str:
        """``<remote> <host>`` for a remote project ('' for a local one)."""
        return " ".join(part for part in (self.remote, self.host) if part)


def storage_folder(path: str) -> str:
    """``.../User/workspaceStorage/<id>`` of a path below it ('' when the path is not in workspace storage)."""
    head, mark, tail = path.partition(_MARK)
    if not mark or "/" not in tail:
        return ""
    return head + mark + tail.split("/", 1)[0]


def _target(ctx: ParseContext, folder: str) -> WorkspaceTarget | None:
    store = f"{ctx.source.agent}.{WORKSPACE_MAP}"
    for name in ("workspace.json", "meta.json"):
        source = ctx.bundle.at(ctx.source.location, f"{folder}/{name}", store)
        if source is None:
            continue
        try:
            target, _reason = workspace_target(ctx.read(source))
        except MemberUnreadable:
            continue
        if target is not None:
            return target
    return None


def project_of(ctx: ParseContext, path: str | None = None) -> Project:
    """The project of ``path`` (default: the context's file), read once per folder and worker."""
    folder = storage_folder(ctx.source.path if path is None else path)
    if not folder:
        return Project()

    def compute() -> Project:
        target = _target(ctx, folder)
        return Project(target.path, target.remote, target.host) if target else Project()

    return ctx.cached(("vscode_copilot_chat.project", ctx.source.location, folder), compute)
