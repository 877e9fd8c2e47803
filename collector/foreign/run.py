"""``aitrail import TOOL CONTAINER -o BUNDLE``: another collector's container, sealed as an aitrail bundle.

The container is read by its tool's reader (uac.py, kape.py,
velociraptor.py, acquire.py) into the subject's paths and the tool's own
records of each file. The paths are laid out as placeholders (staging.py)
and collected with the same run as ``collect --root``: the same planner,
walk, classification and outcomes, so a credential the foreign tool took is
``never_collect`` here too and its bytes never leave the container. Just
before the capture, the placeholders of the files to collect are filled from
the container in one pass; after it, each entry gets the tool's record
(``container_record``: times, owner, inode and digests, each with its source)
and its stat says only what the tool recorded (null for the rest). The
digests the tool wrote are checked against the bytes its container gave.

collection.json's ``foreign_custody`` records the container (path, SHA-256,
size), the tool and its version, the layout, what the tool recorded and did
not, what the container said of the collection, the problems met, and the
digest checks. The bundle is aitrail's from the import on: verify and
analyze read it as any other; custody before it is the foreign tool's.
"""

from __future__ import annotations

import importlib
import os
import stat as stat_module

from aitrail.collector import catalog as catalog_module
from aitrail.collector import collect, runinfo
from aitrail.collector.bundle import records as oc
from aitrail.collector.foreign.container import STREAM_ERRORS, Container, ContainerError, file_sha256
from aitrail.collector.foreign.relevance import reachable, settings_suffixes
from aitrail.collector.foreign.staging import CONTEXT_FILES, Staged, StagedBackend, Staging
from aitrail.collector.fs import platform
from aitrail.collector.fs.meta import Meta

TOOLS = ("acquire", "kape", "uac", "velociraptor")
DIGEST_ALGORITHMS = ("sha256", "sha1", "md5")


def open_container(tool: str, path: str) -> Container:
    """The container at ``path`` read by ``tool``'s reader; ContainerError when nothing of it can be read."""
    if tool not in TOOLS:
        raise ContainerError(f"no reader for {tool!r}; known: {', '.join(TOOLS)}")
    module = importlib.import_module(f"aitrail.collector.foreign.{tool}")
    readers = [value for value in vars(module).values()
               if isinstance(value, type) and issubclass(value, Container) and value.tool == tool]
    if len(readers) != 1:
        raise ContainerError(f"aitrail.collector.foreign.{tool} defines {len(readers)} readers for {tool}, not one")
    container = readers[0](path)
    container.read()
    return container


def import_container(tool: str, container_path: str, options: collect.CollectOptions) -> collect.CollectResult:
    """Read the container, lay it out, collect it as an image and seal the bundle (CollectionError: exit 1)."""
    try:
        container = open_container(tool, container_path)
    except ContainerError as exc:
        raise collect.CollectionError(str(exc)) from None
    except OSError as exc:
        raise collect.CollectionError(f"{container_path}: {exc.strerror or exc}") from None
    return import_read(container, options)


def import_read(container: Container, options: collect.CollectOptions) -> collect.CollectResult:
    """Seal a container its reader has read (``import_container`` after ``open_container``)."""
    container_path = container.path
    digest = file_sha256(container_path) if os.path.isfile(container_path) else (None, None)
    with Staging(os.path.dirname(os.path.abspath(options.output or "."))) as staging:
        staging.prepare(container.files, container.windows)
        hooks = ImportHooks(container, staging, container_path, digest)
        options.root, options.foreign = staging.path, hooks
        with platform.using(StagedBackend(platform.current(), staging)):
            hooks.place(options)
            return collect.run(options)


