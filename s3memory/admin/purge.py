"""`purge`: erase an agent completely, every version and delete marker under `{prefix}{agent}/`.

This is the "right to erasure" operation. In a versioned bucket a plain delete only adds a
delete marker and every earlier version survives, so purge lists versions
(ListObjectVersions, paginated by key and version-id marker) and deletes each one by its
VersionId, 1,000 per DeleteObjects request, reading each response's `Errors`. It works the
same in an unversioned bucket (every object has version "null"). Then it lists again: a
writer that was still running may have added objects, which are deleted in another round
(`arrived` counts them); whatever is left after the last round is reported.

A purge of the whole agent first writes the keystore's `erasing` entry (see `core.keyring`) and
deletes it last, once nothing else is left: meanwhile every tool that lists the agent's keystore
answers that the agent is being erased, rather than reading what is left with no keys, or under
the wrong name mode. `shred` does the same around both of its steps.

The entry says how far the erase got: `fence` while the command waits for running tools to see
it (nothing destroyed yet: Ctrl-C then, or `s3memory repair --abandon` from elsewhere, deletes the
entry and leaves the agent exactly as it was), `destroying` once it deletes (only if the entry is
still the one it wrote, so an erase called off meanwhile destroys nothing). An entry from before
that distinction (empty) counts as `destroying`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from s3memory.core import keyring
from s3memory.core.paths import owner_name
from s3memory.errors import CommandError, NotFound, PreconditionFailed, StorageError
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import DELETE_BATCH

from .common import Problem, Tracker

ROUNDS = 3
FENCE = b"fence\n"  # the `erasing` entry while nothing is destroyed yet
DESTROYING = b"destroying\n"  # once the erase deletes something
# How the fence waits (one step of at most a second); the tests drive it without sleeping.
_sleep: Callable[[float], None] = time.sleep
Countdown = Callable[[float], None]  # told the seconds left before each step of the wait


@dataclass
class PurgeReport:
    deleted: list[Version] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    remaining: int = 0  # versions still listed under the prefix at the end
    arrived: int = 0  # versions written meanwhile (after the first listing) and deleted in a later round


def list_versions(store: AdminStore, root: str) -> list[Version]:
    return sorted(
        (v for page in store.iter_versions(root) for v in page),
        key=lambda v: (v.key, v.delete_marker, v.version_id),
    )


def erasing_key(space: AgentKeyspace) -> str:
    """The keystore entry that says a purge or shred of the agent is under way."""
    return space.keystore_prefix + keyring.ERASING


class CalledOff(KeyboardInterrupt):
    """Ctrl-C during the fence's wait: what was announced is undone, nothing was destroyed or moved."""


def erasing_stage(keystore: AdminStore, space: AgentKeyspace) -> bytes | None:
    """`FENCE` or `DESTROYING` (an older, empty entry counts as destroying); None: no erase under way."""
    try:
        body = keystore.get(erasing_key(space)).body
    except NotFound:
        return None
    return FENCE if body == FENCE else DESTROYING


def fence_wait(seconds: float, countdown: Countdown | None = None) -> None:
    """Wait for running tools to see what was just announced in the keystore: a tool re-reads its
    listing before a write once it is `WRITE_FENCE_SECONDS` old (`core.limits`), so after that
    window (and a write in flight) every tool refuses instead of writing with a stale view.
    `countdown` is told the seconds left before each step (of at most a second)."""
    left = seconds
    while left > 0:
        if countdown is not None:
            countdown(left)
        step = min(1.0, left)
        _sleep(step)
        left -= step


def erase_fence(keystore: AdminStore, space: AgentKeyspace, seconds: float, countdown: Countdown | None = None) -> None:
    """Announce the erase (the `erasing` entry, stage `fence`), wait `seconds` for running tools to
    see it, then mark it `destroying`. Interrupted during the wait (Ctrl-C), it deletes the entry:
    nothing was destroyed, the agent is exactly as it was. Raises `CommandError` if the erase was
    called off meanwhile (`s3memory repair --abandon`). An erase already destroying (an earlier
    run stopped half-way) stays so: it can only be finished."""
    key = erasing_key(space)
    if erasing_stage(keystore, space) == DESTROYING:
        fence_wait(seconds, countdown)  # tools already refuse; a writer the last run missed is fenced off too
        return
    etag = keystore.put(key, FENCE, {})
    try:
        fence_wait(seconds, countdown)
    except KeyboardInterrupt:  # Ctrl-C before anything is destroyed: call the erase off
        unmark_erasing(keystore, space)
        raise CalledOff(
            f"interrupted during the wait; nothing was erased, {owner_name(space.agent_id)} is as it was"
        ) from None
    try:
        keystore.put(key, DESTROYING, {}, if_match=etag)
    except (PreconditionFailed, NotFound):
        raise CommandError(
            f"the erase of {owner_name(space.agent_id)} was called off during the wait (s3memory repair --abandon); "
            "nothing was deleted"
        ) from None


