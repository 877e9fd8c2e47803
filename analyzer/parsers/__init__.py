"""Agent parser packages, listed by hand so the whole set is visible in one place.

Each agent is one package, ``analyzer/parsers/<agent_module>/``, whose
``__init__.py`` holds the module docstring (file families, a sample record,
``References:``) and a ``PARSERS`` tuple of (parser id, function); the
helper modules beside it are that agent's own. The package name is the agent
id with ``-`` replaced by ``_``, unless the package sets ``AGENT`` (the
parser-id prefix, for an agent id that is no Python name, e.g.
``parsers/continue_/`` with ``AGENT = "continue"``). See analyzer/registry.py
and docs/adr/0004-agent-packages.md.
"""

from aitrail.analyzer.parsers import (
    claude_code,
    cline,
    codex,
    continue_,
    cursor_cli,
    cursor_ide,
    gemini_cli,
    grok,
    opencode,
    pearai,
    pi,
    roo_code,
    vscode_copilot_chat,
)

MODULES = (pearai, claude_code, codex, gemini_cli, pi, vscode_copilot_chat, continue_, cline,
           cursor_ide, cursor_cli, opencode, roo_code, grok)
