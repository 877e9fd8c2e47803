"""Which homes to collect, and the run metadata an examiner records.

Homes: ``--home DIR`` (any directory treated as a user's home), ``--all-users``
(the live passwd database's login users) or, by default, the current user;
the homes of a mounted image (``--root``) are found by collector/image/homes.py.
"""

from __future__ import annotations

import datetime as dt
import functools
import getpass
import itertools
import os
import platform
import socket
import stat as stat_module
import sys
import time
from pathlib import Path

from aitrail.collector import __version__
from aitrail.collector.finding.plan import Home, unique_labels
from aitrail.collector.image.homes import uid_range


def homes_from_dirs(paths: list[str]) -> list[Home]:
    """Homes given as directories (--home), labelled by their names."""
    absolute = [os.path.abspath(path) for path in paths]
    return unique_labels(absolute, [None] * len(absolute))


def homes_of_all_users(agent_dirs: tuple[str, ...] = ()) -> list[Home]:
    """The homes of the live passwd database's login users and root, and of any account whose home holds agent data.

    A login user has a uid in the system's own range (UID_MIN..UID_MAX of
    /etc/login.defs, 1000..60000 by default); system accounts (``/bin``,
    ``/dev``, ``/usr/sbin`` ...) are taken only when their home holds one of
    ``agent_dirs`` (the first component of a catalog root's home-relative
    path, checked with lstat: a service account running an agent is found).
    """
    import pwd

    low, high = login_uid_range()
    seen: set[str] = set()
    paths, users = [], []
    for record in sorted(pwd.getpwall(), key=lambda item: item.pw_name):
        home = record.pw_dir
        if not home or not os.path.isdir(home):
            continue
        real = os.path.realpath(home)
        if real == "/" or real in seen:  # '//', '/./', '/home/..' or a link to / is the root, never a home
            continue
        login = record.pw_uid == 0 or low <= record.pw_uid <= high
        if not login and not any(os.path.lexists(os.path.join(home, name)) for name in agent_dirs):
            continue
        seen.add(real)
        paths.append(home)
        users.append(record.pw_name)
    return unique_labels(paths, users)


def login_uid_range(path: str = "/etc/login.defs") -> tuple[int, int]:
    """UID_MIN and UID_MAX of this machine's login.defs (1000 and 60000 where it does not say)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return uid_range(itertools.islice(handle, 10_000))
    except OSError:
        return uid_range(())



def current_user_home() -> Home:
    """The home of the user running the collector; under sudo, of the user who ran sudo (SUDO_USER).

    ``sudo aitrail collect`` runs as root to read what the user can read, but
    the evidence is the user's: their home, not root's.
    """
    sudo_user = sudo_subject()
    if sudo_user is not None:
        import pwd

        return unique_labels([pwd.getpwnam(sudo_user).pw_dir], [sudo_user])[0]
    home = str(Path.home())
    return unique_labels([home], [_user_name()])[0]


def sudo_subject() -> str | None:
    """The user who ran sudo, when the collector runs as root under sudo and that user exists; else None."""
    name = os.environ.get("SUDO_USER")
    if not name or name == "root" or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    try:
        import pwd

        pwd.getpwnam(name)
    except (KeyError, ImportError):
        return None
    return name


def _user_name() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def utc_now() -> str:
    """Now, in UTC, ISO 8601 with microseconds and Z."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _read_first_line(path: str) -> str | None:
    """The first line of a small regular file of this machine (never a FIFO, never more than 4 KB)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat_module.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").split("\n", 1)[0].strip() or None


def host_info() -> dict:
    """What names this machine (host name, OS, kernel, machine and boot ids): the collecting host.

    Asked once per process (a live run records it twice, as the subject and as
    the collecting host): ``getfqdn`` may wait on a resolver, and the answer
    cannot change within a run. Each caller gets its own copy.
    """
    return dict(_host_facts())


@functools.cache
def _host_facts() -> dict:
    uname = platform.uname()
    return {
        "hostname": socket.gethostname(),
        "fqdn": socket.getfqdn(),
        "os": platform.platform(),
        "system": uname.system,
        "kernel": uname.release,
        "kernel_version": uname.version,
        "machine": uname.machine,
        "machine_id": _read_first_line("/etc/machine-id"),
        "boot_id": _read_first_line("/proc/sys/kernel/random/boot_id"),
    }


def user_info() -> dict:
    """Who ran the collector."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    return {"name": _user_name(), "uid": uid, "euid": euid, "is_root": euid == 0, "sudo_user": sudo_subject()}


