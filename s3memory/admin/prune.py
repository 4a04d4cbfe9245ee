"""`prune`: delete an agent's memory files not modified since a cutoff (bookkeeping is kept)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from s3memory.core.envelope import plaintext_size
from s3memory.errors import StorageError
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import DELETE_BATCH, ObjectInfo, ObjectStore

from .common import Problem, Tracker, is_folder_marker

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


def prune(
    store: ObjectStore, space: AgentKeyspace, pool: Pool, cutoff: datetime, tracker: Tracker, *, dry_run: bool
) -> PruneReport:
    """Delete the agent's memory files last modified before `cutoff` (bookkeeping records are kept).

    Each delete carries the listed ETag, so a file edited after the listing is kept.
    """
    old: list[tuple[ObjectInfo, datetime]] = sorted(
        (
            (obj, obj.last_modified)
            for obj in store.list_all(space.root)
            if obj.last_modified is not None
            and obj.last_modified < cutoff
            and not space.is_bookkeeping(obj.key)
            and not is_folder_marker(obj)
        ),
        key=lambda pair: pair[0].key,
    )
    report = PruneReport()
    report.candidates = [Pruned(space.shown(o.key), when, plaintext_size(o.size)) for o, when in old]
    if dry_run:
        return report
    tracker.start(len(old))
    objs = [obj for obj, _ in old]
    batches = [objs[i : i + DELETE_BATCH] for i in range(0, len(objs), DELETE_BATCH)]
    deleted: set[str] = set()
    for batch, future in pool.completed(lambda b: store.delete_many([(o.key, o.etag) for o in b]), batches):
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
                report.problems.append(Problem(space.agent_id, space.shown(obj.key), why))
            tracker.advance(plaintext_size(obj.size) if code is None else 0)
    report.deleted = len(deleted)
    report.candidates = [p for p, o in zip(report.candidates, objs, strict=True) if o.key in deleted]
    report.problems.sort()
    return report
