"""S3 replication as the erasing commands see it: where a bucket's new versions are copied to.

S3 replication copies new versions and delete markers to another bucket, but never the deletion
of a version. So `purge` and `shred`, which delete versions, erase only the bucket they run
against; the copies in a replica stay (readable, until the replica's keystore is shredded too).
They read the memory and keystore buckets' replication configuration once
(GetBucketReplication) before anything is deleted, and ask for the replica to be named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from s3memory.errors import AccessDenied, StorageError

from .errors_table import call

# GetBucketReplication's answer for a bucket without replication (or a store without the API).
NOT_REPLICATED_CODES = frozenset(
    {"ReplicationConfigurationNotFoundError", "NoSuchReplicationConfiguration", "NotImplemented", "XNotImplemented"}
)


@dataclass(frozen=True)
class Replication:
    """The buckets a bucket replicates to (its enabled rules' destinations, by name). `known` is
    False when the configuration could not be read (`why`: the error code)."""

    destinations: tuple[str, ...] = ()
    known: bool = True
    why: str = ""


def bucket_replication(s3: Any, bucket: str) -> Replication:
    """The destinations of the bucket's enabled replication rules (one GetBucketReplication)."""
    try:
        resp = call("GetBucketReplication", s3.get_bucket_replication, Bucket=bucket)
    except AccessDenied:
        return Replication(known=False, why="s3:GetReplicationConfiguration denied")
    except StorageError as err:
        if err.code in NOT_REPLICATED_CODES:
            return Replication()
        return Replication(known=False, why=f"GetBucketReplication failed: {err.code}")
    rules = resp.get("ReplicationConfiguration", {}).get("Rules", [])
    found: list[str] = []
    for rule in rules:
        if rule.get("Status") != "Enabled":
            continue
        arn = str(rule.get("Destination", {}).get("Bucket", ""))
        name = arn.rsplit(":", 1)[-1]  # arn:aws:s3:::name
        if name and name not in found:
            found.append(name)
    return Replication(tuple(found))
