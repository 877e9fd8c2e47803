"""Which project a Gemini CLI ``tmp/<id>/`` or ``history/<id>/`` folder belongs to.

Two generations of folder name:

* legacy (until 2026-02-06): ``<id>`` is the SHA-256 hex of the project root
  path string (``getProjectHash``); nothing in the folder names the path;
* current: ``<id>`` is a slug; ``~/.gemini/projects.json`` holds
  ``{"projects": {"<absolute path>": "<slug>"}}`` and each slug folder holds a
  ``.project_root`` file with the owning path (written once, ``wx``).

The join, per location and ``.gemini`` directory: a slug folder maps through
its ``.project_root`` (the owner marker upstream verifies), else through
``projects.json``; a hash folder (and a chat's ``projectHash``) maps only to a
known path whose SHA-256 equals it. Known paths are the ``projects.json``
keys, the ``.project_root`` contents, the ``trustedFolders.json`` keys and the
absolute paths in ``settings.json``, each with its parent directories. A
folder no known path hashes to keeps an empty project_path: never a guess.

The map is kept for the worker's whole run, so it has a budget
(MAX_MAP_BYTES, estimated: each path or parent held costs its characters and
ENTRY_COST). Past it the later paths are counted, not held, and the parser
of the file whose paths passed it says so (``map_limit_rows``). Each path
walks up at most MAX_PARENT_LEVELS parents, hashing them in one pass: a
path's parents were each hashed (and held) whole, quadratic in its length.

This module also has the two project-map parsers (one ``project:`` row per
mapping) and the JSON-with-comments reader settings files need.

    projects.json  {"projects": {"/home/dev/src/acme-api": "acme-api"}}
    tmp/acme-api/.project_root  /home/dev/src/acme-api

References: google-gemini/gemini-cli@5411f113ca packages/core/src/config/projectRegistry.ts:16-26,
95-101,163-236,304-421; packages/core/src/config/storage.ts:214-273; packages/core/src/utils/paths.ts:318-320
(research/formats-cli-agents.md 3.2, 3.6).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.idioms import escape_key, file_mtime
from aitrail.analyzer.formats.jsonc import load_jsonc as shared_load_jsonc
from aitrail.analyzer.formats.text import bad_file, bad_record
from aitrail.analyzer.view.bundle import MemberUnreadable, Source
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.decode import decode_json
from aitrail.analyzer.view.rows import Draft, over_limit

_GEMINI_FOLDER = re.compile(r"(?:^|/)\.gemini/(tmp|history)/([^/]+)/")
_ANY_FOLDER = re.compile(r"(?:^|/)(tmp|history)/([^/]+)/")
_ABSOLUTE = re.compile(r"^(/|[A-Za-z]:[\\/])")
# Estimated bytes of one .gemini directory's map: a real one (hundreds of projects, their parents) is
# well under 1 MB; kept per worker for the run.
MAX_MAP_BYTES = 32 * 1024 * 1024
ENTRY_COST = 256  # the objects of one entry besides its characters (key, value, slot)
MAX_PARENT_LEVELS = 256  # parent directories of one path that may be roots; real paths are a few dozen deep


@dataclass(frozen=True)
class Folder:
    """A per-project folder under a .gemini directory (``tmp/<slug>`` or ``history/<slug>``)."""

    root: str  # the .gemini directory, path below the location, with a trailing "/" ("" at the top)
    kind: str  # tmp | history
    name: str  # slug or legacy hash


def folder_of(path: str) -> Folder | None:
    """The project folder a member path lies in, or None for files outside tmp/ and history/."""
    match = _GEMINI_FOLDER.search(path) or _ANY_FOLDER.search(path)
    if match is None:
        return None
    return Folder(path[:match.start(1)], match.group(1), match.group(2))


def root_of(source: Source) -> str:
    """The .gemini directory of a top-level file (projects.json, settings.json), with a trailing "/"."""
    return f"{source.directory}/" if source.directory else ""


# -- JSON with comments ----------------------------------------------------------------------------


def load_jsonc(data: bytes):
    """Settings and trust files allow // and /* */ comments, not trailing commas; ValueError if not JSON.

    Gemini CLI strips comments (strip-json-comments) and then calls JSON.parse, so
    a trailing comma fails there as it does here.
    """
    return shared_load_jsonc(data, trailing_commas=False)


# -- the join table --------------------------------------------------------------------------------


@dataclass
class ProjectMap:
    """Project paths by folder slug and by legacy SHA-256 hash, for one .gemini directory, within a budget."""

    by_folder: dict[str, str] = field(default_factory=dict)  # slug -> path
    by_hash: dict[str, str] = field(default_factory=dict)  # sha256 hex -> path
    limit: int = field(default_factory=lambda: MAX_MAP_BYTES)  # read when the map is made
    spent: int = 0  # estimated bytes held
    reading: str = ""  # the member whose paths are being added
    over_member: str = ""  # the member whose paths passed the budget ('' while within it)
    skipped: int = 0  # paths and folder names counted, not held, from then on

    def _fits(self, cost: int) -> bool:
        """Whether ``cost`` more may be held; the first refusal records the member being read."""
        if not self.over_member and self.spent + cost <= self.limit:
            self.spent += cost
            return True
        self.over_member = self.over_member or self.reading or "?"
        self.skipped += 1
        return False

    def add_folder(self, slug: str, path: str) -> None:
        """Map a folder slug to its path, unless it is mapped already (the first mapping wins)."""
        if slug not in self.by_folder and self._fits(len(slug) + len(path) + ENTRY_COST):
            self.by_folder[slug] = path

    def add_candidate(self, path: str) -> None:
        """A known path and its parents: any of them may be the root a hash folder was named after.

        A match is a SHA-256 equality, so a wrong candidate can never map a folder.
        The walk up stops at a parent already held (its own parents are too).
        """
        ends = parent_ends(path)
        for end, digest in zip(ends, prefix_hashes(path, ends), strict=True):
            if digest in self.by_hash:
                break
            if not self._fits(end + ENTRY_COST):
                return
            self.by_hash[digest] = path[:end]


def parent_ends(path: str) -> list[int]:
    r"""Where ``path`` and each of its parents end, longest first (at most MAX_PARENT_LEVELS parents).

    A parent is the text before the last ``/`` or ``\``; the walk ends at a
    path without one, at the empty path, and before a drive (``C:``).
    """
    ends: list[int] = []
    end = len(path)
    # the last of each separator before ``end``; each search goes on from where it stopped: one pass in all
    slash, backslash = path.rfind("/"), path.rfind("\\")
    while end and len(ends) <= MAX_PARENT_LEVELS:
        ends.append(end)
        cut = max(slash, backslash)
        if cut < 0 or (cut > 0 and path[cut - 1] == ":"):
            break
        end = cut
        if slash == cut:
            slash = path.rfind("/", 0, end)
        else:
            backslash = path.rfind("\\", 0, end)
    return ends


def prefix_hashes(path: str, ends: list[int]) -> list[str]:
    """The SHA-256 hex of ``path[:end]`` for each of ``ends`` (longest first), in one pass over the path."""
    found: dict[int, str] = {}
    digest, start = hashlib.sha256(), 0
    for end in sorted(set(ends)):
        digest.update(path[start:end].encode("utf-8", "surrogatepass"))
        found[end], start = digest.copy().hexdigest(), end
    return [found[end] for end in ends]


def _read(ctx: ParseContext, source: Source) -> bytes | None:
    try:
        return ctx.read(source)
    except (MemberUnreadable, OSError):
        return None  # a join source that cannot be read only leaves folders unmapped


def _same_root(source: Source, location: str, root: str, top_level: bool) -> bool:
    if source.location != location:
        return False
    if top_level:
        return root_of(source) == root
    folder = folder_of(source.path)
    return folder is not None and folder.root == root


def _absolute_strings(value) -> Iterator[str]:
    if isinstance(value, str) and _ABSOLUTE.match(value):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _absolute_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _absolute_strings(item)


def build_map(ctx: ParseContext, location: str, root: str) -> ProjectMap:
    """The project map of one .gemini directory, from its registry and ``.project_root`` files."""
    table = ProjectMap()
    for source in ctx.related("project_roots"):
        if _same_root(source, location, root, top_level=False):
            table.reading = source.member
            data = _read(ctx, source)
            path = data.decode("utf-8", "replace").strip() if data else ""
            if path:
                table.add_folder(folder_of(source.path).name, path)
                table.add_candidate(path)
    for store, keys_only in (("projects_registry", True), ("trusted_folders", True), ("user_settings", False)):
        for source in ctx.related(store):
            if not _same_root(source, location, root, top_level=True):
                continue
            table.reading = source.member
            try:
                document = load_jsonc(_read(ctx, source) or b"")
            except (ValueError, UnicodeDecodeError):
                continue
            if store == "projects_registry":
                projects = document.get("projects") if isinstance(document, dict) else None
                for path, slug in (projects.items() if isinstance(projects, dict) else ()):
                    if isinstance(slug, str):
                        table.add_folder(slug, path)  # after .project_root: the marker wins
                    table.add_candidate(path)
            elif keys_only and isinstance(document, dict):
                for path in document:
                    table.add_candidate(path)
            else:
                for path in _absolute_strings(document):
                    table.add_candidate(path)
    return table


def project_map(ctx: ParseContext, root: str) -> ProjectMap:
    """The project map of the .gemini directory of ``root``, built once per worker."""
    location = ctx.source.location
    return ctx.cached(("gemini-cli-projects", location, root), lambda: build_map(ctx, location, root))


def map_limit_rows(ctx: ParseContext, root: str) -> Iterator[Draft]:
    """The ``parser:`` row of a project map over its budget, from the parser of the file whose paths passed it."""
    table = project_map(ctx, root)
    if table.over_member and table.over_member == ctx.source.member:
        yield over_limit("project map", f"about {table.limit} bytes of paths and parent directories for this .gemini "
                         "directory", f"{table.skipped} paths and folder names from this file on were counted, not "
                         "held: a folder only they would name keeps an empty project_path", "file")


def project_path(ctx: ParseContext, project_hash=None) -> str:
    """The project of the current source's folder; a record's projectHash as a last resort."""
    folder = folder_of(ctx.source.path)
    if folder is None:
        return ""
    table = project_map(ctx, folder.root)
    found = table.by_folder.get(folder.name) or table.by_hash.get(folder.name)
    if not found and isinstance(project_hash, str):
        found = table.by_hash.get(project_hash, "")
    return found or ""


# -- the project-map stores as rows ------------------------------------------------------------------


def parse_projects_registry(ctx: ParseContext) -> Iterator[Draft]:
    """``project: <path> -> tmp/<slug> (from projects.json, file mtime)`` per entry."""
    yield from map_limit_rows(ctx, root_of(ctx.source))
    try:
        document = decode_json(ctx.data)
    except (ValueError, UnicodeDecodeError) as exc:
        yield bad_file(f"projects.json is not JSON: {exc}")
        return
    projects = document.get("projects") if isinstance(document, dict) else None
    if not isinstance(projects, dict):
        yield bad_file("projects.json has no \"projects\" object")
        return
    for path, slug in projects.items():
        locator = f"json:/projects/{escape_key(path)}"
        if not isinstance(slug, str):
            yield bad_record(locator, "project slug is not a string", json.dumps(slug))
            continue
        yield Draft("system", f"project: {path} -> tmp/{slug} (from projects.json, file mtime)", locator,
                    project_path=path, **file_mtime(ctx))


def parse_project_root(ctx: ParseContext) -> Iterator[Draft]:
    """``project: <path> owns <kind>/<slug> (from .project_root, file mtime)``: written once, when claimed."""
    text = ctx.data.decode("utf-8", "replace").strip()
    folder = folder_of(ctx.source.path)
    if folder is not None:
        yield from map_limit_rows(ctx, folder.root)
    if not text or "\n" in text:
        yield bad_file(".project_root does not hold one path")
        return
    where = f"{folder.kind}/{folder.name}" if folder else ctx.source.directory
    yield Draft("system", f"project: {text} owns {where} (from .project_root, file mtime)", "file",
                project_path=text, **file_mtime(ctx))
