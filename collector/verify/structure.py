"""The structural check of a bundle: what must hold before any member is given to a parser.

Cheap and synchronous (it reads the tag files, never the payload): the index
and trailer (BundleReader), the metadata members' sizes against their limits,
the tag manifest against the index digests of collection.json, files.jsonl,
the catalog and the BagIt files, collection.json's schema, and the signature
policy. ``aitrail verify`` runs it first; ``aitrail analyze`` runs it before
any parser and refuses (without --force) a bundle that fails it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aitrail.collector.bundle import layout
from aitrail.collector.bundle.metadata import iter_lines, load_collection, member_within_limit, read_member
from aitrail.collector.bundle.reader import BundleFormatError, BundleReader

REQUIRED_TAG_FILES = (layout.BAGIT_TXT, layout.BAG_INFO, layout.PAYLOAD_MANIFEST, layout.COLLECTION_JSON,
                      layout.FILES_JSONL, layout.TAG_MANIFEST)
UNSIGNED = ("UNSIGNED: integrity against accident only; anyone who can re-hash the manifests "
            "could have changed this bundle undetected")


@dataclass
class SignaturePolicy:
    """What the examiner demands of the signature (verify and analyze take the same options)."""

    public_key_path: str | None = None  # a PEM file, or the signer's fingerprint sha256:<hex>
    require_signature: bool = False


@dataclass
class Structure:
    """What the structural check established."""

    problems: list[str] = field(default_factory=list)
    signature: str = UNSIGNED
    signed: bool = False
    pinned: bool = False  # the signature verified under a key (or fingerprint) the examiner gave
    signer_fingerprint: str = ""  # of the key the signature verified under
    warnings: list[str] = field(default_factory=list)  # said loudly, but not failures
    collection: dict | None = None


def check_structure(reader: BundleReader, policy: SignaturePolicy) -> Structure:
    """Every structural problem of an opened bundle, named; nothing of the payload is read."""
    result = Structure()
    _check_member_set(reader, result)
    tag_digests = _read_tag_manifest(reader, result)
    if tag_digests is not None:
        _check_tag_digests(reader, tag_digests, result)
    try:
        result.collection = load_collection(reader)
    except (BundleFormatError, KeyError) as exc:
        result.problems.append(_text(exc))
    _check_small_members(reader, result)
    _check_signature(reader, result, policy)
    result.problems = list(dict.fromkeys(result.problems))  # a member over its limit is found by two checks
    return result


def _text(exc: BaseException) -> str:
    return exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)


def _check_member_set(reader: BundleReader, result: Structure) -> None:
    names = {member.name for member in reader.members
             if not member.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR))}
    for name in REQUIRED_TAG_FILES:
        if name not in names:
            result.problems.append(f"{name}: missing from the bundle")
    catalog = 0
    for member in reader.members:
        name = member.name
        if name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR)):
            continue
        catalog += name.startswith(layout.CATALOG_DIR)
        if not name.startswith(layout.CATALOG_DIR) and name not in (*REQUIRED_TAG_FILES, layout.SIGNATURE):
            result.problems.append(f"member {name}: not part of the bundle format")
        elif member.type != "file":
            result.problems.append(f"member {name}: a tag file stored as a {member.type}")
        elif problem := member_within_limit(member):
            result.problems.append(problem)
    if catalog > layout.CATALOG_MEMBERS_MAX:
        result.problems.append(f"{layout.CATALOG_DIR}: {catalog} catalog files, over the limit of "
                               f"{layout.CATALOG_MEMBERS_MAX}")


def parse_manifest_line(line: bytes | None) -> tuple[str, str] | None:
    """``(sha256, member)`` of one manifest line, or None when it is not ``<sha256>  <path>``."""
    if line is None:
        return None
    text = line.decode("utf-8", "replace")
    digest, _, member = text.partition("  ")
    if not member or layout.SHA256_HEX_ANY_CASE.fullmatch(digest) is None:
        return None
    return digest.lower(), member


def _read_tag_manifest(reader: BundleReader, result: Structure) -> dict[str, str] | None:
    listed: dict[str, str] = {}
    try:
        for number, line in iter_lines(reader, layout.TAG_MANIFEST, layout.MANIFEST_LINE_MAX):
            parsed = parse_manifest_line(line)
            if parsed is None:
                result.problems.append(f"{layout.TAG_MANIFEST}: line {number} is not '<sha256>  <path>'")
            elif parsed[1] in listed:
                result.problems.append(f"{layout.TAG_MANIFEST}: {parsed[1]} listed twice")
            elif len(listed) >= layout.CATALOG_MEMBERS_MAX + len(REQUIRED_TAG_FILES):
                result.problems.append(f"{layout.TAG_MANIFEST}: more lines than the bundle format has tag files")
                return None
            else:
                listed[parsed[1]] = parsed[0]
    except (BundleFormatError, KeyError) as exc:
        result.problems.append(_text(exc))
        return None
    return listed


def _check_tag_digests(reader: BundleReader, listed: dict[str, str], result: Structure) -> None:
    """The tag manifest agrees with the index digest of every tag file.

    The index digests are checked against the bytes where the bytes are read:
    here for the small ones, when streamed for the others.
    """
    tag_files = {member.name: member for member in reader.members
                 if member.type == "file" and not member.name.startswith((layout.PAYLOAD_DIR, layout.LINKS_DIR))
                 and member.name not in (layout.TAG_MANIFEST, layout.SIGNATURE)}
    for name in sorted(set(tag_files) - set(listed)):
        result.problems.append(f"{layout.TAG_MANIFEST}: tag file {name} is not listed")
    for name, digest in sorted(listed.items()):
        if name not in tag_files:
            result.problems.append(f"{layout.TAG_MANIFEST}: lists {name}, which is not in the bundle")
        elif tag_files[name].sha256 != digest:
            result.problems.append(f"{name}: SHA-256 does not match {layout.TAG_MANIFEST}")


def _check_small_members(reader: BundleReader, result: Structure) -> None:
    """The BagIt declaration, bag-info and the catalog copies: read whole (they are small), bytes against the index."""
    catalog = [m.name for m in reader.members if m.name.startswith(layout.CATALOG_DIR) and m.type == "file"]
    names = [layout.BAGIT_TXT, layout.BAG_INFO, *catalog]
    for name in names[:layout.CATALOG_MEMBERS_MAX + 2]:
        try:
            data = read_member(reader, name)
        except KeyError:
            continue  # named by _check_member_set
        except BundleFormatError as exc:
            result.problems.append(str(exc))
            continue
        if name == layout.BAGIT_TXT and data != layout.BAGIT_TEXT:
            result.problems.append(f"{name}: not the BagIt 1.0 declaration")


# -- signature ------------------------------------------------------------------------


def _check_signature(reader: BundleReader, result: Structure, policy: SignaturePolicy) -> None:
    signer = (result.collection or {}).get("signer")
    try:
        reader.member(layout.SIGNATURE)
        present = True
    except KeyError:
        present = False
    if not present:
        if signer:
            result.problems.append(f"signature: {layout.COLLECTION_JSON} names a signer but {layout.SIGNATURE} "
                                   "is missing (stripped?)")
        if policy.public_key_path:
            result.problems.append("signature: --public-key given but the bundle is not signed")
        elif policy.require_signature:
            result.problems.append("signature: --require-signature given but the bundle is not signed")
        return
    result.signed = True
    try:
        signature = read_member(reader, layout.SIGNATURE)
        manifest = read_member(reader, layout.TAG_MANIFEST)
    except (BundleFormatError, KeyError) as exc:
        result.signature = "INVALID"
        result.problems.append(f"signature: cannot be checked ({_text(exc)})")
        return
    key = _public_key(result, policy, signer)
    if key is None:
        result.signature = "INVALID"
        return
    from aitrail.collector.bundle import seal  # cryptography, loaded only where there is a signature to check

    if not seal.check(key, signature, manifest):
        result.signature = "INVALID"
        result.problems.append(f"signature: {layout.SIGNATURE} does not verify over {layout.TAG_MANIFEST}")
        return
    result.signer_fingerprint = seal.fingerprint(key)  # of the key that verified, never the recorded text
    pin = policy.public_key_path
    if pin and seal.is_fingerprint(pin):
        if result.signer_fingerprint != pin.lower():
            result.signature = "INVALID"
            result.problems.append(f"signature: signed by {result.signer_fingerprint}, not by the pinned "
                                   f"signer {pin.lower()}")
            return
        result.pinned = True
        result.signature = f"valid, by the pinned signer {result.signer_fingerprint}"
    elif pin:
        result.pinned = True
        result.signature = f"valid, by the given key {result.signer_fingerprint}"
    else:
        result.signature = (f"valid but UNPINNED: by the key recorded in the bundle {result.signer_fingerprint}; "
                            "this proves only that the bundle is self-consistent (pass --public-key)")
        result.warnings.append("signature is UNPINNED: anyone can re-sign a bundle with a key of their own; "
                               "pass --public-key with the signer's fingerprint noted at collection or the "
                               "examiner's public key")


def _public_key(result: Structure, policy: SignaturePolicy, signer):
    from aitrail.collector.bundle import seal  # cryptography, loaded only where there is a signature to check

    try:
        if policy.public_key_path and not seal.is_fingerprint(policy.public_key_path):
            return seal.load_public(seal.read_key_file(policy.public_key_path), policy.public_key_path)
        if not signer:
            result.problems.append(f"signature: {layout.SIGNATURE} present but no signer recorded")
            return None
        return seal.load_public(signer["public_key_pem"].encode("ascii", "replace"), layout.COLLECTION_JSON)
    except Exception as exc:  # noqa: BLE001 - an untrusted PEM: any failure of the key parser is a named problem
        result.problems.append(f"signature: cannot load the public key ({exc})")
        return None
