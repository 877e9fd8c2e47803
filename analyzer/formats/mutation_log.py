"""VS Code's ``ObjectMutationLog``: an append-only JSONL log of edits to one JSON object, replayed.

Gen C Copilot chat sessions (``chatSessions/<id>.jsonl``, VS Code >= 1.109) are
such a log (research/formats-vscode-family.md 2.7; microsoft/vscode@ce1580aa
src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts ``EntryKind``,
``ObjectMutationLog.read``, ``_applySet``, ``_applyPush``, ``_diffArray``). One JSON object per line:

- ``{"kind":0,"v":obj}`` Initial: the whole object (line 1; the writer compacts
  the file into one such line past its line threshold);
- ``{"kind":1,"k":[path],"v":value}`` Set: replace the value at the path;
- ``{"kind":2,"k":[path],"v":[items]?,"i":n?}`` Push: truncate the array at the
  path to length ``i`` when given, then append ``v`` when given;
- ``{"kind":3,"k":[path]}`` Delete: remove the key (an array item becomes null,
  as JavaScript's ``delete`` leaves a hole).

Paths mix object keys and array indexes. Replay applies the lines in order, last
write wins, as upstream's ``read`` does (an Initial on a later line starts the
object again; a Push onto a missing key creates the array). Where upstream's
reader would throw and lose the whole session (a line that is not JSON, a path
through a missing value), this replay reports the line and goes on. One
difference is kept on purpose: upstream ignores a Set with an empty path (its
writer emits one when the root object's key fields change), this replay applies
it, so the newest state the writer meant is the one shown. A truncating ``i``
longer than the array (JavaScript would pad it with holes) is a problem row.

The replayed object has a budget (MAX_REPLAY_COST, estimated bytes of objects
summed over the lines applied, decode.decode_cost): forty push lines of a
million empty objects each (every one under the per-text limit) would hold
gigabytes. Past it the lines are counted, not decoded, and one ``parser:`` row
names the line where the limit was reached; the object as it stood is used.

Every line is accounted for: one that is not JSON, comes before any
Initial, names a path that does not exist, or would nest the object deeper than
decode.MAX_NESTING is one ``parser:`` row at its line, and replay goes on with the
next. ``Origins`` records which line last wrote each part of the object, so each
value taken from the result can cite the line it came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from aitrail.analyzer.formats.text import bad_line
from aitrail.analyzer.view.bundle import MemberUnreadable
from aitrail.analyzer.view.context import RawLine
from aitrail.analyzer.view.decode import MAX_NESTING, decode_cost, decode_json
from aitrail.analyzer.view.rows import Draft

INITIAL, SET, PUSH, DELETE = 0, 1, 2, 3
MAX_PATH = 64  # path components; upstream paths are a handful deep (["requests", 0, "response"])
MAX_REPLAY_COST = 512 * 1024 * 1024  # estimated bytes of objects applied per log, all lines together
# a pushed item costs its object and an Origins node (measured: a string item ~69 bytes estimated, ~302 held)
ORIGIN_FACTOR = 5


class Unapplicable(ValueError):
    """A well-formed line that cannot be applied to the object as it stands; the message says why."""


@dataclass
class _Node:
    line: int = 0  # the last line that replaced the value here whole
    below: int = 0  # the last line that changed anything at or under here
    children: dict = field(default_factory=dict)


class Origins:
    """Which line last wrote each part of the replayed object (a trie over paths)."""

    def __init__(self) -> None:
        self._root = _Node()

    def _walk(self, path: tuple, create: bool) -> list[_Node]:
        nodes, node = [self._root], self._root
        for part in path:
            child = node.children.get(part)
            if child is None:
                if not create:
                    break
                child = node.children[part] = _Node()
            nodes.append(child)
            node = child
        return nodes

    def replaced(self, path: tuple, line: int) -> None:
        """``line`` wrote the whole value at ``path``."""
        nodes = self._walk(path, create=True)
        nodes[-1].line, nodes[-1].children = line, {}  # older records under it are superseded
        for node in nodes:
            node.below = line

    def changed(self, path: tuple, line: int) -> None:
        """``line`` changed part of the value at ``path`` (a push or truncation)."""
        for node in self._walk(path, create=True):
            node.below = line

    def line_of(self, path: Iterable) -> int:
        """The last line that wrote the value at ``path`` or any part of it (0: none did)."""
        path = tuple(path)
        nodes = self._walk(path, create=False)
        latest = max(node.line for node in nodes)
        if len(nodes) == len(path) + 1:  # the path itself was recorded: changes below it count too
            latest = max(latest, nodes[-1].below)
        return latest


@dataclass
class Replay:
    """The object as the log leaves it (None if no line gave an Initial), its origins and its problem rows."""

    value: object = None
    origins: Origins = field(default_factory=Origins)
    problems: list[Draft] = field(default_factory=list)
    lines: int = 0  # lines applied
    last_line: int = 0  # number of the last line read
    failure: MemberUnreadable | None = None  # the content ended early: raise it after yielding the rows

    def locator(self, *path: object) -> str:
        """``line:N`` of the line that last wrote ``path`` (the Initial's line for values it alone gave)."""
        return f"line:{self.origins.line_of(path) or self.last_line}"


def _depth(value: object) -> int:
    """Nesting of arrays/objects in ``value``, without recursion (0 for a scalar)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _step(container: object, part: object, path: tuple) -> object:
    if isinstance(container, dict):
        key = part if isinstance(part, str) else str(part)  # JavaScript object keys are strings
        if key not in container:
            raise Unapplicable(f"no key {key!r} at {list(path)}")
        return container[key]
    if isinstance(container, list):
        index = _index(part, path)
        if index >= len(container):
            raise Unapplicable(f"index {index} past the end ({len(container)}) at {list(path)}")
        return container[index]
    raise Unapplicable(f"a {type(container).__name__} at {list(path)}, not an object or array")


def _index(part: object, path: tuple) -> int:
    if isinstance(part, bool) or not isinstance(part, (int, str)) or not str(part).isdigit():
        raise Unapplicable(f"{part!r} is not an array index at {list(path)}")
    return int(part)


def _parent(root: object, path: tuple) -> object:
    node = root
    for position, part in enumerate(path[:-1]):
        node = _step(node, part, path[:position])
    return node


def _key(parts: object) -> tuple:
    if not isinstance(parts, list):
        raise Unapplicable("k is not an array")
    if len(parts) > MAX_PATH:
        raise Unapplicable(f"path of {len(parts)} parts (limit {MAX_PATH})")
    if not all(isinstance(part, (str, int)) and not isinstance(part, bool) for part in parts):
        raise Unapplicable("path parts must be strings or integers")
    return tuple(parts)


def _canonical(container: object, path: tuple) -> tuple:
    """``path`` with list indexes as ints and object keys as strings, as the object holds them."""
    out, node = [], container
    for part in path:
        if isinstance(node, list):
            out.append(_index(part, tuple(out)))
        else:
            out.append(part if isinstance(part, str) else str(part))
        try:
            node = _step(node, out[-1], tuple(out[:-1]))
        except Unapplicable:
            node = None
    return tuple(out)


def _set(root: object, path: tuple, value: object) -> object:
    if not path:
        return value
    parent, last = _parent(root, path), path[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = _index(last, path)
        if index > len(parent):
            raise Unapplicable(f"index {index} past the end ({len(parent)}) at {list(path[:-1])}")
        if index == len(parent):
            parent.append(value)
        else:
            parent[index] = value
    else:
        raise Unapplicable(f"a {type(parent).__name__} at {list(path[:-1])}, not an object or array")
    return root


def _push(root: object, path: tuple, items: object, truncate: object) -> int:
    """Apply a Push; the index of the first appended item."""
    if not path:
        raise Unapplicable("push onto the whole object")
    parent = _parent(root, path)
    if isinstance(parent, dict) and parent.get(path[-1]) in (None, False, 0, ""):
        parent[path[-1]] = []  # upstream: ``current[key] || []``, a missing array is created
    target = _step(parent, path[-1], path[:-1])
    if not isinstance(target, list):
        raise Unapplicable(f"a {type(target).__name__} at {list(path)}, not an array")
    if truncate is not None:
        if isinstance(truncate, bool) or not isinstance(truncate, int) or not 0 <= truncate <= len(target):
            raise Unapplicable(f"i is {truncate!r}, not a length up to the array's ({len(target)})")
        del target[truncate:]
    start = len(target)
    if items is not None:
        if not isinstance(items, list):
            raise Unapplicable("v of a push is not an array")
        target.extend(items)
    return start


def _delete(root: object, path: tuple) -> None:
    if not path:
        raise Unapplicable("delete of the whole object")
    parent, last = _parent(root, path), path[-1]
    if isinstance(parent, dict):
        parent.pop(last, None)
    elif isinstance(parent, list):
        index = _index(last, path)
        if index < len(parent):
            parent[index] = None
    else:
        raise Unapplicable(f"a {type(parent).__name__} at {list(path[:-1])}, not an object or array")


def apply_entry(replay: Replay, entry: dict, line: int) -> None:
    """Apply one decoded log entry to ``replay``; Unapplicable (nothing changed) when it cannot be."""
    kind = entry.get("kind")
    if isinstance(kind, bool) or kind not in (INITIAL, SET, PUSH, DELETE):
        raise Unapplicable(f"unknown kind {kind!r}")
    if kind == INITIAL:
        if "v" not in entry:
            raise Unapplicable("an initial entry without v")
        replay.value, replay.origins = entry["v"], Origins()
        replay.origins.replaced((), line)
        return
    if replay.value is None:
        raise Unapplicable("no initial entry before it")
    path = _canonical(replay.value, _key(entry.get("k")))
    if kind == SET:
        if "v" not in entry:
            raise Unapplicable("a set entry without v")
        if len(path) + _depth(entry["v"]) > MAX_NESTING:
            raise Unapplicable(f"the value would nest deeper than {MAX_NESTING} levels")
        replay.value = _set(replay.value, path, entry["v"])
        replay.origins.replaced(path, line)
    elif kind == PUSH:
        items = entry.get("v")
        if len(path) + _depth(items) > MAX_NESTING:  # the items sit one level below the array
            raise Unapplicable(f"the items would nest deeper than {MAX_NESTING} levels")
        start = _push(replay.value, path, items, entry.get("i"))
        replay.origins.changed(path, line)
        for index in range(start, start + (len(items) if isinstance(items, list) else 0)):
            replay.origins.replaced(path + (index,), line)
    else:
        _delete(replay.value, path)
        replay.origins.replaced(path, line)


def replay_lines(lines: Iterable[RawLine | Draft]) -> Replay:
    """Replay a mutation log given as ``ParseContext.lines()`` items; every unusable line is a problem row.

    If the member ends early (``lines`` raises MemberUnreadable after the lines
    it could give), the replay keeps what was read and holds the error in
    ``failure``: the caller yields its rows, then raises it for dispatch to report.
    """
    replay = Replay()
    spent, over_at, skipped = 0, 0, 0
    items = iter(lines)
    while True:
        try:
            item = next(items)
        except StopIteration:
            break
        except MemberUnreadable as exc:  # e.g. a cut zstd stream: what was read is still replayed
            replay.failure = exc
            break
        if isinstance(item, Draft):  # a line over the length limit: already its own row
            replay.problems.append(item)
            continue
        replay.last_line = item.number
        if not item.raw.strip():
            continue
        if over_at:
            skipped += 1
            continue
        spent += ORIGIN_FACTOR * decode_cost(item.raw)
        if spent > MAX_REPLAY_COST:
            over_at, skipped = item.number, 1
            continue
        try:
            entry = decode_json(item.raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            reason = f"invalid JSON: {exc}" if item.terminated else f"torn last line, no newline: {exc}"
            replay.problems.append(bad_line(item.number, reason, item.raw))
            continue
        if not isinstance(entry, dict):
            replay.problems.append(bad_line(item.number, f"a JSON {type(entry).__name__}, not an object", item.raw))
            continue
        try:
            apply_entry(replay, entry, item.number)
        except Unapplicable as exc:
            replay.problems.append(bad_line(item.number, f"mutation not applied: {exc}", item.raw))
            continue
        replay.lines += 1
    if over_at:
        replay.problems.append(Draft(
            "system", f"parser: mutation log over the replay limit (about {MAX_REPLAY_COST} bytes of objects); "
                      f"{skipped} lines from line {over_at} on were counted, not applied: the session is shown as "
                      "the lines before them left it", f"line:{over_at}", timestamp_source="none"))
    return replay


def split_lines(data: bytes) -> list[RawLine]:
    """``data`` as RawLines (for callers and tests holding bytes rather than a ParseContext)."""
    out, offset = [], 0
    pieces = data.split(b"\n")
    for number, raw in enumerate(pieces, 1):
        terminated = number < len(pieces)
        if raw or terminated:
            out.append(RawLine(number, offset, raw, terminated))
        offset += len(raw) + 1
    return out
