r"""Which machine an image is: its host name, time zone and system, each with the file it was read from.

Linux: ``etc/hostname`` (or ``etc/HOSTNAME``, ``etc/sysconfig/network``), the
``etc/localtime`` link's zoneinfo name, else ``etc/timezone``, else the POSIX
rule at the end of an ``etc/localtime`` TZif file; ``etc/os-release``.
macOS: ``Library/Preferences/SystemConfiguration/preferences.plist`` (read
with the standard library's plistlib, binary or XML), ``etc/localtime`` and
``System/Library/CoreServices/SystemVersion.plist``. Windows: the
``ComputerName``, ``Tcpip\Parameters`` and ``TimeZoneInformation`` keys of
the current control set of ``Windows/System32/config/SYSTEM``, read here at
collection by the collector's own bounded hive reader (image/regf.py): the
hive itself is not the agents' and is never put into the bundle.

Nothing an image holds can make this fail: every fact is a value and its
source, or ``None`` and the problems met.
"""

from __future__ import annotations

import os
import plistlib
import re
import stat as stat_module

from aitrail.collector.finding import contain
from aitrail.collector.image.files import (
    find_case_insensitive,
    image_jail,
    open_regular,
    read_file,
    read_link,
    real_path,
)

SMALL = 64 * 1024  # host name, time zone and release files: a few bytes each
PLIST_LIMIT = 4 * 1024 * 1024
WINDOWS_SYSTEM_HIVE = "/Windows/System32/config/SYSTEM"
_HOSTNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-_]{0,252}$")
_ZONE = re.compile(r"^[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+){0,3}$")


def describe_image(root: str) -> tuple[dict, dict]:
    """The image's ``host`` and ``time_zone`` records for collection.json (each fact with its source)."""
    jail = image_jail(root)
    host: dict = {"hostname": None, "hostname_source": None, "fqdn": None, "system": None, "system_source": None,
                  "os": None, "problems": []}
    zone: dict = {"name": None, "source": None, "utc_offset_seconds": None, "posix_rule": None, "problems": []}
    windows = find_case_insensitive(jail, WINDOWS_SYSTEM_HIVE)
    if windows is not None:
        _windows(jail, windows, host, zone)
    elif real_exists(jail, "/System/Library/CoreServices/SystemVersion.plist"):
        _macos(jail, host, zone)
    else:
        _linux(jail, host, zone)
    return host, zone


def real_exists(jail: contain.Jail, path: str) -> bool:
    """True when ``path`` is a regular file inside the image (looked up, not read: _macos reads it)."""
    real = real_path(jail, path)
    try:
        return real is not None and stat_module.S_ISREG(os.lstat(real).st_mode)
    except OSError:
        return False


# -- Linux ---------------------------------------------------------------------------


def _linux(jail: contain.Jail, host: dict, zone: dict) -> None:
    host["system"], host["system_source"] = "Linux", "no Windows SYSTEM hive, no macOS SystemVersion.plist"
    release = read_file(jail, "/etc/os-release", SMALL).data or read_file(jail, "/usr/lib/os-release", SMALL).data
    if release:
        host["os"] = _os_release_name(release)
    for path, pick in (("/etc/hostname", _first_word), ("/etc/HOSTNAME", _first_word),
                       ("/etc/sysconfig/network", _sysconfig_hostname)):
        if _set_hostname(host, read_file(jail, path, SMALL), pick):
            break
    else:
        host["problems"].append("no host name: etc/hostname, etc/HOSTNAME and etc/sysconfig/network give none")
    _zone_from_localtime(jail, zone) or _zone_from_file(jail, zone, "/etc/timezone") or _tzif_rule(jail, zone)


def _first_word(text: str) -> str | None:
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            return line.split()[0]
    return None


def _sysconfig_hostname(text: str) -> str | None:
    for line in text.splitlines():
        if line.strip().startswith("HOSTNAME="):
            return line.split("=", 1)[1].strip().strip("\"'") or None
    return None


def _os_release_name(data: bytes) -> str | None:
    values = {}
    for line in data.decode("utf-8", "replace").splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip().strip("\"'")
    return values.get("PRETTY_NAME") or values.get("NAME")


def _set_hostname(host: dict, found, pick) -> bool:
    if found.data is None:
        return False
    name = pick(found.data.decode("utf-8", "replace"))
    if not name:
        return False
    if not _HOSTNAME.match(name):
        host["problems"].append(f"{found.path.lstrip('/')}: {name[:80]!r} is not a host name; not taken")
        return False
    host["hostname"], host["hostname_source"] = name, found.path.lstrip("/")
    host["fqdn"] = name if "." in name else None
    return True


def _zone_from_localtime(jail: contain.Jail, zone: dict) -> bool:
    target = read_link(jail, "/etc/localtime")
    if target is None:
        return False
    name = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else None
    if name and _ZONE.match(name):
        zone["name"], zone["source"] = name, f"etc/localtime -> {target}"
        return True
    zone["problems"].append(f"etc/localtime -> {target[:200]!r}: not a zoneinfo name")
    return False