def time_zone_info() -> dict:
    """This machine's time zone (the subject's in live collection, the workstation's under --root)."""
    local = dt.datetime.now().astimezone()
    offset = local.utcoffset()
    return {
        "name": live_zone_name(),
        "tzname": list(time.tzname),
        "current_name": local.tzname(),
        "utc_offset_seconds": int(offset.total_seconds()) if offset else 0,
        "TZ": os.environ.get("TZ"),
    }


def tool_info() -> dict:
    """What ran: version, Python, zstandard, the digest of the collector's source, and whether it ran frozen.

    A frozen collector (packaging/build_frozen_collector.py) also names its
    build in ``build``: the SHA-256 of its executable, a digest over every
    file of its folder, its build manifest, and whether the folder is as
    built (collector/frozen.py).
    """
    import zstandard

    from aitrail.collector import frozen

    info = {
        "name": "aitrail",
        "version": __version__,
        "python": sys.version.split()[0],
        "zstandard": zstandard.__version__,
        "collector_sha256": collector_digest(),
        "frozen": frozen.running_frozen(),
    }
    if info["frozen"]:
        info["build"] = frozen.build_identity()
    return info


def collector_digest() -> str | None:
    """SHA-256 over the collector's own source files (frozen.source_digest), so the run names the code that ran.

    A frozen collector holds no source files: its build computed this digest
    over the sources it froze, by the same function, and wrote it into its
    manifest. That value is returned (None when the manifest cannot be read);
    the folder digest of ``tool.build`` covers the manifest and the frozen
    code, and ``tool.build.as_built`` says whether they are still the build's.
    """
    from aitrail.collector import frozen

    if frozen.running_frozen():
        return frozen.built_collector_digest()
    return frozen.source_digest(Path(__file__).resolve().parent)


def catalog_env_vars(catalog) -> list[str]:
    """Every environment variable any catalog root can be moved by."""
    names = {env.var for agent in catalog.agents for root in agent.roots for env in root.env}
    return sorted(names)


def subject_description(mode: str, root: str | None, hostname: str | None = None,
                        time_zone: str | None = None) -> tuple[dict, dict]:
    """The subject's ``host`` and ``time_zone`` for collection.json, each fact with where it came from.

    Live (current user, all users): this machine. An image (--root): the
    image's own files (collector/image/identity.py), never the workstation's.
    --home names a directory of this machine, which may be a subject's home
    copied here: this machine is recorded, and said to be only that. The
    examiner's --hostname and --time-zone take precedence; what the image
    said is kept beside them.
    """
    if mode == "image-root" and root is not None:
        from aitrail.collector.image.identity import describe_image

        host, zone = describe_image(root)
    else:
        where = ("this machine (live collection)" if mode in ("current-user", "all-users") else
                 "this machine: --home names a directory here, which may hold another machine's home; "
                 "--hostname and --time-zone state the subject")
        host = {**host_info(), "hostname_source": where}
        zone = {**time_zone_info(), "source": where}
    if hostname is not None:
        host.update(hostname_found=host.get("hostname"), hostname=hostname, fqdn=hostname if "." in hostname else None,
                    hostname_source="stated by the examiner (--hostname)")
    if time_zone is not None:
        zone = stated_zone(time_zone, zone)
    return host, zone


def stated_zone(name: str, found: dict) -> dict:
    """The examiner's --time-zone, with what was found kept whole under ``found``.

    The found zone's offset and names describe the machine that was looked at,
    not the zone stated: they stay under ``found``. The stated zone's own
    current offset is given when this machine's tz database knows the name (an
    IANA name), else ``utc_offset_seconds`` is None and ``offset_source`` says why.
    """
    zone = {"name": name, "source": "stated by the examiner (--time-zone)", "name_found": found.get("name"),
            "found": found, "utc_offset_seconds": None,
            "offset_source": "not known: the tz database of the collecting machine has no zone of this name"}
    try:
        from zoneinfo import ZoneInfo

        offset = dt.datetime.now(ZoneInfo(name)).utcoffset()
    except (ValueError, OSError, LookupError):  # not a zone name (Windows names among them), or no tz database
        return zone
    if offset is not None:
        zone.update(utc_offset_seconds=int(offset.total_seconds()),
                    offset_source="the stated zone's offset at collection time (tz database of the collecting machine)")
    return zone


def live_zone_name() -> str | None:
    """This machine's zone name: TZ when it names one, else the zoneinfo name /etc/localtime links to."""
    value = os.environ.get("TZ", "").lstrip(":")
    if value and "/" in value and not value.startswith("/"):
        return value
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return None
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else None
