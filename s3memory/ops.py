"""Operator commands over stored memory: `agents`, `verify`, `prune`, and the plumbing they share.

Plain functions over `Vault` and `ObjectStore`: they print nothing and know no exit codes.
Work fans out on a bounded `Pool`, each finished object is reported to a `Tracker`, and the
result is a report the CLI prints. A failure of one object becomes a `Problem` naming its
memory path; a failure to list is raised, since nothing useful can follow it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from . import paths
from .envelope import plaintext_size
from .errors import AccessDenied, CommandError, IntegrityError, KeyUnavailable, NotFound, StorageError
from .listing import Lister
from .paths import RESERVED_SEGMENT, MemoryPath
from .progress import Tracker
from .store import DELETE_BATCH, ObjectInfo, ObjectStore
from .vault import Vault

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, order=True)
class Problem:
    """One object an operation could not handle. `path` is its memory path (or its key), display-safe."""

    agent: str
    path: str
    reason: str


class Pool:
    """A bounded thread pool that hands results back as they complete, at most 2 x workers in flight."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="s3memory-cli")

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)

    def completed(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, Future[R]]]:
        pending: dict[Future[R], T] = {}
        for item in items:
            pending[self.executor.submit(fn, item)] = item
            if len(pending) >= 2 * self.workers:
                yield from self._drain(pending, everything=False)
        yield from self._drain(pending, everything=True)

    @staticmethod
    def _drain(pending: dict[Future[R], T], *, everything: bool) -> Iterator[tuple[T, Future[R]]]:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future
            if not everything:
                return


def reason(err: BaseException) -> str:
    """A one-line reason for a per-object failure; no key, bucket or secret in it."""
    if isinstance(err, IntegrityError):
        return "failed its integrity check"
    if isinstance(err, KeyUnavailable):
        return f"the data key is unavailable ({err.code})"
    if isinstance(err, AccessDenied):
        return f"access denied ({err.operation or 'S3'})"
    if isinstance(err, StorageError):
        return f"S3 {err.operation or 'request'} failed ({err.code})"
    if isinstance(err, CommandError):
        return err.message
    raise err  # a bug, not a per-object failure


def shown(vault: Vault, key: str) -> str:
    """The memory path of `key` for display, or the key itself (escaped) if no valid path maps to it."""
    path = vault.path_of(key)
    return paths.escape_for_display(key if path is None else path.display)


def memory_path(vault: Vault, key: str) -> MemoryPath:
    """The validated memory path of a stored key (reserved bookkeeping paths allowed)."""
    path = vault.path_of(key)
    if path is None:
        raise CommandError("not a valid memory path")
    return paths.parse(path.display, key_root=vault.root, reserved_ok=True)


def is_folder_marker(obj: ObjectInfo) -> bool:
    """A zero-byte `name/` key, as consoles create for folders: not a memory file."""
    return obj.key.endswith("/") and obj.size == 0


def is_bookkeeping(vault: Vault, key: str) -> bool:
    return key.startswith(vault.dir_prefix(MemoryPath((RESERVED_SEGMENT,))))


# --- agents ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentUsage:
    agent: str
    objects: int
    bytes: int


def agent_ids(store: ObjectStore, prefix: str) -> list[str]:
    """Agent ids under `prefix`: one ListObjectsV2 page per 1,000 agents (Delimiter "/")."""
    found: list[str] = []
    for page in store.iter_pages(prefix, delimiter="/"):
        for sub in page.prefixes:
            try:
                found.append(paths.validate_agent_id(sub[len(prefix) : -1]))
            except ValueError:
                continue  # not an agent's prefix
    return sorted(found)


def agents(store: ObjectStore, prefix: str, pool: Pool, tracker: Tracker) -> list[AgentUsage]:
    """Every agent with its memory files and their plaintext bytes (bookkeeping excluded)."""
    ids = agent_ids(store, prefix)
    tracker.start(len(ids))
    lister = Lister(store, pool.executor)
    usage: dict[str, AgentUsage] = {}
    for agent, future in pool.completed(lambda a: lister.usage(paths.agent_root(prefix, a)), ids):
        nbytes, files = future.result()
        usage[agent] = AgentUsage(agent, files, nbytes)
        tracker.advance(nbytes)
    return [usage[agent] for agent in ids]


