"""Expand catalog globs into matches, one location at a time, without recursion.

A glob is expanded segment by segment from its literal prefix (walk.py's Tree
does the reading): a literal segment is one ``lstat``, a wildcard segment one
listing, ``**`` descends only below the literal prefix. The work is an
explicit stack, so no depth of directory tree can exhaust Python's stack.

Links. A link met on the way to a store's files is recorded as a link (it is
stored as one, never read through). It is followed only when its real target
lies inside a catalogued store of the same agent; the walk there then uses
that store's own globs, exclusions and (in collect.py) credential vetoes on
the target's real path, never the glob that led to the link: ``teams -> ..``
cannot turn ``teams/**`` into the whole home. Links on a root's own path were
resolved by the planner (plan.py) and are recorded here.
"""

from __future__ import annotations

import errno as errno_module
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

from aitrail.collector.catalog.globs import is_literal, segment_regex
from aitrail.collector.finding.plan import Target
from aitrail.collector.finding.walk import Match, Tree
from aitrail.collector.fs.meta import Meta

# Listing kinds (Tree.listdir) that _visit drops at once: those that cannot be a
# directory on the way to a match (_visit_directory), and a directory where the
# matched file must be.
_NEVER_ON_THE_WAY = frozenset({"file", "other"})
_NEVER_THE_FILE = frozenset({"dir"})


@dataclass(frozen=True)
class _Task:
    """Expand ``segments`` of ``target`` at the directory ``here``."""

    target: Target
    spec: _ExcludeSpec
    here: tuple[str, ...]
    segments: tuple[str, ...]
    via: str = ""  # note for every match found: which link led here

    def at(self, here: tuple[str, ...], segments: tuple[str, ...]) -> _Task:
        return _Task(self.target, self.spec, here, segments, self.via)