def _zone_from_file(jail: contain.Jail, zone: dict, path: str) -> bool:
    found = read_file(jail, path, SMALL)
    name = _first_word(found.data.decode("utf-8", "replace")) if found.data else None
    if name and _ZONE.match(name):
        zone["name"], zone["source"] = name, path.lstrip("/")
        return True
    return False


def _tzif_rule(jail: contain.Jail, zone: dict) -> bool:
    """A TZif v2+ etc/localtime copied (not linked) names no zone; its footer holds the POSIX TZ rule."""
    found = read_file(jail, "/etc/localtime", SMALL)
    data = found.data
    if not data or not data.startswith(b"TZif"):
        zone["problems"].append("no time zone: etc/localtime is neither a zoneinfo link nor a TZif file, "
                                "and etc/timezone names none")
        return False
    footer = data.rstrip(b"\n").rsplit(b"\n", 1)[-1] if data.endswith(b"\n") else b""
    rule = footer.decode("ascii", "replace")
    if data[4:5] in (b"2", b"3", b"4") and rule and len(rule) <= 120 and rule.isprintable():
        zone["posix_rule"], zone["source"] = rule, "etc/localtime (a TZif file: its POSIX rule; the zone's name " \
                                                   "is not recorded in it)"
        return True
    zone["problems"].append("etc/localtime is a TZif file without a POSIX rule footer; zone not known")
    return False


# -- macOS ---------------------------------------------------------------------------


def _macos(jail: contain.Jail, host: dict, zone: dict) -> None:
    host["system"], host["system_source"] = "Darwin", "System/Library/CoreServices/SystemVersion.plist"
    version = _plist(jail, "/System/Library/CoreServices/SystemVersion.plist", host)
    if version:
        host["os"] = " ".join(str(version.get(key)) for key in ("ProductName", "ProductVersion")
                              if isinstance(version.get(key), str)) or None
    path = "/Library/Preferences/SystemConfiguration/preferences.plist"
    preferences = _plist(jail, path, host) or {}
    system = _dig(preferences, "System", "System")
    local = _dig(preferences, "System", "Network", "HostNames").get("LocalHostName")
    for key, value in (("System/System/HostName", system.get("HostName")),
                       ("System/System/ComputerName", system.get("ComputerName")),
                       ("System/Network/HostNames/LocalHostName", local)):
        if isinstance(value, str) and value.strip():
            host["hostname"], host["hostname_source"] = value.strip()[:255], f"{path.lstrip('/')} {key}"
            host["fqdn"] = host["hostname"] if "." in host["hostname"] else None
            break
    else:
        host["problems"].append(f"no host name in {path.lstrip('/')}")
    if not _zone_from_localtime(jail, zone):
        _tzif_rule(jail, zone)


def _plist(jail: contain.Jail, path: str, host: dict) -> dict | None:
    found = read_file(jail, path, PLIST_LIMIT)
    if found.data is None:
        host["problems"].append(f"{path.lstrip('/')}: {found.problem}")
        return None
    try:
        value = plistlib.loads(found.data)
    except Exception as exc:  # noqa: BLE001 - plistlib raises many kinds for damaged bytes; all mean "unreadable"
        host["problems"].append(f"{path.lstrip('/')}: not a readable property list ({type(exc).__name__})")
        return None
    return value if isinstance(value, dict) else None


def _dig(value, *keys: str) -> dict:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


# -- Windows -------------------------------------------------------------------------


def _windows(jail: contain.Jail, hive_path: str, host: dict, zone: dict) -> None:
    from aitrail.collector.image import regf

    source = hive_path.lstrip("/")
    host["system"], host["system_source"] = "Windows", source
    real = os.path.join(jail.real, source)
    fd, problem = open_regular(real)
    if fd is None:
        host["problems"].append(f"{source}: {problem}")
        zone["problems"].append(f"{source}: {problem}")
        return
    try:
        identity = regf.read_system_identity(fd)
    except regf.HiveError as exc:
        host["problems"].append(f"{source}: {exc}")
        zone["problems"].append(f"{source}: {exc}")
        return
    finally:
        os.close(fd)
    control = identity.control_set
    for problem in identity.problems:
        (zone if "TimeZoneInformation" in problem else host)["problems"].append(f"{source}: {problem}")
    # ComputerName is the name Windows and its event logs show (NetBIOS, upper case); the TCP/IP host
    # name (DNS, its own case) is kept beside it and makes the FQDN with the domain
    if identity.computer_name:
        host["hostname"] = identity.computer_name
        host["hostname_source"] = f"{source} {control}\\Control\\ComputerName\\ComputerName"
    elif identity.hostname:
        host["hostname"] = identity.hostname
        host["hostname_source"] = f"{source} {control}\\Services\\Tcpip\\Parameters Hostname"
    host["dns_hostname"] = identity.hostname
    if identity.hostname and identity.domain:
        host["fqdn"] = f"{identity.hostname}.{identity.domain}"
    if identity.time_zone_key_name or identity.standard_name:
        zone["name"] = identity.time_zone_key_name or identity.standard_name
        zone["source"] = f"{source} {control}\\Control\\TimeZoneInformation"
    if identity.bias_minutes is not None:
        zone["utc_offset_seconds"] = -60 * identity.bias_minutes  # Windows: UTC = local + Bias (standard time)
