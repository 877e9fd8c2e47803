"""Writing member bytes to disk with holes where they are zeros: a sparse file stays sparse.

A subject can leave a 4 GiB SQLite file that is all holes (no disk on the
subject, a 190 KB bundle). Written back byte for byte, it fills the
examiner's disk: the analyzer's working copy of a database and ``extract``
both write through ``write_sparse``, which seeks over every all-zero block
instead of writing it, so the copy takes the disk the data takes. The file's
length and every byte read back are the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

HOLE_BLOCK = 64 * 1024  # a block of this many zero bytes is skipped, not written
_ZEROS = bytes(HOLE_BLOCK)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` until every byte is written (it may write fewer than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_sparse(fd: int, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` at ``fd``'s offset (a new, empty file), all-zero blocks as holes; the bytes given."""
    total = 0
    for chunk in chunks:
        view = memoryview(chunk)
        for start in range(0, len(view), HOLE_BLOCK):
            block = view[start:start + HOLE_BLOCK]
            zeros = _ZEROS if len(block) == HOLE_BLOCK else _ZEROS[:len(block)]
            if block == zeros:
                os.lseek(fd, len(block), os.SEEK_CUR)
            else:
                write_all(fd, block)
        total += len(view)
    os.ftruncate(fd, total)  # a hole at the end still gives the file its length
    return total
