"""`s3memory doctor`: does the configured store (and KMS key) honour what s3memory relies on?"""

from __future__ import annotations

import argparse
import os

from .context import connect, emit_json, say
from .exits import EXIT_FAILED, EXIT_OK


def run_doctor(args: argparse.Namespace) -> int:
    from s3memory.admin.doctor import REQUIRED, Doctor
    from s3memory.admin.locked import lock_report

    kms_key = args.kms_key_id or os.environ.get("S3MEMORY_KMS_KEY_ID") or None
    if getattr(args, "replica", None):
        from .replica import run_replica_check

        with connect(args, keys=False) as ctx:
            return run_replica_check(args, ctx)
    with connect(args, keys=False) as ctx:
        diagnosis = Doctor(
            ctx.store.s3, ctx.kms, ctx.settings.bucket, ctx.settings.prefix, kms_key, ctx.keystore.bucket
        ).run()
        locks = lock_report(ctx.store, ctx.keystore)  # the compliance profile: Object Lock on either bucket
    ok = diagnosis.safe and not diagnosis.keys_at_risk and not locks.keys_locked
    if args.json:
        checksums = diagnosis.checksums.ok if diagnosis.checksums else None  # null: not probed
        emit_json(diagnosis.to_json() | {"checksums": checksums, "object_lock": locks.to_json()})
        return EXIT_OK if ok else EXIT_FAILED
    say(f"store: {diagnosis.endpoint}, bucket {ctx.settings.bucket}")
    width = max(len(p.name) for p in diagnosis.probes)
    rows = [*diagnosis.probes, *([diagnosis.checksums] if diagnosis.checksums else [])]
    for probe in rows:
        mark = "yes" if probe.ok else "NO"
        say(f"{probe.name:<{width}}  {mark:<3}  {probe.note}")
    if diagnosis.safe:
        say("safe: conditional creates and edits are enforced, so no update is lost and one create wins")
    else:
        missing = ", ".join(p.name for p in diagnosis.probes if p.name in REQUIRED and not p.ok)
        say(f"NOT SAFE: {missing} not enforced; concurrent writers can lose updates on this store")
    if diagnosis.keys_at_risk:
        say("KEYS AT RISK: a lifecycle rule would delete or archive the agents' branch keys (keystore_lifecycle)")
    for text in diagnosis.weaker:
        say(f"weaker: {text}")
    if locks.memory.enabled or locks.keys_locked or not locks.memory.known:
        scratch = f"{ctx.settings.prefix}.s3memory-doctor/"
        for line in locks.lines(ctx.settings.bucket, ctx.keystore.bucket, scratch):
            say(line)
    return EXIT_OK if ok else EXIT_FAILED