class ImportHooks(collect.ForeignHooks):
    """The import's part of the run: fill before the capture, the container's records after it, custody."""

    def __init__(self, container: Container, staging: Staging, path: str, digest: tuple):
        self.container, self.staging, self.path = container, staging, path
        self.container_sha256, self.container_size = digest
        self.checks = {"matches": 0, "differs": 0, "not_recorded": 0}
        self.not_in_container = 0
        self._custody: dict | None = None

    # -- before the run ----------------------------------------------------------------

    def place(self, options: collect.CollectOptions) -> None:
        """Lay out the tree in two steps: what planning reads, then only the files the catalog can reach.

        First every directory, link and special file, and the files the plan
        reads (the system files an image is described by, the settings files
        that move a root), which get their bytes; then the plan of the run to
        come tells which files its walk can reach (relevance.py), and only
        those get a placeholder. A UAC archive of a whole system holds far
        more than the agents' files: 20,000 unrelated files took two thirds
        of an import's time as placeholders that no glob could match.
        """
        catalog = catalog_module.load(options.catalog_dir)
        suffixes = settings_suffixes(catalog)
        self.staging.place(lambda relpath, foreign: foreign.kind != "file" or relpath.lower() in CONTEXT_FILES
                           or any(("/" + relpath).endswith(suffix) for suffix in suffixes))
        self._fill(self.staging.context_members() | self.staging.members_ending(suffixes))
        self.staging.place(reachable(self.staging, options, catalog))
        self.staging.finish()

    def _fill(self, members: set[str]) -> None:
        wanted = {member for member in members
                  if not all(staged.filled for staged in self.staging.by_member.get(member, []))}
        for member, handle in self.container.stream(wanted):
            try:
                self.staging.fill(member, handle)
            except STREAM_ERRORS as exc:  # the member's bytes broke off: it stays unfilled, never half-read
                self.container.problems.add(f"member {member}: its bytes could not be read ({type(exc).__name__}: "
                                            f"{exc}); not collected")

    # -- the run's hooks ---------------------------------------------------------------

    def subject(self, subject: tuple[dict, dict]) -> tuple[dict, dict]:
        """Where the image's own files name no host, the container's statement of it, said so."""
        host, zone = subject
        if host.get("hostname") is None and self.container.hostname:
            host = {**host, "hostname": self.container.hostname,
                    "hostname_source": f"the {self.container.tool} container: {self.container.hostname_source}"}
        return host, zone

    def before_capture(self, entries: list[oc.Entry]) -> None:
        """Fill the placeholders of the files to collect; a file the container has no bytes for is not read."""
        to_read = [(entry, staged) for entry in entries if not entry.outcome and entry.kind == "file"
                   and (staged := self._staged(entry)) is not None]
        self._fill({staged.foreign.member for _, staged in to_read if staged.foreign.member})
        for entry, staged in to_read:
            if not staged.filled:
                self.not_in_container += 1
                entry.outcome = oc.NOT_IN_CONTAINER
                entry.reason = (f"{self.container.tool} recorded it but its container holds no bytes for it"
                                if staged.foreign.member is None else
                                f"{self.container.tool}'s member {staged.foreign.member} could not be read")

    def after_capture(self, entries: list[oc.Entry]) -> None:
        """Each entry's stat as the tool recorded it, its container record, and the digest checks."""
        for entry in entries:
            staged = self._staged(entry)
            if staged is None:
                continue
            record = staged.foreign.recorded
            entry.meta = _as_recorded(entry.meta, staged)
            entry.after = _as_recorded(entry.after, staged)
            entry.atime_protection = None  # aitrail read its own copy; the subject was read by the foreign tool
            entry.container_record = {"member": staged.foreign.member, **record.as_record()}
            if entry.sha256 is not None and staged.filled:
                entry.container_record["digest_check"] = self._check(entry, staged)

    def _check(self, entry: oc.Entry, staged: Staged) -> dict:
        recorded = staged.foreign.recorded.digests
        checks = {}
        for algorithm in DIGEST_ALGORITHMS:
            if algorithm not in recorded:
                continue
            same = recorded[algorithm].lower() == staged.digests.get(algorithm)
            checks[algorithm] = "matches" if same else "differs"
            if not same:
                entry.notes = [*entry.notes, f"the container's bytes differ from the {algorithm.upper()} "
                                             f"{self.container.tool} recorded at collection"]
        if not checks:
            self.checks["not_recorded"] += 1
        elif "differs" in checks.values():
            self.checks["differs"] += 1
        else:
            self.checks["matches"] += 1
        if staged.filled_size != staged.foreign.size:
            entry.notes = [*entry.notes, f"{self.container.tool} recorded {staged.foreign.size} bytes; its "
                                         f"container gave {staged.filled_size}"]
        return checks

    def custody(self) -> dict:
        """collection.json's ``foreign_custody`` (made once, when the run writes it; the command prints from it)."""
        if self._custody is None:
            self._custody = self._custody_record()
        return self._custody

    def _custody_record(self) -> dict:
        return {
            **self.container.custody(),
            "container": {"path": os.path.abspath(self.path), "sha256": self.container_sha256,
                          "size": self.container_size,
                          "digest_note": None if self.container_sha256 else
                          "a directory: no single digest; each file's own is in files.jsonl"},
            "imported_by": {**runinfo.tool_info(), "account": runinfo.user_info().get("name")},
            "files_in_container": len(self.container.files),
            "files_not_laid_out": sum(1 for _, foreign in self.staging.pending if foreign.kind == "file"),
            "drives": sorted(self.staging.drives),
            "digest_checks": dict(self.checks),
            "not_in_container": self.not_in_container,
            "problems": self.container.problems.closed() + self.staging.problems.closed(),
            "custody_note": (f"the subject's files were read by {self.container.tool}, not by aitrail: their "
                             "times, owner and digests are what that tool recorded (container_record in files.jsonl, "
                             "each field with its source); aitrail's custody starts at this import, whose digest "
                             "of the container is above"),
        }

    def _staged(self, entry: oc.Entry) -> Staged | None:
        relpath = entry.raw_abspath.decode("utf-8", "surrogateescape").strip("/")
        return self.staging.files.get(relpath)


def _as_recorded(meta: Meta | None, staged: Staged) -> Meta | None:
    """The stat files.jsonl records for an imported file: only what the tool recorded, null for the rest."""
    if meta is None:
        return None
    record = staged.foreign.recorded
    mode = stat_module.S_IFMT(meta.mode) | ((record.mode & 0o7777) if record.mode is not None else 0)
    return Meta.of((mode, record.ino, None, None, record.uid, record.gid, meta.size, record.atime_ns,
                    record.mtime_ns, record.ctime_ns, record.btime_ns))
