r"""UAC's own records, parsed: uac.log, the acquisition log, the bodyfile and the hash lists (uac.py reads them).

Formats, from ``tclahr/uac@7376467`` (UAC 3.3.0):

* ``uac.log`` (``lib/log_msg.sh``): one line per message,
  ``YYYY-MM-DD HH:MM:SS +ZZZZ LEVEL message`` with LEVEL ``DBG``, ``INF``,
  ``ERR`` or ``CMD``; a command's stderr follows its ``CMD`` line after
  `` 2> `` and may run over several lines. The header lines the ``uac``
  script logs (``Command line:``, ``Hostname:``, ``Mount point:``, ...)
  say how and where it ran.
* the acquisition log ``<name>.log`` beside the archive
  (``lib/create_acquisition_log.sh``): ``Key: value`` lines in sections,
  with the archive's ``MD5 checksum``, ``SHA1 checksum`` (and
  ``SHA256 checksum`` when configured).
* ``bodyfile/bodyfile.txt`` (``artifacts/bodyfile/bodyfile.yaml``, the
  ``stat`` collector of ``lib/find_based_collector.sh``): bodyfile 3.x,
  ``MD5|name|inode|mode|uid|gid|size|atime|mtime|ctime|crtime`` in whole
  seconds, made by ``statx``, ``stat -c``/``-f``, ``stat.pl`` or
  ``statf``; MD5 is 0, a link's name is ``name -> target``, crtime 0 when
  the system gives none (a short last field is rewritten to 0). Names
  keep the mount point (``<mount>/home/...``, or ``<mount>//home/...``);
  GNU ``stat %N`` quotes names with special characters shell-style
  (``caf'$'\351''.txt``) and UAC strips only the outer quotes.
* ``hash_list.md5`` / ``.sha1`` / ``.sha256`` (``uac`` with ``-H``): the
  output of ``md5sum``-like tools over the collected files, named as the
  archive's members (``[root]/home/...``); GNU tools prefix a line with
  ``\`` when they escaped a name, BSD ``md5`` writes ``MD5 (name) = hex``.
"""

from __future__ import annotations

import io
import re
import stat as stat_module
from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.collector.foreign.container import Problems

BODYFILE = "bodyfile/bodyfile.txt"
HASH_LISTS = {"hash_list.md5": "md5", "hash_list.sha1": "sha1", "hash_list.sha256": "sha256"}
HEX_LENGTHS = {"md5": 32, "sha1": 40, "sha256": 64}
MAX_SECONDS = (1 << 62) // 1_000_000_000
LOG_LINE = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}) (DBG|INF|ERR|CMD) (.*)$")
LOG_KEYS = {  # the uac script's header lines (tclahr/uac@7376467 uac, _log_msg INF ...)
    "Unix-like Artifacts Collector ": "version", "Command line: ": "command_line",
    "Operating system: ": "operating_system", "System architecture: ": "system_architecture",
    "Hostname: ": "hostname", "Time zone: ": "time_zone", "Mount point: ": "mount_point",
    "Running as: ": "running_as", "Output format: ": "output_format", "Hash algorithm: ": "hash_algorithm",
    "stat tool: ": "stat_tool", "Temp directory symlink creation support: ": "temp_dir_symlink_support",
    "tar load from file support: ": "tar_from_file_support", "Current PID: ": "pid",
}
ACQUISITION_KEYS = {
    "Case Number": "case_number", "Evidence Number": "evidence_number", "Description": "description",
    "Examiner": "examiner", "Notes": "notes", "Operating System": "operating_system",
    "System Architecture": "system_architecture", "Hostname": "hostname", "Mount Point": "mount_point",
    "Acquisition Started": "acquisition_started", "Acquisition Finished": "acquisition_finished",
    "File": "file", "Directory": "directory", "Format": "format",
    "MD5 checksum": "md5", "SHA1 checksum": "sha1", "SHA256 checksum": "sha256",
}
PERMISSION_BITS = ((0o400, "r"), (0o200, "w"), (0o100, "x"), (0o40, "r"), (0o20, "w"), (0o10, "x"),
                   (0o4, "r"), (0o2, "w"), (0o1, "x"))
