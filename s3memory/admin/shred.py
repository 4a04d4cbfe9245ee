"""`shred`: crypto-shredding. Destroy every version of an agent's branch keys, then (unless only
the keys are asked for) purge its objects as `purge` does.

Objects in format 2 can only be opened with a branch key, which exists nowhere but in the
keystore (wrapped by KMS or the local master key, never in plaintext at rest). Once every
version of every keystore object is gone, no copy of those objects (a replica, a backup, an
old version) can be decrypted, whoever holds KMS access. SECURITY.md says when this holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from s3memory.core.keyring import SHREDDED
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace

from .common import Tracker
from .purge import Countdown, PurgeReport, erase_fence, erasing_key, list_versions, purge, unmark_erasing


@dataclass
class ShredReport:
    keys: PurgeReport
    objects: PurgeReport | None  # None with keys only, or when the keys could not all be destroyed


def keystore_versions(keystore: AdminStore, space: AgentKeyspace) -> list[Version]:
    return [v for v in list_versions(keystore, space.keystore_prefix) if v.key != erasing_key(space)]


def shred(
    store: AdminStore,
    keystore: AdminStore,
    space: AgentKeyspace,
    pool: Pool,
    tracker: Tracker,
    *,
    keys_only: bool = False,
    wait: float = 0.0,
    countdown: Countdown | None = None,
) -> ShredReport:
    """Branch keys first (every version), then the objects. If a key version survives, the objects
    are left alone: they are the evidence of what could not be shredded, and purging them would
    hide that a copy of a key remains. The keystore's `erasing` entry is written first; then it
    waits `wait` seconds (a running tool re-reads the keystore before its next write and refuses,
    rather than seal a file under a key about to be destroyed); the entry is deleted last, once
    nothing else is left (with `keys_only`: once the keys are gone). Interrupted during the wait,
    the entry goes and the agent is as it was (see `purge.erase_fence`)."""
    erase_fence(keystore, space, wait, countdown)
    keys = purge(keystore, space, pool, tracker, root=space.keystore_prefix)
    if keys.problems or keys.remaining:
        return ShredReport(keys, None)
    if keys_only:
        if keys.deleted:  # the note that tells a reader its keys were destroyed, not tampered with
            keystore.put(space.keystore_prefix + SHREDDED, b"destroyed by s3memory shred --keys-only\n", {})
        keys.problems = unmark_erasing(keystore, space)
        return ShredReport(keys, None)
    objects = purge(store, space, pool, tracker, fence=False)
    if not objects.problems and not objects.remaining:
        objects.problems = unmark_erasing(keystore, space)
    return ShredReport(keys, objects)
