"""aitrail collector: runs on the subject machine.

Reads the catalog, walks only what it names, and writes a sealed evidence
bundle. Depends on the standard library, pyyaml, pathspec, zstandard,
cryptography and click only, and never imports ``aitrail.analyzer``.
"""

__version__ = "0.1.0"