SPECIAL_BITS = {2: stat_module.S_ISUID, 5: stat_module.S_ISGID, 8: stat_module.S_ISVTX}  # s/S, s/S, t/T
KIND_OF_TYPE = {"-": "file", "d": "dir", "l": "symlink"}
TYPE_BITS = {"-": stat_module.S_IFREG, "d": stat_module.S_IFDIR, "l": stat_module.S_IFLNK, "p": stat_module.S_IFIFO,
             "c": stat_module.S_IFCHR, "b": stat_module.S_IFBLK, "s": stat_module.S_IFSOCK}


def decode(data: bytes) -> str:
    """A record's bytes as text, undecodable bytes kept as surrogates (as tarfile decodes member names)."""
    return data.decode("utf-8", "surrogateescape")


# -- uac.log ----------------------------------------------------------------------------

@dataclass
class UacLog:
    """What uac.log says: the header facts (value, line), the first and last times, errors and stderr."""

    facts: dict[str, tuple[str, int]] = field(default_factory=dict)
    first: tuple[str, int] | None = None
    last: tuple[str, int] | None = None
    errors: list[tuple[int, str]] = field(default_factory=list)
    stderr: list[tuple[int, str]] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)


def parse_uac_log(data: bytes) -> UacLog:
    """The facts of uac.log; lines that are not log lines continue the previous one (a command's stderr)."""
    log = UacLog()
    for number, line in enumerate(decode(data).splitlines(), start=1):
        match = LOG_LINE.match(line)
        if not match:
            continue
        when, level, message = match.groups()
        log.first = log.first or (when, number)
        log.last = (when, number)
        if level == "ERR":
            log.errors.append((number, message))
        elif level == "CMD" and " 2> " in message:
            log.stderr.append((number, message.split(" 2> ", 1)[1]))
        elif level == "INF":
            _log_fact(log, message, number)
    return log


def _log_fact(log: UacLog, message: str, number: int) -> None:
    if message.startswith("Parsing "):
        log.artifacts.append(message[len("Parsing "):])
        return
    for prefix, key in LOG_KEYS.items():
        if message.startswith(prefix) and key not in log.facts:
            log.facts[key] = (message[len(prefix):].strip(), number)
            return


def parse_acquisition_log(data: bytes) -> dict[str, tuple[str, int]]:
    """The acquisition log's ``Key: value`` lines (and ``version`` from its first line), each with its line."""
    facts: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(decode(data).splitlines(), start=1):
        if number == 1 and line.startswith("Created by UAC"):
            facts["version"] = (line.rsplit(" ", 1)[-1], number)
            continue
        key, separator, value = line.partition(": ")
        if not separator:
            key, separator, value = line.partition(":")
        if separator and key.strip() in ACQUISITION_KEYS:
            facts.setdefault(ACQUISITION_KEYS[key.strip()], (value.strip(), number))
    return facts


# -- bodyfile ---------------------------------------------------------------------------

@dataclass
class BodyRecord:
    """One bodyfile line: the subject path candidates and what stat said, times in whole seconds."""

    line: int
    paths: tuple[str, ...]  # the name as written, then as unquoted when stat shell-quoted it
    kind: str
    mode: int | None
    uid: int
    gid: int
    size: int
    ino: int
    atime: int
    mtime: int
    ctime: int
    btime: int | None
    md5: str | None = None
    link_target: str | None = None


