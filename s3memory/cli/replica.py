"""`s3memory doctor --replica BUCKET`: how far the replica region's buckets are behind, both ways."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .context import emit_json, say
from .exits import EXIT_FAILED, EXIT_OK
from .progress import count

if TYPE_CHECKING:
    from .context import Context

SHOWN = 20  # keys listed per kind; the counts are always complete


def run_replica_check(args: argparse.Namespace, ctx: Context) -> int:
    from s3memory.admin.replica import compare
    from s3memory.storage.admin_store import AdminStore

    s3 = ctx.store.s3
    if args.replica_region:
        s3 = ctx.settings.model_copy(update={"region": args.replica_region}).clients()[0]
    replica = AdminStore(s3, args.replica)
    replica_keystore = AdminStore(s3, args.replica_keystore_bucket) if args.replica_keystore_bucket else replica
    lag = compare(ctx.store, ctx.keystore, replica, replica_keystore, ctx.settings.prefix)
    if args.json:
        emit_json({
            "primary": {"bucket": ctx.store.bucket, "keystore_bucket": ctx.keystore.bucket},
            "replica": {"bucket": replica.bucket, "keystore_bucket": replica_keystore.bucket},
            "in_sync": lag.in_sync, "compared": lag.compared,
            "only_primary": {"objects": lag.only_primary.objects, "keystore": lag.only_primary.keystore},
            "only_replica": {"objects": lag.only_replica.objects, "keystore": lag.only_replica.keystore},
            "differing": lag.differing,
        })  # fmt: skip
        return EXIT_OK if lag.in_sync else EXIT_FAILED
    where = f"s3://{ctx.store.bucket} (keys s3://{ctx.keystore.bucket})"
    there = f"s3://{replica.bucket} (keys s3://{replica_keystore.bucket})"
    say(f"primary {where}, replica {there}, prefix {ctx.settings.prefix or '(none)'}")
    rows = [
        ("only on the primary (not replicated yet)", lag.only_primary),
        ("only on the replica (written there, not replicated back yet)", lag.only_replica),
    ]
    for title, side in rows:
        say(f"{title}: {count(len(side.objects), 'object')}, {count(len(side.keystore), 'keystore entry')}")
        for key in (side.objects + side.keystore)[:SHOWN]:
            say(f"  {key}")
        if side.total > SHOWN:
            say(f"  ... and {side.total - SHOWN} more (--json lists them all)")
    if lag.differing:
        later = count(len(lag.differing), "object")
        say(f"on both sides with another size or ETag (a later write not replicated yet): {later}")
        for key in lag.differing[:SHOWN]:
            say(f"  {key}")
    verdict = "in sync" if lag.in_sync else "NOT in sync"
    say(f"{verdict}: {count(lag.compared, 'current object')} compared")
    return EXIT_OK if lag.in_sync else EXIT_FAILED
