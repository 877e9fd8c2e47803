"""Verification beside the parse: which process checks which frame, and the report made whole.

Verifying a frame means decompressing it, and so does parsing a member of
it. So that no frame is decompressed twice, a frame is verified from the
bytes a parse has just decompressed (collector/verify/frames.py, through
the reader's ``on_frame`` hook):

* the frames the secondary parse reads, by the coordinator as it reads them;
* each other frame holding a member to parse, by the first batch that
  parses one (``frames_to_verify``), in whichever worker runs that batch;
* every other frame (metadata, unparsed members), by the coordinator's
  ``Verification`` while the workers parse.

``complete`` then puts the findings in frame order: the report is the one
``aitrail verify`` gives, the same problems in the same order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING

from aitrail.analyzer.view.decode import json_loads
from aitrail.collector import verify as verify_module
from aitrail.collector.bundle.reader import BundleReader
from aitrail.collector.verify import Verification, VerifyReport
from aitrail.collector.verify import frames as verify_frames
from aitrail.collector.verify.frames import FrameFindings
from aitrail.collector.verify.structure import Structure

if TYPE_CHECKING:
    from aitrail.analyzer.engine.coordinator import AnalyzeOptions
    from aitrail.analyzer.engine.worker import BatchResult, Worker


def must_verify(options: AnalyzeOptions, worker: Worker) -> bool:
    """False only when the caller verified this very file just now (``aitrail report`` does, first)."""
    digest = worker.context["bundle_sha256"] or None  # of the file as this run opened it
    return digest is None or digest != options.verified_sha256


@contextlib.contextmanager
def checking_frames(reader: BundleReader, found: dict[int, FrameFindings],
                    wanted: set[int] | None = None) -> Iterator[None]:
    """While inside: each frame the reader decompresses whole is verified from its bytes into ``found``.

    ``wanted``: only these frame offsets (each is taken out once checked); None: every frame.
    """
    def check(offset: int, data: bytes) -> None:
        if offset not in found and (wanted is None or offset in wanted):
            found[offset] = verify_frames.check_frame(reader.frame_at(offset), [data])
            if wanted is not None:
                wanted.discard(offset)

    reader.on_frame = check
    try:
        yield
    finally:
        reader.on_frame = None


def check_rest(reader: BundleReader, offsets: Collection[int], found: dict[int, FrameFindings]) -> None:
    """Verify the frames at ``offsets`` that no parse decompressed: decompressed now, for the check."""
    for offset in sorted(offsets):
        found[offset] = verify_frames.check_frame_of(reader, reader.frame_at(offset))


def frames_to_verify(reader: BundleReader, batches: list[list[tuple[str, str]]],
                     checked: Collection[int]) -> list[list[int]]:
    """For each batch, the offsets of the frames it verifies: not ``checked`` yet, and where it parses first."""
    taken: set[int] = set(checked)
    owned: list[list[int]] = []
    for batch in batches:
        offsets = []
        for name, _ in batch:
            member = reader.get(name)
            if member is not None and member.frame_offset not in taken:
                taken.add(member.frame_offset)
                offsets.append(member.frame_offset)
        owned.append(offsets)
    if reader.members:
        reader.frame_at(reader.members[0].frame_offset)  # builds the frame table now: forked workers inherit it
    return owned


def begin(options: AnalyzeOptions, worker: Worker, owned: list[list[int]], checked: Collection[int],
          progress: Callable[[str], None] | None = None, structure: Structure | None = None) -> Verification:
    """Verify, on the coordinator's reader, everything but the frames checked already or owned by a batch.

    ``structure``: the structural check the run made before parsing (under ``options.policy``), not made again.
    """
    return verify_module.begin(options.bundle, worker.bundle.reader, options.public_key, options.require_signature,
                               progress, worker.context["bundle_sha256"] or None,
                               delegated=[*checked, *(offset for offsets in owned for offset in offsets)],
                               loads=json_loads,  # files.jsonl decoded as the bundle's own reading decodes it
                               structure=structure)


def complete(options: AnalyzeOptions, worker: Worker, verification: Verification | None,
             results: list[BatchResult], checked: dict[int, FrameFindings] | None) -> VerifyReport:
    """The report, with what the secondary parse and the batches found in their frames."""
    if verification is None:  # not verified here (``checked`` is None too): the caller's verify found no problem
        return VerifyReport(options.bundle, bundle_sha256=worker.context["bundle_sha256"] or None)
    findings = dict(checked or {})
    for result in results:
        findings.update(result.frames)
    return verification.complete(findings)

