"""The system files ``aitrail export dissect`` makes from a bundle's own records, so dissect.target knows the subject.

The bundle holds the agents' files, not the subject's system files; dissect
tells a system, its host name, time zone and users from those. This module
makes the few it reads, each from a value of ``aitrail/collection.json`` (or,
for a user's uid, of ``aitrail/files.jsonl``), and says for each what it was
made from. Read from dissect.target 3.25.1 (PyPI; fox-it/dissect.target):

* Linux (``plugins/os/unix/linux/_os.py`` LinuxPlugin.detect): ``/etc`` and
  ``/var``, and one of ``/run``, ``/sys``, ``/etc/kernel`` ... : so ``etc/``,
  ``var/`` and an empty ``run/``. ``plugins/os/unix/_os.py`` reads the host
  name from ``/etc/hostname``, users from ``/etc/passwd``, the version from
  ``/etc/os-release``; ``plugins/os/unix/locale.py`` the zone from
  ``/etc/timezone``.
* macOS (``plugins/os/unix/bsd/darwin/macos/_os.py``): ``/Library`` and
  ``/Applications``; the host name from ``LocalHostName`` in
  ``Library/Preferences/SystemConfiguration/preferences.plist``, users from
  ``var/db/dslocal/nodes/Default/users/*.plist``.
* Windows (``plugins/os/windows/_os.py``): everything comes from registry
  hives, which aitrail neither collects nor makes: nothing is made, and
  dissect opens the tree as a generic ("default") target.

Every value of the bundle is checked before it is written (a host name is a
host name, a path has no ``:`` or line end, a user name is a plain word); a
value that fails is left out and named. Nothing here reads the subject.
"""

from __future__ import annotations

import plistlib
import re
from dataclasses import dataclass, field

from aitrail.analyzer.formats.idioms import as_dict, as_list

# uids aitrail makes up where the bundle records none: far above any system's own range, and said so
SYNTHETIC_UID_BASE = 4_200_000_000
_HOSTNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-_]{0,252}")
_ZONE = re.compile(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+){0,3}")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._\-]{0,63}\$?")
_DISPLAY_NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,255}")
_MACHINE_ID = re.compile(r"[0-9a-f]{32}")
_OS_TEXT = re.compile(r"[ -~]{1,200}")  # printable ASCII; quotes, backslashes and dollars are refused apart
_DRIVE = re.compile(r"[A-Za-z]:[/\\]")


@dataclass(frozen=True)
class SystemFile:
    """One entry made for dissect: its path below ``[root]``, its bytes (None: a directory), what it was made from."""

    path: str
    data: bytes | None
    made_from: str


@dataclass(frozen=True)
class HomeUser:
    """A home of collection.json as a user of the subject: name, uid, gid and home, each with its source."""

    name: str
    name_source: str
    home: str
    uid: int
    gid: int
    uid_source: str


@dataclass
class Subject:
    """What collection.json (and files.jsonl's owners) say of the subject, checked."""

    system: str  # "linux", "macos" or "windows"
    system_source: str
    hostname: str | None = None
    zone: str | None = None
    os_name: str | None = None
    machine_id: str | None = None
    users: list[HomeUser] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)  # what collection.json says, and from where, for the README
    left_out: list[str] = field(default_factory=list)  # values of the bundle not used, and why


def subject_of(collection: dict, owners: dict[str, set[tuple[int, int]]]) -> Subject:
    """The subject as collection.json records it; ``owners``: each location's (uid, gid) of its collected files."""
    host, zone = as_dict(collection.get("host")), as_dict(collection.get("time_zone"))
    homes = [home for home in as_list(collection.get("homes")) if isinstance(home, dict)]
    system, source = subject_system(host, homes)
    subject = Subject(system, source)
    subject.recorded = [f"mode {_shown(collection.get('mode'))}",
                        f"host.hostname {_shown(host.get('hostname'))}, from {_shown(host.get('hostname_source'))}",
                        f"host.os {_shown(host.get('os'))}",
                        f"time_zone.name {_shown(zone.get('name'))}, from {_shown(zone.get('source'))}"]
    # a macOS name may be a display name ("Alice's MacBook Pro"); /etc/hostname holds a host name only
    subject.hostname = _checked(subject, "host.hostname", host.get("hostname"),
                                _HOSTNAME if system == "linux" else _DISPLAY_NAME)
    subject.zone = _checked(subject, "time_zone.name", zone.get("name"), _ZONE)
    subject.os_name = _checked(subject, "host.os", host.get("os"), _OS_TEXT, refused='"\\$`')
    subject.machine_id = _checked(subject, "host.machine_id", host.get("machine_id"), _MACHINE_ID)
    for number, home in enumerate(homes if system != "windows" else []):  # Windows users are the registry's
        user = home_user(subject, number, home, owners)
        if user is not None:
            subject.users.append(user)
    return subject


def subject_system(host: dict, homes: list[dict]) -> tuple[str, str]:
    """linux, macos or windows: host.system where recorded, else the form of the homes' paths; and why."""
    recorded = {"Linux": "linux", "Darwin": "macos", "Windows": "windows"}.get(str(host.get("system")))
    if recorded:
        return recorded, f"host.system {host.get('system')}"
    paths = [str(home.get("path") or "") for home in homes]
    if any(_DRIVE.match(path) for path in paths):
        return "windows", "no host.system recorded; a home's path has a drive letter"
    if any(path.startswith("/Users/") for path in paths):
        return "macos", "no host.system recorded; a home is under /Users"
    return "linux", "no host.system recorded; no home under /Users or a drive letter"