class Expander:
    """Expands the targets of one location into matches."""

    MAX_LINKS_FOLLOWED = 64  # per expanded glob: a bound on link farms; loops end by `_followed`

    def __init__(self, tree: Tree, location_targets: list[Target] | tuple[Target, ...] = ()):
        self.tree = tree
        self._targets = tuple(location_targets)
        self._followed: set[tuple] = set()
        self._on_the_way: dict[tuple[str, ...], Meta | OSError] = {}

    def expand(self, target: Target) -> list[Match]:
        """Every match of one target's glob in this location."""
        if not target.via and self._absent_on_the_way(target.segments):
            return []
        matches: list[Match] = []
        self._followed = set()
        self._record_root_links(target, matches)
        via = f"reached through symlink {', '.join('/'.join(parts) for parts in target.via)}" if target.via else ""
        stack = [_Task(target, _spec_of(target), (), target.segments, via)]
        while stack:
            self._step(stack.pop(), stack, matches)
        return matches

    # -- the root's own links ------------------------------------------------------

    def _record_root_links(self, target: Target, out: list[Match]) -> None:
        root = "/".join(target.segments[: target.root_depth]) or "."
        for parts in target.via:
            try:
                meta = self.tree.lstat(parts)
            except OSError:
                continue
            out.append(Match(target, parts, "symlink", meta=meta,
                             note=f"symlink on the way to a store: walked under its own path {root}"))

    # -- one step --------------------------------------------------------------------

    def _step(self, task: _Task, stack: list[_Task], out: list[Match]) -> None:
        segment, rest = task.segments[0], task.segments[1:]
        if segment == "**":
            self._step_globstar(task, rest, stack, out)
        elif is_literal(segment):
            self._visit(task, task.here + (segment,), None, rest, stack, out)
        else:
            pattern = segment_regex(segment)
            # Kinds _visit would drop without looking (a file where a directory must be, a
            # directory where the file must be), skipped before the name is matched at all.
            ignored = _NEVER_ON_THE_WAY if rest else _NEVER_THE_FILE
            for name, kind in self._children(task, out):
                if kind not in ignored and pattern.match(name):
                    self._visit(task, task.here + (name,), kind, rest, stack, out)

    def _step_globstar(self, task: _Task, rest: tuple[str, ...], stack: list[_Task], out: list[Match]) -> None:
        if not rest:  # a trailing ** is every file below here
            for name, kind in self._children(task, out):
                below = ("**",) if kind in ("dir", "unknown") else ()
                self._visit(task, task.here + (name,), kind, below, stack, out)
            return
        deeper: list[_Task] = []
        for name, kind in self._children(task, out):
            child = task.here + (name,)
            if kind in ("dir", "unknown"):
                if self._pruned(task, child, out) or (kind == "unknown" and not self._is_dir(child)):
                    continue
                deeper.append(task.at(child, task.segments))
            elif kind == "symlink":
                real = self.tree.real_parts(child)
                if real is None or self._is_dir(real):  # a directory link (or one leaving): the link rule
                    meta = self._examine(task, child, out, listed=False)
                    if meta is not None and meta.kind == "symlink":
                        self._link_in_store(task, child, meta, real, stack, out)
                elif _could_match_link(rest, name):
                    self._visit(task, child, kind, (), stack, out)
        stack.extend(reversed(deeper))
        stack.append(task.at(task.here, rest))  # ** as zero directories: popped first

    def _visit(self, task: _Task, parts, kind, rest, stack: list[_Task], out: list[Match]) -> None:
        """One candidate path: descend into it, record it, or ignore it."""
        if rest:
            self._visit_directory(task, parts, kind, rest, stack, out)
            return
        if kind == "dir":
            return
        if kind == "file":
            # The listing says a regular file: its lstat is left to the capture, which
            # takes one before anything is opened (collect.py completes the others).
            meta = None
        else:
            meta = self._examine(task, parts, out, listed=kind is not None)
            if meta is None or meta.kind == "dir":
                return
        path = "/".join(parts)
        if task.spec.refined_out(path, is_dir=False):
            return
        rule = task.spec.rule_for(path, is_dir=False)
        out.append(Match(task.target, parts, meta.kind if meta is not None else "file", meta=meta, excluded_by=rule,
                         note=task.via))

    def _visit_directory(self, task: _Task, parts, kind, rest, stack: list[_Task], out: list[Match]) -> None:
        if kind not in (None, "dir", "unknown", "symlink"):
            return
        if kind != "dir":
            meta = self._examine_on_the_way(task, parts, out)
            if meta is None:
                return
            if meta.kind == "symlink":
                self._link_in_store(task, parts, meta, self.tree.real_parts(parts), stack, out)
                return
            if meta.kind != "dir":
                return
        if not self._pruned(task, parts, out):
            stack.append(task.at(parts, rest))

    def _examine(self, task: _Task, parts, out: list[Match], listed: bool):
        """Lstat a candidate; None when it is absent (recorded as vanished if a listing named it) or unreadable."""
        try:
            return self.tree.lstat(parts)
        except FileNotFoundError:
            if listed:
                out.append(Match(task.target, parts, "missing",
                                 error=FileNotFoundError(errno_module.ENOENT, "vanished during the walk")))
        except OSError as exc:
            if exc.errno != errno_module.ENOTDIR:
                out.append(Match(task.target, parts, "unknown", error=exc, note="could not be examined"))
        return None

    def _absent_on_the_way(self, segments: tuple[str, ...]) -> bool:
        """Whether a directory on the glob's literal way is already known absent (or not a directory).

        Most of a home's globs are of agents it never had: once ``Library`` or ``.config/<editor>``
        is known absent, every other glob through it ends here, as its walk would, with no match
        and nothing recorded (an absent directory on the way is not an outcome).
        """
        here: tuple[str, ...] = ()
        for segment in segments[:-1]:
            if not is_literal(segment):
                return False
            here += (segment,)
            found = self._on_the_way.get(here)
            if found is None:
                return False  # not looked at yet: the walk decides
            if isinstance(found, OSError):
                return _is_absence(found)
            if found.kind != "dir":
                return False  # a link or a file there: the walk decides
        return False

    def _examine_on_the_way(self, task: _Task, parts, out: list[Match]):
        """``_examine`` of a directory a glob passes through, taken once for all the location's globs.

        Forty-two agents' globs pass through the same few directories of a home (``.config``,
        ``Library/Application Support``, ``AppData/Roaming``), most of them absent: one lstat each per
        location instead of one per glob, as a directory is listed once per run. What it gave is kept,
        an error too, and recorded for each glob as ``_examine`` would.
        """
        found = self._on_the_way.get(parts)
        if found is None:
            try:
                found = self.tree.lstat(parts)
            except OSError as exc:
                found = exc
            self._on_the_way[parts] = found
        if not isinstance(found, OSError):
            return found
        if not _is_absence(found):
            out.append(Match(task.target, parts, "unknown", error=found, note="could not be examined"))
        return None

    # -- links inside a store --------------------------------------------------------

    def _link_in_store(self, task: _Task, parts, meta, real: tuple[str, ...] | None, stack: list[_Task],
                       out: list[Match]) -> None:
        """Record a directory link; follow it only into a store of the same agent, with that store's globs.

        ``real`` is the link's real path below the location (Tree.real_parts), None when it leaves.
        """
        link = Match(task.target, parts, "symlink", meta=meta)
        out.append(link)
        if real is None:
            link.note = ("symlink on the way to a store: its target is outside this location "
                         "(or a loop of links), not followed")
            return
        shown = "/".join(real) or "."
        if real and not self._is_dir(real):
            link.note = f"symlink on the way to a store: its target {shown} is not a directory, not followed"
            return
        walks = [(store, rest) for store in self._targets if store.agent == task.target.agent
                 for rest in remainders(store, real)]
        if not walks:
            link.note = (f"symlink on the way to a store: its target {shown} is not inside a store of "
                         f"{task.target.agent}, not followed")
            return
        via = f"reached through symlink {'/'.join(parts)}"
        followed = []
        for store, rest in walks:
            key = (real, store.store, store.glob, rest)
            if key in self._followed or len(self._followed) >= self.MAX_LINKS_FOLLOWED:
                continue
            self._followed.add(key)
            spec = _spec_of(store)
            if real and self._pruned(_Task(store, spec, real, rest), real, out):
                continue
            stack.append(_Task(store, spec, real, rest, via))
            followed.append(store.store)
        if followed:
            link.note = (f"symlink on the way to a store: target {shown} is inside "
                         f"{', '.join(sorted(set(followed)))}; walked under its own path with that store's globs")
        else:
            link.note = (f"symlink on the way to a store: target {shown} already walked (loop or repeat), "
                         "not followed again")

    # -- reading ---------------------------------------------------------------------

    def _children(self, task: _Task, out: list[Match]) -> list[tuple[str, str]]:
        try:
            return self.tree.listdir(task.here)
        except FileNotFoundError:
            return []
        except OSError as exc:
            if exc.errno in (errno_module.ENOTDIR, errno_module.ELOOP):
                return []
            out.append(Match(task.target, task.here, "dir", error=exc, note="directory could not be listed"))
            return []

    def _is_dir(self, parts) -> bool:
        try:
            return self.tree.lstat(parts).kind == "dir"
        except OSError:
            return False

    def _pruned(self, task: _Task, parts, out: list[Match]) -> bool:
        path = "/".join(parts)
        if task.spec.refined_out(path, is_dir=True):
            return True
        rule = task.spec.rule_for(path, is_dir=True)
        if rule is None:
            return False
        meta = None
        try:
            meta = self.tree.lstat(parts)
        except OSError:
            pass
        out.append(Match(task.target, parts, "dir", meta=meta, excluded_by=rule, note="directory pruned, never opened"))
        return True


