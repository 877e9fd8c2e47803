"""ChatGPT desktop v1 conversation files: the ``mapping`` tree walked into rows.

[obs] One file ``conversations-<store uuid>/<conversation>.json`` is one
conversation: ``{id, title, create_time, update_time, current_node, mapping}``,
where ``mapping`` maps a node id to ``{id, message, parent, children}``. The
tree branches where the user edited a prompt or asked for another reply; the
conversation as last shown is the path from ``current_node`` up to the root.

The walk (docs/agents/chatgpt-desktop.md):

* from every root (``parent`` null), depth first, children in their listed
  order, with an explicit stack and a visited set: no recursion, every node at
  most once, so a hostile tree costs at most its size;
* a node whose parent is not in the mapping, a child id that is not, a node
  reached a second time (a cycle, or a child listed under two parents) and a
  loop no root leads to each give one ``parser: unparseable record`` row; the
  nodes themselves are still read (an orphan as a root of its own);
* where the walk leaves the path to ``current_node``, one ``branch:`` row
  says the nodes below are not on it.

A message is a row by ``author.role``: user, assistant, ``tool`` as
``tool_result`` (tool name ``author.name``; the format has no call ids, so
nothing is joined), ``system`` as ``system message:``, any other role as
``message (<role>):``; a content with neither ``parts`` nor ``text``
(``user_editable_context``: the custom instructions the app attaches) is a
``content (<content_type>, role <role>):`` system row, never a typed prompt.
A message's time is ``create_time``, float Unix seconds read as written
(formats/float_seconds.py); a message without one takes the
conversation's ``create_time`` (``index``). ``metadata.model_slug`` fills the
model column and gives ``model:`` rows where it first appears and changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from aitrail.analyzer.formats.float_seconds import ns_from_float_seconds
from aitrail.analyzer.formats.idioms import pointer
from aitrail.analyzer.formats.json_values import compact, document_or_row, label, mapping
from aitrail.analyzer.formats.text import bad_record, excerpt, json_document
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

ROLE_TURNS = {"user": "user", "assistant": "assistant", "tool": "tool_result"}


@dataclass
class _Walk:
    """What the walk of one file carries: the session, its fallback time, the branch and the model so far."""

    session: str
    session_ns: int | None
    nodes: dict
    active: set = field(default_factory=set)  # node ids on the path from current_node to the root
    current: str = ""
    visited: set = field(default_factory=set)
    model: str = ""

    def timed(self, ns: int | None) -> dict:
        """A row's time: the message's own, else the conversation's (``index``), else none."""
        if ns is not None:
            return {"timestamp_ns": ns, "timestamp_source": "record"}
        if self.session_ns is not None:
            return {"timestamp_ns": self.session_ns, "timestamp_source": "index"}
        return {"timestamp_ns": None, "timestamp_source": "none"}


def parse_conversation(ctx: ParseContext) -> Iterator[Draft]:
    """One v1 conversation file: its title, then every message of its tree as a row."""
    document = yield from document_or_row(json_document(ctx.data, "conversation file"))
    if document is None:
        return
    session = label(document.get("id")) or label(document.get("conversation_id")) or _stem(ctx.source.name)
    walk = _Walk(session, ns_from_float_seconds(document.get("create_time")), {})
    title = document.get("title")
    if isinstance(title, str) and title.strip():
        yield Draft("system", f"title: {title}", pointer("title"), session_id=session, **walk.timed(None))
    nodes = document.get("mapping")
    if not isinstance(nodes, dict):
        yield _bad(walk, pointer("mapping"), "the conversation has no mapping object", compact(nodes))
        return
    walk.nodes = nodes
    yield from _mark_active_path(walk, document.get("current_node"))
    yield from _walk_tree(walk)


def _bad(walk: _Walk, locator: str, reason: str, raw: str = "") -> Draft:
    """A ``parser: unparseable record`` row that names the conversation it is in."""
    row = bad_record(locator, reason, raw)
    row.session_id = walk.session
    return row


def _stem(name: str) -> str:
    return name[:-5] if name.endswith(".json") else name


def _mark_active_path(walk: _Walk, current) -> Iterator[Draft]:
    """The ids from ``current_node`` up to its root (bounded by the mapping's size: a loop ends it)."""
    if current is None:
        return
    if not isinstance(current, str) or current not in walk.nodes:
        yield _bad(walk, pointer("current_node"), "current_node is not a node of the mapping", compact(current))
        return
    walk.current, node_id = current, current
    while isinstance(node_id, str) and node_id in walk.nodes and node_id not in walk.active:
        walk.active.add(node_id)
        node_id = mapping(walk.nodes[node_id]).get("parent")


def _starts(walk: _Walk) -> Iterator[tuple[str, Draft | None]]:
    """Where walks begin: roots, then orphans (a parent not in the mapping), each with the row it needs."""
    for node_id, node in walk.nodes.items():
        if not isinstance(node, dict):
            continue
        parent = node.get("parent")
        if parent is None:
            yield node_id, None
    for node_id, node in walk.nodes.items():
        parent = mapping(node).get("parent")
        if isinstance(node, dict) and parent is not None and (not isinstance(parent, str) or parent not in walk.nodes):
            yield node_id, _bad(walk, pointer("mapping", node_id, "parent"),
                                f"the parent of node {node_id} is not in the mapping", compact(parent))


