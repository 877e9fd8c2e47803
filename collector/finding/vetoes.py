"""What is never collected, whatever a store's glob matched or a link led to.

Three vetoes, checked on every match before anything is opened (and the last
again on the open descriptor, in capture.py):

* **credential globs** of every agent in the catalog (``collect: never``),
  also under ``--agent``; matched on the match's real location-relative path,
  case-insensitively, and with any suffix after the file name
  (``.credentials.json.bak``, ``AUTH.json~``): near-copies of a credential are
  credentials;
* **home secrets** that belong to no agent (SSH and GPG keys, cloud and
  container credentials, password stores, keyrings): a relocated root or a
  link can never make them agent data;
* **the secret files themselves**, by device and inode (secret_inodes.py): a
  hard link to ``auth.json`` or ``~/.ssh/id_ed25519`` under ``projects/`` has
  another name and the same secret.
"""

from __future__ import annotations

import re

from aitrail.collector.catalog.globs import is_literal, path_regex, split_segments
from aitrail.collector.finding.plan import Target
from aitrail.collector.finding.secret_inodes import SecretInodes, secret_roots
from aitrail.collector.finding.walk import Match, Tree
from aitrail.collector.fs.meta import Meta

# Location-relative globs below every home (docs/catalog.md, "Never collected").
HOME_SECRETS = (
    ".ssh/**", ".gnupg/**", ".aws/**", ".azure/**", ".kube/**", ".docker/config.json", ".password-store/**",
    ".netrc", ".pgpass", ".git-credentials", ".config/gcloud/**", ".config/gh/hosts.yml",
    ".local/share/keyrings/**", ".mozilla/**", ".config/google-chrome/**", ".config/chromium/**",
    "Library/Keychains/**", "Library/Cookies/**",
)
# An agent's own tree inside a home secret's tree, fixed here and never taken from a catalog root (an
# environment variable can move a root): the AWS command-line agent's agents, prompts and MCP file in
# ~/.aws/amazonq. Only these paths are taken out of the veto; every other file under ~/.aws (credentials,
# config, sso/ and cli/ caches) stays never collected, and a hard link in this tree to a secret is still
# refused by inode.
HOME_SECRET_EXCEPTIONS = (".aws/amazonq/**",)


class Vetoes:
    """The vetoes of one run, by location label."""

    def __init__(self, never_targets: dict[str, list[Target]], home_labels: set[str],
                 credential_inodes: dict[tuple[int, int], str], system_base: str | None = None):
        self._patterns = {label: _compile_never(targets) for label, targets in never_targets.items()}
        self._home_labels = home_labels
        self._home_secrets = _compile_globs([split_segments(glob) for glob in HOME_SECRETS])
        self._home_exceptions = _compile_globs([split_segments(glob) for glob in HOME_SECRET_EXCEPTIONS])
        matchers = {label: pattern.match for label, pattern in self._patterns.items() if pattern is not None}
        self.inodes = SecretInodes(credential_inodes, secret_roots(HOME_SECRETS, never_targets, matchers, system_base,
                                                                   home_secret=self.is_home_secret))

    def reason(self, match: Match) -> str | None:
        """Why this match is never collected, or None."""
        label = match.target.location.label
        path = match.relpath
        pattern = self._patterns.get(label)
        if match.target.never or (pattern is not None and pattern.match(path)):
            return "credential store: catalogued, never opened"
        if label in self._home_labels and self.is_home_secret(path):
            return "a secret of the home that belongs to no agent (docs/catalog.md): never opened"
        return inode_veto(self.inodes, match.meta)

    def is_home_secret(self, path: str) -> bool:
        """True when a home-relative path is one of the home's own secrets (HOME_SECRETS, less the exceptions)."""
        return self._home_secrets.match(path) is not None and self._home_exceptions.match(path) is None


def inode_veto(inodes: SecretInodes, meta: Meta | None) -> str | None:
    """Why a file with a secret's device and inode (or a hard link not cleared) is never opened, or None."""
    if meta is None or meta.kind != "file":
        return None
    return inodes.veto(meta.dev, meta.ino, meta.nlink)


def credential_inodes(trees: dict[str, Tree], never_targets: dict[str, list[Target]]) -> dict[tuple[int, int], str]:
    """(device, inode) of every credential file a literal catalog glob names (lstat only, never opened)."""
    found: dict[tuple[int, int], str] = {}
    for label, targets in sorted(never_targets.items()):
        tree = trees.get(label)
        if tree is None:
            continue
        for target in targets:
            if not all(is_literal(segment) for segment in target.segments):
                continue
            try:
                meta = tree.lstat(target.segments)
            except OSError:
                continue
            if meta.kind == "file":
                found.setdefault((meta.dev, meta.ino), f"{label}:{'/'.join(target.segments)}")
    return found


def _compile_never(targets: list[Target]) -> NeverGlobs | None:
    variants = set()
    for target in targets:
        segments = target.segments
        variants.add(segments)
        if segments and not segments[-1].endswith("*"):
            variants.add(segments[:-1] + (segments[-1] + "*",))  # a near-copy: name.bak, name~, name.1
    return NeverGlobs(sorted(variants)) if variants else None


class NeverGlobs:
    """A location's credential globs, matched case-insensitively, each path against its own group only.

    One regex of every agent's globs (over 200 alternatives below a home) cost
    8 ms to compile and 1.7 us a path to run. The globs are grouped by their
    first segment when it is a plain ASCII name: a path whose first segment
    is ASCII can only match the globs of that name (ASCII case folding is the
    regex's own there) and those whose first segment is a wildcard or not
    ASCII; any other path is matched against all of them. Each group's regex
    is compiled when a path first needs it.
    """

    def __init__(self, variants: list[tuple[str, ...]]):
        self._variants = variants
        self._by_first: dict[str, list[tuple[str, ...]]] = {}
        self._anywhere: list[tuple[str, ...]] = []
        for segments in variants:
            first = segments[0]
            if first.isascii() and is_literal(first) and first != "**":
                self._by_first.setdefault(first.lower(), []).append(segments)
            else:
                self._anywhere.append(segments)
        self._compiled: dict[str | None, re.Pattern[str] | None] = {}

    def match(self, path: str) -> bool:
        """True when a glob matches the whole location-relative path (case-insensitively)."""
        first = path.split("/", 1)[0]
        group = first.lower() if first.isascii() else None
        regex = self._compiled.get(group, _UNSET)
        if regex is _UNSET:
            members = self._variants if group is None else self._by_first.get(group, []) + self._anywhere
            regex = self._compiled[group] = _compile_globs(members) if members else None
        return regex is not None and regex.match(path) is not None


_UNSET = object()


def _compile_globs(patterns: list[tuple[str, ...]]) -> re.Pattern[str]:
    body = "|".join(path_regex(segments) for segments in patterns)
    return re.compile(f"(?:{body})\\Z", re.DOTALL | re.IGNORECASE)
