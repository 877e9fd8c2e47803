"""The bundle file's SHA-256, hashed on a thread of its own from the moment its path is known.

Every timeline row ends with its bundle's digest, so no row is rendered (and
no worker forked) before it is known. Reading and hashing release the GIL:
``aitrail analyze`` starts the digest as soon as its arguments are checked,
before the analyzer's modules are imported, so the file is hashed on the
idle core while those imports and the bundle's opening run on the other. On
the Claude Code bench bundle (17 MB) the opening had waited 7-9 ms for a
digest started after the imports (docs/performance.md, seventh round of
issue 13).
"""

from __future__ import annotations

import threading

from aitrail.collector.verify import sha256_of_file


class FileDigest:
    """A file's SHA-256, computed in a daemon thread while the caller goes on."""

    def __init__(self, path: str):
        self.path, self.digest = path, ""
        self.error: OSError | None = None
        self.thread = threading.Thread(target=self._run, name="aitrail-bundle-digest", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.digest = sha256_of_file(self.path)
        except OSError as exc:
            self.error = exc

    def result(self) -> str:
        """The digest, once computed; the OSError that stopped the reading is raised here."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.digest
