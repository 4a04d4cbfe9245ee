"""`purge` and `shred` with a replica region: erase both sides, or say which flag to pass.

S3 never replicates the deletion of a version, so an erase run against one region leaves the
agent's copies in the other (and, for `shred`, a copy of its branch keys that still opens them).
Before deleting anything, each command reads the replication configuration of the memory and
keystore buckets (`storage.replication`). If either replicates, or it cannot be told, the command
refuses (exit 2) unless it is told where the replica is (`--replica BUCKET`, with
`--replica-keystore-bucket` and `--replica-region`, as `doctor --replica` takes them: it then runs
again there, with the same confirmation, after this side succeeded) or that this side alone is
meant (`--this-region-only`, e.g. with the other region down: run it there when it is back).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from .context import load_settings, say
from .exits import UsageError

if TYPE_CHECKING:
    from .context import Context


def on_both_sides(args: argparse.Namespace, run: Callable[[argparse.Namespace], int]) -> int:
    """`run` on the configured side, then, with --replica, on the replica side."""
    if args.replica and args.this_region_only:
        raise UsageError("--replica and --this-region-only exclude each other")
    if args.replica and args.json:
        raise UsageError("--json reports one side: with --replica, run the command on each side with "
                         "--this-region-only")  # fmt: skip
    if (args.replica_keystore_bucket or args.replica_region) and not args.replica:
        raise UsageError("--replica-keystore-bucket and --replica-region go with --replica BUCKET")
    there = _replica_args(args) if args.replica else None
    code = run(args)
    if there is None:
        return code
    say(f"the replica: s3://{there.bucket} (keys s3://{there.keystore_bucket}, region {there.region or 'as set'})")
    return max(code, run(there))


def _replica_args(args: argparse.Namespace) -> argparse.Namespace:
    settings = load_settings(args, keys=False)
    separate = bool(settings.keystore_bucket) and settings.keystore_bucket != settings.bucket
    if separate and not args.replica_keystore_bucket:
        raise UsageError(
            f"the branch keys are in their own bucket (S3MEMORY_KEYSTORE_BUCKET={settings.keystore_bucket}): "
            "name the replica's with --replica-keystore-bucket BUCKET"
        )
    there = argparse.Namespace(**vars(args))
    there.bucket = args.replica
    there.keystore_bucket = args.replica_keystore_bucket or args.replica
    there.region = args.replica_region or args.region
    there.replica = there.replica_keystore_bucket = there.replica_region = None
    there.this_region_only = True  # its rules replicate back to this side, which is erased already
    return there


def refuse_unreplicated_erase(args: argparse.Namespace, ctx: Context, command: str) -> None:
    """Before anything is deleted: refuse (exit 2) if the memory or keystore bucket replicates, or
    if that cannot be told, unless --replica or --this-region-only says what to do."""
    from s3memory.storage.replication import bucket_replication

    if args.replica or args.this_region_only:
        return
    buckets = [ctx.store.bucket] + ([ctx.keystore.bucket] if ctx.keystore.bucket != ctx.store.bucket else [])
    for bucket in buckets:
        found = bucket_replication(ctx.store.s3, bucket)
        if found.known and not found.destinations:
            continue
        if found.known:
            what = f"s3://{bucket} replicates to " + ", ".join(f"s3://{name}" for name in found.destinations)
            flag = f"--replica {found.destinations[0]}"
        else:
            what = f"whether s3://{bucket} replicates is unknown ({found.why})"
            flag = "--replica BUCKET"
        raise UsageError(
            f"{what}, and S3 never replicates the deletion of a version: {command} here would leave the agent's "
            f"copies there. Pass {flag} (with --replica-keystore-bucket and --replica-region) to erase both "
            "sides, or --this-region-only to erase this side alone; nothing was deleted"
        )


__all__ = ["on_both_sides", "refuse_unreplicated_erase"]
