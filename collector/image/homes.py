"""The user homes of a mounted image, found the way the image's own system knows them.

From the image's ``etc/passwd`` (login users in the range of the image's own
``etc/login.defs``, root, and any account whose home holds an agent's folder,
wherever the home is: ``/srv/dev`` as well as ``/home/alice``), from
``home/*`` and ``Users/*`` (macOS and Windows; the shared profiles Public,
Default, All Users and Shared are not users), and the root accounts' homes
``root`` and macOS's ``var/root``. ``--home`` adds homes by their path inside
the image. Every home is resolved inside the image (an absolute link means the
image's own ``/``); a home found twice is taken once, under its first name.
"""

from __future__ import annotations

import dataclasses
import os
import stat as stat_module
from collections.abc import Iterable
from dataclasses import dataclass

from aitrail.collector.finding import contain
from aitrail.collector.finding.plan import Home, unique_labels
from aitrail.collector.image.files import image_jail, list_names, read_file, real_path

HOME_PARENTS = ("home", "Users")
ROOT_HOMES = ("root", "var/root")
# Windows and macOS profiles every machine has that belong to no one user
SHARED_PROFILES = frozenset({"public", "default", "default user", "all users", "shared", "defaultapppool"})
PASSWD_LIMIT = 8 * 1024 * 1024  # a passwd file larger than this is not read (a directory-backed site has few lines)
LOGIN_DEFS_LIMIT = 1024 * 1024


class ImageHomeError(ValueError):
    """A home named with --home is not a directory inside the image."""


@dataclass(frozen=True)
class FoundHome:
    """A home of the image: its path inside the image, its real path here, its user and why it was taken."""

    subject_path: str
    real: str
    user: str | None
    found_by: str


def homes_in_image(root: str, agent_dirs: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> list[Home]:
    """Every home of the image (see the module's docstring), labelled by user; ``extra`` are --home paths."""
    found = {home.real: home for home in image_homes(root, agent_dirs, extra)}
    labelled = unique_labels(list(found), [home.user for home in found.values()])
    return [dataclasses.replace(home, subject_path=found[home.path].subject_path, found_by=found[home.path].found_by)
            for home in labelled]


def image_homes(root: str, agent_dirs: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> list[FoundHome]:
    """The homes of the image with where each came from, each real directory once."""
    jail = image_jail(root)
    found: dict[str, FoundHome] = {}
    for home in [*_named_homes(jail, extra), *_passwd_homes(jail, agent_dirs), *_profile_homes(jail),
                 *_root_homes(jail)]:
        found.setdefault(home.real, home)
    return list(found.values())


def _named_homes(jail: contain.Jail, paths: tuple[str, ...]) -> list[FoundHome]:
    """--home under --root: a path inside the image (or this machine's path of one, below the mount point)."""
    homes = []
    for path in paths:
        inside = _inside_image(jail, path)
        real = real_path(jail, inside)
        if real is None or real == jail.real or not _plain_directory(real):
            raise ImageHomeError(f"--home {path}: not a directory inside the image at {jail.real}")
        homes.append(FoundHome(_subject(jail, real), real, None, "--home"))
    return homes


def _inside_image(jail: contain.Jail, path: str) -> str:
    real = os.path.realpath(path)
    if jail.contains(real) and real != jail.real:
        return "/" + jail.relative(real)
    return "/" + path.lstrip("/")


def _passwd_homes(jail: contain.Jail, agent_dirs: tuple[str, ...]) -> list[FoundHome]:
    passwd = read_file(jail, "/etc/passwd", PASSWD_LIMIT)
    if passwd.data is None:
        return []
    low, high = image_login_range(jail)
    homes = []
    for name, uid, home in passwd_entries(passwd.data):
        real = real_path(jail, home) if home.startswith("/") else None
        if real is None or real == jail.real or not _plain_directory(real):
            continue
        login = uid == 0 or low <= uid <= high
        if not login and not _holds_agent_data(real, agent_dirs):
            continue
        why = "etc/passwd (login user)" if login else "etc/passwd (its home holds agent data)"
        homes.append(FoundHome(_subject(jail, real), real, name, why))
    return homes


def passwd_entries(data: bytes) -> list[tuple[str, int, str]]:
    """(name, uid, home) of each well-formed line of a passwd file; other lines are passed over."""
    entries = []
    for line in data.decode("utf-8", "replace").splitlines():
        fields = line.split(":")
        if len(fields) < 7 or not fields[0] or line.startswith(("#", "+", "-")) or not fields[2].isdigit():
            continue
        entries.append((fields[0], int(fields[2]), fields[5]))
    return entries


def image_login_range(jail: contain.Jail) -> tuple[int, int]:
    """UID_MIN and UID_MAX of the image's etc/login.defs (1000 and 60000 where it does not say)."""
    defs = read_file(jail, "/etc/login.defs", LOGIN_DEFS_LIMIT)
    return uid_range((defs.data or b"").decode("utf-8", "replace").splitlines())


def uid_range(lines: Iterable[str]) -> tuple[int, int]:
    """UID_MIN and UID_MAX of login.defs lines, an image's or this machine's (1000 and 60000 where they do not say)."""
    values = {"UID_MIN": 1000, "UID_MAX": 60000}
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0] in values and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values["UID_MIN"], values["UID_MAX"]


def _profile_homes(jail: contain.Jail) -> list[FoundHome]:
    homes = []
    for parent in HOME_PARENTS:
        directory = real_path(jail, parent)
        if directory is None:
            continue
        try:
            names = sorted(list_names(directory))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if name.casefold() in SHARED_PROFILES or not _plain_directory(path):
                continue  # a profile that is a link is not a home (it is the link's target's, if anyone's)
            homes.append(FoundHome(_subject(jail, path), path, name, f"{parent}/*"))
    return homes


def _root_homes(jail: contain.Jail) -> list[FoundHome]:
    homes = []
    for relative in ROOT_HOMES:
        real = real_path(jail, relative)
        if real is not None and real != jail.real and _plain_directory(real):
            homes.append(FoundHome(_subject(jail, real), real, "root", relative))
    return homes


def _holds_agent_data(home: str, agent_dirs: tuple[str, ...]) -> bool:
    return any(os.path.lexists(os.path.join(home, name)) for name in agent_dirs)


def _plain_directory(path: str) -> bool:
    try:
        return stat_module.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _subject(jail: contain.Jail, real: str) -> str:
    return "/" + jail.relative(real)
