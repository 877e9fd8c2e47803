"""What a shell command line does that the report lists: network use, and files it deletes.

The command text comes from the bundle (hostile): it is read once, left to
right, at most ``SCAN_MAX`` characters, into simple commands (words split at
blanks, commands at ``;``, ``&``, ``|``, newlines, parentheses and
backquotes, quotes and backslashes honoured); a ``bash -c '<script>'`` is
read once more, one level deep. Nothing is run or expanded.
"""

from __future__ import annotations

import re

SCAN_MAX = 64 * 1024  # characters of a command line that are read
WORDS_MAX = 4096  # words of one simple command that are kept
NESTING_MAX = 1  # `sh -c '<script>'` read inside a command line, this many levels

# Programs that reach the network whatever their arguments, and programs that do so with one of the subcommands
# given (the contract of docs/report.md: curl, wget, ssh, scp, nc, git clone/push/pull, pip/npm install ...).
NETWORK_PROGRAMS = frozenset({"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp",
                              "gh"})
NETWORK_SUBCOMMANDS = {
    "git": frozenset({"clone", "push", "pull", "fetch", "ls-remote"}),
    "pip": frozenset({"install", "download"}), "pip3": frozenset({"install", "download"}),
    "npm": frozenset({"install", "i", "ci", "publish", "add"}), "pnpm": frozenset({"install", "add", "i"}),
    "yarn": frozenset({"install", "add"}), "gem": frozenset({"install"}), "cargo": frozenset({"install"}),
    "go": frozenset({"get", "install"}), "docker": frozenset({"pull", "push"}),
}
DELETE_PROGRAMS = frozenset({"rm"})  # each path named is deleted
DELETE_SUBCOMMANDS = {"git": frozenset({"rm"})}  # `git rm <path>` deletes the working-tree file too
WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "nice"})  # run the command after them
WRAPPER_VALUE_OPTIONS = frozenset({"-u", "-g", "-n", "-C"})  # a wrapper's option that takes the next word
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
SEPARATORS = frozenset(";&|\n()`")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}=")
_QUOTING = re.compile(r"['\"\\]")
_SEPARATOR = re.compile(r"[;&|\n()`]")


def simple_commands(text: str, depth: int = 0) -> list[list[str]]:
    """The words of each simple command in ``text`` (a ``sh -c`` script's commands in its place)."""
    commands: list[list[str]] = []
    for words in _split(text[:SCAN_MAX]):
        words = _unwrapped(words)
        script = _shell_script(words) if depth < NESTING_MAX else None
        if script is not None:
            commands.extend(simple_commands(script, depth + 1))
        elif words:
            commands.append(words)
    return commands


def effects(text: str) -> tuple[list[str], list[str]]:
    """What ``text`` does that the report lists: ``(network uses, deleted paths)`` (one reading of it)."""
    uses: list[str] = []
    paths: list[str] = []
    for words in simple_commands(text):
        if _reaches_network(words):
            uses.append(" ".join(words)[:500])
        paths += _deleted(words)
    return uses, paths


def network_uses(text: str) -> list[str]:
    """Each simple command of ``text`` that reaches the network (NETWORK_PROGRAMS, NETWORK_SUBCOMMANDS), as text."""
    return effects(text)[0]


def deleted_paths(text: str) -> list[str]:
    """Each path an ``rm`` (or ``git rm``) in ``text`` names."""
    return effects(text)[1]


def _deleted(words: list[str]) -> list[str]:
    program = _program(words)
    if program in DELETE_PROGRAMS:
        return _operands(words[1:])
    if len(words) > 1 and words[1] in DELETE_SUBCOMMANDS.get(program, ()):
        return _operands(words[2:])
    return []


def _reaches_network(words: list[str]) -> bool:
    program = _program(words)
    if program in NETWORK_PROGRAMS:
        return True
    subcommands = NETWORK_SUBCOMMANDS.get(program)
    if subcommands is None:
        return False
    first = next((word for word in words[1:] if not word.startswith("-")), "")
    return first in subcommands


def _program(words: list[str]) -> str:
    return words[0].rpartition("/")[2] if words else ""


def _operands(words: list[str]) -> list[str]:
    """Words that are not options (all after ``--``)."""
    found, options = [], True
    for word in words:
        if options and word == "--":
            options = False
        elif not (options and word.startswith("-")) and word:
            found.append(word)
    return found


def _unwrapped(words: list[str]) -> list[str]:
    """The command without leading ``NAME=value`` assignments and wrappers (``sudo -u x``, ``env``, ``time``)."""
    start, wrapped = 0, False
    while start < len(words):
        word = words[start]
        if wrapped and word in WRAPPER_VALUE_OPTIONS:
            start += 2
        elif _ASSIGNMENT.match(word) or (wrapped and word.startswith("-")):
            start += 1
        elif word.rpartition("/")[2] in WRAPPERS:
            start, wrapped = start + 1, True
        else:
            break
    return words[start:]


def _shell_script(words: list[str]) -> str | None:
    """The script of ``sh -c '<script>'`` / ``bash -lc '<script>'``, else None."""
    if len(words) < 3 or _program(words) not in SHELLS:
        return None
    for position, word in enumerate(words[1:-1], start=1):
        if word.startswith("-") and not word.startswith("--") and "c" in word:
            return words[position + 1]
    return None


def _split(text: str) -> list[list[str]]:
    """Simple commands as word lists: one pass over ``text``, quotes and backslashes honoured."""
    if not _QUOTING.search(text):  # the common case, read by the regex engine rather than a character loop
        commands = [part.split()[:WORDS_MAX] for part in _SEPARATOR.split(text)]
        return [words for words in commands if words]
    return _split_quoted(text)


def _split_quoted(text: str) -> list[list[str]]:
    """``_split`` for a text with quotes or backslashes: a character loop that honours them."""
    commands: list[list[str]] = []
    words: list[str] = []
    word: list[str] = []
    quote, escaped, started = "", False, False
    for char in text:
        if escaped:
            word.append(char)
            escaped, started = False, True
        elif quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                escaped = True
            else:
                word.append(char)
        elif char == "\\":
            escaped = True
        elif char in "'\"":
            quote, started = char, True
        elif char.isspace() or char in SEPARATORS:
            if started and len(words) < WORDS_MAX:
                words.append("".join(word))
            word, started = [], False
            if char in SEPARATORS and words:
                commands.append(words)
                words = []
        else:
            word.append(char)
            started = True
    if started and len(words) < WORDS_MAX:
        words.append("".join(word))
    if words:
        commands.append(words)
    return commands
