"""`export` and `import`: an agent's memory to and from local files.

The local layout is the SDK's own: `BetaLocalFilesystemMemoryTool(base_path=X)` keeps
`/memories/a/b.md` at `X/memories/a/b.md`. Export writes exactly that (into a directory or as
`memories/...` tarball members), and import reads it back, or any plain tree of memory files,
so teams can move between the SDK's local tool and S3 in both directions.

Every object is authenticated while it is exported; every imported path is validated like a
path the model sends, checked against the size limit and the secret guard, and written with a
conditional PUT (If-None-Match for new files, If-Match of the listed ETag to overwrite). With
--overwrite, a file whose stored text is already the local text is read (one GET) and skipped:
an identical overwrite would only add a version.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from s3memory.core import messages as fmt
from s3memory.core import paths
from s3memory.core.guard import Guard
from s3memory.core.limits import Limits
from s3memory.core.paths import MemoryPath
from s3memory.errors import (
    CommandError,
    ConditionalConflict,
    IntegrityError,
    InvalidPath,
    NotFound,
    PreconditionFailed,
    S3MemoryError,
)
from s3memory.memory.explain import for_report
from s3memory.storage.attribution import attributed
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

from .common import Problem, Tracker, is_folder_marker
from .localfs import LocalFile, Unreadable, is_tarball, read_tarball, walk
from .names import memory_path

MEMORIES = "memories"
# `BetaLocalFilesystemMemoryTool` writes through `.tmp-{pid}-{uuid4}` files; a crash can leave one.
_SDK_TEMP_FILE = re.compile(r"\.tmp-[0-9]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Writer(Protocol):
    def write(self, segments: Sequence[str], data: bytes, mtime: datetime | None = None) -> None: ...


# --- export ----------------------------------------------------------------------------


@dataclass
class ExportReport:
    files: int = 0
    nbytes: int = 0
    problems: list[Problem] = field(default_factory=list)


def _fetch(item: tuple[Vault, AgentKeyspace, ObjectInfo]) -> tuple[MemoryPath, bytes]:
    vault, space, info = item
    path = memory_path(space, info.key)
    return path, vault.open(path, vault.store.get(info.key))


def export(vault: Vault, pool: Pool, writer: Writer, tracker: Tracker) -> ExportReport:
    """Decrypt and authenticate every memory file of the agent into `writer` as `memories/<path>`
    (by its decrypted path, for an agent with encrypted names)."""
    space = vault.names.resolved()
    items = [
        (vault, space, obj)
        for obj in vault.store.list_all(vault.root)
        if not space.is_bookkeeping(obj.key) and not is_folder_marker(obj)
    ]
    tracker.start(len(items))
    report = ExportReport()
    for (_, _, info), future in pool.completed(_fetch, items):
        try:
            path, data = future.result()
            writer.write((MEMORIES, *path.segments), data, info.last_modified)
        except NotFound:  # deleted since it was listed
            tracker.advance()
            continue
        except S3MemoryError as err:
            report.problems.append(Problem(vault.agent_id, space.shown(info.key), for_report(err)))
        except OSError as err:
            why = f"could not be written locally ({err.strerror or type(err).__name__})"
            report.problems.append(Problem(vault.agent_id, space.shown(info.key), why))
        else:
            report.files += 1
            report.nbytes += len(data)
            tracker.advance(len(data))
            continue
        tracker.advance()
    report.problems.sort()
    return report


# --- import ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    path: str
    action: Literal["create", "overwrite", "unchanged"]
    size: int


@dataclass
class ImportReport:
    written: list[Planned] = field(default_factory=list)  # or, on a dry run, what would be written
    existing: list[str] = field(default_factory=list)  # skipped: already stored (no --overwrite)
    unchanged: list[str] = field(default_factory=list)  # skipped with --overwrite: the same text is stored
    problems: list[Problem] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        return sum(p.size for p in self.written)


def local_source(source: Path, max_bytes: int, spool: Path) -> tuple[list[LocalFile], list[Unreadable]]:
    """Files to import from a directory or a tarball; a `memories/` folder in it is the memory root.

    A tarball's members are streamed into `spool`, a private temporary directory the caller removes.
    """
    if source.is_file() and is_tarball(source):
        files, skipped = read_tarball(source, max_bytes, spool)
        prefix = MEMORIES + "/"
        if any(f.rel.startswith(prefix) for f in files):
            files = [LocalFile(f.rel[len(prefix) :], f.size, f.load) for f in files if f.rel.startswith(prefix)]
            skipped = [Unreadable(s.rel[len(prefix) :], s.reason) for s in skipped if s.rel.startswith(prefix)]
        return files, skipped
    nested = source / MEMORIES
    return walk(nested if nested.is_dir() and not nested.is_symlink() else source)


def _existing_dirs(root: str, keys: Sequence[str]) -> set[str]:
    """The directory prefixes the stored `keys` make. Stored segments, not names: a directory's
    prefix (`vault.dir_prefix`) is the start of its files' keys in either name mode (an encrypted
    segment depends on its parent path only), so it is compared as it is stored."""
    dirs: set[str] = set()
    for key in keys:
        parts = key[len(root) :].split("/")
        for i in range(1, len(parts)):
            dirs.add(root + "/".join(parts[:i]) + "/")
    return dirs


@dataclass(frozen=True)
class _Job:
    file: LocalFile
    path: MemoryPath
    etag: str | None  # the stored ETag to overwrite, or None to create


class Importer:
    """Plans and writes one local tree into one agent's memory."""

    def __init__(
        self, vault: Vault, pool: Pool, limits: Limits, guard: Guard, *, overwrite: bool, dry_run: bool
    ) -> None:
        self.vault = vault
        self.pool = pool
        self.limits = limits
        self.guard = guard
        self.overwrite = overwrite
        self.dry_run = dry_run

    def run(self, files: Sequence[LocalFile], unreadable: Sequence[Unreadable], tracker: Tracker) -> ImportReport:
        report = ImportReport()
        agent = self.vault.agent_id
        for item in unreadable:
            report.problems.append(Problem(agent, paths.escape_for_display(f"/{MEMORIES}/{item.rel}"), item.reason))
        jobs = self._plan(files, report)
        tracker.start(len(jobs))
        for job, future in self.pool.completed(self._one, jobs):
            try:
                planned = future.result()
            except (S3MemoryError, OSError) as err:
                why = for_report(err) if isinstance(err, S3MemoryError) else f"could not be read ({err.strerror})"
                report.problems.append(Problem(agent, job.path.display, why))
                tracker.advance()
                continue
            if planned is None:
                report.existing.append(job.path.display)
            elif planned.action == "unchanged":
                report.unchanged.append(planned.path)
                planned = None
            else:
                report.written.append(planned)
            tracker.advance(planned.size if planned else 0)
        report.written.sort(key=lambda p: p.path)
        report.existing.sort()
        report.unchanged.sort()
        report.problems.sort()
        return report

    def _plan(self, files: Sequence[LocalFile], report: ImportReport) -> list[_Job]:
        vault = self.vault
        stored = {obj.key: obj.etag for obj in vault.store.list_all(vault.root)}
        dirs = _existing_dirs(vault.root, list(stored))
        jobs: list[_Job] = []
        for file in files:
            shown_path = paths.escape_for_display(f"/{MEMORIES}/{file.rel}")
            if _SDK_TEMP_FILE.fullmatch(file.rel.rsplit("/", 1)[-1]):
                why = "a temporary file left by the SDK's local memory tool; not imported"
                report.problems.append(Problem(vault.agent_id, shown_path, why))
                continue
            try:
                path = vault.parse(f"/{MEMORIES}/{file.rel}")
            except InvalidPath as err:
                report.problems.append(Problem(vault.agent_id, shown_path, err.message))
                continue
            key = vault.key(path)
            if key in stored and not self.overwrite:
                report.existing.append(path.display)
                continue
            blocker = next((a for a in path.ancestors() if vault.key(a) in stored), None)
            if blocker is not None:
                why = fmt.parent_is_file(path.display, blocker.display)
                report.problems.append(Problem(vault.agent_id, path.display, why))
            elif vault.dir_prefix(path) in dirs:
                report.problems.append(Problem(vault.agent_id, path.display, fmt.already_exists(path.display)))
            else:
                jobs.append(_Job(file, path, stored.get(key)))
        return jobs

    def _one(self, job: _Job) -> Planned | None:
        """Check and write one file; None if it turned out to exist already (created meanwhile)."""
        display, limit = job.path.display, self.limits.max_file_bytes
        if job.file.size > limit:
            raise CommandError(fmt.too_large(display, job.file.size, limit))
        data = job.file.load()
        if len(data) > limit:
            raise CommandError(fmt.too_large(display, len(data), limit))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise CommandError(f"Error: Cannot write {display}: it is not UTF-8 text. Nothing was changed.") from None
        text = self.guard.scan(text, display)
        planned = Planned(display, "create" if job.etag is None else "overwrite", len(text.encode("utf-8")))
        if job.etag is not None and self._stored_text(job) == text:
            return replace(planned, action="unchanged")  # an overwrite would only add an identical version
        if self.dry_run:
            return planned
        try:
            with attributed("import"):
                self.vault.write(job.path, text, if_none_match=job.etag is None, if_match=job.etag)
        except PreconditionFailed:
            if job.etag is None:
                return None
            raise CommandError("it changed after it was listed; not overwritten") from None
        except ConditionalConflict:
            raise CommandError("another write to it was in progress; not written, try again") from None
        return planned

    def _stored_text(self, job: _Job) -> str | None:
        """The text stored at the job's path in the version listed (one GET), or None if it is
        not that version any more or does not open (then it is overwritten, or reported, as before)."""
        try:
            text, etag = self.vault.read(job.path)
        except (NotFound, IntegrityError):
            return None
        return text if etag == job.etag else None
