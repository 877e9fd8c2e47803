"""Agent parser packages, listed by hand so the whole set is visible in one place.

Each agent is one package, ``analyzer/parsers/<agent_module>/``, whose
``__init__.py`` holds the module docstring (file families, a sample record,
``References:``) and a ``PARSERS`` tuple of (parser id, function); the
helper modules beside it are that agent's own. The package name is the agent
id with ``-`` replaced by ``_``, unless the package sets ``AGENT`` (the
parser-id prefix, for an agent id that is no Python name, e.g.
``parsers/continue_/`` with ``AGENT = "continue"``). See analyzer/engine/registry.py
and docs/adr/0004-agent-packages.md.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# every agent package, in registry order; imported only when a bundle holds its parsers' files
PACKAGES = ("pearai", "claude_code", "codex", "gemini_cli", "pi", "vscode_copilot_chat", "continue_", "cline",
            "cursor_ide", "cursor_cli", "opencode", "roo_code", "grok",
            # issue 32: terminal agents
            "copilot_cli", "amp", "aider", "goose", "qwen_code", "openclaw", "crush", "openhands", "kimi_cli",
            "factory_droid", "hermes", "kilo_cli", "codebuff", "mistral_vibe", "auggie", "qoder_cli",
            # issue 33: desktop apps and IDE agents
            "claude_desktop", "chatgpt_desktop", "windsurf", "antigravity", "kiro", "kilo_code", "zed", "jetbrains_ai",
            "amazon_q", "void", "trae", "augment", "warp")
# parser-id prefix of a package whose name is not its agent id (registry.id_prefix)
_PREFIX_OF = {"continue_": "continue"}


def prefix_of(package: str) -> str:
    """The parser-id prefix of a package in PACKAGES, known without importing it."""
    return _PREFIX_OF.get(package, package)


def modules(prefixes: set[str] | frozenset[str] | None = None) -> tuple[ModuleType, ...]:
    """The agent packages (all, or those whose parser-id prefix is in ``prefixes``), imported.

    A run imports only the packages its bundle needs: importing all thirteen
    costs more than parsing a small bundle.
    """
    names = [name for name in PACKAGES if prefixes is None or prefix_of(name) in prefixes]
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in names)


def __getattr__(name: str) -> tuple[ModuleType, ...]:
    if name == "MODULES":  # every package (the conformance and docs tests walk them all)
        return modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