def _could_match_link(rest: tuple[str, ...], name: str) -> bool:
    # A link met during ** descent is recorded when it could stand for the
    # file the glob names or for a directory on the way to it.
    return len(rest) > 1 or rest[0] == "**" or bool(segment_regex(rest[0]).match(name))


def _is_absence(error: OSError) -> bool:
    """Nothing there, or a file where a directory was wanted: no outcome for a directory on the way."""
    return isinstance(error, FileNotFoundError) or error.errno == errno_module.ENOTDIR


def remainders(target: Target, directory: tuple[str, ...]) -> list[tuple[str, ...]]:
    """What is left of ``target``'s glob below ``directory``, when the directory is inside that store.

    Inside means at or below the store's own directory (its leading literal
    segments) and matched, as directories, by the glob's segments; a directory
    above the store (``.agent`` for ``.agent/teams/**``) or beside it is not
    inside, and gets no remainder.
    """
    segments = target.segments
    literal = 0
    while literal < len(segments) and is_literal(segments[literal]):
        literal += 1
    if literal == len(segments):
        literal -= 1  # the last literal segment names a file
    if len(directory) < literal:
        return []
    states = _closure(segments, {0})
    for name in directory:
        following = set()
        for index in states:
            if index >= len(segments):
                continue
            segment = segments[index]
            if segment == "**":
                following.add(index)
            elif index < len(segments) - 1 and segment_regex(segment).match(name):
                following.add(index + 1)
        states = _closure(segments, following)
        if not states:
            return []
    left = {segments[index:] for index in states if index < len(segments)}
    # '**/x' already covers 'x' (zero directories): walk it once
    return sorted(rest for rest in left if ("**", *rest) not in left)