# --- verify ----------------------------------------------------------------------------


@dataclass
class VerifyReport:
    checked: int = 0  # objects that authenticated
    bookkeeping: int = 0  # of those, `.s3memory/` records
    nbytes: int = 0
    problems: list[Problem] = field(default_factory=list)


def _verify_one(item: tuple[Vault, ObjectInfo]) -> int:
    vault, info = item
    path = memory_path(vault, info.key)
    obj = vault.store.get(info.key)
    return len(vault.open_text(path, obj).encode("utf-8"))


def verify(vaults: Sequence[Vault], pool: Pool, tracker: Tracker) -> VerifyReport:
    """Authenticate every object of each vault's agent: header, key unwrap, commitment, tag, UTF-8."""
    items = [(v, obj) for v in vaults for obj in v.store.list_all(v.root) if not is_folder_marker(obj)]
    tracker.start(len(items))
    report = VerifyReport()
    for (vault, info), future in pool.completed(_verify_one, items):
        try:
            size = future.result()
        except NotFound:  # deleted since it was listed
            tracker.advance()
            continue
        except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, shown(vault, info.key), reason(err)))
            tracker.advance()
            continue
        report.checked += 1
        report.nbytes += size
        report.bookkeeping += is_bookkeeping(vault, info.key)
        tracker.advance(size)
    report.problems.sort()
    return report


# --- prune -----------------------------------------------------------------------------

_AGE = re.compile(r"([0-9]{1,6})([dhm])")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_age(text: str) -> timedelta:
    """`90d`, `12h`, `30m` → timedelta; ValueError otherwise."""
    match = _AGE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"invalid age {text!r}: use a number followed by d, h or m, e.g. 90d")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


@dataclass(frozen=True)
class Pruned:
    path: str
    last_modified: datetime
    size: int


@dataclass
class PruneReport:
    candidates: list[Pruned] = field(default_factory=list)  # what is (or would be) deleted
    deleted: int = 0
    nbytes: int = 0
    problems: list[Problem] = field(default_factory=list)


def prune(vault: Vault, pool: Pool, cutoff: datetime, tracker: Tracker, *, dry_run: bool) -> PruneReport:
    """Delete the agent's memory files last modified before `cutoff` (bookkeeping records are kept).

    Each delete carries the listed ETag, so a file edited after the listing is kept.
    """
    old: list[tuple[ObjectInfo, datetime]] = sorted(
        (
            (obj, obj.last_modified)
            for obj in vault.store.list_all(vault.root)
            if obj.last_modified is not None
            and obj.last_modified < cutoff
            and not is_bookkeeping(vault, obj.key)
            and not is_folder_marker(obj)
        ),
        key=lambda pair: pair[0].key,
    )
    report = PruneReport()
    report.candidates = [Pruned(shown(vault, o.key), when, plaintext_size(o.size)) for o, when in old]
    if dry_run:
        return report
    tracker.start(len(old))
    objs = [obj for obj, _ in old]
    batches = [objs[i : i + DELETE_BATCH] for i in range(0, len(objs), DELETE_BATCH)]
    deleted: set[str] = set()
    for batch, future in pool.completed(lambda b: vault.store.delete_many([(o.key, o.etag) for o in b]), batches):
        try:
            failed = future.result()
        except StorageError as err:
            failed = {obj.key: err.code for obj in batch}
        for obj in batch:
            code = failed.get(obj.key)
            if code is None:
                deleted.add(obj.key)
                report.nbytes += plaintext_size(obj.size)
            else:
                why = (
                    "it changed after it was listed; kept" if code == "PreconditionFailed" else f"not deleted ({code})"
                )
                report.problems.append(Problem(vault.agent_id, shown(vault, obj.key), why))
            tracker.advance(plaintext_size(obj.size) if code is None else 0)
    report.deleted = len(deleted)
    report.candidates = [p for p, o in zip(report.candidates, objs, strict=True) if o.key in deleted]
    report.problems.sort()
    return report