def parse_bodyfile(data: bytes, mount_point: str, problems: Problems, stats: dict[str, int]) -> Iterator[BodyRecord]:
    """Each well-formed line of the bodyfile whose name lies below ``mount_point``; a bad line is a problem."""
    for number, raw in enumerate(io.BytesIO(data), start=1):
        line = decode(raw.rstrip(b"\n").rstrip(b"\r"))
        if not line:
            continue
        record = _body_record(line, number, mount_point, problems)
        if record is None:
            stats["bad_lines"] = stats.get("bad_lines", 0) + 1
        elif not record.paths:
            stats["outside_mount_point"] = stats.get("outside_mount_point", 0) + 1
        else:
            yield record


def _body_record(line: str, number: int, mount_point: str, problems: Problems) -> BodyRecord | None:
    fields = line.split("|")
    where = f"{BODYFILE} line {number}"
    if len(fields) < 11:
        problems.add(f"{where}: not a bodyfile line (11 fields separated by |); skipped")
        return None
    name, numbers = "|".join(fields[1:-9]), fields[-9:]
    mode_text = numbers[1]
    values = [_integer(text) for index, text in enumerate(numbers) if index != 1]
    if any(value is None for value in values) or not mode_text[:1] or mode_text[:1] not in TYPE_BITS:
        problems.add(f"{where}: a field is not a number, or the mode {mode_text[:12]!r} is not ls-style; skipped")
        return None
    ino, uid, gid, size, atime, mtime, ctime, btime = (value for value in values if value is not None)
    if min(ino, uid, gid, size) < 0 or max(abs(atime), abs(mtime), abs(ctime), abs(btime)) > MAX_SECONDS:
        problems.add(f"{where}: a number is out of range; skipped")
        return None
    kind = KIND_OF_TYPE.get(mode_text[0], "special")
    link_target = None
    if kind == "symlink" and " -> " in name:
        name, link_target = name.split(" -> ", 1)
    md5 = fields[0].lower() if re.fullmatch(r"[0-9a-fA-F]{32}", fields[0]) and set(fields[0]) != {"0"} else None
    return BodyRecord(line=number, paths=_subject_candidates(name, mount_point), kind=kind,
                      mode=_mode_bits(mode_text), uid=uid, gid=gid, size=size, ino=ino, atime=atime, mtime=mtime,
                      ctime=ctime, btime=btime or None, md5=md5, link_target=link_target)


def _integer(text: str) -> int | None:
    return int(text) if re.fullmatch(r"-?\d{1,20}", text) else None


def _mode_bits(text: str) -> int | None:
    """``-rwsr-x--T`` as st_mode (type, permission, setuid, setgid and sticky bits); None if malformed."""
    if len(text) < 10:
        return None
    mode = TYPE_BITS[text[0]]
    for index, (bit, letter) in enumerate(PERMISSION_BITS):
        char = text[1 + index]
        if char == letter:
            mode |= bit
        elif index in SPECIAL_BITS and char in ("tT" if index == 8 else "sS"):
            mode |= SPECIAL_BITS[index] | (bit if char.islower() else 0)
        elif char != "-":
            return None
    return mode


def _subject_candidates(name: str, mount_point: str) -> tuple[str, ...]:
    paths = []
    for candidate in (name, *_unquoted(name)):
        path = strip_mount_point(candidate, mount_point)
        if path is not None and path not in paths:
            paths.append(path)
    return tuple(paths)


def strip_mount_point(name: str, mount_point: str) -> str | None:
    """The subject's path of a name UAC wrote with its mount point in front; None when it is not below it."""
    name = re.sub(r"/{2,}", "/", name)
    mount = re.sub(r"/{2,}", "/", mount_point).rstrip("/")
    if not mount:
        return name if name.startswith("/") else None
    if name == mount:
        return "/"
    return name[len(mount):] if name.startswith(mount + "/") else None


def _unquoted(name: str) -> list[str]:
    """The name as GNU stat meant it, when stat shell-quoted it and UAC stripped only the outer quotes."""
    if "'" not in name and '"' not in name and "\\" not in name:
        return []
    results = []
    for quote in ("'", '"'):
        value = shell_word(quote + name + quote)
        if value is not None and value != name:
            results.append(value)
    return results


