"""A workspace storage folder's ``workspace.json``, read for the folders that hold Augment data.

The catalog collects every ``User/workspaceStorage/<id>/workspace.json`` of
the VS Code hosts (a glob cannot ask whether ``Augment.vscode-augment/`` is
beside it). For a folder with Augment data the file gives one ``project:``
row, at its modification time (VS Code writes it once, when the folder is
first made: when the workspace was first opened); the folder's Augment rows
take their project from it (formats/workspace_storage.py). For any other
folder (another extension's, a workspace Augment never touched) the file is
read and gives no row: it is not Augment's evidence.
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import file_mtime
from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.formats.vscode_workspace import workspace_target
from aitrail.analyzer.formats.workspace_storage import storage_folder
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

DATA_STORES = ("kv_store", "kv_store_history", "kv_store_meta", "memories", "user_assets", "checkpoint_documents",
               "global_state_dir")
FOLDER = "Augment.vscode-augment"


def augment_folders(ctx: ParseContext) -> frozenset[str]:
    """The workspace storage folders (``.../workspaceStorage/<id>``) holding a collected Augment file, once."""
    def load() -> frozenset[str]:
        found = set()
        for store in DATA_STORES:
            for source in ctx.related(store):
                if f"/{FOLDER}/" in f"/{source.path}":
                    found.add(storage_folder(source.path))
        return frozenset(found)

    return ctx.cached(("augment.folders",), load)  # type: ignore[return-value]


def parse_workspace_map(ctx: ParseContext) -> Iterator[Draft]:
    """``project: <path> (...)`` for a folder with Augment data; nothing for any other folder."""
    folder = storage_folder(ctx.source.path)
    if not folder or folder not in augment_folders(ctx):
        return
    target, reason = workspace_target(ctx.data)
    if target is None:
        yield bad_file(f"{ctx.source.name}: {reason}")
        return
    where = f" on {target.remote} {target.host}".rstrip() if target.remote else ""
    yield Draft("system", f"project: {target.path or target.uri}{where} (workspace {target.kind} of workspace "
                          f"storage {folder.rsplit('/', 1)[-1]}, the folder holding Augment's data)",
                f"json:{target.pointer}", project_path=target.path, **file_mtime(ctx))
