"""Read one key of a subject's settings file, safely: the subject is not trusted.

A settings file may relocate a store (docs/catalog.md, "Settings keys"). It is
read only when it is a regular file no larger than SETTINGS_MAX_BYTES, opened
component by component from the home without following a link, non-blocking
(a FIFO never blocks the run) and with O_NOATIME where allowed. Its JSON may be
JSONC (VS Code); a document nested deeper than the decoder allows, or one that
is not JSON at all, is a named problem, never a crash.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat as stat_module

SETTINGS_MAX_BYTES = 1024 * 1024  # real settings files are a few KB

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOATIME = getattr(os, "O_NOATIME", 0)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


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
    return _TRAILING_COMMA.sub(r"\1", "".join(out))


def _open(path: str, flags: int, dir_fd: int | None) -> int:
    try:
        return os.open(path, flags | _NOATIME, dir_fd=dir_fd)
    except PermissionError:
        return os.open(path, flags, dir_fd=dir_fd)


def open_regular_below(base: str, parts: list[str]) -> int:
    """A descriptor for the regular file ``base/parts...``, no component followed if it is a link.

    Raises OSError (ELOOP for a link, ENOENT when absent) or ValueError naming
    what the path is when it is not a regular file.
    """
    fd = _open(base, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0), None)  # the base is the examiner's choice
    try:
        for name in parts[:-1]:
            child = _open(name, _DIR_FLAGS, fd)
            os.close(fd)
            fd = child
        handle = _open(parts[-1], _FILE_FLAGS, fd)
    finally:
        os.close(fd)
    info = os.fstat(handle)
    if not stat_module.S_ISREG(info.st_mode):
        os.close(handle)
        raise ValueError("not a regular file")
    return handle


def read_settings_file(home: str, relative: str) -> tuple[bytes | None, str]:
    """(bytes, "") of the settings file ``home/relative``; (None, "") when absent, (None, why) when unusable."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None, "the settings path is not below the home"
    try:
        fd = open_regular_below(home, parts)
    except FileNotFoundError:
        return None, ""
    except NotADirectoryError:
        return None, ""
    except ValueError as exc:
        return None, f"settings file {exc}: not read"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "settings file (or a directory on its way) is a symbolic link: not followed, not read"
        return None, f"settings file could not be opened: {exc.strerror}"
    try:
        size = os.fstat(fd).st_size
        if size > SETTINGS_MAX_BYTES:
            return None, f"settings file is {size} bytes, over the {SETTINGS_MAX_BYTES}-byte limit: not read"
        data = os.read(fd, SETTINGS_MAX_BYTES + 1)
    except OSError as exc:
        return None, f"settings file could not be read: {exc.strerror}"
    finally:
        os.close(fd)
    if len(data) > SETTINGS_MAX_BYTES:
        return None, f"settings file grew past the {SETTINGS_MAX_BYTES}-byte limit while read: not used"
    return data, ""


def setting_value(data: bytes, key: str) -> tuple[str | None, str]:
    """(value, problem): the string value of a top-level key of a settings file's bytes (JSONC)."""
    try:
        document = json.loads(strip_jsonc(data.decode("utf-8", "replace")))
    except RecursionError:
        return None, "settings file nests deeper than the JSON decoder allows: not used"
    except ValueError as exc:
        return None, f"settings file is not JSON ({exc}): not used" if data.strip() else ""
    if not isinstance(document, dict):
        return None, f"settings file holds a JSON {type(document).__name__}, not an object: not used"
    value = document.get(key)
    if value is None:
        return None, ""
    if not isinstance(value, str):
        return None, f"{key} is a JSON {type(value).__name__}, not a path: not used"
    return (value, "") if value.strip() else (None, "")