def shell_word(word: str) -> str | None:
    r"""One POSIX shell word (``'...'``, ``"..."``, ``$'...'`` with C escapes, ``\x``) as text; None if unbalanced."""
    out = bytearray()
    index = 0
    while index < len(word):
        char = word[index]
        if word.startswith("$'", index):
            index = _ansi_c(word, index + 2, out)
        elif char == "'":
            end = word.find("'", index + 1)
            if end < 0:
                return None
            out += word[index + 1:end].encode("utf-8", "surrogateescape")
            index = end + 1
        elif char == '"':
            index = _double_quoted(word, index + 1, out)
        elif char == "\\" and index + 1 < len(word):
            out += word[index + 1].encode("utf-8", "surrogateescape")
            index += 2
        else:
            out += char.encode("utf-8", "surrogateescape")
            index += 1
        if index < 0:
            return None
    return decode(bytes(out))


ANSI_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27, "E": 27,
                "\\": 92, "'": 39, '"': 34, "?": 63}


def _ansi_c(word: str, index: int, out: bytearray) -> int:
    while index < len(word):
        char = word[index]
        if char == "'":
            return index + 1
        if char != "\\" or index + 1 >= len(word):
            out += char.encode("utf-8", "surrogateescape")
            index += 1
            continue
        escape = word[index + 1]
        octal = re.match(r"[0-7]{1,3}", word[index + 1:])
        hexa = re.match(r"x([0-9a-fA-F]{1,2})", word[index + 1:])
        if octal:
            out.append(int(octal.group(0), 8) & 0xFF)
            index += 1 + len(octal.group(0))
        elif hexa:
            out.append(int(hexa.group(1), 16))
            index += 1 + len(hexa.group(0))
        else:
            out.append(ANSI_ESCAPES.get(escape, ord(escape) if ord(escape) < 128 else 63))
            index += 2
    return -1


def _double_quoted(word: str, index: int, out: bytearray) -> int:
    while index < len(word):
        char = word[index]
        if char == '"':
            return index + 1
        if char == "\\" and index + 1 < len(word) and word[index + 1] in '"\\$`':
            out += word[index + 1].encode()
            index += 2
            continue
        out += char.encode("utf-8", "surrogateescape")
        index += 1
    return -1


# -- hash lists -------------------------------------------------------------------------

GNU_LINE = re.compile(r"^(\\?)([0-9a-fA-F]+) [ *](.*)$")
BSD_LINE = re.compile(r"^[A-Za-z0-9-]+ ?\((.*)\) ?= ?([0-9a-fA-F]+)$")


def parse_hash_list(member: str, data: bytes, problems: Problems) -> Iterator[tuple[int, str, str]]:
    """(line, name, lowercase hex) of each line of ``member`` (``hash_list.md5`` ...); a bad line is a problem."""
    algorithm = HASH_LISTS[member.rsplit("/", 1)[-1]]
    for number, line in enumerate(decode(data).split("\n"), start=1):
        if not line:
            continue
        gnu, bsd = GNU_LINE.match(line), BSD_LINE.match(line)
        if gnu:
            name, digest = gnu.group(3), gnu.group(2)
            if gnu.group(1):  # GNU escaped the name: \\ is a backslash, \n a newline
                name = re.sub(r"\\(.)", lambda match: "\n" if match.group(1) == "n" else match.group(1), name)
        elif bsd:
            name, digest = bsd.group(1), bsd.group(2)
        else:
            problems.add(f"{member} line {number}: not a '<digest>  <name>' line; skipped")
            continue
        if len(digest) != HEX_LENGTHS[algorithm]:
            problems.add(f"{member} line {number}: {len(digest)} hex digits, not {HEX_LENGTHS[algorithm]} "
                         f"for {algorithm}; skipped")
            continue
        yield number, name, digest.lower()
