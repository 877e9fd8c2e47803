"""aitrail analyzer: runs offline on a workstation and reads only the bundle.

Turns a verified bundle into one normalized timeline in which every row cites
the bundle member, its SHA-256 and the line, offset or row it came from.

Where the build could compile them (ADR 0006), the modules of the per-row
path run as mypyc extensions; ``AITRAIL_PURE_PYTHON=1`` in the environment
runs the same modules from their .py files instead (the reference the
compiled ones are tested against: tests/analyzer/test_compiled.py).
"""

import importlib.machinery
import os
import sys

__version__ = "0.1.0"


class _SourceOnly:
    """A meta path finder that loads this package's modules from their .py files, never an extension module."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        """The source-file spec of a module of this package; None (the usual finders decide) for any other."""
        if not name.startswith(__name__ + ".") or not path:
            return None
        details = (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
        for entry in path:
            spec = importlib.machinery.FileFinder(entry, details).find_spec(name)
            if spec is not None:
                return spec
        return None


if os.environ.get("AITRAIL_PURE_PYTHON") == "1" and not any(isinstance(f, _SourceOnly) for f in sys.meta_path):
    sys.meta_path.insert(0, _SourceOnly())
