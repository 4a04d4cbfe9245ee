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
from .purge import PurgeReport, list_versions, purge


@dataclass
class ShredReport:
    keys: PurgeReport
    objects: PurgeReport | None  # None with keys only, or when the keys could not all be destroyed


def keystore_versions(keystore: AdminStore, space: AgentKeyspace) -> list[Version]:
    return list_versions(keystore, space.keystore_prefix)


def shred(
    store: AdminStore,
    keystore: AdminStore,
    space: AgentKeyspace,
    pool: Pool,
    tracker: Tracker,
    *,
    keys_only: bool = False,
) -> ShredReport:
    """Branch keys first (every version), then the objects. If a key version survives, the objects
    are left alone: they are the evidence of what could not be shredded, and purging them would
    hide that a copy of a key remains."""
    keys = purge(keystore, space, pool, tracker, root=space.keystore_prefix)
    if keys_only and not (keys.problems or keys.remaining) and keys.deleted:
        # The note that tells a reader its keys were destroyed, not that it was tampered with.
        keystore.put(space.keystore_prefix + SHREDDED, b"destroyed by s3memory shred --keys-only\n", {})
    if keys_only or keys.problems or keys.remaining:
        return ShredReport(keys, None)
    return ShredReport(keys, purge(store, space, pool, tracker))
