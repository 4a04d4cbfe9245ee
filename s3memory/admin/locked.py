"""What each operator command can and cannot do in a bucket with Object Lock.

Read once, before a command changes anything: the bucket's profile (`bucket_lock`), then, only if
it has Object Lock and the command would delete versions, the hold on each of those versions
(one HEAD each, in parallel). A command that would stop half-way (S3 refusing some of its
deletes) refuses up front instead, saying what is locked until when and what it can do instead:

* `purge` deletes nothing while any version under the agent is held;
* `shred` destroys the branch keys (the keystore bucket carries no Object Lock) and leaves the
  held versions, now unreadable, to be purged after their retention ends;
* `redact` deletes nothing while any version it would delete is held;
* `prune` and `restore` only write new versions and delete markers, which Object Lock allows;
  the versions they hide stay in the bucket until their retention ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.object_lock import NO_LOCK, Hold, LockProfile, bucket_lock, version_hold


@dataclass
class Held:
    """The versions a command would delete that Object Lock keeps, and the bucket's profile."""

    profile: LockProfile = NO_LOCK
    versions: list[tuple[Version, Hold]] = field(default_factory=list)

    @property
    def until(self) -> datetime | None:
        """The last retention date among them (None if only legal holds keep them)."""
        dates = [hold.until for _, hold in self.versions if hold.until is not None]
        return max(dates) if dates else None

    @property
    def legal_holds(self) -> int:
        return sum(hold.legal_hold for _, hold in self.versions)

    def __bool__(self) -> bool:
        return bool(self.versions)


def profile(store: AdminStore) -> LockProfile:
    return bucket_lock(store.s3, store.bucket)


def held(store: AdminStore, versions: list[Version], pool: Pool, lock: LockProfile | None = None) -> Held:
    """Which of `versions` Object Lock keeps from being deleted now. Reads nothing per version
    when the bucket has no Object Lock (or it cannot be told: the deletes then report what S3 refuses)."""
    lock = profile(store) if lock is None else lock
    found = Held(lock)
    if not lock.enabled:
        return found
    now = datetime.now(timezone.utc)
    candidates = [v for v in versions if not v.delete_marker]  # S3 never locks a delete marker

    def hold_of(version: Version) -> Hold | None:
        return version_hold(store.s3, store.bucket, version.key, version.version_id, now)

    for version, future in pool.completed(hold_of, candidates):
        hold = future.result()
        if hold is not None:
            found.versions.append((version, hold))
    found.versions.sort(key=lambda item: (item[0].key, item[0].version_id))
    return found


def when(found: Held) -> str:
    """ "until 2027-11-27 18:00:00 UTC" (and the legal holds), for the lines below."""
    parts = []
    if found.until is not None:
        parts.append(f"until {found.until.astimezone(timezone.utc):%Y-%m-%d %H:%M:%S} UTC")
    if found.legal_holds:
        parts.append(f"{found.legal_holds} of them under legal hold (until an operator removes it)")
    return ", ".join(parts)


def purge_refusal(bucket: str, found: Held, total: int, agent: str) -> str:
    return (
        f"s3://{bucket} has {found.profile.describe()}: {len(found.versions)} of the {total} versions under the "
        f"agent's prefix are locked ({when(found)}) and cannot be deleted before then, so purge deleted nothing. "
        f"`s3memory shred --agent {agent}` destroys the agent's branch keys now, which leaves the locked versions "
        "unreadable; purge after their retention ends deletes them"
    )


def shred_note(bucket: str, found: Held) -> str:
    return (
        f"s3://{bucket} has {found.profile.describe()}: {len(found.versions)} versions are locked ({when(found)}); "
        "shred destroyed the branch keys and deleted none of the agent's objects: every stored version is "
        "ciphertext no key can open any more; purge after their retention ends deletes them"
    )


def keystore_refusal(bucket: str, found: Held) -> str:
    return (
        f"the agent's branch keys are in s3://{bucket}, which has {found.profile.describe()}: "
        f"{len(found.versions)} branch key versions are locked ({when(found)}), so shred cannot destroy them and "
        "deleted nothing. Crypto-shredding needs the keys in a bucket without Object Lock: set "
        "S3MEMORY_KEYSTORE_BUCKET (the Terraform module's keystore bucket) for new agents"
    )


def redact_refusal(bucket: str, found: Held, total: int) -> str:
    return (
        f"s3://{bucket} has {found.profile.describe()}: {len(found.versions)} of the {total} versions to delete are "
        f"locked ({when(found)}), so redact deleted nothing. Until then only `s3memory shred` (of the whole agent) "
        "makes them unreadable"
    )


def keeps_note(command: str, bucket: str, lock: LockProfile) -> str:
    """For `prune` and `restore`: what they do in a locked bucket (nothing they need is refused)."""
    return (
        f"s3://{bucket} has {lock.describe()}: {command} writes new versions and delete markers only; every "
        "version it replaces or hides stays in the bucket until its retention ends"
    )


@dataclass(frozen=True)
class LockReport:
    """What `doctor` says about Object Lock: the memory bucket's profile and the keystore's."""

    memory: LockProfile
    keystore: LockProfile
    shared: bool  # the keystore is in the memory bucket

    @property
    def keys_locked(self) -> bool:
        """Branch keys in a bucket with Object Lock: `shred` could not destroy them."""
        return self.keystore.enabled

    def lines(self, bucket: str, keystore_bucket: str, scratch: str) -> list[str]:
        found = [f"object lock: s3://{bucket} has {self.memory.describe()}"]
        if self.memory.enabled:
            found.append(
                "object lock: purge and redact refuse while a version they would delete is retained; shred destroys "
                "the keys and keeps the objects (unreadable); prune and restore add versions and delete markers; "
                f"this check's own scratch versions under {scratch} stay until their retention ends"
            )
        if self.keys_locked:
            where = "the memory bucket itself" if self.shared else f"s3://{keystore_bucket}"
            found.append(
                f"KEYS LOCKED: the branch keys are in {where}, which has Object Lock: shred cannot destroy them, so "
                "no agent can be erased before its retention ends; keep them in a bucket without Object Lock "
                "(S3MEMORY_KEYSTORE_BUCKET)"
            )
        return found

    def to_json(self) -> dict[str, object]:
        return {**self.memory.to_json(), "keystore": self.keystore.to_json(), "keys_locked": self.keys_locked}


def lock_report(store: AdminStore, keystore: AdminStore) -> LockReport:
    memory = profile(store)
    shared = keystore.bucket == store.bucket
    return LockReport(memory, memory if shared else profile(keystore), shared)
