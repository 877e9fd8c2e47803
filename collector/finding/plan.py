"""From catalog + where-to-look to a list of walk targets.

A *location* is a directory that the bundle names by a label (a user's home,
the image root for system stores, or a directory an environment variable or a
settings key points to outside the home). A *target* is one catalog glob made
absolute to a location: the root's path segments followed by the store's
glob segments, with the root's and the store's excludes made the same way.
Nothing here knows an agent by name; everything comes from the catalog.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

from aitrail.collector.catalog import Catalog
from aitrail.collector.catalog.globs import expand_braces, split_segments
from aitrail.collector.catalog.schema import AgentCatalog, Root, Store
from aitrail.collector.finding import contain
from aitrail.collector.finding.settings import read_settings_file, setting_value

_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Location:
    """A directory whose files appear in the bundle as ``data/<label>/<relative path>``."""

    label: str
    base: str
    kind: str  # home | system | env | setting
    user: str | None = None
    source: str = ""
    # The same directory as the subject's own processes see it (for absolute symlink
    # targets): the base itself in live collection, the path inside the image under
    # --root, unknown (None) for a --home directory.
    subject_base: str | None = None
    # A trusted directory (the image root) the base is opened from, component by
    # component without following links; None: the base itself is trusted (a home).
    anchor: str | None = None


@dataclass(frozen=True)
class Place:
    """Where one root is: a location and the root's segments below it (its real path).

    ``via`` names the links (location-relative parts) that resolving the
    catalog path went through; the walk records each one as a link.
    """

    location: Location
    prefix: tuple[str, ...]
    via: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Target:
    """One include glob of one store, anchored at one location."""

    location: Location
    agent: str
    store: str
    segments: tuple[str, ...]
    glob: str
    excludes: tuple[str, ...]  # root excludes: a match is recorded as excluded, a directory pruned
    refines: tuple[str, ...]  # store excludes: part of the store's definition; not a match at all
    never: bool
    store_def: Store = field(compare=False, repr=False)
    root_depth: int = 0  # how many leading segments are the root's own path (the rest is the store's glob)
    via: tuple[tuple[str, ...], ...] = ()  # links the root's path went through (Place.via)


@dataclass
class Override:
    """What an environment variable or settings key did to a root (run metadata)."""

    agent: str
    root: str
    kind: str
    name: str
    value: str | None
    applied: bool
    note: str = ""
    outcome: str = "applied"  # applied | refused | not_applied | unreadable

    def as_record(self) -> dict:
        """The override as collection.json records it."""
        return {
            "agent": self.agent, "root": self.root, "kind": self.kind, "name": self.name,
            "value": self.value, "applied": self.applied, "outcome": self.outcome, "note": self.note,
        }


@dataclass(frozen=True)
class Home:
    """A user's home to collect from: its path here, and (in an image) its path on the subject and how it was found."""

    path: str
    label: str
    user: str | None = None
    subject_path: str | None = None  # under --root: the path inside the image ('/srv/dev'); else None
    found_by: str = ""  # under --root: etc/passwd, home/*, Users/*, root, var/root or --home


def safe_label(text: str) -> str:
    """A location label made of [A-Za-z0-9._-] only."""
    label = _LABEL_UNSAFE.sub("_", text).strip("._") or "home"
    return label


def unique_labels(paths: list[str], users: list[str | None]) -> list[Home]:
    """Label homes by user or directory name; collisions get -2, -3 in path order."""
    homes: list[Home] = []
    seen: dict[str, int] = {}
    for path, user in sorted(zip(paths, users, strict=True), key=lambda pair: pair[0]):
        label = safe_label(user or os.path.basename(os.path.normpath(path)) or "root")
        count = seen.get(label, 0) + 1
        seen[label] = count
        homes.append(Home(path=path, label=label if count == 1 else f"{label}-{count}", user=user))
    return homes


def _join_segments(*parts: str) -> tuple[str, ...]:
    joined = "/".join(part.strip("/") for part in parts if part.strip("/") not in ("", "."))
    return split_segments(joined) if joined else ()


