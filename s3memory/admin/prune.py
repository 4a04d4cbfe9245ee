"""`prune`: delete an agent's memory files not modified since a cutoff (bookkeeping is kept)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from s3memory.core.envelope import Header, plaintext_size
from s3memory.errors import IntegrityError, NotFound, StorageError
from s3memory.storage.access import accessed_until
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import DELETE_BATCH, ObjectInfo, ObjectStore

from .common import Problem, Tracker, is_folder_marker

_AGE = re.compile(r"([0-9]{1,6})(min|h|d|w|m)")
_UNITS = {"min": "minutes", "h": "hours", "d": "days", "w": "weeks"}
MAX_AGE_DAYS = 36500  # a cutoff further back than this is a typo (and near year 1 it cannot be computed)


def parse_age(text: str) -> timedelta:
    """`90d`, `2w`, `12h`, `30min` → a positive timedelta of at most MAX_AGE_DAYS; ValueError otherwise.

    `m` alone is refused: `6m` reads as six minutes to some and six months to others."""
    match = _AGE.fullmatch(text.strip())
    if match and match.group(2) == "m":
        number = match.group(1)
        raise ValueError(
            f"ambiguous age {text!r}: m could mean minutes or months; write {number}min for minutes, "
            f"or days or weeks for months (e.g. 180d or 26w for six months)"
        )
    age = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))}) if match else timedelta(0)
    if age <= timedelta(0):  # no unit, a sign, a fraction, or zero
        example = "e.g. 90d, 2w, 12h or 30min (a whole number, 1 or more)"
        raise ValueError(f"invalid age {text!r}: use a number followed by min, h, d or w, {example}")
    if age > timedelta(days=MAX_AGE_DAYS):
        raise ValueError(f"invalid age {text!r}: at most {MAX_AGE_DAYS}d (100 years), e.g. 90d")
    return age


@dataclass(frozen=True)
class Pruned:
    path: str
    last_modified: datetime  # with `by_access`: the last recorded use when `used`, else the content change
    size: int
    used: bool = False  # `last_modified` is a recorded access (the access tag), not a content change


@dataclass
class PruneReport:
    candidates: list[Pruned] = field(default_factory=list)  # what is (or would be) deleted
    deleted: int = 0
    nbytes: int = 0
    problems: list[Problem] = field(default_factory=list)


def prune(
    store: ObjectStore,
    space: AgentKeyspace,
    pool: Pool,
    cutoff: datetime,
    tracker: Tracker,
    *,
    dry_run: bool,
    by_access: bool = False,
    listing: Iterable[ObjectInfo] | None = None,
) -> PruneReport:
    """Delete the agent's memory files whose content last changed before `cutoff` (bookkeeping is kept).

    `by_access`: also keep a file whose access tag (see `storage.access`) says it was used on or
    after the cutoff's day; such files cost one GetObjectTagging each.

    The content's change time is the authenticated `s3m-mt` header entry where the object has
    one, else S3's LastModified. A file listed as modified before the cutoff changed no later
    than that; one listed after it may only have been copied (a rewrap keeps `s3m-mt`), so its
    header is read (one HEAD each, in parallel). Each delete carries the listed ETag, so a file
    edited after the listing is kept.

    `listing`: the objects under `space.root` as the caller listed them (the fleet worker lists
    while it resolves the agent's names, one round trip instead of two); default: listed here.
    """
    listed = [
        (obj, obj.last_modified)
        for obj in (store.list_all(space.root) if listing is None else listing)
        if obj.last_modified is not None and not space.is_bookkeeping(obj.key) and not is_folder_marker(obj)
    ]
    old = [(obj, when) for obj, when in listed if when < cutoff]
    recent = [obj for obj, when in listed if when >= cutoff]
    for obj, header_read in pool.completed(lambda o: _content_time(store, o.key), recent):
        changed = header_read.result()
        if changed is not None and changed < cutoff:
            old.append((obj, changed))
    report = PruneReport()
    used: set[str] = set()
    if by_access:
        old = _not_used_since(store, space, pool, old, cutoff, report, used)
    shown = {obj.key: space.shown(obj.key) for obj, _ in old}
    old.sort(key=lambda pair: shown[pair[0].key])  # by path (in the encrypted mode, keys are in no useful order)
    report.candidates = [Pruned(shown[o.key], when, plaintext_size(o.size), o.key in used) for o, when in old]
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


def _not_used_since(
    store: ObjectStore,
    space: AgentKeyspace,
    pool: Pool,
    old: list[tuple[ObjectInfo, datetime]],
    cutoff: datetime,
    report: PruneReport,
    used_keys: set[str],
) -> list[tuple[ObjectInfo, datetime]]:
    """Those of `old` whose last recorded access is before `cutoff`, with their time of last use;
    `used_keys` gets the keys whose time is a recorded access (not the content change)."""
    unused = []
    for (obj, changed), tags_read in pool.completed(lambda pair: store.get_tags(pair[0].key), old):
        try:
            used = accessed_until(tags_read.result())
        except NotFound:
            continue  # deleted since it was listed
        except StorageError as err:
            report.problems.append(Problem(space.agent_id, space.shown(obj.key), f"access tag not read ({err.code})"))
            continue
        last = changed if used is None else max(changed, used)
        if last < cutoff:
            unused.append((obj, last))
            if used is not None and used > changed:
                used_keys.add(obj.key)
    return unused


def _content_time(store: ObjectStore, key: str) -> datetime | None:
    """The `s3m-mt` time of an object's header, or None (gone, no such entry, or not our object)."""
    info = store.head(key)
    if info is None:
        return None
    try:
        modified = Header.from_metadata(info.metadata).modified
    except IntegrityError:
        return None
    return None if modified is None else datetime.fromtimestamp(modified, timezone.utc)
