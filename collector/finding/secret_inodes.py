"""Secrets by device and inode: a hard link inside an agent store to a secret is never opened.

Any process of the user (a prompt-injected agent included) can run
``ln ~/.ssh/id_ed25519 <store>/<session>.jsonl`` before a collection:
the link has an agent store's name and the key's bytes. The path vetoes cannot
see it; the inode can. Before any regular file is opened its lstat is checked
here:

* against the catalogued credential files a literal glob names (looked up
  once, eagerly: a handful of lstat calls);
* when the file has more than one name (``st_nlink > 1``: only a hard-linked
  file can be another file's second name), against every regular file with
  more than one name under the secret trees: each home's secrets that belong
  to no agent (vetoes.HOME_SECRETS), the catalog's credential globs of each
  location, and the system's secrets (``/etc/shadow`` ...) below the system or
  image root. These trees are listed once, the first time a hard-linked file
  is met, without following links and without opening any file in them; a
  run that meets none lists nothing.

The listing has a budget (MAX_ENTRIES). Past it, a hard-linked file whose
inode was not seen is still never opened: its other names could not all be
checked, and a collection that leaves one file out says so, while one that
took a secret could not be undone.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from aitrail.collector.catalog.globs import is_literal, split_segments
from aitrail.collector.finding.descriptors import DescriptorPool
from aitrail.collector.finding.plan import Location, Target
from aitrail.collector.finding.walk import Tree
from aitrail.collector.fs.backend import Backend

MAX_ENTRIES = 200_000  # directory entries listed under the secret trees, all roots together
# Below the system root (``/`` live, the image root under --root): files no agent writes and no
# user account can read, whose bytes must never reach a bundle through a link.
SYSTEM_SECRETS = (
    "etc/shadow", "etc/shadow-", "etc/gshadow", "etc/gshadow-", "etc/master.passwd", "etc/spwd.db",
    "etc/sudoers", "etc/sudoers.d", "etc/ssh", "etc/krb5.keytab", "etc/security/opasswd",
    "etc/NetworkManager/system-connections", "etc/wpa_supplicant", "var/lib/sss/secrets",
    "root/.ssh", "root/.gnupg", "root/.aws", "var/root/.ssh", "private/etc/master.passwd",
)


@dataclass(frozen=True)
class SecretRoot:
    """One tree to list: a location, the literal path below it, and which of its files are secrets."""

    location: Location
    parts: tuple[str, ...]
    # the location-relative paths of the tree that are secrets (a credential glob's); None: every file
    matches: Callable[[str], bool] | None = None


class SecretInodes:
    """The (device, inode) of every secret a file of a store may be a second name of; see the module docstring."""

    def __init__(self, credentials: dict[tuple[int, int], str], roots: Iterable[SecretRoot]):
        self.credentials = credentials
        self._roots = list(roots)
        self._linked: dict[tuple[int, int], str] | None = None  # listed at the first hard-linked file
        self.incomplete = False
        self.listed = 0

    def veto(self, dev: int, ino: int, nlink: int) -> str | None:
        """Why the file with this lstat is never opened, or None."""
        credential = self.credentials.get((dev, ino))
        if credential is not None:
            return f"the same file (device and inode) as the credential {credential}: never opened"
        if nlink <= 1:
            return None
        linked = self._secrets()
        secret = linked.get((dev, ino))
        if secret is not None:
            return f"a hard link to the secret {secret} (same device and inode): never opened"
        if self.incomplete:
            return (f"a hard link ({nlink} names) whose other names could not all be checked against the secrets "
                    f"(over {MAX_ENTRIES} entries listed): never opened")
        return None

    def _secrets(self) -> dict[tuple[int, int], str]:
        if self._linked is None:
            self._linked = {}
            for root in self._roots:
                if not self._list_root(root):
                    self.incomplete = True
                    break
        return self._linked

    def _list_root(self, root: SecretRoot) -> bool:
        """List one secret tree into ``_linked``; False once the budget is spent."""
        # a pool of its own: this listing can run in the middle of a capture, which holds a descriptor
        # of the shared pool (its file's parent) that these opens must not close
        tree = Tree(root.location, descriptors=DescriptorPool(8))
        try:
            try:
                parent = tree.dir_fd(root.parts[:-1])
                found = os.stat(root.parts[-1], dir_fd=parent, follow_symlinks=False)
            except OSError:
                return True  # no such tree here (or not readable: then it cannot be linked from by this user)
            path = "/".join(root.parts)
            self._note(found, root, path)
            if stat_module.S_ISDIR(found.st_mode):
                return self._list_directory(tree.backend, parent, root.parts[-1], root, path)
            return True
        finally:
            tree.close()

    def _list_directory(self, backend: Backend, parent: int, name: str, root: SecretRoot, path: str) -> bool:
        try:
            fd, _noatime = backend.open_dir(name, parent)  # never through a link; a cloud placeholder is refused
        except OSError:
            return True
        try:
            with backend.scandir(fd) as listing:
                for entry in listing:
                    self.listed += 1
                    if self.listed > MAX_ENTRIES:
                        return False
                    try:
                        found = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    child = f"{path}/{entry.name}"
                    self._note(found, root, child)
                    if (stat_module.S_ISDIR(found.st_mode)
                            and not self._list_directory(backend, fd, entry.name, root, child)):
                        return False
        except OSError:
            return True
        finally:
            os.close(fd)
        return True

    def _note(self, found: os.stat_result, root: SecretRoot, path: str) -> None:
        if stat_module.S_ISREG(found.st_mode) and found.st_nlink > 1 and (root.matches is None or root.matches(path)):
            assert self._linked is not None
            self._linked.setdefault((found.st_dev, found.st_ino), f"{root.location.label}:{path}")


def secret_roots(home_secrets: Iterable[str], never_targets: dict[str, list[Target]],
                 never_matchers: dict[str, Callable[[str], bool]], system_base: str | None,
                 home_secret: Callable[[str], bool] | None = None) -> list[SecretRoot]:
    """The trees whose hard-linked files are secrets: each home's, each credential glob's, the system's.

    ``never_targets`` are the credential globs by location label (every home
    of the run has some, so their locations are the homes'); a credential
    glob's tree holds agent files too, so only the paths ``never_matchers``
    accepts are its secrets. A glob without a literal head (``**/x``) names
    no tree to list: its files are caught by name, not by inode. ``home_secret``
    narrows a home secret's tree to its secret paths (an agent's own tree inside
    ``~/.aws`` is not a secret); None: every file of the tree is one.
    """
    roots: dict[tuple[str, str, tuple[str, ...]], SecretRoot] = {}

    def add(location: Location, glob_segments: tuple[str, ...], matches) -> None:
        literal = _literal_head(glob_segments)
        if literal:
            whole = matches is None or len(literal) == len(glob_segments)
            roots.setdefault((location.label, location.base, literal),
                             SecretRoot(location, literal, None if whole else matches))

    homes: dict[str, Location] = {}
    for label, targets in sorted(never_targets.items()):
        for target in targets:
            add(target.location, target.segments, never_matchers.get(label))
            if target.location.kind == "home":
                homes.setdefault(target.location.label, target.location)
    for location in homes.values():
        for glob in home_secrets:
            add(location, split_segments(glob), home_secret)
    if system_base is not None:
        system = Location(label="system", base=system_base, kind="system", anchor=None)
        for path in SYSTEM_SECRETS:
            add(system, tuple(path.split("/")), None)
    return list(roots.values())


def _literal_head(segments: tuple[str, ...]) -> tuple[str, ...]:
    """The segments before the first wildcard (a glob of a file: the file; of a tree: its literal directory)."""
    head = []
    for segment in segments:
        if not is_literal(segment):
            break
        head.append(segment)
    return tuple(head)