@dataclass
class Planner:
    """Builds targets for one or more homes; records every override it met."""

    catalog: Catalog
    never_catalog: Catalog  # the full catalog: credentials stay protected under --agent
    environ: dict[str, str] | None = None  # live collection of the current user only
    image_root: str | None = None  # --root: absolute settings paths are read inside it
    live: bool = False  # collecting the running system (current user or all users)
    overrides: list[Override] = field(default_factory=list)
    # each settings file is read once per run, however many keys and roots (and the credential
    # pass) ask for it: (home, relative path) -> (bytes or None, problem)
    _settings_files: dict[tuple[str, str], tuple[bytes | None, str]] = field(default_factory=dict, repr=False)

    def targets_for_home(self, home: Home) -> list[Target]:
        """Targets of the selected agents' home roots for one home."""
        return self._home_targets(self.catalog.agents, home)

    def never_targets_for_home(self, home: Home) -> list[Target]:
        """Credential globs of every agent (not only the selected ones): they veto any match."""
        recorded = len(self.overrides)
        targets = self._home_targets(self.never_catalog.agents, home, never_only=True)
        del self.overrides[recorded:]  # already recorded by targets_for_home
        return targets

    def _home_targets(self, agents: tuple[AgentCatalog, ...], home: Home, never_only: bool = False) -> list[Target]:
        """The targets of the agents' home roots; ``never_only``: only those of never-collect stores.

        The credential pass wants a few never-collect globs of every agent: building every store's
        targets to keep those cost half the planning of a home (a run of many homes plans each).
        """
        subject = self._subject_path(home.path)
        location = Location(home.label, home.path, "home", home.user, subject or home.path, subject)
        targets: list[Target] = []
        for agent in agents:
            for root in agent.roots:
                if root.scope != "home" or (never_only and not _has_never_store(agent, root.id)):
                    continue
                for place in self._root_places(agent, root, location):
                    targets.extend(self._store_targets(agent, root, place, never_only))
        return targets

    def targets_for_system(self, base: str) -> list[Target]:
        """Targets of the selected agents' system roots below ``base`` (the image root or /)."""
        subject = self._subject_path(base)
        location = Location("system", base, "system", None, subject or base, subject)
        jail = contain.Jail(_realpath(base), "/", chroot=True)
        targets: list[Target] = []
        for agent in self.catalog.agents:
            for root in agent.roots:
                if root.scope == "system":
                    for path in root.paths:
                        targets.extend(self._store_targets(agent, root, self._catalog_place(jail, location, path)))
        return targets

    # -- where a root is ----------------------------------------------------

    def _jail(self, home: Location) -> contain.Jail:
        """What nothing may leave: the image under --root, else the home itself."""
        if self.image_root is not None:
            return contain.Jail(_realpath(self.image_root), "/", chroot=True)
        return contain.Jail(_realpath(home.base), home.subject_base)

    def _root_places(self, agent: AgentCatalog, root: Root, home: Location) -> list[Place]:
        jail = self._jail(home)
        places = [self._catalog_place(jail, home, path) for path in root.paths]
        if self.environ is not None:
            for env in root.env:
                value = self.environ.get(env.var)
                if not value:
                    continue
                where = f"environment variable {env.var}"
                place = self._relocated_place(jail, home, os.path.join(value, env.join) if env.join else value,
                                              env.var, agent, root, "env", env.var, value, where)
                if place is not None:
                    places.append(place)
        for setting in root.settings:
            places.extend(self._setting_places(jail, agent, root, setting, home))
        unique: list[Place] = []
        for place in places:
            if place not in unique:
                unique.append(place)
        return unique

    def _catalog_place(self, jail: contain.Jail, home: Location, path: str) -> Place:
        """A catalog path, by its real path when that stays in the home; else as written.

        As written, the walk meets the link on the way and records it, and it is
        not followed (walk.py): a catalog root is never widened by a link.
        """
        lexical = Place(home, _join_segments(path))
        home_real = _realpath(home.base)
        try:
            real, links = contain.resolve(jail, home_real, path)
        except (contain.Escape, OSError):
            return lexical
        if not links:
            return lexical
        if not _inside(real, home_real) or real == home_real:
            return lexical
        return Place(home, _relative_segments(real, home_real), _link_parts(links, home_real))

    def _relocated_place(self, jail, home: Location, value: str, tag: str, agent, root, kind: str, name: str,
                         raw_value: str, where: str) -> Place | None:
        """Where an environment variable or a settings value moves a root, or None (recorded) when refused."""
        home_real = _realpath(home.base)

        def refuse(outcome: str, why: str) -> None:
            self.overrides.append(Override(agent.agent, root.id, kind, name, raw_value, False, f"{where}: {why}",
                                           outcome))

        if value.startswith("~/") or value == "~":
            start, relative = home_real, value[2:]
        elif os.path.isabs(value):
            start, relative = jail.real, value
        else:
            refuse("not_applied", "a relative path; its base is not known to the collector, not walked")
            return None
        try:
            real, _ = contain.resolve(jail, start, relative)
        except contain.Escape as exc:
            refuse("refused", f"{exc}; leaves the {'image' if jail.chroot else 'home'}, not walked")
            return None
        if contain.home_or_above(real, home_real):
            refuse("refused", f"resolves to {self._shown(jail, real)}, the home itself or above it: a relocated "
                              "root there would take the whole home, not walked")
            return None
        if contain.is_system_directory(jail, real):
            refuse("refused", f"resolves to /{jail.relative(real)}, a system directory of the image, not walked")
            return None
        if _inside(real, home_real):
            place = Place(home, _relative_segments(real, home_real))
        else:  # only under --root: elsewhere in the image
            label = f"{home.label}@{safe_label(tag)}"
            location = Location(label, real, "env" if kind == "env" else "setting", home.user, where,
                                "/" + jail.relative(real), anchor=jail.real)
            place = Place(location, ())
        self.overrides.append(Override(agent.agent, root.id, kind, name, raw_value, True,
                                       f"{where}: " + _describe(place, home), "applied"))
        return place

    def _shown(self, jail: contain.Jail, real: str) -> str:
        """A path as the record shows it: inside the image under --root (never this machine's mount point)."""
        return "/" + jail.relative(real) if jail.chroot else real

    def _subject_path(self, path: str) -> str | None:
        """Where ``path`` is on the subject: itself when live, inside the image under --root."""
        if self.image_root is not None:
            relative = os.path.relpath(_realpath(path), _realpath(self.image_root))
            return None if relative.startswith("..") else "/" + ("" if relative == "." else relative)
        return path if self.live else None

    def _setting_places(self, jail, agent, root, setting, home) -> list[Place]:
        places = []
        for base_path in agent.root(setting.root).paths:
            where = f"settings key {setting.key} in {base_path}/{setting.file}"
            value, problem = self._read_setting_file(home, f"{base_path}/{setting.file}", setting.key)
            if problem:
                self.overrides.append(Override(agent.agent, root.id, "setting", setting.key, None, False,
                                               f"{where}: {problem}", "unreadable"))
            if value is None:
                continue
            place = self._relocated_place(jail, home, value, setting.key, agent, root, "setting", setting.key,
                                          value, where)
            if place is not None:
                places.append(place)
        return places

    def _read_setting_file(self, home: Location, relative: str, key: str) -> tuple[str | None, str]:
        """A key of a settings file of the home, read by its real path, which must stay in the home."""
        cache_key = (home.base, relative)
        if cache_key not in self._settings_files:
            self._settings_files[cache_key] = _settings_bytes(home, relative)
        data, problem = self._settings_files[cache_key]
        return setting_value(data, key) if data is not None else (None, problem)

    # -- globs --------------------------------------------------------------

    def _store_targets(self, agent: AgentCatalog, root: Root, place: Place, never_only: bool = False) -> list[Target]:
        targets = []
        location, prefix = place.location, place.prefix
        prefix_text = "/".join(prefix)
        root_excludes = _anchored(prefix_text, root.exclude)
        for store in agent.stores:
            if store.root != root.id or (never_only and store.collect != "never"):
                continue
            refines = _anchored(prefix_text, store.exclude)
            qualified, never = agent.qualified(store), store.collect == "never"
            for pattern in store.include:
                for plain, segments in _plain_globs(pattern):
                    targets.append(
                        Target(
                            location=location,
                            agent=agent.agent,
                            store=qualified,
                            segments=prefix + segments,
                            glob=(prefix_text + "/" + plain) if prefix_text else plain,
                            excludes=root_excludes,
                            refines=refines,
                            never=never,
                            store_def=store,
                            root_depth=len(prefix),
                            via=place.via,
                        )
                    )
        return targets


