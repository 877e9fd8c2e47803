"""~/.aider.conf.yml: Aider's options as YAML, each key an option name without its ``--``.

Aider reads ``.aider.conf.yml`` from the home, the git root and the working
directory, the later overriding the earlier (aider/main.py:464-478,
configargparse); only the home's is collected (the others are in projects).
Every key is an option of aider/args.py. Rows, at the file's mtime:

* ``permission setting: <key>=<value> (from .aider.conf.yml)`` for the options
  that decide what Aider does without asking (PERMISSION_KEYS: ``yes-always``,
  the yolo flag, ``auto-commits``, ``suggest-shell-commands``, ...);
* ``model: <id> (the default model, from .aider.conf.yml)`` for ``model``;
* ``setting: <key>=<value> (from .aider.conf.yml)`` for any other key.

Keys that hold credentials never show their values: a key named as one
(``openai-api-key``, ``anthropic-api-key``: formats/idioms.py
``credential_key``), every ``api-key`` entry (``provider=key``) and every
``set-env`` entry (``NAME=value``, where keys are put) read
``[withheld: a credential, N characters]`` after the name. A value that is a
mapping is not shown (Aider's options take scalars and lists only).
"""

from __future__ import annotations

from collections.abc import Iterator

from aitrail.analyzer.formats.idioms import credential_key, file_mtime, pointer, setting_value
from aitrail.analyzer.formats.text import bad_file, excerpt
from aitrail.analyzer.formats.yaml_config import scalar_text, yaml_mapping
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

# Options that let Aider act without a question, or widen what it may touch (aider/args.py line of each).
PERMISSION_KEYS = frozenset({
    "yes-always",  # 760: always say yes (shell commands, which need an explicit yes, are then refused: io.py:866-867)
    "auto-commits",  # 440: commit every change the model makes
    "dirty-commits",  # 446: commit a dirty repo before editing
    "auto-accept-architect",  # 179: apply the architect's changes without asking
    "suggest-shell-commands",  # 807: offer the model's shell commands to run
    "auto-lint", "lint-cmd",  # 543, 534: run the linter after every change
    "auto-test", "test-cmd",  # 554, 549: run the tests after every change
    "detect-urls",  # 843: offer to fetch URLs found in prompts
    "git", "gitignore", "add-gitignore-files", "subtree-only", "aiderignore",  # 405-437: what is in scope
    "git-commit-verify",  # 492: run pre-commit hooks
    "skip-sanity-check-repo", "dry-run", "watch-files",  # 515, 509, 521
    "file", "read",  # 730, 736: files added to every chat (read: read-only)
})
# Options whose entries are ``NAME=value`` and hold keys (args.py:97-110): every value withheld.
ENTRY_CREDENTIALS = frozenset({"api-key", "set-env"})
NAME = ".aider.conf.yml"


def parse_config(ctx: ParseContext) -> Iterator[Draft]:
    """One row per option of ~/.aider.conf.yml, credentials withheld."""
    document, problem = yaml_mapping(ctx)
    if problem is not None:
        yield problem
        return
    if not document and ctx.config_data().strip():
        yield bad_file(f"{NAME} holds no option (an empty document, or comments only)")
        return
    moment = file_mtime(ctx)
    for key, value in document.items():
        name = excerpt(key if isinstance(key, str) else str(key), 200)
        locator = pointer(name, scheme="yaml")
        shown = _shown(name, value)
        if name == "model" and scalar_text(value) is not None:
            yield Draft("system", f"model: {scalar_text(value)} (the default model, from {NAME})", locator,
                        model=excerpt(scalar_text(value) or "", 400), project_path="~", **moment)
        elif name in PERMISSION_KEYS:
            yield Draft("system", f"permission setting: {name}={shown} (from {NAME})", locator, project_path="~",
                        **moment)
        else:
            yield Draft("system", f"setting: {name}={shown} (from {NAME})", locator, project_path="~", **moment)


def _withheld(text: str) -> str:
    return f"[withheld: a credential, {len(text)} characters]"


def _entry_withheld(entry: str) -> str:
    """``NAME=value`` with the value withheld (the name kept: it says which provider or variable was set)."""
    name, sep, value = entry.partition("=")
    return f"{name}={_withheld(value)}" if sep else _withheld(entry)


def _shown(key: str, value) -> str:
    """The value as the row shows it: JSON of a scalar or a list of scalars, a credential withheld."""
    items = value if isinstance(value, list) else None
    if items is not None and not all(scalar_text(item) is not None or item is None for item in items):
        return "(a list holding mappings or lists, not shown)"
    if isinstance(value, dict):
        return "(a mapping, not shown)"
    if key in ENTRY_CREDENTIALS:
        entries = [_entry_withheld(scalar_text(item) or "") for item in (items if items is not None else [value])]
        return setting_value(entries if items is not None else entries[0])
    if credential_key(key) and value not in (None, ""):
        if items is not None:
            return setting_value([_withheld(scalar_text(item) or "") for item in items])
        return _withheld(scalar_text(value) or "")
    return setting_value(value)