def _walk_tree(walk: _Walk) -> Iterator[Draft]:
    for node_id, node in walk.nodes.items():
        if not isinstance(node, dict):
            yield _bad(walk, pointer("mapping", node_id), "a mapping node is not an object", compact(node))
    for node_id, problem in _starts(walk):
        if problem is not None:
            yield problem
        if node_id not in walk.visited:  # an orphan another node lists as its child was read there
            yield from _descend(walk, node_id)
    for node_id, node in walk.nodes.items():
        if isinstance(node, dict) and node_id not in walk.visited:
            yield _bad(walk, pointer("mapping", node_id), f"node {node_id} is reached from no root: its parent "
                                                                "chain loops")
            yield from _descend(walk, node_id)


def _descend(walk: _Walk, start: str) -> Iterator[Draft]:
    """Depth first from ``start``, children in listed order; every node at most once."""
    stack = [(start, "")]
    while stack:
        node_id, via = stack.pop()
        if node_id in walk.visited:
            yield _bad(walk, pointer("mapping", via, "children"), f"node {node_id}, a child of node {via}, was "
                                                                        "already read (a cycle or a shared child)")
            continue
        walk.visited.add(node_id)
        node = walk.nodes[node_id]
        if walk.active and node_id not in walk.active and (not via or via in walk.active):
            yield _branch_row(walk, node_id, node)
        yield from _message_rows(walk, node_id, node.get("message"))
        children = node.get("children")
        if children is None:
            continue
        if not isinstance(children, list):
            yield _bad(walk, pointer("mapping", node_id, "children"), "children is not an array", compact(children))
            continue
        pending = []
        for index, child in enumerate(children):
            if isinstance(child, str) and isinstance(walk.nodes.get(child), dict):
                pending.append((child, node_id))
            else:
                yield _bad(walk, pointer("mapping", node_id, "children", index),
                           f"a child of node {node_id} is not a node of the mapping", compact(child))
        stack.extend(reversed(pending))


def _branch_row(walk: _Walk, node_id: str, node: dict) -> Draft:
    ns = ns_from_float_seconds(mapping(node.get("message")).get("create_time"))
    return Draft("system", f"branch: node {node_id} and the nodes below it are not on the path from current_node "
                           f"{walk.current} to the root (an abandoned branch)", pointer("mapping", node_id),
                 session_id=walk.session, **walk.timed(ns))


def _message_rows(walk: _Walk, node_id: str, message) -> Iterator[Draft]:
    if message is None:
        return  # a structural node (the tree's root carries no message)
    locator = pointer("mapping", node_id, "message")
    if not isinstance(message, dict):
        yield _bad(walk, locator, "a message is not an object", compact(message))
        return
    text = content_text(message.get("content"))
    if text is None:
        yield _bad(walk, pointer("mapping", node_id, "message", "content"), "a message content is not an object",
                         compact(message.get("content")))
        return
    author = mapping(message.get("author"))
    role = author.get("role")
    model = label(mapping(message.get("metadata")).get("model_slug"))
    timed = walk.timed(ns_from_float_seconds(message.get("create_time")))
    if model and model != walk.model:
        change = f"{walk.model} -> {model}" if walk.model else model
        walk.model = model
        yield Draft("system", f"model: {change}", pointer("mapping", node_id, "message", "metadata", "model_slug"),
                    session_id=walk.session, model=model, **timed)
    if not text.strip():
        return  # an empty message (the hidden system prompt, a reply that was only a tool call) shows nothing
    kind = _other_content(message.get("content"))
    if kind is not None:  # context the app attached (custom instructions and the like), not typed
        yield Draft("system", f"content ({kind}, role {_role_label(role)}): {text}", locator,
                    session_id=walk.session, model=model, **timed)
        return
    turn, shown = _turn(role, text)
    yield Draft(turn, shown, locator, session_id=walk.session, model=model,
                tool_name=label(author.get("name")) if turn == "tool_result" else "", **timed)


def _role_label(role) -> str:
    return role if isinstance(role, str) and len(role) <= 80 else excerpt(compact(role), 80)


def _other_content(content) -> str | None:
    """The content_type of a content that has neither ``parts`` nor ``text`` (None for a text content)."""
    if not isinstance(content, dict) or isinstance(content.get("parts"), list) or isinstance(content.get("text"), str):
        return None
    return label(content.get("content_type"), 80) or "no content_type"


def _turn(role, text: str) -> tuple[str, str]:
    if isinstance(role, str) and role in ROLE_TURNS:
        return ROLE_TURNS[role], text
    if role == "system":
        return "system", f"system message: {text}"
    return "system", f"message ({_role_label(role)}): {text}"


def content_text(content) -> str | None:
    """A message's text: its string parts (other parts as ``[<content_type> <asset>]``), else ``text``.

    Content of another shape (``user_editable_context`` and the like) is shown
    as compact JSON without its ``content_type``. None when it is not an object.
    """
    if content is None:
        return ""
    if not isinstance(content, dict):
        return None
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(_part_text(part) for part in parts)
    text = content.get("text")
    if isinstance(text, str):
        return text
    rest = {key: value for key, value in content.items() if key != "content_type"}
    return compact(rest) if rest else ""


def _part_text(part) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        if isinstance(part.get("text"), str):
            return part["text"]
        kind = label(part.get("content_type"), 80) or "part"
        asset = label(part.get("asset_pointer"))
        return f"[{kind} {asset}]" if asset else f"[{kind}]"
    return compact(part)