def _has_never_store(agent: AgentCatalog, root_id: str) -> bool:
    return any(store.root == root_id and store.collect == "never" for store in agent.stores)


@functools.lru_cache(maxsize=4096)
def _plain_globs(pattern: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A catalog glob's brace-free alternatives and their segments (the same for every place of a root)."""
    return tuple((plain, split_segments(plain)) for plain in expand_braces(pattern))


def _settings_bytes(home: Location, relative: str) -> tuple[bytes | None, str]:
    home_real = _realpath(home.base)
    try:
        real, _ = contain.resolve(contain.Jail(home_real, home.subject_base), home_real, relative)
    except contain.Escape as exc:
        return None, f"settings file not read: {exc}"
    if not _inside(real, home_real) or real == home_real:
        return None, "settings file not read: its real path is outside the home"
    return read_settings_file(home_real, os.path.relpath(real, home_real))


@functools.lru_cache(maxsize=4096)
def _anchored(prefix: str, patterns: tuple[str, ...]) -> tuple[str, ...]:
    """Root-relative excludes as anchored gitwildmatch patterns, their braces expanded.

    gitwildmatch has no ``{a,b}``: unexpanded, an exclude such as
    ``User/{globalStorage,profiles/*/globalStorage}/x/checkpoints`` would name
    a directory called ``{globalStorage,profiles`` and prune nothing.
    """
    return tuple(_anchor(prefix, plain) for pattern in patterns for plain in expand_braces(pattern))


def _anchor(prefix: str, pattern: str) -> str:
    """A root-relative exclude as an anchored, location-relative gitwildmatch pattern."""
    return "/" + (f"{prefix}/{pattern}" if prefix else pattern)


def _describe(place: Place, home: Location) -> str:
    if place.location is home:
        return f"inside the home at {'/'.join(place.prefix) or '.'}"
    return (f"outside the home, inside the image at {place.location.subject_base}: "
            f"collected as data/{place.location.label}/")


@functools.lru_cache(maxsize=256)
def _realpath(path: str) -> str:
    # the homes and the image root, asked for once per root of every agent: resolved once
    return os.path.realpath(path)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _relative_segments(path: str, directory: str) -> tuple[str, ...]:
    relative = os.path.relpath(path, directory)
    return () if relative == "." else tuple(relative.split("/"))


def _link_parts(links: list[str], directory: str) -> tuple[tuple[str, ...], ...]:
    """The links met inside ``directory``, as parts relative to it (the others are not ours to record)."""
    return tuple(_relative_segments(link, directory) for link in links
                 if _inside(link, directory) and link != directory)
