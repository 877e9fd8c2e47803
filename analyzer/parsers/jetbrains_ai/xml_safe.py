"""An untrusted XML file parsed with the standard library only: no DTD, no entities, bounded size and depth.

A workspace XML is the subject's file. ``xml.etree`` (expat) expands internal
entities declared in a DTD, so a "billion laughs" document multiplies a few
kilobytes into gigabytes; external entities are not fetched by
ElementTree, but a DOCTYPE has no place in an IDE's workspace file anyway.
So a file holding ``<!DOCTYPE`` or ``<!ENTITY`` anywhere is refused before
parsing; any other entity reference then fails as undefined (expat knows
only the five predefined ones and character references). The text is at most
MAX_XML_BYTES and the element tree at most MAX_DEPTH levels deep (checked
while parsing, on each start tag): past either, ``Refused`` says why.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

MAX_XML_BYTES = 64 * 1024 * 1024  # the document limit (context.MAX_DOCUMENT_BYTES)
MAX_DEPTH = 256  # IntelliJ's workspace files nest about a dozen levels
_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


class Refused(ValueError):
    """An XML document not parsed (the message says why)."""


def parse(data: bytes) -> ElementTree.Element:
    """The root element of ``data``; Refused for a DTD or entity declaration, size, depth or bad XML."""
    if len(data) > MAX_XML_BYTES:
        raise Refused(f"{len(data)} bytes, over the limit of {MAX_XML_BYTES}")
    found = _DECLARATION.search(data)
    if found:
        raise Refused(f"a <!{found.group(1).decode().upper()} declaration at byte {found.start()}: "
                      "DTDs and entities are never read")
    parser = ElementTree.XMLPullParser(events=("start", "end"))
    depth, root = 0, None
    try:
        for start in range(0, len(data), 1 << 16):
            parser.feed(data[start:start + (1 << 16)])
            for event, element in parser.read_events():
                if event == "start":
                    depth += 1
                    root = root if root is not None else element
                    if depth > MAX_DEPTH:
                        raise Refused(f"elements nested deeper than {MAX_DEPTH} levels")
                else:
                    depth -= 1
        parser.close()
        for _ in parser.read_events():
            pass
    except ElementTree.ParseError as exc:
        raise Refused(f"not well-formed XML: {exc}") from exc
    if root is None:
        raise Refused("no root element")
    return root
