"""From catalog + where-to-look to a list of walk targets.

A *location* is a directory that the bundle names by a label (a user's home,
the image root for system stores, or a directory an environment variable or a
settings key points to outside the home). A *target* is one catalog glob made
absolute to a location: the root's path segments followed by the store's
glob segments, with the root's and the store's excludes made the same way.
Nothing here knows an agent by name; everything comes from the catalog.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from aitrail.collector.catalog import Catalog
from aitrail.collector.catalog_schema import AgentCatalog, Root, Store
from aitrail.collector.globs import expand_braces, split_segments

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

    def as_record(self) -> dict:
        return {
            "agent": self.agent, "root": self.root, "kind": self.kind, "name": self.name,
            "value": self.value, "applied": self.applied, "note": self.note,
        }


@dataclass(frozen=True)
class Home:
    """A user's home to collect from."""

    path: str
    label: str
    user: str | None = None


def safe_label(text: str) -> str:
    label = _LABEL_UNSAFE.sub("_", text).strip("._") or "home"
    return label


def unique_labels(paths: list[str], users: list[str | None]) -> list[Home]:
    """Label homes by user or directory name; collisions get -2, -3 in path order."""
    homes: list[Home] = []
    seen: dict[str, int] = {}
    for path, user in sorted(zip(paths, users), key=lambda pair: pair[0]):
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

    def targets_for_home(self, home: Home) -> list[Target]:
        return self._home_targets(self.catalog.agents, home)

    def never_targets_for_home(self, home: Home) -> list[Target]:
        """Credential globs of every agent (not only the selected ones): they veto any match."""
        recorded = len(self.overrides)
        targets = [target for target in self._home_targets(self.never_catalog.agents, home) if target.never]
        del self.overrides[recorded:]  # already recorded by targets_for_home
        return targets

    def _home_targets(self, agents: tuple[AgentCatalog, ...], home: Home) -> list[Target]:
        location = Location(home.label, home.path, "home", home.user, home.path, self._subject_path(home.path))
        targets: list[Target] = []
        for agent in agents:
            for root in agent.roots:
                if root.scope != "home":
                    continue
                for place, prefix in self._root_places(agent, root, location):
                    targets.extend(self._store_targets(agent, root, place, prefix))
        return targets

    def targets_for_system(self, base: str) -> list[Target]:
        location = Location("system", base, "system", None, base, self._subject_path(base))
        targets: list[Target] = []
        for agent in self.catalog.agents:
            for root in agent.roots:
                if root.scope == "system":
                    for path in root.paths:
                        targets.extend(self._store_targets(agent, root, location, _join_segments(path)))
        return targets

    # -- where a root is ----------------------------------------------------

    def _root_places(self, agent: AgentCatalog, root: Root, home: Location) -> list[tuple[Location, tuple[str, ...]]]:
        places = [(home, _join_segments(path)) for path in root.paths]
        if self.environ is not None:
            for env in root.env:
                value = self.environ.get(env.var)
                if not value:
                    continue
                place = self._absolute_place(home, os.path.join(value, env.join), f"env {env.var}", env.var)
                self.overrides.append(Override(agent.agent, root.id, "env", env.var, value, True, _describe(place, home)))
                places.append(place)
        for setting in root.settings:
            places.extend(self._setting_places(agent, root, setting, home))
        unique: list[tuple[Location, tuple[str, ...]]] = []
        for place in places:
            if place not in unique:
                unique.append(place)
        return unique

    def _absolute_place(self, home: Location, path: str, source: str, tag: str) -> tuple[Location, tuple[str, ...]]:
        path = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
        relative = os.path.relpath(path, home.base)
        if relative == "." or not relative.startswith(".."):
            return home, _join_segments("" if relative == "." else relative)
        label = f"{home.label}@{safe_label(tag)}"
        kind = "env" if source.startswith("env") else "setting"
        return Location(label, path, kind, home.user, source, self._subject_path(path)), ()

    def _subject_path(self, path: str) -> str | None:
        """Where ``path`` is on the subject: itself when live, inside the image under --root."""
        if self.image_root is not None:
            relative = os.path.relpath(path, self.image_root)
            return None if relative.startswith("..") else "/" + ("" if relative == "." else relative)
        return path if self.live else None

    def _setting_places(self, agent, root, setting, home) -> list[tuple[Location, tuple[str, ...]]]:
        places = []
        for base_path in agent.root(setting.root).paths:
            file_path = os.path.join(home.base, base_path, setting.file)
            value = read_setting(file_path, setting.key)
            if value is None:
                continue
            if not (os.path.isabs(value) or value.startswith("~/")):
                self.overrides.append(Override(agent.agent, root.id, "setting", setting.key, value, False,
                                               f"in {base_path}/{setting.file}; relative path: its base "
                                               "is not known to the collector, not walked"))
                continue
            if self.image_root is not None and os.path.isabs(value):
                mapped = os.path.join(self.image_root, value.lstrip("/"))
            elif self.environ is not None:
                mapped = os.path.expanduser(value)
            else:
                relative = value[2:] if value.startswith("~/") else None
                if relative is None:
                    self.overrides.append(Override(agent.agent, root.id, "setting", setting.key, value, False,
                                                   f"in {base_path}/{setting.file}; absolute path outside "
                                                   "the --home directory: not walked"))
                    continue
                mapped = os.path.join(home.base, relative)
            place = self._absolute_place(home, mapped, f"setting {setting.key}", setting.key)
            self.overrides.append(Override(agent.agent, root.id, "setting", setting.key, value, True,
                                           f"in {base_path}/{setting.file}; " + _describe(place, home)))
            places.append(place)
        return places

    # -- globs --------------------------------------------------------------

    def _store_targets(self, agent: AgentCatalog, root: Root, location: Location, prefix: tuple[str, ...]) -> list[Target]:
        targets = []
        prefix_text = "/".join(prefix)
        root_excludes = tuple(_anchor(prefix_text, pattern) for pattern in root.exclude)
        for store in agent.stores:
            if store.root != root.id:
                continue
            refines = tuple(_anchor(prefix_text, pattern) for pattern in store.exclude)
            for pattern in store.include:
                for plain in expand_braces(pattern):
                    targets.append(
                        Target(
                            location=location,
                            agent=agent.agent,
                            store=agent.qualified(store),
                            segments=prefix + split_segments(plain),
                            glob=(prefix_text + "/" + plain) if prefix_text else plain,
                            excludes=root_excludes,
                            refines=refines,
                            never=store.collect == "never",
                            store_def=store,
                        )
                    )
        return targets


