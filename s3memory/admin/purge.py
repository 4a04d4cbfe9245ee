"""`purge`: erase an agent completely, every version and delete marker under `{prefix}{agent}/`.

This is the "right to erasure" operation. In a versioned bucket a plain delete only adds a
delete marker and every earlier version survives, so purge lists versions
(ListObjectVersions, paginated by key and version-id marker) and deletes each one by its
VersionId, 1,000 per DeleteObjects request, reading each response's `Errors`. It works the
same in an unversioned bucket (every object has version "null"). Then it lists again: a
writer that was still running may have added objects, which are deleted in another round;
whatever is left after the last round is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s3memory.errors import StorageError
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import DELETE_BATCH

from .common import Problem, Tracker

ROUNDS = 3


@dataclass
class PurgeReport:
    deleted: list[Version] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    remaining: int = 0  # versions still listed under the prefix at the end


def list_versions(store: AdminStore, root: str) -> list[Version]:
    return sorted(
        (v for page in store.iter_versions(root) for v in page),
        key=lambda v: (v.key, v.delete_marker, v.version_id),
    )


def purge(
    store: AdminStore,
    space: AgentKeyspace,
    pool: Pool,
    tracker: Tracker,
    versions: list[Version] | None = None,
    *,
    root: str | None = None,
) -> PurgeReport:
    """Delete every version under the agent's root (`{prefix}{agent}/`: the trailing slash keeps
    agent `ann2` out of a purge of `ann`). `versions` is a listing already made (e.g. to confirm);
    `root`: only this folder of the agent (`shred` erases the keystore first)."""
    root = space.root if root is None else root
    if not root.startswith(space.root):
        raise ValueError("purge: root must lie under the agent's root")
    report = PurgeReport()
    pending = list_versions(store, root) if versions is None else versions
    for _ in range(ROUNDS):
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
                tracker.advance(version.size)
        pending = list_versions(store, root)
    report.remaining = len(pending)
    report.deleted.sort(key=lambda v: (v.key, v.delete_marker, v.version_id))
    report.problems.sort()
    return report