def abandon_erasing(keystore: AdminStore, space: AgentKeyspace) -> bool | None:
    """Call off an erase that has destroyed nothing (its entry is still at stage `fence`): True if
    one was called off, False if there is none, None if the erase already destroys (finish it)."""
    stage = erasing_stage(keystore, space)
    if stage is None:
        return False
    if stage == DESTROYING:
        return None
    problems = unmark_erasing(keystore, space)
    if problems:
        raise CommandError(
            f"the erase of {owner_name(space.agent_id)} was not called off: {problems[0].reason}; try again"
        )
    return True


def unmark_erasing(keystore: AdminStore, space: AgentKeyspace) -> list[Problem]:
    """Delete every version of the `erasing` entry (the last thing a purge or shred deletes)."""
    key = erasing_key(space)
    failed = keystore.delete_versions([v for v in list_versions(keystore, key) if v.key == key])
    return [
        Problem(space.agent_id, space.shown(v.key), f"version {v.version_id} not deleted ({c})")
        for v, c in failed.items()
    ]


def purge(
    store: AdminStore,
    space: AgentKeyspace,
    pool: Pool,
    tracker: Tracker,
    versions: list[Version] | None = None,
    *,
    root: str | None = None,
    keystore: AdminStore | None = None,
    fence: bool = True,
    wait: float = 0.0,
    countdown: Countdown | None = None,
) -> PurgeReport:
    """Delete every version under the agent's root (`{prefix}{agent}/`: the trailing slash keeps
    agent `ann2` out of a purge of `ann`). `versions` is a listing already made (e.g. to confirm);
    `root`: only this folder of the agent (`shred` erases the keystore first). A purge of the whole
    agent writes the `erasing` entry in `keystore` (default: `store`) first, waits `wait` seconds
    for running tools to see it (see `erase_fence`; `countdown` is told the seconds left), and
    deletes it last (unless `fence` is False: `shred` does that itself)."""
    whole = root is None
    root = space.root if root is None else root
    if not root.startswith(space.root):
        raise ValueError("purge: root must lie under the agent's root")
    fenced = (keystore or store) if whole and fence else None
    if fenced is not None:
        erase_fence(fenced, space, wait, countdown)
    report = _rounds(store, space, pool, tracker, versions, root)
    if fenced is not None and not report.problems and not report.remaining:
        report.problems = unmark_erasing(fenced, space)
    return report


def _rounds(
    store: AdminStore, space: AgentKeyspace, pool: Pool, tracker: Tracker, versions: list[Version] | None, root: str
) -> PurgeReport:
    keep = erasing_key(space)  # deleted last, by `unmark_erasing`
    report = PurgeReport()
    pending = [v for v in (list_versions(store, root) if versions is None else versions) if v.key != keep]
    for round_ in range(ROUNDS):
        if not pending or report.problems:
            break  # done, or S3 refused something that deleting again would only repeat
        tracker.start(len(pending))
        batches = [pending[i : i + DELETE_BATCH] for i in range(0, len(pending), DELETE_BATCH)]
        for batch, future in pool.completed(store.delete_versions, batches):
            try:
                failed = future.result()
            except StorageError as err:
                failed = dict.fromkeys(batch, err.code)
            for version in batch:
                if version in failed:
                    why = f"version {version.version_id} not deleted ({failed[version]})"
                    report.problems.append(Problem(space.agent_id, space.shown(version.key), why))
                else:
                    report.deleted.append(version)
                    report.arrived += round_ > 0
                tracker.advance(version.size)
        pending = [v for v in list_versions(store, root) if v.key != keep]
    report.remaining = len(pending)
    report.deleted.sort(key=lambda v: (v.key, v.delete_marker, v.version_id))
    report.problems.sort()
    return report
