"""The tag files of a bundle: BagIt declaration, bag-info, manifests, run metadata.

Order in the archive (after the payload and the links): bagit.txt,
bag-info.txt, manifest-sha256.txt, aitrail/collection.json,
aitrail/files.jsonl, aitrail/catalog/<agent>.yaml, tagmanifest-sha256.txt and,
when a key is given, aitrail/signature.ed25519 over the tag manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from aitrail.collector import runinfo
from aitrail.collector.bundle import layout
from aitrail.collector.bundle import records as oc
from aitrail.collector.bundle.seal import fingerprint, public_pem, sign
from aitrail.collector.bundle.writer import BundleWriter, TarMeta
from aitrail.collector.fs import platform
from aitrail.collector.fs.backend import ATIME_NONE, ATIME_O_NOATIME


def _json_bytes(value) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _bag_value(value: str) -> str:
    """BagIt label values are one line; later lines continue with leading whitespace."""
    return "\n  ".join(line.strip() for line in value.strip().splitlines()) or "-"


def payload_manifest(entries: list[oc.Entry]) -> bytes:
    """sha256sum-compatible lines for every collected regular file, sorted by member name."""
    lines = {}
    for entry in entries:
        if entry.member and entry.member.startswith(layout.PAYLOAD_DIR) and entry.sha256:
            lines[entry.member] = layout.manifest_line(entry.sha256, entry.member)
    return "".join(lines[name] for name in sorted(lines)).encode("utf-8")


def files_jsonl(entries: list[oc.Entry]) -> bytes:
    """aitrail/files.jsonl: one JSON line per match, in entry order (``json.dumps`` of ``Entry.as_record``)."""
    renderer = oc.RecordRenderer()
    return "".join([renderer.line(entry) + "\n" for entry in entries]).encode("utf-8")


def _payload_oxum(entries: list[oc.Entry]) -> tuple[int, int]:
    members = {entry.member: entry.stored_size for entry in entries
               if entry.member and entry.member.startswith(layout.PAYLOAD_DIR) and entry.sha256}
    return sum(members.values()), len(members)


def bag_info(run_meta: dict, entries: list[oc.Entry], finished: str) -> bytes:
    """bag-info.txt: BagIt's metadata with the case, the examiner and the payload size."""
    options = run_meta["options"]
    octets, streams = _payload_oxum(entries)
    labels = [
        ("Bag-Software-Agent", f"aitrail {runinfo.__version__}"),
        ("Bagging-Date", finished[:10]),
        ("External-Identifier", options.case_id or "-"),
        ("Contact-Name", options.examiner or "-"),
        ("Internal-Sender-Description", options.notes or "-"),
        ("Payload-Oxum", f"{octets}.{streams}"),
        ("AITrail-Host", run_meta["subject"][0].get("hostname") or "-"),
        ("AITrail-Collection-Mode", run_meta["mode"]),
        ("AITrail-Started-UTC", run_meta["started_utc"]),
        ("AITrail-Finished-UTC", finished),
    ]
    return "".join(f"{label}: {_bag_value(value)}\n" for label, value in labels).encode("utf-8")


