"""`s3memory doctor`: does the configured store (and KMS key) honour what s3memory relies on?"""

from __future__ import annotations

import argparse
import os

from s3memory.core.mounts import ENV_VARIABLE

from . import doctor_conformance as kit_report
from .agent_check import empty_mounts
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
        empty = empty_mounts(ctx.store, ctx.keystore, ctx.settings.prefix, os.environ.get(ENV_VARIABLE, ""))
        locks = lock_report(ctx.store, ctx.keystore)  # the compliance profile: Object Lock on either bucket
    kit = kit_report.run_kit(args, diagnosis) if args.conformance else None  # the kit on this bucket (--conformance)
    ok = diagnosis.safe and not diagnosis.keys_at_risk and not locks.keys_locked and kit_report.passed(kit)
    if args.json:
        checksums = diagnosis.checksums.ok if diagnosis.checksums else None  # null: not probed
        mounts = [{"mount": name, "store": store_id} for name, store_id in empty]
        emit_json(diagnosis.to_json() | {"checksums": checksums, "empty_mounts": mounts, "object_lock": locks.to_json()}
                  | kit_report.as_json(kit))  # fmt: skip
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
    for name, store_id in empty:
        say(f"mount: /memories/{name} shows shared store {store_id}, which has nothing stored (is the store id "
            "right?); add :create to the mount in S3MEMORY_MOUNTS if it is meant to start empty")  # fmt: skip
    if locks.memory.enabled or locks.keys_locked or not locks.memory.known:
        scratch = f"{ctx.settings.prefix}.s3memory-doctor/"
        for line in locks.lines(ctx.settings.bucket, ctx.keystore.bucket, scratch):
            say(line)
    for line in kit_report.lines(kit) if kit else []:
        say(line)
    return EXIT_OK if ok else EXIT_FAILED
