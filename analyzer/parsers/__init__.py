"""Agent parser modules, listed by hand so the whole set is visible in one place.

Each module is named after its agent id (``-`` becomes ``_``) and ends with
a ``PARSERS`` tuple of (parser id, function); see analyzer/registry.py.
"""

from aitrail.analyzer.parsers import claude_code, codex, gemini_cli, pearai

MODULES = (pearai, claude_code, codex, gemini_cli)
