"""The project of a file under a VS Code-family ``User/workspaceStorage/<id>/`` folder, from its workspace.json.

Extensions and forks that keep their data per workspace (Trae's workspace
``state.vscdb``, Augment's ``Augment.vscode-augment/`` folder) leave the
project to VS Code's ``<id>/workspace.json`` (``meta.json`` when the
extension host made the folder): formats/vscode_workspace.py reads it. The
agent's catalog names the store that collects those files (``workspace_map``
by convention); a file whose folder has none gives an empty project.

References: voideditor/void@b3166e7e src/vs/platform/storage/electron-main/storageMain.ts:L415-434
(research/formats-vscode-family.md 1.4).
"""

from __future__ import annotations

from aitrail.analyzer.formats.vscode_workspace import workspace_target
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import ParseContext

MARK = "workspaceStorage/"
MAP_NAMES = ("workspace.json", "meta.json")


def storage_folder(path: str) -> str:
    """``.../workspaceStorage/<id>`` of a path below it ('' when the path is not inside one)."""
    head, mark, tail = path.partition(MARK)
    if not mark or "/" not in tail:
        return ""
    return head + mark + tail.split("/", 1)[0]


def folder_project(ctx: ParseContext, store: str = "workspace_map", path: str | None = None) -> str:
    """The project path named by the workspace.json (else meta.json) of ``path``'s folder, read once per worker.

    ``path`` defaults to the context's file; ``store`` is the catalog store of
    the agent that collects the map files. A folder with no readable map gives ''.
    """
    folder = storage_folder(ctx.source.path if path is None else path)
    if not folder:
        return ""

    def compute() -> str:
        for name in MAP_NAMES:
            source = ctx.at(f"{folder}/{name}", store)
            if source is None:
                continue
            try:
                target, _reason = workspace_target(ctx.read(source))
            except MemberUnreadable:
                continue
            if target is not None and target.path:
                return target.path
        return ""

    return ctx.cached(("workspace_storage.project", store, folder), compute)  # type: ignore[return-value]
