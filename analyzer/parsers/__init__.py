"""Agent parser modules, listed by hand so the whole set is visible in one place.

Each module is named after its agent id (``-`` becomes ``_``) and ends with
a ``PARSERS`` tuple of (parser id, function); see analyzer/registry.py.
"""

from aitrail.analyzer.parsers import pearai

MODULES = (pearai,)
