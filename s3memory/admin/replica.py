"""`doctor --replica`: how far a replica (another region's buckets) is behind, object by object.

S3 replication copies each new version's bytes and metadata, and delete markers, to the other
region, usually within seconds (with Replication Time Control, 99.99 % within 15 minutes); the
copies get version ids of their own there. What matters for a failover or a failback is whether
the *current* state agrees: every memory object and every keystore entry present on one side
and not the other is data the other side would lack. One listing of each bucket answers it (no
object is read, no version id is compared: they differ by design).

A current object of the same key on both sides but of another size or ETag is `differing` (a
later write not replicated yet). S3 replication keeps an object's ETag; a store that gives a
replica another one shows every object as differing, which says to compare by reading instead
(`s3memory verify` on each side).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s3memory.storage.admin_store import AdminStore


@dataclass
class Side:
    """What one side has that the other lacks: memory objects and keystore entries (their keys)."""

    objects: list[str] = field(default_factory=list)
    keystore: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.objects) + len(self.keystore)


@dataclass
class Lag:
    only_primary: Side = field(default_factory=Side)  # not replicated yet (or lost: the RPO)
    only_replica: Side = field(default_factory=Side)  # written on the replica (failover) and not back yet
    differing: list[str] = field(default_factory=list)  # same key, another size or ETag
    compared: int = 0  # keys compared, both buckets' listings together

    @property
    def in_sync(self) -> bool:
        return not (self.only_primary.total or self.only_replica.total or self.differing)


def _current(store: AdminStore, prefix: str) -> dict[str, tuple[int, str]]:
    """key -> (size, ETag) of every current object under `prefix` (ListObjectsV2 pages)."""
    return {obj.key: (obj.size, obj.etag) for obj in store.list_all(prefix)}


def compare(
    primary: AdminStore,
    primary_keystore: AdminStore,
    replica: AdminStore,
    replica_keystore: AdminStore,
    prefix: str,
) -> Lag:
    """The difference between the current objects under `prefix` on both sides. With the keystore
    in the memory bucket (same store on a side), its entries count as keystore entries."""
    lag = Lag()
    memory = (_current(primary, prefix), _current(replica, prefix))
    shared = (primary_keystore.bucket == primary.bucket, replica_keystore.bucket == replica.bucket)
    keys = (
        memory[0] if shared[0] else _current(primary_keystore, prefix),
        memory[1] if shared[1] else _current(replica_keystore, prefix),
    )

    def keystore_key(key: str) -> bool:
        return "/.s3memory/keys/" in key

    objects = [{k: v for k, v in side.items() if not keystore_key(k)} for side in memory]
    entries = [{k: v for k, v in side.items() if keystore_key(k)} for side in keys]
    lag.compared = sum(map(len, objects)) + sum(map(len, entries))
    lag.only_primary = Side(sorted(objects[0].keys() - objects[1]), sorted(entries[0].keys() - entries[1]))
    lag.only_replica = Side(sorted(objects[1].keys() - objects[0]), sorted(entries[1].keys() - entries[0]))
    both = objects[0].keys() & objects[1].keys()
    lag.differing = sorted(k for k in both if objects[0][k] != objects[1][k])
    return lag