def collection_record(run_meta: dict, entries: list[oc.Entry], counts: dict, finished: str, signing_key) -> dict:
    """aitrail/collection.json: everything an examiner records about the run."""
    options, catalog, trees = run_meta["options"], run_meta["catalog"], run_meta["trees"]
    environ = {name: os.environ.get(name) for name in runinfo.catalog_env_vars(catalog)}
    return {
        "format": layout.FORMAT_NAME,
        "format_version": layout.FORMAT_VERSION,
        "tool": runinfo.tool_info(),
        "command_line": options.command_line,
        "mode": run_meta["mode"],
        "case": {"case_id": options.case_id, "examiner": options.examiner, "notes": options.notes},
        # the subject: this machine when live; the image's own name and zone under --root (each with its source)
        "host": run_meta["subject"][0],
        "time_zone": run_meta["subject"][1],
        "image": _image_record(options) if run_meta["mode"] == "image-root" else None,
        # aitrail import: the foreign container, its tool, what that tool recorded and did not (collector/foreign/)
        **({"foreign_custody": run_meta["foreign_custody"]} if run_meta.get("foreign_custody") else {}),
        # the machine and account that ran the collector (the examiner's workstation under --root)
        "collecting_host": runinfo.host_info(),
        "collecting_time_zone": runinfo.time_zone_info(),
        "user": runinfo.user_info(),
        "started_utc": run_meta["started_utc"],
        "finished_utc": finished,
        "duration_seconds": round(time.monotonic() - run_meta["clock_start"], 3),
        "catalog": {
            "sha256": catalog.digest,
            "agents": [agent.agent for agent in catalog.agents],
            "files": [name for name, _ in catalog.raw_files],
        },
        "options": {
            "agents": options.agents,
            "homes": options.homes,
            "all_users": options.all_users,
            "root": options.root if options.foreign is None else None,  # an import's staging tree is not a root
            "hostname": options.hostname,
            "time_zone": options.time_zone,
            "max_file_size": options.max_file_size,
        },
        "homes": [_home_record(home) for home in run_meta["homes"]],
        "locations": sorted(
            ({"label": tree.location.label, "base": tree.location.subject_base or tree.location.base,
              "kind": tree.location.kind,
              "user": tree.location.user, "source": tree.location.source} for tree in trees.values()),
            key=lambda item: item["label"],
        ),
        "environment": environ if run_meta["mode"] == "current-user" else {},
        "overrides": [override.as_record() for override in run_meta["overrides"]],
        "walk": {
            "directories_opened": sum(tree.stats.directories_opened for tree in trees.values()),
            "directories_listed": sum(tree.stats.directories_listed for tree in trees.values()),
            "lstat_calls": sum(tree.stats.lstat_calls for tree in trees.values()),
            "directories_opened_without_o_noatime": sum(tree.stats.directories_without_noatime
                                                        for tree in trees.values()),
            "files_read_with_o_noatime": sum(1 for entry in entries if entry.atime_protection == ATIME_O_NOATIME),
            "files_read_without_o_noatime": sum(1 for entry in entries if entry.atime_protection == ATIME_NONE),
        },
        # the backend the trees used: what it protects (atime) and where birth time comes from (fs/platform.py)
        "platform": platform.run_record(tree.backend for tree in trees.values()),
        "counts": counts,
        "warnings": run_meta.get("warnings", []),
        "signer": None if signing_key is None else {
            "algorithm": "ed25519",
            "fingerprint": fingerprint(signing_key.public_key()),
            "public_key_pem": public_pem(signing_key.public_key()).decode("ascii"),
            "signed_file": layout.TAG_MANIFEST,
            "signature_member": layout.SIGNATURE,
            # per-collection: made for this run in memory and discarded (collect --sign); examiner key:
            # a key file given with --sign-key. Either is proof only once pinned (verify --public-key).
            "key": run_meta.get("signer_kind", "examiner key"),
        },
    }


def _home_record(home) -> dict:
    """A home as the subject knows it: under --root its path inside the image and how it was found."""
    record = {"label": home.label, "path": home.subject_path or home.path, "user": home.user}
    if home.found_by:
        record["found_by"] = home.found_by
    return record


def _image_record(options) -> dict:
    """Where the image was mounted on the collecting host: recorded once here, never in a path of the bundle."""
    return {"mount_point": os.path.abspath(options.root), "real_path": os.path.realpath(options.root)}


def write_metadata_members(writer: BundleWriter, entries, counts, run_meta, signing_key) -> None:
    """Write the manifests, run metadata, catalog copy and (if a key is given) the signature."""
    finished = runinfo.utc_now()
    stamp = TarMeta(mode=0o644, uid=0, gid=0, mtime_ns=time.time_ns())
    tag_files: list[tuple[str, bytes]] = [
        (layout.BAGIT_TXT, layout.BAGIT_TEXT),
        (layout.BAG_INFO, bag_info(run_meta, entries, finished)),
        (layout.PAYLOAD_MANIFEST, payload_manifest(entries)),
        (layout.COLLECTION_JSON, _json_bytes(collection_record(run_meta, entries, counts, finished, signing_key))),
        (layout.FILES_JSONL, files_jsonl(entries)),
    ]
    tag_files += [(layout.CATALOG_DIR + name, data) for name, data in run_meta["catalog"].raw_files]
    writer.end_frame()  # damage to the payload's frames then leaves the metadata readable, and the reverse
    # each metadata member in a frame of its own: one bad byte in the catalog copies (most of a small
    # bundle's metadata) no longer takes files.jsonl, the manifests and the signature with it
    for name, data in tag_files:
        writer.add_bytes(name, data, stamp)
        writer.end_frame()
    tag_manifest = "".join(
        layout.manifest_line(hashlib.sha256(data).hexdigest(), name) for name, data in sorted(tag_files)
    ).encode("utf-8")
    writer.add_bytes(layout.TAG_MANIFEST, tag_manifest, stamp)
    if signing_key is not None:
        writer.end_frame()
        writer.add_bytes(layout.SIGNATURE, sign(signing_key, tag_manifest), stamp)