def _anchor(prefix: str, pattern: str) -> str:
    """A root-relative exclude as an anchored, location-relative gitwildmatch pattern."""
    return "/" + (f"{prefix}/{pattern}" if prefix else pattern)


def _describe(place: tuple[Location, tuple[str, ...]], home: Location) -> str:
    location, prefix = place
    if location is home:
        return f"inside the home at {'/'.join(prefix) or '.'}"
    return f"outside the home: collected as data/{location.label}/"


def strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments and trailing commas (VS Code settings are JSONC)."""
    out: list[str] = []
    index, length, in_string = 0, len(text), False
    while index < length:
        char = text[index]
        if in_string:
            out.append(char)
            if char == "\\" and index + 1 < length:
                out.append(text[index + 1])
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", index):
            end = text.find("\n", index)
            index = length if end < 0 else end
            continue
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = length if end < 0 else end + 2
            continue
        else:
            out.append(char)
        index += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def read_setting(path: str, key: str) -> str | None:
    """A string value of a top-level key in a JSONC file; None when absent or unreadable.

    The file is opened read-only with O_NOATIME where allowed, like every read
    the collector makes of the subject.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(path, flags | getattr(os, "O_NOATIME", 0))
        except PermissionError:
            fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(4 * 1024 * 1024)
        value = json.loads(strip_jsonc(data.decode("utf-8", "replace"))).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value.strip() else None
