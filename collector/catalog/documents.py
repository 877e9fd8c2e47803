"""The catalog files' documents: their YAML read strictly, or the parsed form the build wrote.

Standalone (it imports nothing of aitrail, and yaml only when a file is read
as YAML) so that the build (setup.py) writes the parsed documents with this
very code. The parsed form is ``parsed-documents.json`` beside the YAML files:

    {"format": 1, "documents": {"<file>.yaml": {"sha256": <of its bytes>, "document": ...}}}

A catalog file whose bytes have that digest is read from there: the same
document, in about a twentieth of the time of YAML and without importing
yaml (a few percent of a collection's wall time). Any other file, and every
file when the parsed form is missing or unreadable, is read from its YAML.
Either way the caller validates the document in full (catalog_schema).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

PARSED_DOCUMENTS = "parsed-documents.json"
PARSED_FORMAT = 1
NOT_PARSED = object()  # parsed_document's answer for a file that must be read from its YAML


class DocumentError(ValueError):
    """A catalog file that is not UTF-8 YAML (or has a duplicate key)."""


class YamlUnavailable(ImportError):
    """A catalog file must be read as YAML where PyYAML is not installed (the frozen collector leaves it out)."""


def yaml_document(data: bytes) -> Any:
    """A catalog file's document, read as YAML; DocumentError says why not, YamlUnavailable that it cannot be."""
    try:
        import yaml  # here: a run whose catalog files all have parsed documents never imports it
    except ImportError as exc:  # an ImportError still: the build (setup.py) then writes no parsed documents
        raise YamlUnavailable(
            f"PyYAML is not installed, and the file is not one of the parsed documents ({PARSED_DOCUMENTS}) read "
            "without it: the collector-only build reads the catalog it was built with; use the full install for "
            "other catalog files") from exc

    try:
        return yaml.load(data.decode("utf-8"), Loader=_strict_loader())  # noqa: S506 - a strict SafeLoader
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DocumentError(str(exc)) from exc


@functools.cache
def _strict_loader() -> type:
    """SafeLoader (libyaml's when available) that refuses duplicate mapping keys (PyYAML keeps the last)."""
    import yaml

    class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        pass

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict:
        mapping: dict = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in mapping:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            mapping[key] = loader.construct_object(value_node, deep=deep)
        return mapping

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


def read_parsed(directory: Path) -> dict[str, Any]:
    """The parsed documents of a catalog directory, by file name; {} when there are none to use."""
    try:
        record = json.loads((Path(directory) / PARSED_DOCUMENTS).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict) or record.get("format") != PARSED_FORMAT:
        return {}
    documents = record.get("documents")
    return documents if isinstance(documents, dict) else {}


def parsed_document(parsed: dict[str, Any], name: str, data: bytes) -> Any:
    """The parsed document of a file whose bytes are the ones it was parsed from, else NOT_PARSED."""
    entry = parsed.get(name)
    if (isinstance(entry, dict) and "document" in entry
            and entry.get("sha256") == hashlib.sha256(data).hexdigest()):
        return entry["document"]
    return NOT_PARSED


def parsed_documents(directory: Path) -> dict[str, Any]:
    """What the build writes to PARSED_DOCUMENTS: every catalog file that reads as YAML and survives JSON.

    A document that JSON would change (a date, a key that is not a string) is
    left out, and that file is read from its YAML at every run; so is one
    that does not read (the run reports it).
    """
    documents: dict[str, Any] = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        data = path.read_bytes()
        try:
            document = yaml_document(data)
            survives = json.loads(json.dumps(document)) == document
        except (DocumentError, TypeError, ValueError):
            continue
        if survives:
            documents[path.name] = {"sha256": hashlib.sha256(data).hexdigest(), "document": document}
    return {"format": PARSED_FORMAT, "documents": documents}