def _shown(value) -> str:
    """A value of the bundle on one line of the README (escaped, cut at 300 characters)."""
    return repr(value)[:300]


def _checked(subject: Subject, name: str, value, pattern: re.Pattern, refused: str = "") -> str | None:
    """``value`` when it is text that ``pattern`` matches whole (and holds none of ``refused``); else None."""
    if value is None:
        return None
    if isinstance(value, str) and pattern.fullmatch(value) and not any(char in value for char in refused):
        return value
    subject.left_out.append(f"{name} {str(value)[:80]!r}: not used (not of the form dissect's file takes)")
    return None


def home_user(subject: Subject, number: int, home: dict, owners: dict[str, set[tuple[int, int]]]) -> HomeUser | None:
    """The user of one home record: its user (else its label) and path; a uid its files' owner gives, else made up."""
    path, label = home.get("path"), home.get("label")
    if not (isinstance(path, str) and path.startswith("/") and len(path) <= 4096 and path.isprintable()
            and ":" not in path):
        subject.left_out.append(f"homes[{number}].path {str(path)[:80]!r}: not a path a passwd line can hold; "
                                "this home has no user")
        return None
    if isinstance(home.get("user"), str) and _USER.fullmatch(home["user"]):
        name, name_source = home["user"], "homes[].user"
    elif isinstance(label, str) and _USER.fullmatch(label):
        name, name_source = label, "homes[].label (no user recorded)"
    else:
        name, name_source = f"home{number + 1}", "made up (neither the user nor the label is a user name)"
    found = owners.get(label, set()) if isinstance(label, str) else set()
    if len(found) == 1:
        (uid, gid), = found
        uid_source = "the owner of every file collected from this home (files.jsonl stat.uid, stat.gid)"
    else:
        uid = gid = SYNTHETIC_UID_BASE + number
        uid_source = ("made up: no uid is recorded for a home, and its collected files have "
                      f"{len(found)} owners, not one")
    return HomeUser(name, name_source, path, uid, gid, uid_source)


def system_files(subject: Subject) -> list[SystemFile]:
    """The entries made for dissect, for the subject's system (none for Windows)."""
    if subject.system == "macos":
        return macos_files(subject)
    if subject.system == "windows":
        return []
    return linux_files(subject)


def linux_files(subject: Subject) -> list[SystemFile]:
    """etc/ (hostname, machine-id, os-release, passwd, timezone), an empty var/ and run/."""
    made = [SystemFile("etc", None, "a directory: dissect takes a tree with etc/ and var/ for a Unix system"),
            SystemFile("var", None, "an empty directory: dissect takes a tree with etc/ and var/ for a Unix system"),
            SystemFile("run", None, "an empty directory: dissect takes a Unix tree with run/ (or sys/, "
                                    "etc/kernel ...) for Linux")]
    if subject.hostname:
        made.append(SystemFile("etc/hostname", f"{subject.hostname}\n".encode(), "host.hostname"))
    if subject.machine_id:
        made.append(SystemFile("etc/machine-id", f"{subject.machine_id}\n".encode(), "host.machine_id"))
    if subject.os_name:
        text = (f"# made by aitrail export dissect from collection.json host.os\nNAME=\"{subject.os_name}\"\n"
                f"PRETTY_NAME=\"{subject.os_name}\"\n")
        made.append(SystemFile("etc/os-release", text.encode(), "host.os (NAME and PRETTY_NAME)"))
    if subject.users:
        lines = ["# made by aitrail export dissect from collection.json homes (aitrail-export/README.txt)"]
        lines += [f"{user.name}:x:{user.uid}:{user.gid}:made by aitrail:{user.home}:" for user in subject.users]
        made.append(SystemFile("etc/passwd", ("\n".join(lines) + "\n").encode(), "homes: one line per home"))
    if subject.zone:
        made.append(SystemFile("etc/timezone", f"{subject.zone}\n".encode(), "time_zone.name"))
    return made


def macos_files(subject: Subject) -> list[SystemFile]:
    """Library/ and Applications/, the host name's preferences.plist and one dslocal plist per user."""
    made = [SystemFile("Library", None, "a directory: dissect takes a tree with Library/ and Applications/ "
                                        "for macOS"),
            SystemFile("Applications", None, "an empty directory: dissect takes a tree with Library/ and "
                                             "Applications/ for macOS")]
    if subject.hostname:
        names = {"LocalHostName": subject.hostname}
        preferences = {"System": {"Network": {"HostNames": names},
                                  "System": {"ComputerName": subject.hostname, "HostName": subject.hostname}}}
        made.append(SystemFile("Library/Preferences/SystemConfiguration/preferences.plist",
                               plistlib.dumps(preferences, sort_keys=True), "host.hostname"))
    for user in subject.users:
        record = {"name": [user.name], "uid": [str(user.uid)], "gid": [str(user.gid)], "home": [user.home],
                  "realname": ["made by aitrail"]}
        made.append(SystemFile(f"var/db/dslocal/nodes/Default/users/{user.name}.plist",
                               plistlib.dumps(record, sort_keys=True), f"homes: the home {user.home}"))
    return made
