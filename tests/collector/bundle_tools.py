"""Test-only tools that damage or rewrite bundles the way an attacker or a bad disk would."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from pathlib import Path

from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.bundle.writer import BundleWriter, TarMeta


def flip_byte(path: Path, offset: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        value = handle.read(1)[0]
        handle.seek(offset)
        handle.write(bytes([value ^ 0x01]))


def _header(reader: BundleReader, member) -> tarfile.TarInfo:
    head = b"".join(reader.iter_decompressed(member))[member.member_offset: member.data_offset]
    with tarfile.open(fileobj=io.BytesIO(head + b"\0" * 1024), encoding="utf-8", errors="surrogateescape") as archive:
        return archive.next()


def _meta(info: tarfile.TarInfo) -> TarMeta:
    def ns(key: str) -> int | None:
        text = info.pax_headers.get(key)
        if text is None:
            return None
        seconds, _, fraction = text.partition(".")
        return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])

    return TarMeta(mode=info.mode, uid=info.uid, gid=info.gid, mtime_ns=ns("mtime") or 0,
                   atime_ns=ns("atime"), ctime_ns=ns("ctime"))


def rewrite(source: Path, destination: Path, replace: dict[str, bytes] | None = None,
            recompute_manifests: bool = True, drop: set[str] = frozenset()) -> None:
    """Copy a bundle member by member, replacing some members' data.

    With recompute_manifests, the payload and tag manifests are re-hashed to
    match the new data, as someone without the signing key would do; the
    signature member is copied unchanged. Members named in ``drop`` are left out.
    """
    replace = dict(replace or {})
    with BundleReader(source) as reader:
        members = [(m, _header(reader, m), reader.read_data(m.name) if m.type == "file" else b"")
                   for m in reader.members if m.name not in drop]
    data = {member.name: replace.get(member.name, body) for member, _, body in members}
    if recompute_manifests:
        data["manifest-sha256.txt"] = _rehash(data["manifest-sha256.txt"], data)
        data["tagmanifest-sha256.txt"] = _rehash(data["tagmanifest-sha256.txt"], data)
    writer = BundleWriter(os.fspath(destination))
    for member, info, _ in members:
        if member.type == "symlink":
            writer.add_symlink(member.name, os.fsencode(info.linkname), _meta(info))
        else:
            writer.add_bytes(member.name, data[member.name], _meta(info))
    writer.finish()


def _rehash(manifest: bytes, data: dict[str, bytes]) -> bytes:
    lines = []
    for line in manifest.decode().splitlines():
        _, name = line.split("  ", 1)
        if name not in data:
            continue  # a dropped member
        lines.append(f"{hashlib.sha256(data[name]).hexdigest()}  {name}\n")
    return "".join(lines).encode()


def read_index(path: Path) -> dict:
    """The index JSON as plain dicts (members as records)."""
    with BundleReader(path) as reader:
        index = dict(reader.index)
        index["members"] = [member.as_record() for member in reader.members]
        return index


def replace_index(source: Path, destination: Path, index_json: bytes, trailer_extra: bytes = b"",
                  compressed: bool = False) -> None:
    """Copy a bundle's frames and give it a new index, sealed with a correct trailer digest.

    The new index is any bytes, taken as already zstd-compressed with ``compressed``.
    """
    import zstandard

    from aitrail.collector.bundle import layout

    with BundleReader(source) as reader:
        offset = reader.index_offset
    with open(source, "rb") as handle:
        body = handle.read(offset)
    if not compressed:
        index_json = zstandard.ZstdCompressor(level=3).compress(index_json)
    trailer = layout.TRAILER.pack(hashlib.sha256(index_json).digest(), len(index_json), layout.TRAILER_MAGIC)
    payload = index_json + trailer
    with open(destination, "wb") as handle:
        handle.write(body)
        handle.write(layout.SKIPPABLE_HEADER.pack(layout.SKIPPABLE_MAGIC, len(payload)))
        handle.write(payload)
        handle.write(trailer_extra)


def rewrite_json_index(source: Path, destination: Path, change) -> None:
    """replace_index with ``change(index_dict)`` applied to the plain index (a callable may return a new value)."""
    import json

    index = read_index(source)
    changed = change(index)
    value = index if changed is None else changed
    replace_index(source, destination, json.dumps(value).encode())


def drop_members(source: Path, destination: Path, names: set[str], replace: dict[str, bytes] | None = None) -> None:
    """rewrite() without some members (the manifests re-hashed, as an attacker would)."""
    rewrite(source, destination, replace, drop=names)
