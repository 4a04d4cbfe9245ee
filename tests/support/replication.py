"""What S3 replication does to a bucket, reproduced for tests and the recovery drill (not a feature).

S3 replication copies each new version (its bytes and user metadata) and each delete marker of
a source bucket to a destination bucket, asynchronously: most within seconds, some late, in no
promised order across keys. The destination gives each copy a version id of its own. This
helper does exactly that with ordinary requests, so that a test can stop it at any point:

* `pending()` lists what is not copied yet, by key, each key's versions oldest first;
* `run(late=..., seed=...)` copies it, in a shuffled order across keys when `seed` is given (each
  key's versions stay in order, as one key's writes do), leaving any key `late(key)` accepts for a
  later run.

It remembers what it copied by source version id, so a second run copies only what is new. Run
a second instance the other way for failback (replica -> primary); it skips versions the first
one wrote there (a replica is never replicated back, as S3 does without replica modification sync).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Entry:
    key: str
    version_id: str
    marker: bool
    modified: Any


@dataclass
class Replicator:
    src: Any  # S3 client of the source region
    src_bucket: str
    dst: Any  # S3 client of the destination region
    dst_bucket: str
    prefix: str = ""
    copied: set[tuple[str, str]] = field(default_factory=set)  # (key, source version id)
    made: set[tuple[str, str]] = field(default_factory=set)  # (key, destination version id) it wrote
    skip: set[tuple[str, str]] = field(default_factory=set)  # versions in src that are replicas themselves

    def pending(self) -> list[Entry]:
        found: list[Entry] = []
        latest: set[tuple[str, str]] = set()
        for page in self.src.get_paginator("list_object_versions").paginate(Bucket=self.src_bucket, Prefix=self.prefix):
            for entries, marker in ((page.get("Versions", []), False), (page.get("DeleteMarkers", []), True)):
                found += [Entry(v["Key"], v["VersionId"], marker, v["LastModified"]) for v in entries]
                latest |= {(v["Key"], v["VersionId"]) for v in entries if v.get("IsLatest")}
        done = self.copied | self.skip
        # S3 lists each key's versions newest first, and timestamps (whole seconds) may tie: keep that
        # order, reversed. boto3 gives versions and delete markers in two lists, so between a version
        # and a marker of one second the listing's order is lost: the current one (IsLatest) goes last.
        rank = {(e.key, e.version_id): -i for i, e in enumerate(found)}
        pending = [e for e in found if (e.key, e.version_id) not in done]
        return sorted(
            pending,
            key=lambda e: (e.key, e.modified, (e.key, e.version_id) in latest, rank[(e.key, e.version_id)]),
        )

    def run(self, *, late: Callable[[str], bool] = lambda key: False, seed: int | None = None) -> list[Entry]:
        """Copy what is pending (but keys `late` accepts); returns what was copied, in copy order."""
        entries = [e for e in self.pending() if not late(e.key)]
        if seed is not None:  # interleave keys at random, keeping each key's own order
            by_key: dict[str, list[Entry]] = {}
            for e in entries:
                by_key.setdefault(e.key, []).append(e)
            rng, order, queues = random.Random(seed), [], [list(q) for q in by_key.values()]
            while queues:
                queue = rng.choice(queues)
                order.append(queue.pop(0))
                if not queue:
                    queues.remove(queue)
            entries = order
        for entry in entries:
            self._copy(entry)
        return entries

    def _copy(self, entry: Entry) -> None:
        if entry.marker:
            resp = self.dst.delete_object(Bucket=self.dst_bucket, Key=entry.key)
        else:
            obj = self.src.get_object(Bucket=self.src_bucket, Key=entry.key, VersionId=entry.version_id)
            extra = {"ContentType": obj["ContentType"]} if obj.get("ContentType") else {}
            resp = self.dst.put_object(
                Bucket=self.dst_bucket,
                Key=entry.key,
                Body=obj["Body"].read(),
                Metadata=obj.get("Metadata", {}),
                **extra,
            )
        self.copied.add((entry.key, entry.version_id))
        self.made.add((entry.key, str(resp.get("VersionId"))))

    def back(self) -> Replicator:
        """The replicator of the other direction (failback), which leaves this one's copies alone."""
        # the two share their sets: what one writes, the other never copies back
        return Replicator(self.dst, self.dst_bucket, self.src, self.src_bucket, self.prefix, skip=self.made,
                          made=self.skip)  # fmt: skip