def _closure(segments: tuple[str, ...], states: set[int]) -> set[int]:
    out, todo = set(states), list(states)
    while todo:
        index = todo.pop()
        if index < len(segments) and segments[index] == "**" and index + 1 not in out:
            out.add(index + 1)
            todo.append(index + 1)
    return out


def _spec_of(target: Target) -> _ExcludeSpec:
    key = (target.excludes, target.refines)
    spec = _SPECS.get(key)
    if spec is None:  # the stores of one root share their root's excludes
        spec = _SPECS[key] = _ExcludeSpec(target.excludes, target.refines)
    return spec


_SPECS: dict[tuple[tuple[str, ...], tuple[str, ...]], _ExcludeSpec] = {}


class _ExcludeSpec:
    """gitwildmatch excludes, one compiled spec per pattern so the rule can be named.

    Root excludes are recorded when they prune something; store excludes only
    narrow what the store's globs mean, so what they remove is not a match.
    The specs are compiled at the first path tested: most targets' roots do not
    exist on a given machine, and compiling every catalog exclude up front was
    a fifth of an empty run's time.
    """

    def __init__(self, patterns: tuple[str, ...], refines: tuple[str, ...] = ()):
        self._patterns = patterns
        self._refines = refines
        # What a path must contain to be matched at all: most paths are answered
        # without compiling or running a spec.
        self._pattern_needs = tuple(_literal_needs(pattern) for pattern in patterns)
        self._refine_needs = tuple(_literal_needs(pattern) for pattern in refines)

    def refined_out(self, path: str, is_dir: bool) -> bool:
        candidate = path + "/" if is_dir else path
        return (_may_match(candidate, self._refine_needs)
                and _compile(self._refines).match_file(candidate))

    def rule_for(self, path: str, is_dir: bool) -> str | None:
        candidate = path + "/" if is_dir else path
        if not _may_match(candidate, self._pattern_needs):
            return None
        if not _compile(self._patterns).match_file(candidate):  # one quick test; the rule is named only on a hit
            return None
        for pattern, needs in zip(self._patterns, self._pattern_needs, strict=True):
            if _may_match(candidate, (needs,)) and _compile((pattern,)).match_file(candidate):
                return pattern.lstrip("/")
        return None


def _literal_needs(pattern: str) -> tuple[str, tuple[str, ...]]:
    """(head, pieces): what every path an anchored gitwildmatch pattern matches starts with and contains.

    An anchored pattern (``/a/b*``) matches from the start of the path, and
    its literal runs (the text between wildcards) appear in the part of the
    path it matches (a directory's pattern matches a prefix of the paths below
    it), less the slashes at their ends. The runs after a class or an escape
    are not used. A pattern that is not anchored can match anywhere: ("", ()).
    """
    if not pattern.startswith("/"):
        return "", ()
    runs, run = [], []
    for char in pattern[1:].rstrip(" "):  # gitignore drops trailing spaces
        if char in "[\\":
            break
        if char in "*?":
            runs.append("".join(run))
            run = []
        else:
            run.append(char)
    runs.append("".join(run))
    # A '/' beside '**' is not there when the '**' stands for no directory ('/**/a' matches 'a').
    pieces = (run.strip("/") for run in runs[1:])
    return runs[0], tuple(piece for piece in pieces if piece)


def _may_match(candidate: str, needs: tuple[tuple[str, tuple[str, ...]], ...]) -> bool:
    for head, pieces in needs:
        if candidate.startswith(head) and all(piece in candidate for piece in pieces):
            return True
    return False


_COMPILED: dict[tuple[str, ...], pathspec.PathSpec] = {}


def _compile(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    spec = _COMPILED.get(patterns)
    if spec is None:
        import pathspec  # here: a run whose targets exclude nothing met never pays for the import

        spec = _COMPILED[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
    return spec
