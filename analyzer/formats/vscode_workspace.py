"""A VS Code workspaceStorage folder's ``workspace.json``, to the project it belongs to.

``workspace.json`` names a ``folder`` or a ``workspace`` (a ``.code-workspace``
file) URI; ``meta.json`` of empty windows a ``configuration``. Local folders
are ``file:`` URIs (a Windows drive as ``file:///c%3A/...``, a UNC share with
its server as host); remote ones ``vscode-remote://<kind>+<authority>/path``:
``wsl+<distro>``, ``ssh-remote+<host>`` (the host may be hex-encoded, or a hex
JSON object with ``hostName``), ``dev-container+``/``attached-container+``
(hex host path or JSON). The path is the remote path; the host is kept apart,
never folded into it.

References: voideditor/void@b3166e7e src/vs/platform/storage/electron-main/storageMain.ts:L415-434
(research/formats-vscode-family.md 1.4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from aitrail.analyzer.view.decode import decode_json


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass
class WorkspaceTarget:
    """What a workspaceStorage folder belongs to: a folder or a ``.code-workspace`` file, local or remote."""

    kind: str  # "folder" or "workspace"
    uri: str
    path: str  # the local or remote path ("" when the URI gives none)
    remote: str = ""  # "", "wsl", "ssh-remote", "dev-container", "attached-container", or the URI's own kind
    host: str = ""  # WSL distro, SSH host, container host path/name: never folded into ``path``
    pointer: str = ""


def _remote_host(remote: str, encoded: str) -> str:
    """The host of a remote authority; Remote-SSH and containers may hex-encode it, or a JSON object holding it.

    A hex JSON object gives its ``hostName``/``hostPath``/``containerName``; for
    containers hex text is a host path. Otherwise the authority is the host as
    written (an SSH host such as ``4142`` is not taken for hex).
    """
    try:
        text = bytes.fromhex(encoded).decode("utf-8") if len(encoded) >= 2 else ""
    except ValueError:
        return encoded
    try:
        value = decode_json(text) if text.startswith("{") else None
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in ("hostName", "hostPath", "containerName", "repositoryPath"):
            if _text(value.get(key)):
                return value[key]
        return text
    return text if text and remote in ("dev-container", "attached-container") else encoded


def uri_target(uri: str) -> tuple[str, str, str]:
    """(path, remote kind, host) of a workspace URI (``file:``, ``vscode-remote:``, others by scheme).

    Raises:
        ValueError: the text cannot be split as a URI.
    """
    parts = urlsplit(uri)
    path = unquote(parts.path)
    if parts.scheme == "file":
        if re.match(r"^/[A-Za-z]:", path):  # file:///c%3A/Users/x: a Windows drive
            path = path[1:]
        return path, "", unquote(parts.netloc)  # a UNC share keeps its server as the host
    if parts.scheme == "vscode-remote":
        remote, _, host = unquote(parts.netloc).partition("+")
        return path, remote, _remote_host(remote, host)
    return path, parts.scheme, unquote(parts.netloc)


def workspace_target(data: bytes) -> tuple[WorkspaceTarget | None, str]:
    """``workspace.json`` (``folder`` or ``workspace`` URI; ``meta.json``'s ``configuration``) to its target.

    Returns:
        (the target, "") or (None, the reason for a ``parser:`` row).
    """
    try:
        value = decode_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"workspace.json is not JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"workspace.json is a JSON {type(value).__name__}, not an object"
    for key, kind in (("folder", "folder"), ("workspace", "workspace"), ("configuration", "workspace")):
        uri = value.get(key)
        if isinstance(uri, dict):  # a serialised URI object
            uri = uri.get("external") if isinstance(uri.get("external"), str) else None
        if isinstance(uri, str) and uri:
            try:
                path, remote, host = uri_target(uri)
            except ValueError as exc:
                return None, f"workspace.json {key} is not a URI: {exc}"
            return WorkspaceTarget(kind, uri, path, remote, host, f"/{key}"), ""
    return None, "workspace.json names no folder or workspace"
