"""The run's open directory descriptors, shared by every tree and bounded in number.

A run walks one tree per home and root, and reads from the same trees again
when it classifies, finds SQLite companions, completes metadata and captures.
Each tree keeps its directories open so that a walk below them costs one
``openat`` per new directory; kept per tree, the open descriptors grew with the
homes (about ten per home: 1,630 homes passed a limit of 20,000, and a Linux
default of 1,024 would stop a run at about a hundred homes). Kept here, the
least recently used of all trees' descriptors is closed first, and a tree
reopens a directory it needs again from its base, never through a link.
"""

from __future__ import annotations

import os
from collections import OrderedDict

DEFAULT_LIMIT = 128  # per run: far below any descriptor limit, above the depth of any walked path


class DescriptorPool:
    """Directory descriptors keyed by (tree, path), least recently used closed first past ``limit``.

    Not thread-safe: the trees of a run are used on one thread (the capture's
    writer threads take bytes, never descriptors).
    """

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = max(limit, 4)  # a walk holds a parent while it opens a child
        self._open: OrderedDict[tuple[int, tuple[str, ...]], int] = OrderedDict()
        self._by_tree: dict[int, set[tuple[str, ...]]] = {}

    def __len__(self) -> int:
        return len(self._open)

    def get(self, tree: int, parts: tuple[str, ...]) -> int | None:
        """The open descriptor of ``parts`` in ``tree`` (now the most recently used), or None."""
        fd = self._open.get((tree, parts))
        if fd is not None:
            self._open.move_to_end((tree, parts))
        return fd

    def holds(self, tree: int, parts: tuple[str, ...]) -> bool:
        """Whether ``parts`` of ``tree`` is open (without marking it used)."""
        return (tree, parts) in self._open

    def put(self, tree: int, parts: tuple[str, ...], fd: int) -> None:
        """Keep ``fd`` for ``parts`` of ``tree``; close the least recently used past the limit."""
        self._open[(tree, parts)] = fd
        self._by_tree.setdefault(tree, set()).add(parts)
        while len(self._open) > self.limit:
            (old_tree, old_parts), old = self._open.popitem(last=False)
            self._forget(old_tree, old_parts)
            os.close(old)

    def close_tree(self, tree: int) -> None:
        """Close every descriptor of ``tree``."""
        for parts in self._by_tree.pop(tree, set()):
            os.close(self._open.pop((tree, parts)))

    def _forget(self, tree: int, parts: tuple[str, ...]) -> None:
        held = self._by_tree.get(tree)
        if held is not None:
            held.discard(parts)
            if not held:
                del self._by_tree[tree]


SHARED = DescriptorPool()
