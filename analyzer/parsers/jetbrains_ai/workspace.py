"""JetBrains AI Assistant chats in an IDE's ``workspace/<hash>.xml`` (component ``ChatSessionStateTemp``).

[obs] sfinktah/junie-export@eaa5838705 ``extract_aichat.py``
(``extract_chat_sessions``, ``get_option_value``) and its README: only a
file holding ``<component name="ChatSessionStateTemp">`` has chats; each
``SerializedChat`` holds ``option`` elements (a ``value`` attribute, or the
element's text): ``title/SerializedChatTitle/option[text]``, ``chatModelId``
(``agent_*`` for agent sessions), ``uid``, ``sourceActionType`` (on the chat
or in its statistics), ``statisticInformation/ChatStatisticInformation/
option[timestamp]``, ``modifiedAt`` and ``messages/list/SerializedChatMessage``
with ``author``, ``displayContent`` (what the user saw) and
``internalContent`` (what the model was sent). The wrappers above
``SerializedChat`` are not fixed by the source, so chats are found anywhere
under the component.

Time: the unit of ``statisticInformation.timestamp`` (and ``modifiedAt``) is
not confirmed (junie-export reads it as epoch milliseconds; the research
leaves it open), so the value stays raw in the ``session:`` row and no row of
the file is timed (``timestamp_source`` none): the file's mtime is the last
write of the whole workspace state, not of a chat. The file names no
project (the name is a workspace hash).
"""

from __future__ import annotations

from collections.abc import Iterator
from xml.etree.ElementTree import Element

from aitrail.analyzer.formats.text import bad_file
from aitrail.analyzer.view.context import ParseContext
from aitrail.analyzer.view.rows import Draft

from . import xml_safe

COMPONENT = "ChatSessionStateTemp"


def option(node: Element | None, name: str) -> str | None:
    """The value of the child ``<option name=...>`` (its ``value`` attribute, else its text)."""
    if node is None:
        return None
    for child in node.findall("option"):
        if child.get("name") == name:
            if "value" in child.attrib:
                return child.get("value")
            return (child.text or "").strip() or None
    return None


def option_node(node: Element | None, name: str) -> Element | None:
    """The child ``<option name=...>`` element itself."""
    if node is None:
        return None
    return next((child for child in node.findall("option") if child.get("name") == name), None)


def parse_workspace_chats(ctx: ParseContext) -> Iterator[Draft]:
    """workspace/*.xml: per AI Assistant chat a ``session:`` row and its messages; a file with no chat gives none."""
    try:
        root = xml_safe.parse(ctx.data)  # every file: one that is not well-formed XML says so
    except xml_safe.Refused as exc:
        yield bad_file(f"{ctx.source.name}: {exc}")
        return
    workspace = ctx.source.path.rsplit("/", 1)[-1].removesuffix(".xml")
    components = [component for component in root.iter("component") if component.get("name") == COMPONENT]
    index = 0
    for component in components:
        for chat in component.iter("SerializedChat"):
            yield from _chat(chat, index, workspace)
            index += 1


def _chat(chat: Element, index: int, workspace: str) -> Iterator[Draft]:
    where = f"xml:/chats/{index}"
    title_node = option_node(chat, "title")
    title = option(title_node.find("SerializedChatTitle") if title_node is not None else None, "text")
    statistics = option_node(chat, "statisticInformation")
    statistics = statistics.find("ChatStatisticInformation") if statistics is not None else None
    uid, model = option(chat, "uid") or "", option(chat, "chatModelId") or ""
    facts = [f"uid={uid}", f"chatModelId={model}"]
    source = option(chat, "sourceActionType") or option(statistics, "sourceActionType")
    if source:
        facts.append(f"sourceActionType={source}")
    stamp = option(statistics, "timestamp")
    if stamp:
        facts.append(f"statisticInformation.timestamp={stamp} (unit not confirmed; junie-export reads it as epoch "
                     "milliseconds)")
    modified = option(chat, "modifiedAt")
    if modified:
        facts.append(f"modifiedAt={modified} (unit not confirmed)")
    facts.append(f"workspace file {workspace}")
    columns = {"session_id": uid, "model": model, "timestamp_source": "none"}
    yield Draft("system", f"session: {title or ''} ({', '.join(facts)})", where, **columns)
    messages = option_node(chat, "messages")
    listed = messages.find("list") if messages is not None else None
    for position, message in enumerate(listed.findall("SerializedChatMessage") if listed is not None else []):
        yield from _message(message, f"{where}/messages/{position}", model.startswith("agent_"), columns)


def _message(message: Element, where: str, agent: bool, columns: dict) -> Iterator[Draft]:
    author = option(message, "author") or ""
    shown = option(message, "displayContent") or ""
    internal = option(message, "internalContent")
    if author == "User":
        yield Draft("user", shown or internal or "", where, **columns)
    elif author == "Assistant":
        if shown or internal:
            yield Draft("assistant", shown or internal or "", where, **columns)
        else:
            note = "; the agent's actions are kept in aia-task-history" if agent else ""
            yield Draft("system", f"assistant message with no content in the workspace file{note}", where, **columns)
    else:
        yield Draft("system", f"message ({author}): {shown or internal or ''}", where, **columns)
    if internal and shown and internal != shown:
        yield Draft("system", f"internal content (sent to the model, not shown): {internal}", f"{where}/internal",
                    **columns)
